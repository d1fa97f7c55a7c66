package app

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
)

// LedgerDisplay names the desktop whose held input a ledger records.
func LedgerDisplay(c config.Config, s desktop.Screen) string {
	if c.VNC != "" {
		return "vnc " + c.VNC
	}
	if d := s.DisplayName(); d != "" {
		return s.Name() + " " + d
	}
	return s.Name()
}

// RecoverHeldInput releases what killed guiagent processes left pressed on
// this desktop and returns this process's ledger for its Input.
func RecoverHeldInput(ctx context.Context, c config.Config, s desktop.Screen) (*desktop.Ledger, []desktop.Recovered, error) {
	display := LedgerDisplay(c, s)
	led, err := desktop.NewLedger(c.StateDir, display)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: set %s to a writable directory", err, config.Var("StateDir"))
	}
	led.StateVar = config.Var("StateDir")
	rec, err := desktop.RecoverInput(ctx, s, c.StateDir, display)
	return led, rec, err
}

// attachLedger is the start-up hook: it replays dead ledgers (logging each)
// and makes Input record what it holds.
func (a *App) attachLedger(ctx context.Context) error {
	led, rec, err := RecoverHeldInput(ctx, a.cfg, a.screen)
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
