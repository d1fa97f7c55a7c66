package responses

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/guiagent/guiagent/internal/llm"
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

// approved reports whether a human approved c: an entry of list equal to its
// ID or to its full String form.
func (c safetyCheck) approved(list []string) bool {
	for _, a := range list {
		a = strings.TrimSpace(a)
		if a == c.ID || a == c.String() {
			return true
		}
	}
	return false
}

// actions returns the call's actions mapped to llm.Actions (CallID set).
func (c computerCall) actions() ([]llm.Action, error) {
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
	var out []llm.Action
	for _, raw := range list {
		var a cuAction
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("computer_call %s: action is not an object: %v", c.CallID, err)
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
	return out, nil
}

// mapAction maps one computer tool action. screenshot maps to nothing: the
// next step's screenshot answers it.
func mapAction(a cuAction) ([]llm.Action, error) {
	xy := func() ([]float64, error) {
		if a.X == nil || a.Y == nil {
			return nil, fmt.Errorf("%s needs x and y", a.Type)
		}
		return checkPoint(a.Type, *a.X, *a.Y)
	}
	switch a.Type {
	case "screenshot":
		return nil, nil
	case "click", "double_click":
		at, err := xy()
		if err != nil {
			return nil, err
		}
		if a.Type == "double_click" {
			return []llm.Action{{Kind: llm.DoubleClick, At: at}}, nil
		}
		switch strings.ToLower(a.Button) {
		case "", "left":
			return []llm.Action{{Kind: llm.Click, At: at, Button: "left", Clicks: 1}}, nil
		case "right":
			return []llm.Action{{Kind: llm.Click, At: at, Button: "right", Clicks: 1}}, nil
		case "wheel", "middle":
			return []llm.Action{{Kind: llm.Click, At: at, Button: "middle", Clicks: 1}}, nil
		case "back", "forward":
			// The desktop has no back/forward buttons; applications bind them
			// to alt+Left / alt+Right.
			key := "Left"
			if strings.ToLower(a.Button) == "forward" {
				key = "Right"
			}
			return []llm.Action{{Kind: llm.Move, At: at}, {Kind: llm.KeyPress, Keys: []string{"alt", key}}}, nil
		}
		return nil, fmt.Errorf("click: unknown button %q (left, right, wheel, back, forward)", a.Button)
	case "move":
		at, err := xy()
		if err != nil {
			return nil, err
		}
		return []llm.Action{{Kind: llm.Move, At: at}}, nil
	case "drag":
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
		d := llm.Action{Kind: llm.Drag, At: pts[0], To: pts[len(pts)-1], Button: "left"}
		if len(pts) > 2 {
			d.Path = pts[1 : len(pts)-1]
		}
		return []llm.Action{d}, nil
	case "keypress":
		if len(a.Keys) == 0 {
			return nil, fmt.Errorf("keypress needs keys")
		}
		return []llm.Action{{Kind: llm.KeyPress, Keys: append([]string(nil), a.Keys...)}}, nil
	case "type":
		if a.Text == nil {
			return nil, fmt.Errorf("type needs text")
		}
		return []llm.Action{{Kind: llm.TypeText, Text: *a.Text}}, nil
	case "scroll":
		var at []float64
		if a.X != nil && a.Y != nil {
			var err error
			if at, err = checkPoint("scroll", *a.X, *a.Y); err != nil {
				return nil, err
			}
		}
		var out []llm.Action
		if a.ScrollY != 0 {
			dir := "down"
			if a.ScrollY < 0 {
				dir = "up"
			}
			out = append(out, llm.Action{Kind: llm.Scroll, At: at, Direction: dir, Amount: notches(a.ScrollY)})
		}
		if a.ScrollX != 0 {
			dir := "right"
			if a.ScrollX < 0 {
				dir = "left"
			}
			out = append(out, llm.Action{Kind: llm.Scroll, At: at, Direction: dir, Amount: notches(a.ScrollX)})
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("scroll with scroll_x and scroll_y both 0 does nothing")
		}
		return out, nil
	case "wait":
		return []llm.Action{{Kind: llm.Wait, DurationMS: defaultWaitMS}}, nil
	case "":
		return nil, fmt.Errorf("action has no type")
	}
	return nil, fmt.Errorf("unknown computer action type %q", a.Type)
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
