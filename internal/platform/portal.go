//go:build linux

package platform

import (
	"context"

	"github.com/guiagent/guiagent/internal/backend/portal"
	"github.com/guiagent/guiagent/internal/desktop"
)

// openPortal starts the xdg-desktop-portal backend on the session bus: the
// restore token of its input grant goes in o.StateDir.
func openPortal(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	b := portal.New(portal.Options{SessionBus: o.SessionBus, Display: o.Session.WaylandDisplay, StateDir: o.StateDir, StateSetting: o.StateSetting})
	if err := b.Start(ctx); err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	return b, b.Close, nil
}
