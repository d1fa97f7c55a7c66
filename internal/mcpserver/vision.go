package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/vision"
)

// errNoVision explains what a `target` needs when no vision model is configured.
var errNoVision = errors.New("locating a target needs a vision model: set " + config.Vars("Provider", "Model", "APIKey") + " (`guiagent doctor` checks them), or give coordinates")

// Limits of gui_wait_for.
const (
	waitForDefaultTimeout = vision.WaitDefaultTimeout
	waitForMaxTimeout     = vision.WaitMaxTimeout
	waitForDefaultEvery   = vision.WaitDefaultEvery
	waitForMinEvery       = vision.WaitMinEvery
)

// visionShot captures display d (region zero: all of it) prepared for
// profile p; it becomes the session's latest frame of d, so the boxes and
// centres the model's answer gives are pixels of that frame's image.
func (s *Server) visionShot(ctx context.Context, c *call, d geom.Display, region geom.Rect, p geom.Profile) (*imaging.Shot, llm.Image, error) {
	o := s.shotOptions(0, "", 0)
	o.Profile = p
	if !region.Empty() {
		o.MaxLongEdge = min(s.defaultLongEdge(), max(4*region.Size().LongEdge(), 64))
	}
	shot, err := s.capture(ctx, c, d, region, o)
	if err != nil {
		return nil, llm.Image{}, err
	}
	return shot, llm.Image{MIME: shot.MIME, Data: shot.Data, Frame: shot.Frame}, nil
}

// locateProfile is the profile of the model that locates.
func (v visionModel) locateProfile() geom.Profile {
	if v.locate.Name != "" {
		return v.locate
	}
	return v.ask
}

// visionOrErr is the vision service now, or errNoVision.
func (s *Server) visionOrErr() (visionModel, error) {
	v := s.visionNow()
	if v.seer == nil {
		return v, errNoVision
	}
	return v, nil
}

// notFound is a target the model did not find (operate.ErrNotFound, so a
// locate chain asks its next step).
type notFound struct{ msg string }

func (e notFound) Error() string        { return e.msg }
func (e notFound) Is(target error) bool { return target == operate.ErrNotFound }

// ambiguous is a locate tier's error for a target found in several places:
// the chain's next tier may tell them apart.
type ambiguous struct{ err error }

func (e ambiguous) Error() string        { return e.err.Error() }
func (e ambiguous) Unwrap() error        { return e.err }
func (e ambiguous) Is(target error) bool { return target == operate.ErrAmbiguous }

// located is a target description found on the screen.
type located struct {
	words string
	loc   vision.Location
	t     target // the box centre, resolved
}

// String says what was located and where, for results.
func (l located) String() string {
	b := l.loc.Box
	return fmt.Sprintf("located %q at box (%g,%g)-(%g,%g) of frame %s, centre %s (%s)",
		l.words, round2(b.X1), round2(b.Y1), round2(b.X2), round2(b.Y2), l.loc.Frame, l.t, l.loc.Reason)
}

// locateTarget finds words on display with the vision model and resolves the
// centre of its box through the resolver. Not found is an error that says
// nothing was done.
func (s *Server) locateTarget(ctx context.Context, c *call, display, words string) (located, error) {
	v, err := s.visionOrErr()
	if err != nil {
		return located{}, err
	}
	d, ds, err := s.display(ctx, display)
	if err != nil {
		return located{}, err
	}
	_, img, err := s.visionShot(ctx, c, d, geom.Rect{}, v.locateProfile())
	if err != nil {
		return located{}, err
	}
	loc, _, err := v.seer.Locate(ctx, img, words)
	if err != nil {
		return located{}, fmt.Errorf("locating %q: %w", words, err)
	}
	if !loc.Found {
		return located{}, notFound{fmt.Sprintf("could not find %q on display %s: %s; nothing was done", words, d.ID, loc.Reason)}
	}
	ctr := loc.Box.Center()
	r, err := action.Point{Space: geom.SpaceImage, X: ctr.X, Y: ctr.Y}.Resolve(img.Frame, ds, imageTolerancePx)
	if err != nil {
		return located{}, fmt.Errorf("the box located for %q: %w", words, err)
	}
	return located{words: words, loc: loc, t: target{Image: r.Image, Global: r.Global, Display: d, FrameID: img.Frame.ID, Warning: r.Warning}}, nil
}

// visionLocator is the vision model as the executor's locate step, for
// one call: the screenshot it locates on becomes the session's latest frame.
type visionLocator struct {
	s *Server
	c *call
}

func (v visionLocator) By() string { return operate.ByVision }

func (v visionLocator) Locate(ctx context.Context, t operate.Target) (operate.Place, error) {
	l, err := v.s.locateTarget(ctx, v.c, t.Display, t.Words)
	if err != nil {
		return operate.Place{}, err
	}
	p := l.t.place()
	p.LocatedBy, p.Note = operate.ByVision, "located_by vision: "+l.String()
	b := l.loc.Box // whole pixels around the model's box
	x1, y1 := int(math.Floor(b.X1)), int(math.Floor(b.Y1))
	p.Box = &geom.ImageRect{X: x1, Y: y1, W: int(math.Ceil(b.X2)) - x1, H: int(math.Ceil(b.Y2)) - y1}
	return *p, nil
}

// The vision tools.

// LocateArgs are gui_locate's arguments.
type LocateArgs struct {
	Target  string `json:"target" jsonschema:"the element in words, e.g. the Submit button, or the search field at the top"`
	Display string `json:"display,omitempty"`
}

// ImageBox is a rectangle in image pixels of a frame.
type ImageBox struct {
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
	X2 float64 `json:"x2"`
	Y2 float64 `json:"y2"`
}

// ImageXY is a point in image pixels of a frame.
type ImageXY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// LocateResult is gui_locate's answer.
type LocateResult struct {
	Found       bool      `json:"found"`
	Box         *ImageBox `json:"box,omitempty"`
	Center      *ImageXY  `json:"center,omitempty"`
	FrameID     string    `json:"frame_id"`
	Display     string    `json:"display"`
	ImageWidth  int       `json:"image_width"`
	ImageHeight int       `json:"image_height"`
	Reason      string    `json:"reason"`
}

func (s *Server) locateTool() toolDef {
	return newTool(s, GroupObserve, "gui_locate", "Locate an element",
		"Find an element described in words on a display, with the vision model. Takes a new screenshot (it becomes the display's latest frame, so x/y of other tools may use the centre directly) and returns found, box {x1,y1,x2,y2} and center {x,y} in pixels of that frame's image, frame_id and the model's reason. found false with a reason is a normal answer.",
		readOnly, func(sc *jsonschema.Schema) { prop(sc, "target").MinLength = new(1) },
		func(ctx context.Context, c *call, in LocateArgs) (*mcp.CallToolResult, error) {
			d, _, err := s.display(ctx, in.Display)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(in.Target) == "" {
				return nil, errors.New("target is empty: describe the element in words, e.g. \"the Submit button\"")
			}
			v, err := s.visionOrErr()
			if err != nil {
				return nil, err
			}
			_, img, err := s.visionShot(ctx, c, d, geom.Rect{}, v.locateProfile())
			if err != nil {
				return nil, err
			}
			loc, _, err := v.seer.Locate(ctx, img, in.Target)
			if err != nil {
				return nil, err
			}
			size := img.Frame.ImageSize()
			out := LocateResult{Found: loc.Found, FrameID: img.Frame.ID, Display: d.ID, ImageWidth: size.W, ImageHeight: size.H, Reason: loc.Reason}
			if loc.Found {
				b, ctr := loc.Box, loc.Box.Center()
				out.Box = &ImageBox{round2(b.X1), round2(b.Y1), round2(b.X2), round2(b.Y2)}
				out.Center = &ImageXY{round2(ctr.X), round2(ctr.Y)}
			}
			return jsonResult(out)
		})
}

// QueryArgs are gui_query's arguments.
type QueryArgs struct {
	Question string         `json:"question" jsonschema:"what to read from the screen, e.g. What is the order total?"`
	Schema   map[string]any `json:"schema,omitempty" jsonschema:"JSON Schema of the answer's data, e.g. {\"type\": \"number\"}; default {\"type\": \"string\"}"`
	Display  string         `json:"display,omitempty"`
	Region   *QueryRegion   `json:"region,omitempty" jsonschema:"ask about this part of the display only: corners in pixels of the latest screenshot image of the display (or in space)"`
}

// QueryRegion is the optional region of gui_query.
type QueryRegion struct {
	X1    float64 `json:"x1" jsonschema:"left edge"`
	Y1    float64 `json:"y1" jsonschema:"top edge"`
	X2    float64 `json:"x2" jsonschema:"right edge"`
	Y2    float64 `json:"y2" jsonschema:"bottom edge"`
	Space string  `json:"space,omitempty" jsonschema:"how to read the corners, as the space of other tools; default: image"`
}

// QueryResult is gui_query's answer.
type QueryResult struct {
	Data    json.RawMessage `json:"data"`
	Reason  string          `json:"reason"`
	FrameID string          `json:"frame_id"`
}

func (s *Server) queryTool() toolDef {
	return newTool(s, GroupObserve, "gui_query", "Read the screen",
		"Ask the vision model a question about what a display shows and get the answer as data valid against your JSON Schema (default: a string), with the model's reason.",
		readOnly, func(sc *jsonschema.Schema) {
			prop(sc, "question").MinLength = new(1)
			single(prop(sc, "schema"), "object")
			r := single(prop(sc, "region"), "object")
			enum(r, "space", geom.SpaceNames...)
		},
		func(ctx context.Context, c *call, in QueryArgs) (*mcp.CallToolResult, error) {
			var schema json.RawMessage
			if in.Schema != nil {
				b, err := json.Marshal(in.Schema)
				if err != nil {
					return nil, fmt.Errorf("schema: %w", err)
				}
				if err := vision.ValidateSchema(b); err != nil {
					return nil, err
				}
				schema = b
			}
			v, err := s.visionOrErr()
			if err != nil {
				return nil, err
			}
			d, region, err := s.queryRegion(ctx, c, in)
			if err != nil {
				return nil, err
			}
			_, img, err := s.visionShot(ctx, c, d, region, v.ask)
			if err != nil {
				return nil, err
			}
			ans, _, err := v.seer.Query(ctx, img, in.Question, schema)
			if err != nil {
				return nil, err
			}
			return jsonResult(QueryResult{Data: ans.Data, Reason: ans.Reason, FrameID: img.Frame.ID})
		})
}

// queryRegion resolves gui_query's display and optional region (corners
// through the resolver, as gui_zoom's).
func (s *Server) queryRegion(ctx context.Context, c *call, in QueryArgs) (geom.Display, geom.Rect, error) {
	d, _, err := s.display(ctx, in.Display)
	if err != nil || in.Region == nil {
		return d, geom.Rect{}, err
	}
	r := in.Region
	z, err := s.parse(action.Raw{Kind: action.Zoom, At: []float64{r.X1, r.Y1}, To: []float64{r.X2, r.Y2}}, r.Space)
	if err != nil {
		return d, geom.Rect{}, fmt.Errorf("region: %w", err)
	}
	a, err := s.resolve(ctx, c.ss, Where{Display: in.Display, Space: r.Space}, *z.At)
	if err != nil {
		return d, geom.Rect{}, fmt.Errorf("region corner (x1,y1): %w", err)
	}
	b, err := s.resolve(ctx, c.ss, Where{Display: in.Display, Space: r.Space}, *z.To)
	if err != nil {
		return d, geom.Rect{}, fmt.Errorf("region corner (x2,y2): %w", err)
	}
	if a.Display.ID != b.Display.ID {
		return d, geom.Rect{}, fmt.Errorf("the region spans displays %s and %s: give a region on one display", a.Display.ID, b.Display.ID)
	}
	rect, err := geom.ZoomRegion(a.Global, b.Global, a.Display)
	return a.Display, rect, err
}

// AssertArgs are gui_assert's arguments.
type AssertArgs struct {
	Assertion string `json:"assertion" jsonschema:"a statement about the screen, e.g. The dialog says Saved"`
	Display   string `json:"display,omitempty"`
}

// AssertResult is gui_assert's answer.
type AssertResult struct {
	Pass    bool   `json:"pass"`
	Reason  string `json:"reason"`
	FrameID string `json:"frame_id"`
}

func (s *Server) assertTool() toolDef {
	return newTool(s, GroupObserve, "gui_assert", "Check the screen",
		"Ask the vision model whether a statement about a display is true now: pass (true or false) and the model's reason. pass false is a normal answer.",
		readOnly, func(sc *jsonschema.Schema) { prop(sc, "assertion").MinLength = new(1) },
		func(ctx context.Context, c *call, in AssertArgs) (*mcp.CallToolResult, error) {
			d, _, err := s.display(ctx, in.Display)
			if err != nil {
				return nil, err
			}
			vm, err := s.visionOrErr()
			if err != nil {
				return nil, err
			}
			_, img, err := s.visionShot(ctx, c, d, geom.Rect{}, vm.ask)
			if err != nil {
				return nil, err
			}
			v, _, err := vm.seer.Assert(ctx, img, in.Assertion)
			if err != nil {
				return nil, err
			}
			return jsonResult(AssertResult{Pass: v.Pass, Reason: v.Reason, FrameID: img.Frame.ID})
		})
}

// WaitForArgs are gui_wait_for's arguments.
type WaitForArgs struct {
	Condition  string  `json:"condition" jsonschema:"what the screen should show, e.g. the Saved banner is visible"`
	TimeoutS   float64 `json:"timeout_s,omitempty" jsonschema:"give up after this many seconds, at most 300; default 15"`
	IntervalMS int     `json:"interval_ms,omitempty" jsonschema:"look at the screen this often, at least 250 ms; default 1000"`
	Display    string  `json:"display,omitempty"`
}

// WaitForResult is gui_wait_for's answer.
type WaitForResult struct {
	Met        bool   `json:"met"`
	ElapsedMS  int64  `json:"elapsed_ms"`
	Checks     int    `json:"checks"`
	ModelCalls int    `json:"model_calls"`
	Reason     string `json:"reason"`
}

func (s *Server) waitForTool() toolDef {
	return newTool(s, GroupObserve, "gui_wait_for", "Wait for a condition",
		"Wait until a statement about a display is true, asking the vision model; the model is asked again only when the screen has changed since its last answer. Returns met, elapsed_ms, checks (looks at the screen), model_calls and the model's last reason. met false at the timeout is a normal answer.",
		readOnly, func(sc *jsonschema.Schema) {
			prop(sc, "condition").MinLength = new(1)
			between(sc, "timeout_s", 0, waitForMaxTimeout.Seconds())
			between(sc, "interval_ms", float64(waitForMinEvery.Milliseconds()), 60000)
		},
		func(ctx context.Context, c *call, in WaitForArgs) (*mcp.CallToolResult, error) {
			timeout, every, err := waitForLimits(in)
			if err != nil {
				return nil, err
			}
			d, _, err := s.display(ctx, in.Display)
			if err != nil {
				return nil, err
			}
			r, err := s.waitFor(ctx, c, d, in.Condition, timeout, every)
			if err != nil {
				return nil, err
			}
			return jsonResult(r)
		})
}

// waitForLimits reads gui_wait_for's timeout and interval with their defaults.
func waitForLimits(in WaitForArgs) (timeout, every time.Duration, err error) {
	timeout, every = waitForDefaultTimeout, waitForDefaultEvery
	switch {
	case in.TimeoutS < 0 || in.TimeoutS > waitForMaxTimeout.Seconds():
		return 0, 0, fmt.Errorf("timeout_s must be 0 to %g seconds (0 means %g), got %g", waitForMaxTimeout.Seconds(), waitForDefaultTimeout.Seconds(), in.TimeoutS)
	case in.IntervalMS != 0 && in.IntervalMS < int(waitForMinEvery.Milliseconds()):
		return 0, 0, fmt.Errorf("interval_ms must be at least %d, got %d", waitForMinEvery.Milliseconds(), in.IntervalMS)
	}
	if in.TimeoutS > 0 {
		timeout = time.Duration(in.TimeoutS * float64(time.Second))
	}
	if in.IntervalMS > 0 {
		every = time.Duration(in.IntervalMS) * time.Millisecond
	}
	return timeout, every, nil
}

// waitFor checks condition on d with vision.WaitFor (the Go API's WaitFor
// uses it too): the session's screenshots, and thumbnails of the display.
func (s *Server) waitFor(ctx context.Context, c *call, d geom.Display, condition string, timeout, every time.Duration) (WaitForResult, error) {
	vm, err := s.visionOrErr()
	if err != nil {
		return WaitForResult{}, err
	}
	look := vision.Look{
		Shoot: func(ctx context.Context) (llm.Image, imaging.Thumb, error) {
			shot, img, err := s.visionShot(ctx, c, d, geom.Rect{}, vm.ask)
			if err != nil {
				return llm.Image{}, imaging.Thumb{}, err
			}
			return img, shot.Thumb, nil
		},
		Thumb: func(ctx context.Context) (imaging.Thumb, error) {
			th, err := s.shots.Thumb(ctx, s.screen, d, geom.Rect{})
			if err != nil {
				return th, fmt.Errorf("looking at display %s: %w", d.ID, err)
			}
			return th, nil
		},
	}
	r, err := vision.WaitFor(ctx, vm.seer, look, condition, timeout, every)
	return WaitForResult{Met: r.Met, ElapsedMS: r.Elapsed.Milliseconds(), Checks: r.Checks, ModelCalls: r.ModelCalls, Reason: r.Reason}, err
}

// singleXY gives optional coordinate properties the one type number.
func singleXY(sc *jsonschema.Schema, names ...string) {
	for _, n := range names {
		single(prop(sc, n), "number")
	}
}

// single sets the one JSON type of a schema property whose Go type is a
// pointer or map (["null", t] becomes t) and returns it.
func single(p *jsonschema.Schema, t string) *jsonschema.Schema {
	p.Types, p.Type = nil, t
	return p
}
