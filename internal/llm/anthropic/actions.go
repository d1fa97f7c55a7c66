package anthropic

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/guiagent/guiagent/internal/llm"
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

// mapToolUse turns one computer tool_use input into actions in pixels of the
// image the model saw. screenshot and cursor_position produce no action: the
// next step's screenshot (and cursor note) answers them.
func mapToolUse(raw json.RawMessage, zoom bool) ([]llm.Action, answerKind, error) {
	var in toolInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, 0, fmt.Errorf("computer tool input is not a JSON object: %v", err)
	}
	mods := func() []string {
		if in.Text == nil {
			return nil
		}
		return cuwire.SplitCombo(*in.Text)
	}
	point := func(name string, p []float64, required bool) ([]float64, error) {
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
	seconds := func(def float64) (int, error) {
		d := def
		if in.Duration != nil {
			d = *in.Duration
		}
		if math.IsNaN(d) || d < 0 || d > maxHoldSeconds {
			return 0, fmt.Errorf("action %s: duration %v must be between 0 and %d seconds", in.Action, d, maxHoldSeconds)
		}
		return int(math.Round(d * 1000)), nil
	}
	click := func(kind llm.ActionKind, button string, clicks int) ([]llm.Action, answerKind, error) {
		at, err := point("coordinate", in.Coordinate, false)
		if err != nil {
			return nil, 0, err
		}
		a := llm.Action{Kind: kind, At: at, Keys: mods()}
		if kind == llm.Click {
			a.Button, a.Clicks = button, clicks
		}
		return []llm.Action{a}, answerNone, nil
	}

	switch in.Action {
	case "screenshot":
		return nil, answerNone, nil
	case "cursor_position":
		return nil, answerCursor, nil
	case "left_click":
		return click(llm.Click, "left", 1)
	case "right_click":
		return click(llm.Click, "right", 1)
	case "middle_click":
		return click(llm.Click, "middle", 1)
	case "double_click":
		return click(llm.DoubleClick, "left", 2)
	case "triple_click":
		return click(llm.TripleClick, "left", 3)
	case "mouse_move":
		at, err := point("coordinate", in.Coordinate, true)
		if err != nil {
			return nil, 0, err
		}
		return []llm.Action{{Kind: llm.Move, At: at}}, answerNone, nil
	case "left_click_drag":
		from, err := point("start_coordinate", in.StartCoordinate, false)
		if err != nil {
			return nil, 0, err
		}
		to, err := point("coordinate", in.Coordinate, true)
		if err != nil {
			return nil, 0, err
		}
		return []llm.Action{{Kind: llm.Drag, At: from, To: to, Button: "left"}}, answerNone, nil
	case "left_mouse_down", "left_mouse_up":
		at, err := point("coordinate", in.Coordinate, false)
		if err != nil {
			return nil, 0, err
		}
		kind := llm.MouseDown
		if in.Action == "left_mouse_up" {
			kind = llm.MouseUp
		}
		return []llm.Action{{Kind: kind, At: at, Button: "left"}}, answerNone, nil
	case "scroll":
		at, err := point("coordinate", in.Coordinate, false)
		if err != nil {
			return nil, 0, err
		}
		dir := strings.ToLower(strings.TrimSpace(in.ScrollDirection))
		switch dir {
		case "up", "down", "left", "right":
		default:
			return nil, 0, fmt.Errorf("action scroll: scroll_direction %q must be up, down, left or right", in.ScrollDirection)
		}
		amount := 3
		if in.ScrollAmount != nil {
			if *in.ScrollAmount < 0 || math.IsNaN(*in.ScrollAmount) || *in.ScrollAmount > 100 {
				return nil, 0, fmt.Errorf("action scroll: scroll_amount %v must be between 0 and 100", *in.ScrollAmount)
			}
			amount = int(math.Round(*in.ScrollAmount))
		}
		return []llm.Action{{Kind: llm.Scroll, At: at, Direction: dir, Amount: amount, Keys: mods()}}, answerNone, nil
	case "type":
		if in.Text == nil {
			return nil, 0, fmt.Errorf("action type needs text")
		}
		return []llm.Action{{Kind: llm.TypeText, Text: *in.Text}}, answerNone, nil
	case "key":
		if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
			return nil, 0, fmt.Errorf("action key needs text such as \"Return\" or \"ctrl+s\"")
		}
		// xdotool accepts several combinations separated by spaces.
		var acts []llm.Action
		for _, combo := range strings.Fields(*in.Text) {
			acts = append(acts, llm.Action{Kind: llm.KeyPress, Keys: cuwire.SplitCombo(combo)})
		}
		return acts, answerNone, nil
	case "hold_key":
		if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
			return nil, 0, fmt.Errorf("action hold_key needs text naming the key, such as \"shift\"")
		}
		if in.Duration == nil {
			return nil, 0, fmt.Errorf("action hold_key needs duration in seconds")
		}
		ms, err := seconds(0)
		if err != nil {
			return nil, 0, err
		}
		return []llm.Action{{Kind: llm.HoldKey, Keys: cuwire.SplitCombo(*in.Text), DurationMS: ms}}, answerNone, nil
	case "wait":
		ms, err := seconds(1)
		if err != nil {
			return nil, 0, err
		}
		return []llm.Action{{Kind: llm.Wait, DurationMS: ms}}, answerNone, nil
	case "zoom":
		if !zoom {
			return nil, 0, fmt.Errorf("action zoom is not available with this tool version (it needs computer_20251124)")
		}
		if len(in.Region) != 4 {
			return nil, 0, fmt.Errorf("action zoom needs region [x1, y1, x2, y2], got %d numbers", len(in.Region))
		}
		p1, err := point("region", in.Region[:2], true)
		if err != nil {
			return nil, 0, err
		}
		p2, err := point("region", in.Region[2:], true)
		if err != nil {
			return nil, 0, err
		}
		if p2[0] <= p1[0] || p2[1] <= p1[1] {
			return nil, 0, fmt.Errorf("action zoom: region %v must have x2 > x1 and y2 > y1", in.Region)
		}
		return []llm.Action{{Kind: llm.Zoom, At: p1, To: p2}}, answerZoom, nil
	case "":
		return nil, 0, fmt.Errorf("computer tool input has no action")
	}
	return nil, 0, fmt.Errorf("unknown computer action %q", in.Action)
}

// fillPointer gives actions that act "where the pointer is" (a click without
// coordinate) the pointer position, following the pointer through the batch;
// ptr is the position before acts (nil when unknown) and is updated.
func fillPointer(acts []llm.Action, ptr *[]float64) error {
	for i := range acts {
		a := &acts[i]
		switch a.Kind {
		case llm.Click, llm.DoubleClick, llm.TripleClick, llm.Drag:
			if a.At == nil {
				if *ptr == nil {
					return fmt.Errorf("%s without coordinate acts at the pointer, whose position is not known: give coordinate [x, y]", a.Kind)
				}
				a.At = append([]float64(nil), (*ptr)...)
			}
		}
		switch {
		case a.Kind == llm.Drag:
			*ptr = a.To
		case a.Kind == llm.Zoom:
		case a.At != nil:
			*ptr = a.At
		}
	}
	return nil
}
