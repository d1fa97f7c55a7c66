package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
)

// Errors tools return (as IsError results) that callers may test for.
var (
	// ErrStaleFrame: the display changed geometry since the frame the
	// coordinates refer to was taken.
	ErrStaleFrame = errors.New("stale frame")
	// ErrOffDisplay: a point lies on no display (geom.ErrOffDisplay).
	ErrOffDisplay = geom.ErrOffDisplay
)

// imageTolerancePx is how far outside the image (in image pixels) a point may
// be and still be clamped onto the display edge instead of rejected.
const imageTolerancePx = 2

// target is one resolved point.
type target struct {
	Image   geom.ImagePoint
	Global  geom.GlobalPoint
	Display geom.Display
	FrameID string // "" in screen space
	// Source says how the frame was chosen.
	Source  frameSource
	Warning string
}

// String says where the point went and over which frame it was read.
func (t target) String() string {
	if t.FrameID == "" {
		return fmt.Sprintf("global %v on display %s", t.Global, t.Display.ID)
	}
	s := fmt.Sprintf("image %v = global %v on display %s (frame %s", t.Image, t.Global, t.Display.ID, t.FrameID)
	if t.Source == fromServer || t.Source == fromImplicit {
		s += ": " + t.Source.String()
	}
	return s + ")"
}

// displays lists the current displays, naming the backend on failure.
func (s *Server) displays(ctx context.Context) ([]geom.Display, error) {
	ds, err := s.screen.Displays(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing displays of the %s desktop: %w", s.screen.Name(), err)
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("%w: the %s desktop reports no displays", geom.ErrNoDisplay, s.screen.Name())
	}
	return ds, nil
}

// display finds the display with id ("" = the configured default, else primary).
func (s *Server) display(ctx context.Context, id string) (geom.Display, []geom.Display, error) {
	ds, err := s.displays(ctx)
	if err != nil {
		return geom.Display{}, nil, err
	}
	if id == "" {
		id = s.defaultDisplay()
	}
	d, err := geom.FindDisplay(ds, id)
	return d, ds, err
}

// shotOptions returns the default screenshot options with per-call overrides.
func (s *Server) shotOptions(maxLongEdge int, format string, quality int) imaging.Options {
	o := s.opts.Shot
	if maxLongEdge > 0 {
		o.MaxLongEdge = maxLongEdge
	}
	if format != "" {
		o.Format = strings.ToLower(format)
	}
	if quality > 0 {
		o.Quality = quality
	}
	return o
}

// defaultLongEdge is the long-edge cap of a default screenshot.
func (s *Server) defaultLongEdge() int {
	if s.opts.Shot.MaxLongEdge > 0 {
		return s.opts.Shot.MaxLongEdge
	}
	return imaging.DefaultMaxLongEdge
}

// implicitFrame is the frame a default screenshot of d would have.
func (s *Server) implicitFrame(d geom.Display) geom.Frame {
	content, prepared := s.opts.Shot.Profile.PrepareSize(d.Bounds.Size(), s.defaultLongEdge())
	f := geom.NewFrame("implicit:"+d.ID, d, d.Bounds, content)
	f.Prepared = prepared
	return f
}

// frameFor returns the frame points on display d are read over: frame
// frameID when given (of any session, while the server holds it), else the
// session's latest frame of d, else the server's latest, else the implicit
// frame. A frame of another display, or of a display whose geometry changed
// since, is an error naming the fix.
func (s *Server) frameFor(ss *mcp.ServerSession, d geom.Display, frameID string) (geom.Frame, frameSource, error) {
	var h heldFrame
	src := fromFrameID
	if frameID != "" {
		var ok bool
		if h, ok = s.frames.byFrameID(frameID); !ok {
			return geom.Frame{}, src, unknownFrame(frameID)
		}
		if h.frame.Display.ID != d.ID {
			return geom.Frame{}, src, fmt.Errorf("frame_id %s is a screenshot of display %s, not of display %s: give display %s or leave display out",
				frameID, h.frame.Display.ID, d.ID, h.frame.Display.ID)
		}
	} else {
		var ok bool
		if h, src, ok = s.frames.current(ss, d.ID); !ok {
			return s.implicitFrame(d), fromImplicit, nil
		}
	}
	f := h.frame
	if f.Display.Bounds != d.Bounds || f.Display.ScaleFactor() != d.ScaleFactor() {
		return geom.Frame{}, src, fmt.Errorf("%w: display %s changed from %v (scale %g) to %v (scale %g) since screenshot %s was taken; take a new screenshot with gui_screenshot",
			ErrStaleFrame, d.ID, f.Display.Bounds, f.Display.ScaleFactor(), d.Bounds, d.ScaleFactor(), f.ID)
	}
	return f, src, nil
}

// displayFor finds the display a tool's points are on: w.Display, else the
// display of frame w.FrameID, else the default one.
func (s *Server) displayFor(ctx context.Context, w Where) (geom.Display, []geom.Display, error) {
	id := w.Display
	if id == "" && w.FrameID != "" {
		h, ok := s.frames.byFrameID(w.FrameID)
		if !ok {
			return geom.Display{}, nil, unknownFrame(w.FrameID)
		}
		id = h.frame.Display.ID
	}
	return s.display(ctx, id)
}

// resolve maps point p of an action (named x and y in its space) on display
// w.Display to a global pixel through the resolver (action.Point.Resolve,
// that is geom.ResolveIn): screen points as they are, the other spaces over
// the frame frameFor picks (w.FrameID, else the latest).
func (s *Server) resolve(ctx context.Context, ss *mcp.ServerSession, w Where, p action.Point) (target, error) {
	d, ds, err := s.displayFor(ctx, w)
	if err != nil {
		return target{}, err
	}
	if p.Space == geom.SpaceScreen {
		r, err := p.Resolve(geom.Frame{}, ds, imageTolerancePx)
		if err != nil {
			return target{}, fmt.Errorf("%w (see gui_list_displays)", err)
		}
		return target{Global: r.Global, Display: r.Display}, nil
	}
	f, src, err := s.frameFor(ss, d, w.FrameID)
	if err != nil {
		return target{}, err
	}
	r, err := p.Resolve(f, ds, imageTolerancePx)
	switch {
	case errors.Is(err, geom.ErrOffDisplay):
		return target{}, fmt.Errorf("%w; give a point inside the image, or space \"screen\" for global pixels", err)
	case err != nil:
		return target{}, fmt.Errorf("%w (frame %s)", err, f.ID)
	}
	return target{Image: r.Image, Global: r.Global, Display: d, FrameID: f.ID, Source: src, Warning: r.Warning}, nil
}

// space reads a tool's `space` argument (the server's default when empty) as
// the space of its named x and y.
func (s *Server) space(v string) (geom.Space, error) {
	sp, err := geom.ParseSpace(v, s.mode)
	return sp.Named(), err
}

// imageOf expresses global point g in frame frameID, else in the latest frame
// of the display containing it (or of display id when given).
func (s *Server) imageOf(ctx context.Context, ss *mcp.ServerSession, id, frameID string, g geom.GlobalPoint) (geom.ImagePoint, geom.Frame, bool, error) {
	ds, err := s.displays(ctx)
	if err != nil {
		return geom.ImagePoint{}, geom.Frame{}, false, err
	}
	if id == "" && frameID != "" {
		h, ok := s.frames.byFrameID(frameID)
		if !ok {
			return geom.ImagePoint{}, geom.Frame{}, false, unknownFrame(frameID)
		}
		id = h.frame.Display.ID
	}
	var d geom.Display
	if id != "" {
		if d, err = geom.FindDisplay(ds, id); err != nil {
			return geom.ImagePoint{}, geom.Frame{}, false, err
		}
	} else if on, ok := geom.DisplayAt(ds, g); ok {
		d = on
	} else if d, err = geom.FindDisplay(ds, s.defaultDisplay()); err != nil {
		return geom.ImagePoint{}, geom.Frame{}, false, err
	}
	f, _, err := s.frameFor(ss, d, frameID)
	if err != nil {
		return geom.ImagePoint{}, geom.Frame{}, false, err
	}
	ip := f.GlobalToImage(g)
	in := f.Region.Contains(g)
	return ip, f, in, nil
}

// noteAction adds one executed action to the call's session record: tr is
// the executor's trace (the action as the client asked for it, points in its
// space; outcome, error, duration, located_by), at and to the resolved
// points (nil when the action has none), d the display acted on. Image
// points are given in the session's latest image of the display, which
// becomes the call's frame for the overlay; without a point the action is
// shown on that image's legend.
func (s *Server) noteAction(c *call, tr action.Trace, d geom.Display, at, to *target) {
	tr.Global, tr.Image, tr.GlobalTo, tr.ImageTo = nil, nil, nil, nil
	var frame *imaging.Shot
	tr.Global, tr.Image, frame = s.seenAt(c.ss, at)
	if c.frame == nil {
		c.frame = frame
	}
	if to != nil {
		var toFrame *imaging.Shot
		tr.GlobalTo, tr.ImageTo, toFrame = s.seenAt(c.ss, to)
		if toFrame != frame {
			tr.ImageTo = nil // a point in another image cannot be drawn on this one
		}
	}
	if at == nil && c.frame == nil && d.ID != "" {
		if h, _, ok := s.frames.current(c.ss, d.ID); ok {
			c.frame = h.img
		}
	}
	c.actions = append(c.actions, tr)
}

// seenAt returns t's global point and, when known, its point in the image of
// the frame it refers to with that image (nil when the session holds none).
// A point given in screen space is placed in the session's latest image of its
// display when that image shows it.
func (s *Server) seenAt(ss *mcp.ServerSession, t *target) (*geom.GlobalPoint, *geom.ImagePoint, *imaging.Shot) {
	if t == nil {
		return nil, nil, nil
	}
	g := t.Global
	if t.FrameID != "" {
		ip := t.Image
		return &g, &ip, s.frames.image(t.FrameID)
	}
	h, _, ok := s.frames.current(ss, t.Display.ID)
	if !ok || h.img == nil || h.frame.Display.Bounds != t.Display.Bounds || !h.frame.Region.Contains(g) {
		return &g, nil, nil
	}
	ip := h.frame.GlobalToImage(g)
	return &g, &ip, h.img
}
