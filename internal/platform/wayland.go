//go:build linux

package platform

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/desktop"
)

// openWlroots starts the native backend on a wlroots compositor (sway,
// Hyprland, river, ...): screencopy, virtual pointer and keyboard, data
// control, foreign toplevels.
func openWlroots(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	b, err := wayland.Open(ctx, wayland.Options{Display: o.Session.WaylandDisplay, RuntimeDir: o.Session.RuntimeDir})
	if err != nil {
		return nil, nil, fmt.Errorf("WAYLAND_DISPLAY=%s: %w (on GNOME or KDE pass --backend portal)", o.Session.WaylandDisplay, err)
	}
	return b, b.Close, nil
}
