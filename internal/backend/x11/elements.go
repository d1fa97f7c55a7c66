package x11

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

var (
	_ desktop.ElementSource = (*Backend)(nil)
	_ desktop.ElementGate   = (*Backend)(nil)
)

// ElementsAvailable reports whether an element source is attached
// (Options.Elements).
func (b *Backend) ElementsAvailable() bool { return b.opts.Elements != nil }

// Elements takes a snapshot through the attached element source (AT-SPI2).
// The source works in X root-window pixels: Elements hands it the displays
// in those (q.Bounds) and the focused window's title as a hint, and shifts
// the boxes it returns into global logical pixels.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	src := b.opts.Elements
	if src == nil {
		return nil, fmt.Errorf("reading the UI as elements: %w: accessibility is off (set the accessibility setting to auto or on; guiagent doctor names it)", desktop.ErrUnsupported)
	}
	ds, err := b.Displays(ctx)
	if err != nil {
		return nil, err
	}
	b.layoutMu.Lock()
	origin := b.origin
	b.layoutMu.Unlock()
	if q.Bounds == nil {
		for _, d := range ds {
			r := d.Bounds
			r.X += origin.X
			r.Y += origin.Y
			q.Bounds = append(q.Bounds, r)
		}
	} else {
		q.Bounds = desktop.MoveRects(q.Bounds, origin.X, origin.Y)
	}
	if q.ActiveWindow == "" {
		q.ActiveWindow, _ = b.ActiveWindowTitle(ctx)
	}
	snap, err := src.Elements(ctx, q)
	if err != nil {
		return nil, err
	}
	snap.Move(-origin.X, -origin.Y)
	return snap, nil
}

var _ desktop.ElementActor = (*Backend)(nil)
