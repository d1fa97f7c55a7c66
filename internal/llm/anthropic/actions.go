package anthropic

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// toolInput is the input of one computer tool_use block. Fields are pointers
// or slices so that a missing field can be told from a zero one.
type toolInput struct {
	Action          string    `json:"action"`
	Coordinate      []float64 `json:"coordinate"`
	StartCoordinate []float64 `json:"start_coordinate"`
	Text            *string   `json:"text"`
	ScrollDirection string    `json:"scroll_direction"`
	ScrollAmount    *float64  `json:"scroll_amount"`
	Duration        *float64  `json:"duration"`
	Region          []float64 `json:"region"`
	Repeat          *float64  `json:"repeat"`
}

// answerKind says what the tool_result of a tool_use must carry beyond the
// screenshot.
type answerKind int

const (
	answerNone   answerKind = iota
	answerCursor            // cursor_position: the pointer position as text
	answerZoom              // zoom: the zoomed image of the region
)

// maxHoldSeconds bounds hold_key and wait durations; longer asks are refused
// (the loop has its own deadline, a model should not park the desktop).
const maxHoldSeconds = 100

// mapToolUse turns one computer tool_use input into raw actions in pixels of
// the image the model saw (action.Parse checks them after fillPointer).
// screenshot and cursor_position produce no action: the next step's
// screenshot (and cursor note) answers them. An action in off (a member the
// deployment disabled) is refused.
func mapToolUse(raw json.RawMessage, zoom bool, off map[string]bool) ([]action.Raw, answerKind, error) {
	var in toolInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, 0, fmt.Errorf("computer tool input is not a JSON object: %v", err)
	}
	if off[in.Action] {
		return nil, 0, fmt.Errorf("action %s is disabled in this deployment (its configuration withholds it): use another action", in.Action)
	}
	switch in.Action {
	case "":
		return nil, 0, fmt.Errorf("computer tool input has no action")
	case "screenshot":
		return nil, answerNone, nil
	case "cursor_position":
		return nil, answerCursor, nil
	case "zoom":
		if !zoom {
			return nil, 0, fmt.Errorf("action zoom is not available with this tool version (it needs computer_20251124)")
		}
		acts, err := in.zoom()
		return acts, answerZoom, err
	}
	if c, ok := clickActions[in.Action]; ok {
		at, err := in.point("coordinate", in.Coordinate, false)
		if err != nil {
			return nil, 0, err
		}
		a := action.Raw{Kind: c.kind, At: at, Keys: in.modifiers()}
		if c.kind == action.Click {
			a.Button, a.Clicks = c.button, 1
		}
		return []action.Raw{a}, answerNone, nil
	}
	m, ok := toolActions[in.Action]
	if !ok {
		return nil, 0, fmt.Errorf("unknown computer action %q", in.Action)
	}
	acts, err := m(&in)
	return acts, answerNone, err
}

// clickActions are the tool's click actions: kind and button.
var clickActions = map[string]struct {
	kind   action.Kind
	button string
}{
	"left_click":   {action.Click, "left"},
	"right_click":  {action.Click, "right"},
	"middle_click": {action.Click, "middle"},
	"double_click": {action.DoubleClick, ""},
	"triple_click": {action.TripleClick, ""},
}

// toolActions maps the tool's other actions, one function each.
var toolActions = map[string]func(in *toolInput) ([]action.Raw, error){
	"mouse_move":      (*toolInput).move,
	"left_click_drag": (*toolInput).drag,
	"left_mouse_down": func(in *toolInput) ([]action.Raw, error) { return in.button(action.MouseDown) },
	"left_mouse_up":   func(in *toolInput) ([]action.Raw, error) { return in.button(action.MouseUp) },
	"scroll":          (*toolInput).scroll,
	"type":            (*toolInput).typeText,
	"key":             (*toolInput).key,
	"hold_key":        (*toolInput).holdKey,
	"wait":            (*toolInput).wait,
}

// modifiers are the keys held during a click or scroll (text "shift").
func (in *toolInput) modifiers() []string {
	if in.Text == nil {
		return nil
	}
	return cuwire.SplitCombo(*in.Text)
}

// point checks a coordinate field: [x, y], non-negative pixels.
func (in *toolInput) point(name string, p []float64, required bool) ([]float64, error) {
	if p == nil {
		if required {
			return nil, fmt.Errorf("action %s needs %s [x, y]", in.Action, name)
		}
		return nil, nil
	}
	if len(p) != 2 {
		return nil, fmt.Errorf("action %s: %s must be [x, y], got %d numbers", in.Action, name, len(p))
	}
	for _, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("action %s: %s %v must be non-negative pixels of the screenshot", in.Action, name, p)
		}
	}
	return []float64{p[0], p[1]}, nil
}

// millis reads duration (seconds, def when absent) as milliseconds.
func (in *toolInput) millis(def float64) (int, error) {
	d := def
	if in.Duration != nil {
		d = *in.Duration
	}
	if math.IsNaN(d) || d < 0 || d > maxHoldSeconds {
		return 0, fmt.Errorf("action %s: duration %v must be between 0 and %d seconds", in.Action, d, maxHoldSeconds)
	}
	return int(math.Round(d * 1000)), nil
}

func (in *toolInput) move() ([]action.Raw, error) {
	at, err := in.point("coordinate", in.Coordinate, true)
	return []action.Raw{{Kind: action.Move, At: at}}, err
}

func (in *toolInput) drag() ([]action.Raw, error) {
	from, err := in.point("start_coordinate", in.StartCoordinate, false)
	if err != nil {
		return nil, err
	}
	to, err := in.point("coordinate", in.Coordinate, true)
	return []action.Raw{{Kind: action.Drag, At: from, To: to, Button: "left", Keys: in.modifiers()}}, err
}

func (in *toolInput) button(kind action.Kind) ([]action.Raw, error) {
	at, err := in.point("coordinate", in.Coordinate, false)
	return []action.Raw{{Kind: kind, At: at, Button: "left"}}, err
}

func (in *toolInput) scroll() ([]action.Raw, error) {
	at, err := in.point("coordinate", in.Coordinate, false)
	if err != nil {
		return nil, err
	}
	dir := strings.ToLower(strings.TrimSpace(in.ScrollDirection))
	switch dir {
	case "up", "down", "left", "right":
	default:
		return nil, fmt.Errorf("action scroll: scroll_direction %q must be up, down, left or right", in.ScrollDirection)
	}
	amount := action.DefaultScrollNotches
	if in.ScrollAmount != nil {
		if *in.ScrollAmount < 0 || math.IsNaN(*in.ScrollAmount) || *in.ScrollAmount > 100 {
			return nil, fmt.Errorf("action scroll: scroll_amount %v must be between 0 and 100", *in.ScrollAmount)
		}
		amount = int(math.Round(*in.ScrollAmount))
	}
	return []action.Raw{{Kind: action.Scroll, At: at, Direction: dir, Amount: amount, Keys: in.modifiers()}}, nil
}

func (in *toolInput) typeText() ([]action.Raw, error) {
	if in.Text == nil {
		return nil, fmt.Errorf("action type needs text")
	}
	return []action.Raw{{Kind: action.TypeText, Text: *in.Text}}, nil
}

func (in *toolInput) key() ([]action.Raw, error) {
	if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
		return nil, fmt.Errorf("action key needs text such as \"Return\" or \"ctrl+s\"")
	}
	repeat := 0
	if in.Repeat != nil {
		if *in.Repeat < 1 || *in.Repeat > action.MaxKeyRepeat || math.IsNaN(*in.Repeat) {
			return nil, fmt.Errorf("action key: repeat %v must be between 1 and %d", *in.Repeat, action.MaxKeyRepeat)
		}
		repeat = int(math.Round(*in.Repeat))
	}
	// xdotool accepts several combinations separated by spaces.
	var acts []action.Raw
	for _, combo := range strings.Fields(*in.Text) {
		acts = append(acts, action.Raw{Kind: action.KeyPress, Keys: cuwire.SplitCombo(combo), Amount: repeat})
	}
	return acts, nil
}

func (in *toolInput) holdKey() ([]action.Raw, error) {
	if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
		return nil, fmt.Errorf("action hold_key needs text naming the key, such as \"shift\"")
	}
	if in.Duration == nil {
		return nil, fmt.Errorf("action hold_key needs duration in seconds")
	}
	ms, err := in.millis(0)
	return []action.Raw{{Kind: action.HoldKey, Keys: cuwire.SplitCombo(*in.Text), DurationMS: ms}}, err
}

func (in *toolInput) wait() ([]action.Raw, error) {
	ms, err := in.millis(1)
	return []action.Raw{{Kind: action.Wait, DurationMS: ms}}, err
}

func (in *toolInput) zoom() ([]action.Raw, error) {
	if len(in.Region) != 4 {
		return nil, fmt.Errorf("action zoom needs region [x1, y1, x2, y2], got %d numbers", len(in.Region))
	}
	p1, err := in.point("region", in.Region[:2], true)
	if err != nil {
		return nil, err
	}
	p2, err := in.point("region", in.Region[2:], true)
	if err != nil {
		return nil, err
	}
	if p2[0] <= p1[0] || p2[1] <= p1[1] {
		return nil, fmt.Errorf("action zoom: region %v must have x2 > x1 and y2 > y1", in.Region)
	}
	return []action.Raw{{Kind: action.Zoom, At: p1, To: p2}}, nil
}

// fillPointer gives actions that act "where the pointer is" (a click without
// coordinate) the pointer position, following the pointer through the batch;
// ptr is the position before acts (nil when unknown) and is updated.
func fillPointer(acts []action.Raw, ptr *[]float64) error {
	for i := range acts {
		a := &acts[i]
		switch a.Kind {
		case action.Click, action.DoubleClick, action.TripleClick, action.Drag:
			if a.At == nil {
				if *ptr == nil {
					return fmt.Errorf("%s without coordinate acts at the pointer, whose position is not known: give coordinate [x, y]", a.Kind)
				}
				a.At = append([]float64(nil), (*ptr)...)
			}
		}
		switch {
		case a.Kind == action.Drag:
			*ptr = a.To
		case a.Kind == action.Zoom:
		case a.At != nil:
			*ptr = a.At
		}
	}
	return nil
}
