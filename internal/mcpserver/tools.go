package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
)

// Tools live in one file per group: tools_observe.go, tools_input.go,
// tools_clipboard.go, vision.go (observe, with a model), task.go and
// flow.go. Each constructor declares its group (newTool's second argument);
// the catalogue below lists them in the order clients see them.

// need is what a tool needs before it is offered.
type need int

const (
	always        need = iota
	needsVision        // a vision model (Options.Vision, SetVision)
	needsTasks         // a task runner (Options.Tasks, SetTasks)
	needsFlows         // a flow runner (Options.Flows)
	needsElements      // an element source (the backend's accessibility tree)
	needsPages         // a browser: desktop.Navigator
	needsTabs          // a browser: desktop.Tabber
	needsUploads       // a browser: desktop.Uploader
	needsApps          // a phone: desktop.Apps
)

// catalogue is every tool the server can offer, in the order clients see
// them, with what each needs.
func (s *Server) catalogue() []toolDef {
	defs := []struct {
		def  func() toolDef
		need need
	}{
		{s.listDisplaysTool, always}, {s.screenshotTool, always}, {s.snapshotTool, needsElements}, {s.zoomTool, always},
		{s.cursorPositionTool, always}, {s.moveTool, always}, {s.clickTool, always},
		{s.doubleClickTool, always}, {s.mouseDownTool, always}, {s.mouseUpTool, always},
		{s.dragTool, always}, {s.scrollTool, always}, {s.typeTool, always},
		{s.pressKeyTool, always}, {s.hotkeyTool, always}, {s.waitTool, always},
		{s.findImageTool, always}, {s.findTextTool, always}, {s.readTextTool, always}, {s.clipboardTool, always},
		{s.locateTool, needsVision}, {s.queryTool, needsVision}, {s.assertTool, needsVision}, {s.waitForTool, needsVision},
		{s.executeTaskTool, needsTasks},
		{s.runFlowTool, needsFlows},
		{s.navigateTool, needsPages}, {s.tabsTool, needsTabs}, {s.uploadTool, needsUploads},
		{s.appsTool, needsApps},
	}
	out := make([]toolDef, len(defs))
	for i, d := range defs {
		out[i] = d.def()
		out[i].need = d.need
	}
	return out
}

// toolList is the catalogue's tools this server offers now, in order.
func (s *Server) toolList() []toolDef {
	return slices.DeleteFunc(s.catalogue(), func(t toolDef) bool { return !s.offers(t.need) })
}

// offers reports whether what a tool needs is there. Callers hold toolsMu or
// run before the server serves.
func (s *Server) offers(n need) bool {
	switch n {
	case needsVision:
		return s.vision.seer != nil
	case needsTasks:
		return s.tasks != nil
	case needsFlows:
		return s.opts.Flows != nil
	case needsElements:
		return s.elements != nil
	case needsPages:
		return has[desktop.Navigator](s.screen)
	case needsTabs:
		return has[desktop.Tabber](s.screen)
	case needsUploads:
		return has[desktop.Uploader](s.screen)
	case needsApps:
		return has[desktop.Apps](s.screen)
	}
	return true
}

// killGate refuses a call that changes the desktop while the kill switch
// is on (no switch: nothing to refuse).
func (s *Server) killGate(ctx context.Context) error {
	if s.kill == nil {
		return nil
	}
	return s.kill.Gate(ctx)
}

// has reports whether the backend has capability T.
func has[T any](s desktop.Screen) bool {
	_, ok := desktop.CapabilityOf[T](s)
	return ok
}

// Shared argument fields. The concepts they share (spaces, frames) are
// explained once, in the server's instructions.

// Where selects the display and the coordinate space of a tool's points.
type Where struct {
	Display string `json:"display,omitempty"`
	Space   string `json:"space,omitempty" jsonschema:"default image"`
	FrameID string `json:"frame_id,omitempty"`
}

// pointSchema refines the schema of a tool with a Where: the server's
// default space.
func (s *Server) pointSchema(sc *jsonschema.Schema) {
	p := prop(sc, "space") // the spaces are listed once, in the instructions
	p.Description = strings.TrimSuffix(p.Description, "image") + string(s.mode)
	if s.mode == geom.SpaceImage || s.mode == "" {
		p.Description = "" // the instructions say image is the default
	}
}

// targetProps are the input tools' properties that only the accessibility
// tree, OCR or a vision model can serve; refProps those only an element
// source can.
var (
	targetProps = []string{"target", "from_target", "to_target"}
	refProps    = []string{"ref", "from_ref", "to_ref"}
)

// canLocate reports whether some locate step can serve a target: the
// accessibility tree, OCR or a vision model.
func (s *Server) canLocate() bool {
	return s.vision.seer != nil || s.opts.OCR != nil || s.elements != nil
}

// withoutTargets removes an input tool's target properties while nothing can
// locate them (SetVision registers the tools again when a model comes), and
// its ref properties while there is no element source.
func (s *Server) withoutTargets(tool string, sc *jsonschema.Schema) {
	if s.elements == nil {
		for _, name := range refProps {
			delete(sc.Properties, name)
		}
	}
	if s.canLocate() {
		return
	}
	for _, name := range targetProps {
		delete(sc.Properties, name)
	}
	if tool == "gui_type" {
		delete(sc.Properties, "display") // it only says where target is
	}
}

// point is an input tool's point as read from its arguments: numbers in a
// space placed over the call's frame, a ref placed at its element's box
// centre, or words for the executor's locate step, or none of them (the
// current pointer position).
type point struct {
	nums    []float64      // as given, for action.Parse (nil with words, a ref or none)
	space   string         // the space of nums
	words   string         // the target in words ("" with coordinates)
	place   *operate.Place // nums or the ref resolved (nil with words or none)
	t       *target        // the same, with how its frame was chosen
	display geom.Display   // the display shown after an action without a point
}

// aim is an input tool's point arguments: x and y in Where.Space, an element
// in words (target), or a ref of the latest snapshot; at most one of them.
type aim struct {
	X, Y   *float64
	Target string
	Ref    string
	Where
	// target and ref name the tool's arguments ("target", "ref"; a drag's
	// "from_target", "from_ref"...).
	target, ref string
	// optional: with none of them the action happens at the pointer.
	optional bool
}

// pointArg reads an input tool's point: x and y (in w.Space, resolved over
// the frame frameFor picks), or a ref (its element's box centre), or words
// to locate, never two of them. With none, the action happens at the
// pointer: an error unless optional.
func (s *Server) pointArg(ctx context.Context, c *call, a aim) (point, error) {
	words, ref := strings.TrimSpace(a.Target), strings.TrimSpace(a.Ref)
	if a.target == "" {
		a.target, a.ref = "target", "ref"
	}
	given := 0
	for _, g := range []bool{words != "", ref != "", a.X != nil || a.Y != nil} {
		if g {
			given++
		}
	}
	xy, err := optXY(a.X, a.Y)
	switch {
	case given > 1 && s.elements == nil:
		return point{}, fmt.Errorf("give either coordinates or %s, not both", a.target)
	case given > 1:
		return point{}, fmt.Errorf("give one of coordinates, %s or %s, not several", a.target, a.ref)
	case ref != "":
		return s.refPoint(ctx, c, ref)
	case words != "":
		return point{words: words}, nil
	case err != nil:
		return point{}, err
	case xy == nil && !a.optional:
		return point{}, s.noPointError(a)
	case xy == nil:
		d, _, err := s.displayFor(ctx, a.Where)
		if err != nil && (a.Display != "" || a.FrameID != "") {
			return point{}, err // a display the caller named must exist
		}
		return point{space: a.Space, display: d}, nil
	}
	mv, err := s.parse(action.Raw{Kind: action.Move, At: xy}, a.Space)
	if err != nil {
		return point{}, err
	}
	t, err := s.resolve(ctx, c.ss, a.Where, *mv.At)
	if err != nil {
		return point{}, err
	}
	return point{nums: xy, space: a.Space, place: t.place(), t: &t, display: t.Display}, nil
}

// noPointError says what an input tool needs instead of nothing.
func (s *Server) noPointError(a aim) error {
	switch hasLoc := s.visionNow().seer != nil || s.opts.OCR != nil || s.elements != nil; {
	case hasLoc && s.elements != nil:
		return fmt.Errorf("give the point as coordinates, a %s from gui_snapshot, or describe the element in %s", a.ref, a.target)
	case hasLoc:
		return fmt.Errorf("give the point as coordinates, or describe the element in %s", a.target)
	}
	return errors.New("give the point as coordinates x and y")
}

// shown is where the action went, for the result: the point as resolved,
// else where the executor's locate step placed it.
func (p point) shown(at *operate.Place) target {
	if p.t != nil {
		return *p.t
	}
	return targetOf(at)
}

// act performs op for the call through the executor, the one the agent,
// flows and the Go API use too: it checks and confirms the keys (asking the
// calling client and the dashboard), places a target with the vision model,
// performs the action and says what it did. Each trace that ran goes to the
// call's session record (mask edits it first: typed text). An error of the
// input itself is named after verb; a refusal or a point that could not be
// placed is returned as it is.
func (s *Server) act(ctx context.Context, c *call, op operate.Op, verb string, mask ...func(*action.Trace)) (operate.Result, error) {
	op.Who = "A tool call"
	if c != nil && c.req != nil && c.req.Params != nil {
		op.Who = "A tool call (" + c.req.Params.Name + ")"
	}
	if ch := askingOf(ctx).ch; ch != nil {
		op.Ask = []ask.Channel{ch}
	}
	if op.Locate == nil {
		op.Locate = s.locator(c)
	}
	res, err := s.exec.Do(ctx, op)
	for _, t := range res.Traces() {
		if t.Outcome == action.OutcomeNotExecuted {
			continue
		}
		for _, m := range mask {
			m(&t)
		}
		var at, to *target
		if t.Action.Kind == op.Action.Kind {
			at, to = targetPtr(res.At), targetPtr(op.To)
		}
		d := geom.Display{}
		if at != nil {
			d = at.Display
		} else if dd, _, derr := s.display(ctx, op.Display); derr == nil {
			d = dd
		}
		s.noteAction(c, t, d, at, to)
	}
	if err != nil && res.Executed() && !errors.Is(err, operate.ErrCannotPerform) {
		return res, inputError(verb, err)
	}
	return res, err
}

// place is t as the executor takes it.
func (t target) place() *operate.Place {
	p := &operate.Place{Global: t.Global, FrameID: t.FrameID, Display: t.Display, Warning: t.Warning}
	if t.FrameID != "" {
		ip := t.Image
		p.Image = &ip
	}
	return p
}

// targetOf is a placed point as a target (zero for nil).
func targetOf(p *operate.Place) target {
	if p == nil {
		return target{}
	}
	t := target{Global: p.Global, Display: p.Display, FrameID: p.FrameID, Warning: p.Warning}
	if p.Image != nil {
		t.Image = *p.Image
	}
	if p.LocatedBy != "" {
		t.Source = fromSession // located on a screenshot the call took, now the session's latest
	}
	return t
}

func targetPtr(p *operate.Place) *target {
	if p == nil {
		return nil
	}
	t := targetOf(p)
	return &t
}

// note is what located p, followed by "; " (nothing for coordinates).
func note(p *operate.Place) string {
	if p == nil || p.Note == "" {
		return ""
	}
	return p.Note + "; "
}

// parse reads a tool's action through action.Parse, the parser every model
// adapter uses too: its points are named x and y in the call's space (the
// server's default when space is empty).
func (s *Server) parse(r action.Raw, space string) (action.Action, error) {
	sp, err := s.space(space)
	if err != nil {
		return action.Action{}, err
	}
	return action.Parse(r, sp)
}

// optXY reads an optional point: both x and y, or neither (nil).
func optXY(x, y *float64) ([]float64, error) {
	switch {
	case x == nil && y == nil:
		return nil, nil
	case x == nil || y == nil:
		return nil, errors.New("give both x and y, or neither to act at the current pointer position")
	}
	return []float64{*x, *y}, nil
}

// inputError names the action that failed and, for missing input support, the fix.
func inputError(action string, err error) error {
	return fmt.Errorf("%s failed: %w", action, err)
}

func withMods(mods []desktop.Key) string {
	if len(mods) == 0 {
		return ""
	}
	return " with " + desktop.ComboString(mods) + " held"
}

func warn(t target) string {
	if t.Warning == "" {
		return ""
	}
	return " (warning: " + t.Warning + ")"
}

func times(n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" %d times", n)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
