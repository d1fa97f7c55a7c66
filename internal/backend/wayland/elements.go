package wayland

import (
	"context"
	"fmt"
	"io"

	"github.com/guiagent/guiagent/internal/desktop"
)

var (
	_ desktop.ElementSource = (*Backend)(nil)
	_ desktop.ElementGate   = (*Backend)(nil)
	_ desktop.ElementActor  = (*Backend)(nil)
)

// ElementsAvailable reports whether an element source is attached
// (Options.Elements, which needs Options.Placer).
func (b *Backend) ElementsAvailable() bool { return b.opts.Elements != nil }

// WhyNoElements says why there can be no element source here: a
// compositor that does not say where windows are; "" otherwise.
func (b *Backend) WhyNoElements() string {
	if b.opts.Placer == nil {
		return NoPlacer(b.compositor)
	}
	return ""
}

// Elements takes a snapshot through the attached element source, which
// works in layout logical pixels (each window's boxes mapped through the
// placer): Elements hands it the outputs in those (q.Bounds) and shifts the
// boxes it returns into global logical pixels.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	src := b.opts.Elements
	if src == nil {
		why := b.WhyNoElements()
		if why == "" {
			why = "accessibility is off (set the accessibility setting to auto or on; guiagent doctor names it)"
		}
		return nil, fmt.Errorf("reading the UI as elements: %w: %s", desktop.ErrUnsupported, why)
	}
	if err := b.c.roundtrip(ctx); err != nil {
		return nil, err
	}
	ps, origin := b.places()
	if q.Bounds == nil {
		for _, p := range ps {
			q.Bounds = append(q.Bounds, p.logical)
		}
	} else {
		q.Bounds = desktop.MoveRects(q.Bounds, origin.X, origin.Y)
	}
	snap, err := src.Elements(ctx, q)
	if err != nil {
		return nil, err
	}
	snap.Move(-origin.X, -origin.Y)
	return snap, nil
}

// closeElements closes the element source when it holds connections.
func (b *Backend) closeElements() error {
	if c, ok := b.opts.Elements.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
