package responses

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// ScrollPxPerNotch converts the computer tool's scroll distances (pixels) to
// wheel notches: one notch per 100 px, at least one.
const ScrollPxPerNotch = 100

// defaultWaitMS is how long a wait action (which has no duration) waits.
const defaultWaitMS = 1000

// cuAction is one action of a computer_call, in pixels of the declared display.
type cuAction struct {
	Type    string   `json:"type"`
	X       *float64 `json:"x"`
	Y       *float64 `json:"y"`
	Button  string   `json:"button"`
	Keys    []string `json:"keys"`
	Text    *string  `json:"text"`
	ScrollX float64  `json:"scroll_x"`
	ScrollY float64  `json:"scroll_y"`
	Path    []struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	} `json:"path"`
}

// computerCall is a computer_call output item: one action (computer-use-preview)
// or a batch of them (the newer computer tool).
type computerCall struct {
	ID                  string          `json:"id"`
	CallID              string          `json:"call_id"`
	Action              json.RawMessage `json:"action"`
	Actions             json.RawMessage `json:"actions"`
	PendingSafetyChecks []safetyCheck   `json:"pending_safety_checks"`
}

// safetyCheck is a pending (or acknowledged) safety check.
type safetyCheck struct {
	ID      string `json:"id"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// String is how the check appears in Decision.SafetyChecks: "id (code): message".
func (c safetyCheck) String() string {
	s := c.ID
	if c.Code != "" {
		s += " (" + c.Code + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// question is the confirm asked of the user for c.
func (c safetyCheck) question() string {
	what := strings.TrimSuffix(strings.TrimSpace(c.Message), ".")
	switch {
	case what != "" && c.Code != "":
		what += " (" + c.Code + ")"
	case what == "" && c.Code != "":
		what = c.Code
	case what == "":
		what = "check " + c.ID
	}
	return "The model's next action was flagged for review: " + what + ". Let it run?"
}

// actions returns the call's actions parsed in space sp (CallID set). Only the
// GA tool (ga) holds keys during pointer actions; the preview had none.
func (c computerCall) actions(sp geom.Space, ga bool) ([]action.Action, error) {
	var list []json.RawMessage
	if len(c.Actions) > 0 && string(c.Actions) != "null" {
		if err := json.Unmarshal(c.Actions, &list); err != nil {
			return nil, fmt.Errorf("computer_call %s: actions is not a list: %v", c.CallID, err)
		}
	}
	if len(c.Action) > 0 && string(c.Action) != "null" {
		list = append([]json.RawMessage{c.Action}, list...)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("computer_call %s has no action", c.CallID)
	}
	var out []action.Raw
	for _, raw := range list {
		var a cuAction
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("computer_call %s: action is not an object: %v", c.CallID, err)
		}
		if !ga && a.Type != "keypress" && len(a.Keys) > 0 {
			return nil, fmt.Errorf("computer_call %s: %s has keys, which computer_use_preview does not hold", c.CallID, a.Type)
		}
		acts, err := mapAction(a)
		if err != nil {
			return nil, fmt.Errorf("computer_call %s: %w", c.CallID, err)
		}
		for i := range acts {
			acts[i].CallID = c.CallID
		}
		out = append(out, acts...)
	}
	acts, err := action.ParseModelAll(out, sp)
	if err != nil {
		return nil, fmt.Errorf("computer_call %s: %w", c.CallID, err)
	}
	return acts, nil
}

// mapAction maps one computer tool action. screenshot maps to nothing: the
// next step's screenshot answers it.
func mapAction(a cuAction) ([]action.Raw, error) {
	switch a.Type {
	case "screenshot":
		return nil, nil
	case "":
		return nil, fmt.Errorf("action has no type")
	}
	m, ok := cuActions[a.Type]
	if !ok {
		return nil, fmt.Errorf("unknown computer action type %q", a.Type)
	}
	return m(a)
}

// cuActions maps the computer tool's action types, one function each.
var cuActions = map[string]func(cuAction) ([]action.Raw, error){
	"click":        cuAction.click,
	"double_click": cuAction.click,
	"move":         cuAction.move,
	"drag":         cuAction.drag,
	"keypress":     cuAction.keypress,
	"type":         cuAction.typeText,
	"scroll":       cuAction.scroll,
	"wait": func(cuAction) ([]action.Raw, error) {
		return []action.Raw{{Kind: action.Wait, DurationMS: defaultWaitMS}}, nil
	},
}

// xy checks the action's required x and y.
func (a cuAction) xy() ([]float64, error) {
	if a.X == nil || a.Y == nil {
		return nil, fmt.Errorf("%s needs x and y", a.Type)
	}
	return checkPoint(a.Type, *a.X, *a.Y)
}

// clickButtons maps the tool's buttons to the desktop's.
var clickButtons = map[string]string{"": "left", "left": "left", "right": "right", "wheel": "middle", "middle": "middle"}

func (a cuAction) click() ([]action.Raw, error) {
	at, err := a.xy()
	if err != nil {
		return nil, err
	}
	if a.Type == "double_click" {
		return []action.Raw{{Kind: action.DoubleClick, At: at, Keys: a.Keys}}, nil
	}
	b := strings.ToLower(a.Button)
	if btn, ok := clickButtons[b]; ok {
		return []action.Raw{{Kind: action.Click, At: at, Button: btn, Clicks: 1, Keys: a.Keys}}, nil
	}
	if b == "back" || b == "forward" {
		// The desktop has no back/forward buttons; applications bind them
		// to alt+Left / alt+Right.
		key := map[string]string{"back": "Left", "forward": "Right"}[b]
		return []action.Raw{{Kind: action.Move, At: at}, {Kind: action.KeyPress, Keys: []string{"alt", key}}}, nil
	}
	return nil, fmt.Errorf("click: unknown button %q (left, right, wheel, back, forward)", a.Button)
}

func (a cuAction) move() ([]action.Raw, error) {
	at, err := a.xy()
	if err != nil {
		return nil, err
	}
	return []action.Raw{{Kind: action.Move, At: at, Keys: a.Keys}}, nil
}

func (a cuAction) drag() ([]action.Raw, error) {
	if len(a.Path) < 2 {
		return nil, fmt.Errorf("drag needs a path of at least 2 points, got %d", len(a.Path))
	}
	var pts [][]float64
	for _, p := range a.Path {
		q, err := checkPoint("drag", p.X, p.Y)
		if err != nil {
			return nil, err
		}
		pts = append(pts, q)
	}
	d := action.Raw{Kind: action.Drag, At: pts[0], To: pts[len(pts)-1], Button: "left", Keys: a.Keys}
	if len(pts) > 2 {
		d.Path = pts[1 : len(pts)-1]
	}
	return []action.Raw{d}, nil
}

func (a cuAction) keypress() ([]action.Raw, error) {
	if len(a.Keys) == 0 {
		return nil, fmt.Errorf("keypress needs keys")
	}
	return []action.Raw{{Kind: action.KeyPress, Keys: append([]string(nil), a.Keys...)}}, nil
}

func (a cuAction) typeText() ([]action.Raw, error) {
	if a.Text == nil {
		return nil, fmt.Errorf("type needs text")
	}
	return []action.Raw{{Kind: action.TypeText, Text: *a.Text}}, nil
}

// scroll maps scroll_y and scroll_x (pixels) to one scroll each.
func (a cuAction) scroll() ([]action.Raw, error) {
	var at []float64
	if a.X != nil && a.Y != nil {
		var err error
		if at, err = checkPoint("scroll", *a.X, *a.Y); err != nil {
			return nil, err
		}
	}
	var out []action.Raw
	if a.ScrollY != 0 {
		dir := map[bool]string{true: "up", false: "down"}[a.ScrollY < 0]
		out = append(out, action.Raw{Kind: action.Scroll, At: at, Direction: dir, Amount: notches(a.ScrollY), Keys: a.Keys})
	}
	if a.ScrollX != 0 {
		dir := map[bool]string{true: "left", false: "right"}[a.ScrollX < 0]
		out = append(out, action.Raw{Kind: action.Scroll, At: at, Direction: dir, Amount: notches(a.ScrollX), Keys: a.Keys})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("scroll with scroll_x and scroll_y both 0 does nothing")
	}
	return out, nil
}

func notches(px float64) int {
	return max(1, int(math.Round(math.Abs(px)/ScrollPxPerNotch)))
}

func checkPoint(what string, x, y float64) ([]float64, error) {
	for _, v := range []float64{x, y} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%s: point (%v, %v) must be non-negative pixels of the screenshot", what, x, y)
		}
	}
	return []float64{x, y}, nil
}
