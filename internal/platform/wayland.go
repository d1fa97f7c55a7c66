//go:build linux

package platform

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// ErrWlrootsNotBuilt is returned by openWlroots until the native Wayland
// backend (internal/backend/wayland) is merged into this branch.
var ErrWlrootsNotBuilt = fmt.Errorf("the native Wayland backend for wlroots compositors is not built into this branch yet: %w", desktop.ErrUnsupported)

// openWlroots starts the native backend on a wlroots compositor. The lead
// replaces its body with wayland.Open(ctx, wayland.Options{Display:
// o.Session.WaylandDisplay, RuntimeDir: o.Session.RuntimeDir}) at merge.
func openWlroots(_ context.Context, o Options) (desktop.Screen, func() error, error) {
	return nil, nil, fmt.Errorf("WAYLAND_DISPLAY=%s: %w; pass --backend portal to use xdg-desktop-portal instead (capture only on wlroots)", o.Session.WaylandDisplay, ErrWlrootsNotBuilt)
}
