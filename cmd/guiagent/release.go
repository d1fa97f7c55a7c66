package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/platform"
)

// ledgerDisplay names the desktop whose held input a ledger records.
func ledgerDisplay(c config.Config, s desktop.Screen) string {
	if c.VNC != "" {
		return "vnc " + c.VNC
	}
	if d, ok := s.(interface{ DisplayName() string }); ok {
		return s.Name() + " " + d.DisplayName()
	}
	return s.Name()
}

// recoverHeldInput releases what killed guiagent processes left pressed on
// this desktop and returns this process's ledger for its Input.
func recoverHeldInput(ctx context.Context, c config.Config, s desktop.Screen) (*desktop.Ledger, []desktop.Recovered, error) {
	display := ledgerDisplay(c, s)
	led, err := desktop.NewLedger(c.StateDir, display)
	if err != nil {
		return nil, nil, err
	}
	rec, err := desktop.RecoverInput(ctx, s, c.StateDir, display)
	return led, rec, err
}

// attachLedger is serve's start-up hook: it replays dead ledgers (logging
// each) and makes Input record what it holds.
func (a *app) attachLedger(ctx context.Context) error {
	led, rec, err := recoverHeldInput(ctx, a.cfg, a.screen)
	for _, r := range rec {
		a.log.Warn("released input a killed guiagent left held", "report", r.String(), "ledger", r.File)
	}
	if led == nil {
		return err
	}
	if err != nil {
		a.log.Error("could not release input a killed guiagent left held; run guiagent release", "err", err)
	}
	a.input.Ledger = led
	return nil
}

// checkHeldInput is doctor's check of the held-input ledgers.
func checkHeldInput(ctx context.Context, c config.Config, s desktop.Screen, add func(level, name, detail, fix string)) {
	_, rec, err := recoverHeldInput(ctx, c, s)
	for _, r := range rec {
		add("warn", "held input", r.String(), "nothing to do: released now")
	}
	switch {
	case err != nil:
		add("FAIL", "held input", err.Error(), "check GUI_AGENT_STATE_DIR, then run guiagent release")
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
	screen, closeScreen, err := platform.Open(ctx, platform.Options{Display: c.XDisplay, XAuthority: c.XAuthority, VNC: c.VNC, VNCPassword: c.VNCPassword})
	if err != nil {
		return err
	}
	defer closeScreen()
	_, rec, err := recoverHeldInput(ctx, c, screen)
	enc := json.NewEncoder(stdout)
	for _, r := range rec {
		enc.Encode(r)
	}
	if len(rec) == 0 && err == nil {
		fmt.Fprintf(stderr, "guiagent release: nothing was left held on %s\n", ledgerDisplay(c, screen))
	}
	return err
}
