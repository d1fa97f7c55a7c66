package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/platform"
)

// checkHeldInput is doctor's check of the held-input ledgers.
func checkHeldInput(ctx context.Context, c config.Config, s desktop.Screen, add func(level, name, detail, fix string)) {
	_, rec, err := app.RecoverHeldInput(ctx, c, s)
	for _, r := range rec {
		add("warn", "held input", r.String(), "nothing to do: released now")
	}
	switch {
	case err != nil:
		add("FAIL", "held input", err.Error(), "check "+config.Var("StateDir")+", then run guiagent release")
	case len(rec) == 0:
		add("ok", "held input", "no key or button left held by a killed guiagent (ledgers in "+c.StateDir+")", "")
	}
}

// cmdRelease releases what killed guiagent processes left pressed on the
// display and prints one JSON report per ledger replayed.
func cmdRelease(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, rest, err := config.Load("release", args, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("release takes no arguments, got %q (use --display :N)", rest)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	screen, closeScreen, err := platform.Open(ctx, app.PlatformOptions(c))
	if err != nil {
		return err
	}
	defer closeScreen()
	_, rec, err := app.RecoverHeldInput(ctx, c, screen)
	enc := json.NewEncoder(stdout)
	for _, r := range rec {
		enc.Encode(r)
	}
	if len(rec) == 0 && err == nil {
		fmt.Fprintf(stderr, "guiagent release: nothing was left held on %s\n", app.LedgerDisplay(c, screen))
	}
	return err
}
