package x11

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
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
		q.Bounds = shift(q.Bounds, origin, 1)
	}
	if q.ActiveWindow == "" {
		q.ActiveWindow, _ = b.ActiveWindowTitle(ctx)
	}
	snap, err := src.Elements(ctx, q)
	if err != nil {
		return nil, err
	}
	for i := range snap.Elements {
		snap.Elements[i].Box.X -= origin.X
		snap.Elements[i].Box.Y -= origin.Y
	}
	snap.Query.Bounds = shift(snap.Query.Bounds, origin, -1)
	return snap, nil
}

func shift(rs []geom.Rect, by geom.GlobalPoint, sign int) []geom.Rect {
	out := make([]geom.Rect, len(rs))
	for i, r := range rs {
		r.X += sign * by.X
		r.Y += sign * by.Y
		out[i] = r
	}
	return out
}

var _ desktop.ElementActor = (*Backend)(nil)

