package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// Errors tools return (as IsError results) that callers may test for.
var (
	// ErrStaleFrame: the display changed geometry since the frame the
	// coordinates refer to was taken.
	ErrStaleFrame = errors.New("stale frame")
	// ErrOffDisplay: a point lies on no display.
	ErrOffDisplay = errors.New("point is off every display")
)

// spaces lists the accepted values of the `space` argument.
var spaces = append([]string{"image", "screen"}, geom.CoordinateModes...)

// imageTolerancePx is how far outside the image (in image pixels) a point may
// be and still be clamped onto the display edge instead of rejected.
const imageTolerancePx = 2

// parseSpace normalizes a `space` value; "" gives def.
func parseSpace(v, def string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	switch v {
	case "":
		return def, nil
	case "image", "image-absolute", "pixels", "absolute":
		return "image", nil
	case "screen", "global":
		return "screen", nil
	}
	if _, err := (geom.Profile{}).WithMode(v); err != nil {
		return "", fmt.Errorf("unknown coordinate space %q: use one of %s", v, strings.Join(spaces, ", "))
	}
	return v, nil
}

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
		id = s.opts.DefaultDisplay
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
	return 1920
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

// point describes one coordinate argument pair.
type point struct{ X, Y float64 }

// resolve maps (x, y) given in space on display id to a global pixel.
func (s *Server) resolve(ctx context.Context, ss *mcp.ServerSession, display, space string, p point) (target, error) {
	sp, err := parseSpace(space, s.mode)
	if err != nil {
		return target{}, err
	}
	d, ds, err := s.display(ctx, display)
	if err != nil {
		return target{}, err
	}
	if !finite(p.X) || !finite(p.Y) {
		return target{}, fmt.Errorf("coordinates (%v,%v) are not finite numbers", p.X, p.Y)
	}
	if sp == "screen" {
		g := geom.GlobalPoint{X: int(math.Round(p.X)), Y: int(math.Round(p.Y))}
		on, ok := geom.DisplayAt(ds, g)
		if !ok {
			return target{}, fmt.Errorf("%w: global point %v (space \"screen\") is on no display; the desktop spans %v (see gui_list_displays)",
				ErrOffDisplay, g, geom.VirtualBounds(ds))
		}
		return target{Global: g, Display: on}, nil
	}
	f, err := s.frameFor(ss, d)
	if err != nil {
		return target{}, err
	}
	ip := geom.ImagePoint{X: p.X, Y: p.Y}
	if sp != "image" {
		prof, err := (geom.Profile{}).WithMode(sp)
		if err != nil {
			return target{}, err
		}
		nums := []float64{p.X, p.Y}
		if prof.Order == geom.YX { // named x/y arguments are never swapped
			nums = []float64{p.Y, p.X}
		}
		if ip, err = prof.ToImage(nums, f); err != nil {
			return target{}, err
		}
	}
	img := f.ImageSize()
	if ip.X < -0.5-imageTolerancePx || ip.Y < -0.5-imageTolerancePx ||
		ip.X > float64(img.W)-0.5+imageTolerancePx || ip.Y > float64(img.H)-0.5+imageTolerancePx {
		return target{}, fmt.Errorf("%w: %v is outside the %dx%d image of frame %s (display %s); give a point inside the image, or space \"screen\" for global pixels",
			ErrOffDisplay, ip, img.W, img.H, f.ID, d.ID)
	}
	r, err := f.Resolve(ip, false)
	if err != nil {
		return target{}, fmt.Errorf("%w (frame %s)", err, f.ID)
	}
	return target{Image: ip, Global: r.Global, Display: d, FrameID: f.ID, Warning: r.Warning}, nil
}

// actionPoint is where a pointer action with an optional point happens.
type actionPoint struct {
	at      *geom.GlobalPoint // nil: at the current pointer position
	t       *target           // the resolved point; nil with at
	where   string            // for the result text: "at <point>" or "at the current pointer position"
	display geom.Display      // the display to show after the action
}

// optPoint resolves an optional point (x and y both given, or neither). With
// the point the action happens there, on its display; without it the action
// happens at the current pointer position and display (or the default one) is
// shown after it.
func (s *Server) optPoint(ctx context.Context, ss *mcp.ServerSession, display, space string, x, y *float64) (actionPoint, error) {
	if x == nil && y == nil {
		d, _, err := s.display(ctx, display)
		if err != nil && display != "" {
			return actionPoint{}, err // a display the caller named must exist
		}
		return actionPoint{where: "at the current pointer position", display: d}, nil
	}
	if x == nil || y == nil {
		return actionPoint{}, errors.New("give both x and y, or neither to act at the current pointer position")
	}
	t, err := s.resolve(ctx, ss, display, space, point{*x, *y})
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
	} else if d, err = geom.FindDisplay(ds, s.opts.DefaultDisplay); err != nil {
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
func (s *Server) noteAction(c *call, a llm.Action, d geom.Display, at, to *target, start time.Time, err error) {
	tr := agent.ActionTrace{Action: a, Outcome: "ok", Millis: time.Since(start).Milliseconds()}
	if err != nil {
		tr.Outcome, tr.Error = "failed", err.Error()
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

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
