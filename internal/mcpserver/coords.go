package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	Warning string
}

func (t target) String() string {
	if t.FrameID == "" {
		return fmt.Sprintf("global %v on display %s", t.Global, t.Display.ID)
	}
	return fmt.Sprintf("image %v = global %v on display %s", t.Image, t.Global, t.Display.ID)
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

// frameFor returns the latest frame of display d for the calling session, or
// the implicit frame when the session has none. A frame of a display whose
// geometry changed since is an ErrStaleFrame error.
func (s *Server) frameFor(ss *mcp.ServerSession, d geom.Display) (geom.Frame, error) {
	f, ok := s.frames.get(ss, d.ID)
	if !ok {
		return s.implicitFrame(d), nil
	}
	if f.Display.Bounds != d.Bounds || f.Display.ScaleFactor() != d.ScaleFactor() {
		return geom.Frame{}, fmt.Errorf("%w: display %s changed from %v (scale %g) to %v (scale %g) since screenshot %s was taken; take a new screenshot with gui_screenshot",
			ErrStaleFrame, d.ID, f.Display.Bounds, f.Display.ScaleFactor(), d.Bounds, d.ScaleFactor(), f.ID)
	}
	return f, nil
}

// resolve maps point p of an action (named x and y in its space) on display
// id to a global pixel through the resolver (action.Point.Resolve, that is
// geom.ResolveIn): screen points as they are, the other spaces over the
// session's latest frame of the display.
func (s *Server) resolve(ctx context.Context, ss *mcp.ServerSession, display string, p action.Point) (target, error) {
	d, ds, err := s.display(ctx, display)
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
	f, err := s.frameFor(ss, d)
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
	return target{Image: r.Image, Global: r.Global, Display: d, FrameID: f.ID, Warning: r.Warning}, nil
}

// space reads a tool's `space` argument (the server's default when empty) as
// the space of its named x and y.
func (s *Server) space(v string) (geom.Space, error) {
	sp, err := geom.ParseSpace(v, s.mode)
	return sp.Named(), err
}

// actionPoint is where a pointer action with an optional point happens.
type actionPoint struct {
	at      *geom.GlobalPoint // nil: at the current pointer position
	t       *target           // the resolved point; nil with at
	where   string            // for the result text: "at <point>" or "at the current pointer position"
	display geom.Display      // the display to show after the action
}

// optPoint resolves an action's optional point. With the point the action
// happens there, on its display; without it the action happens at the current
// pointer position and display (or the default one) is shown after it.
func (s *Server) optPoint(ctx context.Context, ss *mcp.ServerSession, display string, p *action.Point) (actionPoint, error) {
	if p == nil {
		d, _, err := s.display(ctx, display)
		if err != nil && display != "" {
			return actionPoint{}, err // a display the caller named must exist
		}
		return actionPoint{where: "at the current pointer position", display: d}, nil
	}
	t, err := s.resolve(ctx, ss, display, *p)
	if err != nil {
		return actionPoint{}, err
	}
	return actionPoint{at: &t.Global, t: &t, where: "at " + t.String() + warn(t), display: t.Display}, nil
}

// imageOf expresses global point g in the latest frame of the display containing
// it (or of display id when given).
func (s *Server) imageOf(ctx context.Context, ss *mcp.ServerSession, id string, g geom.GlobalPoint) (geom.ImagePoint, geom.Frame, bool, error) {
	ds, err := s.displays(ctx)
	if err != nil {
		return geom.ImagePoint{}, geom.Frame{}, false, err
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
	f, err := s.frameFor(ss, d)
	if err != nil {
		return geom.ImagePoint{}, geom.Frame{}, false, err
	}
	ip := f.GlobalToImage(g)
	in := f.Region.Contains(g)
	return ip, f, in, nil
}

// noteAction adds one input action to the call's session record: a as the
// client asked for it (points in its space), at and to the resolved points
// (nil when the action has none), d the display acted on, start when the input
// began and err its error. Image points are given in the session's latest
// image of the display, which becomes the call's frame for the overlay;
// without a point the action is shown on that image's legend.
func (s *Server) noteAction(c *call, a action.Action, d geom.Display, at, to *target, start time.Time, err error) {
	tr := action.Trace{Action: a, Outcome: action.OutcomeOK, Millis: time.Since(start).Milliseconds()}
	if err != nil {
		tr.Outcome, tr.Error = action.OutcomeFailed, err.Error()
	}
	if at != nil {
		tr.Warning = at.Warning
	}
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
		if h, ok := s.frames.latest(c.ss, d.ID); ok {
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
		return &g, &ip, s.frames.image(ss, t.Display.ID, t.FrameID)
	}
	h, ok := s.frames.latest(ss, t.Display.ID)
	if !ok || h.img == nil || h.frame.Display.Bounds != t.Display.Bounds || !h.frame.Region.Contains(g) {
		return &g, nil, nil
	}
	ip := h.frame.GlobalToImage(g)
	return &g, &ip, h.img
}
