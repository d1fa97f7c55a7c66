package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/geom"
)

// CoordinateConvention describes p's coordinate convention to a model, for
// prompts. The image size is stated per request (see ImageSizeLine).
func CoordinateConvention(p geom.Profile) string {
	var b strings.Builder
	switch {
	case p.Divisor == 0:
		b.WriteString("Coordinates are pixels of the screenshot image exactly as you receive it: x from 0 at the left edge to width-1 at the right, y from 0 at the top to height-1 at the bottom.")
	case p.Divisor == 1:
		b.WriteString("Coordinates are normalized to the range 0-1 over the screenshot: 0 is the left (or top) edge, 1 the right (or bottom) edge, whatever the image size in pixels.")
	default:
		d := strconv.FormatFloat(p.Divisor, 'f', -1, 64)
		fmt.Fprintf(&b, "Coordinates are normalized to 0-%s over the screenshot: 0 is the left (or top) edge, %s the right (or bottom) edge, whatever the image size in pixels.", d, d)
	}
	if p.Order == geom.YX {
		b.WriteString(" Write the vertical coordinate first: a point is \"point\": [y, x] and a box is \"box\": [ymin, xmin, ymax, xmax].")
	} else {
		b.WriteString(" A point is \"x\" and \"y\" (or \"point\": [x, y]); a box is \"box\": [xmin, ymin, xmax, ymax] and means its centre.")
	}
	return b.String()
}

// ImageSizeLine states the size of the current screenshot for the prompt.
func ImageSizeLine(s geom.Size) string {
	return fmt.Sprintf("The current screenshot is %dx%d pixels (width x height).", s.W, s.H)
}

// AnswerInstructions documents the JSON answer that ParseAnswer reads, with
// p's coordinate convention.
func AnswerInstructions(p geom.Profile) string {
	scale := 1.0 // examples are pixels, or per-mille positions for normalized profiles
	switch {
	case p.Divisor == 1:
		scale = 0.001
	case p.Divisor > 0:
		scale = p.Divisor / 1000
	}
	num := func(v float64) string { return strconv.FormatFloat(math.Round(v*scale*1000)/1000, 'f', -1, 64) }
	pair := func(x, y float64) string {
		if p.Order == geom.YX {
			return "[" + num(y) + ", " + num(x) + "]"
		}
		return "[" + num(x) + ", " + num(y) + "]"
	}
	pt := func(x, y float64) string {
		if p.Order == geom.YX {
			return `"point": ` + pair(x, y)
		}
		return `"x": ` + num(x) + `, "y": ` + num(y)
	}
	box := func(x1, y1, x2, y2 float64) string {
		if p.Order == geom.YX {
			return "[" + num(y1) + ", " + num(x1) + ", " + num(y2) + ", " + num(x2) + "]"
		}
		return "[" + num(x1) + ", " + num(y1) + ", " + num(x2) + ", " + num(y2) + "]"
	}
	// Example positions: pixels for absolute profiles, per-mille otherwise.
	x, y, bx1, by1, bx2, by2, tx, ty := 412.0, 230.0, 380.0, 210.0, 444.0, 250.0, 500.0, 400.0
	if p.Divisor != 0 {
		x, y, bx1, by1, bx2, by2, tx, ty = 215, 213, 198, 194, 231, 231, 260, 370
	}
	var b strings.Builder
	b.WriteString(`Answer with exactly one JSON object and nothing else:
{
  "observation": "what you see on the screen that matters for the task",
  "reasoning": "short reasoning for the next actions",
  "memory_update": ["facts worth remembering for later steps (values read, progress made)"],
  "actions": [ ...zero or more actions, executed in order on this screen... ],
  "expected_outcome": "what the screen should show after the actions",
  "status": "continue | done | blocked | failed",
  "result": "when done: the deliverable (what was found, entered or decided)",
  "block_reason": "when blocked or failed: why, and what a human must do",
  "image_width": <width of the screenshot as you saw it, in pixels>,
  "image_height": <height of the screenshot as you saw it, in pixels>
}
`)
	b.WriteString("\n" + CoordinateConvention(p) + "\n")
	b.WriteString(`
Actions:
  {"action": "click", ` + pt(x, y) + `}  (optional "button": "left|right|middle", "clicks": 1-3, "keys": modifiers such as ["ctrl"])
  {"action": "click", "box": ` + box(bx1, by1, bx2, by2) + `}  (a box means its centre)
  {"action": "double_click" | "triple_click" | "move", ` + pt(x, y) + `}
  {"action": "drag", ` + pt(x, y) + `, "to": ` + pair(tx, ty) + `}
  {"action": "scroll", ` + pt(x, y) + `, "direction": "up|down|left|right", "amount": notches}
  {"action": "type", "text": "text to type"}
  {"action": "key", "keys": ["ctrl", "s"]}  (one combination; names like Return, Tab, Escape, BackSpace, Page_Down, F5, ctrl, shift, alt, super, or one character)
  {"action": "hold_key", "keys": ["shift"], "duration_ms": 500}
  {"action": "mouse_down" | "mouse_up", "button": "left"}
  {"action": "wait", "duration_ms": 1000}
  {"action": "zoom", "box": ` + box(bx1, by1, bx2, by2) + `}  (look at a region more closely)

Rules: batch every action you can take on this screen into one answer (for example, fill several fields and press submit). Use status "continue" while actions remain, "done" with the result when the task is complete (with no further actions), "blocked" when a human must act (log in, solve a captcha, confirm), "failed" when the task cannot be done. Never guess a position you cannot see; scroll or wait instead.
`)
	return b.String()
}

// ExtractJSON returns the first JSON object in a model's text: inside a
// ```json fence when there is one, else from the first '{' to its matching
// '}', so leading or trailing prose is ignored.
func ExtractJSON(text string) ([]byte, error) {
	s := text
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.Contains(rest[:nl], "{") {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 && strings.Contains(rest[:j], "{") {
			s = rest[:j]
		}
	}
	if strings.IndexByte(s, '{') < 0 {
		return nil, fmt.Errorf("%w: no JSON object found in the answer (it begins %q)", ErrBadOutput, clip(text, 80))
	}
	// Try each '{' in turn: prose before the object may contain braces too.
	var firstBad []byte
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '{')
		if i < 0 {
			break
		}
		start := off + i
		obj, closed := balanced(s[start:])
		if closed && json.Valid(obj) {
			return obj, nil
		}
		if firstBad == nil {
			firstBad = obj
			if !closed {
				firstBad = []byte{}
			}
		}
		off = start + 1
	}
	if len(firstBad) > 0 {
		return firstBad, nil // the caller reports why it does not parse
	}
	return nil, fmt.Errorf("%w: the JSON object in the answer is not closed (missing '}'; was the answer cut off by the token limit?)", ErrBadOutput)
}

// balanced returns s up to the '}' matching its leading '{', respecting JSON
// strings; closed is false when s ends first.
func balanced(s string) (obj []byte, closed bool) {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return []byte(s[:i+1]), true
			}
		}
	}
	return []byte(s), false
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// ParseAnswer reads the JSON answer documented by AnswerInstructions from a
// model's text and validates it against the action schema in p's convention.
// Any problem returns an error wrapping ErrBadOutput naming it, and no
// decision: a partly valid answer yields no actions.
func ParseAnswer(text string, p geom.Profile) (*Decision, error) {
	raw, err := ExtractJSON(text)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: the answer's JSON does not parse: %v", ErrBadOutput, err)
	}
	d := &Decision{}
	var probs []string
	str := func(key string) string {
		v, ok := top[key]
		if !ok || string(v) == "null" {
			return ""
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			probs = append(probs, fmt.Sprintf("%q must be a string", key))
		}
		return s
	}
	d.Observation = str("observation")
	d.Reasoning = str("reasoning")
	d.ExpectedOutcome = str("expected_outcome")
	d.Result = str("result")
	d.BlockReason = str("block_reason")
	d.NextUserAction = str("next_user_action")
	if v, ok := top["memory_update"]; ok && string(v) != "null" {
		var list []string
		var one string
		switch {
		case json.Unmarshal(v, &list) == nil:
			d.MemoryUpdate = list
		case json.Unmarshal(v, &one) == nil:
			if one != "" {
				d.MemoryUpdate = []string{one}
			}
		default:
			probs = append(probs, `"memory_update" must be a list of strings`)
		}
	}
	w, wok := number(top["image_width"])
	h, hok := number(top["image_height"])
	if wok && hok && w >= 1 && h >= 1 && w < 1e5 && h < 1e5 {
		d.ImageSize = &geom.Size{W: int(math.Round(w)), H: int(math.Round(h))}
	}
	if v, ok := top["actions"]; ok && string(v) != "null" {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			probs = append(probs, `"actions" must be a list of objects`)
		}
		for i, it := range items {
			a, err := parseAction(it, p)
			if err != nil {
				probs = append(probs, fmt.Sprintf("actions[%d]: %v", i, err))
				continue
			}
			d.Actions = append(d.Actions, a)
		}
	}
	status := strings.ToLower(strings.TrimSpace(str("status")))
	switch status {
	case "continue", "in_progress", "running":
		d.Status = Continue
	case "done", "completed", "complete", "finished", "success":
		d.Status = Done
	case "blocked", "need_human", "needs_human":
		d.Status = Blocked
	case "failed", "fail", "failure", "error":
		d.Status = Failed
	case "":
		if len(d.Actions) > 0 {
			d.Status = Continue
		} else {
			probs = append(probs, `"status" is missing: give continue, done, blocked or failed`)
		}
	default:
		probs = append(probs, fmt.Sprintf("status %q is not one of continue, done, blocked, failed", status))
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadOutput, strings.Join(probs, "; "))
	}
	if err := ValidateDecision(d, p); err != nil {
		return nil, err
	}
	return d, nil
}

// kindAliases maps spellings models use to action kinds.
var kindAliases = map[string]ActionKind{
	"left_click": Click, "tap": Click, "right_click": Click, "middle_click": Click,
	"doubleclick": DoubleClick, "double": DoubleClick, "left_double": DoubleClick,
	"tripleclick": TripleClick, "mouse_move": Move, "hover": Move, "move_to": Move,
	"left_click_drag": Drag, "type_text": TypeText, "input": TypeText, "write": TypeText,
	"hotkey": KeyPress, "keypress": KeyPress, "press": KeyPress, "key_press": KeyPress,
	"left_mouse_down": MouseDown, "left_mouse_up": MouseUp, "sleep": Wait,
}

func parseAction(m map[string]json.RawMessage, p geom.Profile) (Action, error) {
	var a Action
	name := ""
	for _, k := range []string{"action", "kind", "type"} {
		if v, ok := m[k]; ok && json.Unmarshal(v, &name) == nil && name != "" {
			break
		}
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return a, fmt.Errorf(`missing "action": use one of %s`, kindList())
	}
	a.Kind = ActionKind(name)
	if k, ok := kindAliases[name]; ok {
		a.Kind = k
	}
	switch name {
	case "right_click":
		a.Button = "right"
	case "middle_click":
		a.Button = "middle"
	}
	var probs []string
	nums := func(key string) []float64 {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return nil
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(v, &raw); err != nil {
			probs = append(probs, fmt.Sprintf("%q must be a list of numbers", key))
			return nil
		}
		out := make([]float64, len(raw))
		for i, r := range raw {
			f, ok := number(r)
			if !ok {
				probs = append(probs, fmt.Sprintf("%q[%d] is not a number", key, i))
				return nil
			}
			out[i] = f
		}
		return out
	}
	pair := func(kx, ky string) []float64 {
		vx, hasX := m[kx]
		vy, hasY := m[ky]
		if !hasX && !hasY {
			return nil
		}
		x, okx := number(vx)
		y, oky := number(vy)
		if !okx || !oky {
			probs = append(probs, fmt.Sprintf("%q and %q must both be numbers", kx, ky))
			return nil
		}
		if p.Order == geom.YX {
			return []float64{y, x}
		}
		return []float64{x, y}
	}
	if xy := pair("x", "y"); xy != nil {
		a.At = xy
	} else if v := nums("point"); v != nil {
		a.At = v
	} else if v := nums("box"); v != nil {
		a.At = v
	} else if v := nums("coordinate"); v != nil {
		a.At = v
	}
	if xy := pair("to_x", "to_y"); xy != nil {
		a.To = xy
	} else if v := nums("to"); v != nil {
		a.To = v
	} else if v := nums("end_box"); v != nil {
		a.To = v
	}
	if a.Kind == Zoom && a.To == nil && len(a.At) == 4 { // a region: corners in profile order
		a.At, a.To = []float64{a.At[0], a.At[1]}, []float64{a.At[2], a.At[3]}
	}
	if v, ok := m["path"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &a.Path); err != nil {
			probs = append(probs, `"path" must be a list of [x, y] points`)
		}
	}
	text := func(key string) string {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return ""
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			probs = append(probs, fmt.Sprintf("%q must be a string", key))
		}
		return s
	}
	if b := text("button"); b != "" {
		a.Button = b
	}
	a.Text = text("text")
	if a.Text == "" && a.Kind == TypeText {
		a.Text = text("content")
	}
	a.Direction = text("direction")
	a.Target = text("target")
	if v, ok := m["keys"]; ok && string(v) != "null" {
		var list []string
		var one string
		switch {
		case json.Unmarshal(v, &list) == nil:
			a.Keys = list
		case json.Unmarshal(v, &one) == nil:
			a.Keys = []string{one}
		default:
			probs = append(probs, `"keys" must be a list of key names`)
		}
	} else if k := text("key"); k != "" {
		a.Keys = strings.Fields(strings.ReplaceAll(k, " + ", "+"))
	}
	intField := func(key string) int {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return 0
		}
		f, ok := number(v)
		if !ok || f != math.Trunc(f) {
			probs = append(probs, fmt.Sprintf("%q must be a whole number", key))
			return 0
		}
		return int(f)
	}
	a.Clicks = intField("clicks")
	a.Amount = intField("amount")
	a.DurationMS = intField("duration_ms")
	if len(probs) > 0 {
		return Action{}, fmt.Errorf("%s", strings.Join(probs, "; "))
	}
	if err := validateAction(a, p); err != nil {
		return Action{}, fmt.Errorf("(%s) %w", a.Kind, err)
	}
	return a, nil
}

// number reads a JSON number, or a string holding one.
func number(v json.RawMessage) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var f float64
	if json.Unmarshal(v, &f) == nil {
		return f, true
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, true
		}
	}
	return 0, false
}
