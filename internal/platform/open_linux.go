package platform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Open connects to the desktop Select picks for o and returns its started
// backend and a function that closes the backend and any private display
// Open started.
func Open(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	ch, err := Select(o)
	if err != nil {
		return nil, nil, err
	}
	if open, ok := anywhere[ch.Backend]; ok {
		return open(ctx, o)
	}
	switch ch.Backend {
	case Wayland:
		return openWlroots(ctx, o)
	case Portal:
		return openPortal(ctx, o)
	}
	return openX11(ctx, o)
}

// openX11 starts the X11 backend on o.Session.XDisplay, or on a private Xvfb
// when o asks for one (always with ForceVirtual; with VirtualDisplay when the
// display is not reachable).
func openX11(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	display := o.Session.XDisplay
	var vd *VirtualDisplay
	if o.ForceVirtual || o.VirtualDisplay != (geom.Size{}) {
		useVirtual := o.ForceVirtual
		if !useVirtual {
			useVirtual = display == "" || x11.Reachable(display) != nil
		}
		if useVirtual {
			var err error
			vd, err = StartXvfb(ctx, XvfbOptions{Width: o.VirtualDisplay.W, Height: o.VirtualDisplay.H})
			if err != nil {
				return nil, nil, fmt.Errorf("start the virtual display: %w", err)
			}
			display = vd.Display
		}
	}
	if display == "" {
		return nil, nil, fmt.Errorf("%w: DISPLAY is not set; run inside a desktop session, or pass --virtual-display 1280x800 to use a private Xvfb", ErrNoDisplay)
	}
	if vd == nil {
		if err := x11.Reachable(display); err != nil {
			return nil, nil, fmt.Errorf("%w: DISPLAY=%s: %v; check DISPLAY and XAUTHORITY, or pass --virtual-display 1280x800 to use a private Xvfb", ErrNoDisplay, display, err)
		}
	}
	b := x11.New(x11.Options{Display: display, XAuthority: o.XAuthority, Elements: elementSource(o)})
	if err := b.Start(ctx); err != nil {
		_ = b.Close()
		return nil, nil, errors.Join(err, vd.Close())
	}
	closer := func() error { return errors.Join(b.Close(), vd.Close()) }
	return b, closer, nil
}

// elementSource is the AT-SPI2 client o asks for, or nil. Apart from the
// display, nothing is checked here: the client connects on first use, so a
// session without an accessibility bus starts as well and says why when a
// snapshot is asked for.
func elementSource(o Options) desktop.ElementSource { return elementSourceWith(o, nil) }

// elementSourceWith is elementSource whose windows are placed by place
// (atspi.Options.Place; nil: the boxes are the screen's already).
func elementSourceWith(o Options, place func(context.Context) ([]atspi.Placed, error)) desktop.ElementSource {
	mode := atspi.Mode(o.Accessibility)
	if mode != atspi.ModeAuto && mode != atspi.ModeOn {
		return nil
	}
	c := atspi.New(atspi.Options{SessionBus: o.SessionBus, Bus: o.AccessibilityBus, Mode: mode, Place: place})
	if mode == atspi.ModeOn {
		// Applications that wait for IsEnabled build their trees meanwhile.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = c.Connect(ctx)
		}()
	}
	return c
}
