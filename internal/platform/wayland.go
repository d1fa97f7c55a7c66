//go:build linux

package platform

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/desktop"
)

// openWlroots starts the native backend on a wlroots compositor (sway,
// Hyprland, river, ...): screencopy, virtual pointer and keyboard, data
// control, foreign toplevels; and, where the compositor says where windows
// are (sway's and Hyprland's IPC), the AT-SPI2 element source with each
// window's boxes mapped onto the screen.
func openWlroots(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	wo := wayland.Options{Display: o.Session.WaylandDisplay, RuntimeDir: o.Session.RuntimeDir}
	wo.Placer = wayland.NewPlacer(wayland.PlacerOptions{SwaySock: o.Session.SwaySock,
		HyprlandSignature: o.Session.HyprlandSignature, RuntimeDir: o.Session.RuntimeDir})
	if wo.Placer != nil {
		wo.Elements = waylandElements(o, wo.Placer)
	}
	b, err := wayland.Open(ctx, wo)
	if err != nil {
		return nil, nil, fmt.Errorf("WAYLAND_DISPLAY=%s: %w (on GNOME or KDE pass --backend portal)", o.Session.WaylandDisplay, err)
	}
	return b, b.Close, nil
}

// waylandElements is the AT-SPI2 client o asks for (nil when accessibility
// is off), placing each window where p says the compositor put it.
func waylandElements(o Options, p wayland.Placer) desktop.ElementSource {
	place := func(ctx context.Context) ([]atspi.Placed, error) {
		ws, err := p.Windows(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]atspi.Placed, len(ws))
		for i, w := range ws {
			out[i] = atspi.Placed{PID: w.PID, Title: w.Title, Rect: w.Rect, Focused: w.Focused, Absolute: w.XWayland}
		}
		return out, nil
	}
	return elementSourceWith(o, place)
}
