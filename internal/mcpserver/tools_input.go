package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
)

// The input group: mouse and keyboard. Every handler reads its arguments
// into an action and its points, and hands them to act, which performs them
// through the one executor (operate) and records them.

// Point is the point arguments shared by the input tools that act at one:
// coordinates, an element in words, or a ref of the latest snapshot.
type Point struct {
	X      *float64 `json:"x,omitempty"`
	Y      *float64 `json:"y,omitempty"`
	Target string   `json:"target,omitempty"` // the server's instructions explain target and ref once
	Ref    string   `json:"ref,omitempty"`
}

func (p Point) aim(w Where, optional bool) aim {
	return aim{X: p.X, Y: p.Y, Target: p.Target, Ref: p.Ref, Where: w, optional: optional}
}

// InputResult is the structured content of the result of every input tool
// that acts at a point (gui_move, gui_click, gui_double_click,
// gui_mouse_down, gui_mouse_up, gui_drag, gui_scroll, gui_type): how its
// point was found and where it is, so a client need not parse the text.
// gui_press_key and gui_hotkey act at no point and have none.
type InputResult struct {
	// LocatedBy says how the point was found: point (coordinates the caller
	// gave), ref (an element of the session's latest snapshot),
	// accessibility, ocr or vision (a target found in the accessibility
	// tree, read on the screen, or located by the vision model); none when
	// the action had no point (at the pointer's position, or typing into the
	// focused element).
	LocatedBy string `json:"located_by"`
	// FrameID names the image whose pixels Point and Box are in: the frame
	// the point was read or located on, or for screen coordinates the
	// session's latest image of the display when it shows the point.
	FrameID string    `json:"frame_id,omitempty"`
	Point   *ImageXY  `json:"point,omitempty"`
	Box     *ImageBox `json:"box,omitempty"` // what the point was found in (not for point)
	// Global is the point in global logical screen pixels.
	Global  *ScreenXY `json:"global,omitempty"`
	Display string    `json:"display,omitempty"`
	// To is a drag's end; the fields above are its start.
	To *InputResult `json:"to,omitempty"`
	// Screenshot describes the image taken after the action
	// (ScreenshotAfterAction), returned beside the text.
	Screenshot *ShotInfo `json:"screenshot,omitempty"`
}

// ScreenXY is a point in global logical screen pixels.
type ScreenXY struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// located_by of an input tool's result, beside operate's locate steps.
const (
	locatedPoint = "point" // operate.ByCoordinates: the caller gave coordinates
	locatedNone  = "none"  // no point: the pointer's position, the focused element
)

// inputResultSchema is the output schema the input tools that act at a
// point share (InputResult; dragResultSchema adds its end): located_by with
// its values, the point, the box and their frame. display, global and
// screenshot come beside them undeclared (the schema allows them), and no
// field carries a description (InputResult's doc and the README say what
// each is): hosts give models the tools' input schemas, not their output
// schemas, so these are held to a budget of their own (budget_test.go), kept
// small since every client still receives them.
var (
	inputResultSchema = &jsonschema.Schema{Type: "object", Required: []string{"located_by"}, Properties: map[string]*jsonschema.Schema{
		"located_by": {Type: "string", Enum: []any{locatedPoint, operate.ByRef, operate.ByAccessibility, operate.ByOCR, operate.ByVision, locatedNone}},
		"frame_id":   {Type: "string"}, "point": {Type: "object"}, "box": {Type: "object"},
	}}
	dragResultSchema = func() *jsonschema.Schema {
		sc := inputResultSchema.CloneSchemas()
		sc.Properties["to"] = &jsonschema.Schema{Type: "object"}
		return sc
	}()
)

// withResult declares a tool's output schema.
func withResult(d toolDef, sc *jsonschema.Schema) toolDef {
	d.tool.OutputSchema = sc
	return d
}

// inputResult describes where an input tool acted: p as placed (nil: at no
// point, on display d).
func (s *Server) inputResult(c *call, p *operate.Place, d geom.Display) *InputResult {
	if p == nil {
		return &InputResult{LocatedBy: locatedNone, Display: d.ID}
	}
	r := &InputResult{LocatedBy: p.LocatedBy, Display: p.Display.ID, Global: &ScreenXY{p.Global.X, p.Global.Y}}
	if r.LocatedBy == operate.ByCoordinates {
		r.LocatedBy = locatedPoint
	}
	if r.Display == "" {
		r.Display = d.ID
	}
	if p.FrameID != "" && p.Image != nil {
		r.FrameID, r.Point = p.FrameID, &ImageXY{round2(p.Image.X), round2(p.Image.Y)}
		if p.Box != nil {
			b := boxOf(*p.Box)
			r.Box = &b
		}
		return r
	}
	// Screen coordinates: in the session's latest image of the display when it shows them.
	if _, ip, shot := s.seenAt(c.ss, &target{Global: p.Global, Display: p.Display}); ip != nil && shot != nil {
		r.FrameID, r.Point = shot.Frame.ID, &ImageXY{round2(ip.X), round2(ip.Y)}
	}
	return r
}

// acted is what actAt did: the action as parsed, the executor's result and
// the point as read.
type acted struct {
	a   action.Action
	res operate.Result
	at  point
}

// where says where the action went, and on which display, for the result.
func (ac acted) where() (string, geom.Display) {
	if ac.res.At == nil {
		return "at the current pointer position", ac.at.display
	}
	t := ac.at.shown(ac.res.At)
	return "at " + t.String() + warn(t), t.Display
}

// actAt is an input tool that acts at one point: it checks what of r needs
// no point first (a bad button or modifier is reported before anything is
// located), reads the point (coordinates, ref or target), parses r with it
// and performs it through act.
func (s *Server) actAt(ctx context.Context, c *call, r action.Raw, at aim, verb string) (acted, error) {
	pre := r
	if !at.optional {
		pre.At = []float64{0, 0}
	}
	if _, err := s.parse(pre, at.Space); err != nil {
		return acted{}, err
	}
	p, err := s.pointArg(ctx, c, at)
	if err != nil {
		return acted{}, err
	}
	r.At, r.Target = p.nums, p.words
	if p.place != nil && p.nums == nil { // a ref: placed already
		r.At = []float64{0, 0}
	}
	a, err := s.parse(r, p.space)
	if err != nil {
		return acted{}, err
	}
	if p.place != nil && p.nums == nil {
		a.At = &action.Point{Space: geom.SpaceImage, X: p.place.Image.X, Y: p.place.Image.Y}
	}
	res, err := s.act(ctx, c, operate.Op{Action: a, At: p.place, Display: at.Display}, verb)
	return acted{a, res, p}, err
}

// MoveArgs are gui_move's arguments.
type MoveArgs struct {
	Point
	Where
}

func (s *Server) moveTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_move", "Move the pointer",
		"Move the pointer to a point.",
		changesDesk, func(sc *jsonschema.Schema) { s.pointSchema(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in MoveArgs) (*mcp.CallToolResult, error) {
			ac, err := s.actAt(ctx, c, action.Raw{Kind: action.Move}, in.aim(in.Where, false), "move")
			if err != nil {
				return nil, err
			}
			where, d := ac.where()
			return s.done(ctx, c, d, s.inputResult(c, ac.res.At, d), "%smoved the pointer %s", note(ac.res.At), strings.TrimPrefix(where, "at "))
		}), inputResultSchema)
}

// ClickArgs are gui_click's arguments.
type ClickArgs struct {
	Point
	Button    string   `json:"button,omitempty"`
	Clicks    int      `json:"clicks,omitempty" jsonschema:"default 1"`
	Modifiers []string `json:"modifiers,omitempty"`
	Where
}

func buttonEnum(sc *jsonschema.Schema) { enum(sc, "button", "left", "right", "middle") }

func (s *Server) clickTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_click", "Click",
		"Click at a point.",
		changesDesk,
		func(sc *jsonschema.Schema) {
			s.pointSchema(sc)
			singleXY(sc, "x", "y")
			buttonEnum(sc)
			between(sc, "clicks", 1, action.MaxClicks)
		},
		func(ctx context.Context, c *call, in ClickArgs) (*mcp.CallToolResult, error) {
			return s.click(ctx, c, in)
		}), inputResultSchema)
}

func (s *Server) click(ctx context.Context, c *call, in ClickArgs) (*mcp.CallToolResult, error) {
	ac, err := s.actAt(ctx, c, action.Raw{Kind: action.Click, Button: in.Button, Clicks: in.Clicks, Keys: in.Modifiers}, in.aim(in.Where, false), "click")
	if err != nil {
		return nil, err
	}
	where, d := ac.where()
	what := map[int]string{1: "clicked", 2: "double-clicked", 3: "triple-clicked"}[ac.a.Clicks()]
	return s.done(ctx, c, d, s.inputResult(c, ac.res.At, d), "%s%s %s%s %s", note(ac.res.At), what, ac.a.ButtonOrLeft(), withMods(ac.a.Keys), where)
}

// DoubleClickArgs are gui_double_click's arguments.
type DoubleClickArgs struct {
	Point
	Where
}

func (s *Server) doubleClickTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_double_click", "Double-click",
		"Double-click the left button at a point.",
		changesDesk, func(sc *jsonschema.Schema) { s.pointSchema(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in DoubleClickArgs) (*mcp.CallToolResult, error) {
			return s.click(ctx, c, ClickArgs{Point: in.Point, Clicks: 2, Where: in.Where})
		}), inputResultSchema)
}

// ButtonArgs are gui_mouse_up's arguments.
type ButtonArgs struct {
	X      *float64 `json:"x,omitempty"`
	Y      *float64 `json:"y,omitempty"`
	Button string   `json:"button,omitempty"`
	Where
}

// MouseDownArgs are gui_mouse_down's arguments.
type MouseDownArgs struct {
	Point
	Button string `json:"button,omitempty"`
	Where
}

func (s *Server) mouseDownTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_mouse_down", "Mouse down",
		"Press and hold a mouse button until gui_mouse_up.",
		changesDesk, func(sc *jsonschema.Schema) { s.pointSchema(sc); buttonEnum(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in MouseDownArgs) (*mcp.CallToolResult, error) {
			return s.button(ctx, c, in.Button, in.aim(in.Where, true), true)
		}), inputResultSchema)
}

func (s *Server) mouseUpTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_mouse_up", "Mouse up",
		"Release a mouse button.",
		changesDesk, func(sc *jsonschema.Schema) { s.pointSchema(sc); buttonEnum(sc); singleXY(sc, "x", "y") },
		func(ctx context.Context, c *call, in ButtonArgs) (*mcp.CallToolResult, error) {
			return s.button(ctx, c, in.Button, Point{X: in.X, Y: in.Y}.aim(in.Where, true), false)
		}), inputResultSchema)
}

func (s *Server) button(ctx context.Context, c *call, button string, at aim, down bool) (*mcp.CallToolResult, error) {
	verb, kind := "released", action.MouseUp
	if down {
		verb, kind = "pressed", action.MouseDown
	}
	ac, err := s.actAt(ctx, c, action.Raw{Kind: kind, Button: button}, at, "mouse "+map[bool]string{true: "down", false: "up"}[down])
	if err != nil {
		return nil, err
	}
	where, d := ac.where()
	return s.done(ctx, c, d, s.inputResult(c, ac.res.At, d), "%s%s the %s button %s", note(ac.res.At), verb, ac.a.ButtonOrLeft(), where)
}

// DragArgs are gui_drag's arguments.
type DragArgs struct {
	FromX      *float64 `json:"from_x,omitempty"`
	FromY      *float64 `json:"from_y,omitempty"`
	ToX        *float64 `json:"to_x,omitempty"`
	ToY        *float64 `json:"to_y,omitempty"`
	FromTarget string   `json:"from_target,omitempty"`
	ToTarget   string   `json:"to_target,omitempty"`
	FromRef    string   `json:"from_ref,omitempty"`
	ToRef      string   `json:"to_ref,omitempty"`
	Button     string   `json:"button,omitempty"`
	Where
}

func (s *Server) dragTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_drag", "Drag",
		"Press a mouse button at one point, move to another and release it.",
		changesDesk, func(sc *jsonschema.Schema) {
			s.pointSchema(sc)
			buttonEnum(sc)
			singleXY(sc, "from_x", "from_y", "to_x", "to_y")
		},
		func(ctx context.Context, c *call, in DragArgs) (*mcp.CallToolResult, error) {
			return s.drag(ctx, c, in)
		}), dragResultSchema)
}

func (s *Server) drag(ctx context.Context, c *call, in DragArgs) (*mcp.CallToolResult, error) {
	a, err := s.parse(action.Raw{Kind: action.Drag, At: []float64{0, 0}, To: []float64{0, 0}, Button: in.Button}, string(geom.SpaceImage))
	if err != nil {
		return nil, err
	}
	from, err := s.dragEnd(ctx, c, aim{X: in.FromX, Y: in.FromY, Target: in.FromTarget, Ref: in.FromRef, Where: in.Where, target: "from_target", ref: "from_ref"})
	if err != nil {
		return nil, fmt.Errorf("drag start: %w", err)
	}
	to, err := s.dragEnd(ctx, c, aim{X: in.ToX, Y: in.ToY, Target: in.ToTarget, Ref: in.ToRef, Where: in.Where, target: "to_target", ref: "to_ref"})
	if err != nil {
		return nil, fmt.Errorf("drag end: %w", err)
	}
	a.At, a.To = &from.p, &to.p
	_, err = s.act(ctx, c, operate.Op{Action: a, At: from.place, To: to.place}, "drag")
	if err != nil {
		return nil, err
	}
	f, t := from.at.shown(from.place), to.at.shown(to.place)
	out := s.inputResult(c, from.place, f.Display)
	out.To = s.inputResult(c, to.place, t.Display)
	return s.done(ctx, c, t.Display, out, "%s%sdragged with the %s button from %s to %s%s%s",
		note(from.place), note(to.place), a.ButtonOrLeft(), f, t, warn(f), warn(t))
}

// dragPoint is one end of a drag: the point as given (or located), placed.
type dragPoint struct {
	p     action.Point
	place *operate.Place
	at    point
}

// dragEnd reads one end of a drag: coordinates in its space, a ref, or
// words, which are located at once (a drag acts at both ends, so both are
// placed before it).
func (s *Server) dragEnd(ctx context.Context, c *call, a aim) (dragPoint, error) {
	at, err := s.pointArg(ctx, c, a)
	if err != nil {
		return dragPoint{}, err
	}
	if at.place == nil {
		p, err := s.locator(c).Locate(ctx, operate.Target{Words: at.words, Display: a.Display})
		if err != nil {
			return dragPoint{}, err
		}
		at.place = &p
	}
	if at.nums == nil { // located, or a ref
		p := at.place
		return dragPoint{action.Point{Space: geom.SpaceImage, X: p.Image.X, Y: p.Image.Y}, at.place, at}, nil
	}
	mv, err := s.parse(action.Raw{Kind: action.Move, At: at.nums}, at.space)
	if err != nil {
		return dragPoint{}, err
	}
	return dragPoint{*mv.At, at.place, at}, nil
}

// ScrollArgs are gui_scroll's arguments.
type ScrollArgs struct {
	Point
	Direction string   `json:"direction"`
	Amount    int      `json:"amount,omitempty" jsonschema:"wheel notches; default 3"`
	Modifiers []string `json:"modifiers,omitempty"`
	Where
}

func (s *Server) scrollTool() toolDef {
	return withResult(newTool(s, GroupInput, "gui_scroll", "Scroll",
		"Turn the mouse wheel.",
		changesDesk,
		func(sc *jsonschema.Schema) {
			s.pointSchema(sc)
			singleXY(sc, "x", "y")
			enum(sc, "direction", "up", "down", "left", "right")
			between(sc, "amount", 1, action.MaxScrollNotches)
		},
		func(ctx context.Context, c *call, in ScrollArgs) (*mcp.CallToolResult, error) {
			if in.Amount < 0 || in.Amount > action.MaxScrollNotches {
				return nil, fmt.Errorf("amount must be 1 to %d wheel notches, got %d", action.MaxScrollNotches, in.Amount)
			}
			ac, err := s.actAt(ctx, c, action.Raw{Kind: action.Scroll, Direction: in.Direction, Amount: in.Amount, Keys: in.Modifiers}, in.aim(in.Where, true), "scroll")
			if err != nil {
				return nil, err
			}
			where, d := ac.where()
			return s.done(ctx, c, d, s.inputResult(c, ac.res.At, d), "%sscrolled %s %d notches%s %s", note(ac.res.At), ac.a.Direction, ac.a.Notches(), withMods(ac.a.Keys), where)
		}), inputResultSchema)
}

// PressKeyArgs are gui_press_key's arguments.
type PressKeyArgs struct {
	Key       string   `json:"key" jsonschema:"e.g. Return, Tab, Escape, BackSpace, Up, F5, a, or ctrl+s"`
	Repeat    int      `json:"repeat,omitempty" jsonschema:"default 1"`
	Modifiers []string `json:"modifiers,omitempty"`
}

func (s *Server) pressKeyTool() toolDef {
	return newTool(s, GroupInput, "gui_press_key", "Press a key",
		"Press and release a key; dangerous combinations are blocked.",
		changesDesk, func(sc *jsonschema.Schema) { between(sc, "repeat", 1, action.MaxKeyRepeat) },
		func(ctx context.Context, c *call, in PressKeyArgs) (*mcp.CallToolResult, error) {
			if in.Repeat < 0 || in.Repeat > action.MaxKeyRepeat {
				return nil, fmt.Errorf("repeat must be 1 to %d, got %d", action.MaxKeyRepeat, in.Repeat)
			}
			a, err := s.parse(action.Raw{Kind: action.KeyPress, Keys: append(append([]string{}, in.Modifiers...), in.Key), Amount: in.Repeat}, "")
			if err != nil {
				return nil, err
			}
			if _, err := s.act(ctx, c, operate.Op{Action: a}, "key press"); err != nil {
				return nil, err
			}
			d, _, _ := s.display(ctx, "")
			return s.done(ctx, c, d, nil, "pressed %s%s", desktop.ComboString(a.Keys), times(a.Repeats()))
		})
}

// HotkeyArgs are gui_hotkey's arguments.
type HotkeyArgs struct {
	Keys []string `json:"keys" jsonschema:"pressed in order, released in reverse, e.g. [\"ctrl\",\"shift\",\"t\"]"`
}

func (s *Server) hotkeyTool() toolDef {
	return newTool(s, GroupInput, "gui_hotkey", "Hotkey",
		"Press a keyboard shortcut; dangerous ones (alt+f4, ctrl+alt+delete, ...) are blocked.",
		changesDesk, func(sc *jsonschema.Schema) { prop(sc, "keys").MinItems = new(1) },
		func(ctx context.Context, c *call, in HotkeyArgs) (*mcp.CallToolResult, error) {
			a, err := s.parse(action.Raw{Kind: action.KeyPress, Keys: in.Keys}, "")
			if err != nil {
				return nil, err
			}
			if _, err := s.act(ctx, c, operate.Op{Action: a}, "hotkey"); err != nil {
				return nil, err
			}
			d, _, _ := s.display(ctx, "")
			return s.done(ctx, c, d, nil, "pressed %s", desktop.ComboString(a.Keys))
		})
}
