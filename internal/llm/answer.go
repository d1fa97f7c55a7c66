package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
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
  {"action": "ask_user", "question": "Which account should I use?", "ask": "choice", "options": ["work", "personal"]}  ("ask": "confirm" for yes or no, "text" for a free answer, "choice" for one of "options"; "secret": true only for a password the user types into the focused field themselves, never seen by you)

Rules: batch every action you can take on this screen into one answer (for example, fill several fields and press submit). Use status "continue" while actions remain, "done" with the result when the task is complete (with no further actions), "blocked" when a human must act on the screen themselves (log in, solve a captcha), "failed" when the task cannot be done. Never guess a position you cannot see; scroll or wait instead.
Ask the user (ask_user, with status "continue") only when the information or the decision is theirs: a value the task does not give, a choice between accounts or options, whether to go ahead with something that cannot be undone. Never ask about ordinary steps. Put ask_user last in the actions; the answer comes with the next screenshot.
`)
	return b.String()
}

// RefInstructions documents element refs for a prompt whose observations
// carry the UI's elements (an outline, or numbered marks on the screenshot):
// an action may name its element by ref instead of coordinates.
func RefInstructions() string {
	return `
Elements: when the UI's elements are listed (ref, role, "name", [x1,y1,x2,y2] box) or the screenshot shows numbered marks (mark N is the element with ref eN), a pointer action may name its element by ref instead of coordinates: it then acts at the centre of that element's box.
  {"action": "click", "ref": "e12"}  (also double_click, triple_click, move, scroll, mouse_down, mouse_up)
  {"action": "drag", "from_ref": "e3", "to_ref": "e7"}
Give a ref or coordinates for a position, never both. Refs are those of the current step's list only; an element that is not listed needs coordinates.
`
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
// model's text and parses its actions (action.ParseModel) in p's convention.
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
	f := &fields{m: top}
	d := &Decision{
		Observation: f.text("observation"), Reasoning: f.text("reasoning"), ExpectedOutcome: f.text("expected_outcome"),
		Result: f.text("result"), BlockReason: f.text("block_reason"), NextUserAction: f.text("next_user_action"),
		MemoryUpdate: f.list("memory_update", `"memory_update" must be a list of strings`),
	}
	w, wok := number(top["image_width"])
	h, hok := number(top["image_height"])
	if wok && hok && w >= 1 && h >= 1 && w < 1e5 && h < 1e5 {
		d.ImageSize = &geom.Size{W: int(math.Round(w)), H: int(math.Round(h))}
	}
	d.Actions = f.actions(p)
	d.Status = f.status(len(d.Actions) > 0)
	if len(f.probs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadOutput, strings.Join(f.probs, "; "))
	}
	if err := ValidateDecision(d); err != nil {
		return nil, err
	}
	return d, nil
}

// fields reads the members of one JSON object, collecting problems.
type fields struct {
	m     map[string]json.RawMessage
	probs []string
}

func (f *fields) problem(format string, args ...any) {
	f.probs = append(f.probs, fmt.Sprintf(format, args...))
}

// get returns the member key, or nil when it is missing or null.
func (f *fields) get(key string) json.RawMessage {
	v, ok := f.m[key]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

// text reads a string member ("" when missing).
func (f *fields) text(key string) string {
	v := f.get(key)
	if v == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		f.problem("%q must be a string", key)
	}
	return s
}

// strings reads a list of strings, or one string as a list of one.
func (f *fields) list(key, bad string) []string {
	v := f.get(key)
	if v == nil {
		return nil
	}
	var list []string
	var one string
	switch {
	case json.Unmarshal(v, &list) == nil:
		return list
	case json.Unmarshal(v, &one) == nil:
		if one != "" {
			return []string{one}
		}
		return nil
	}
	f.problem("%s", bad)
	return nil
}

// nums reads a list of numbers (numbers in strings accepted).
func (f *fields) nums(key string) []float64 {
	v := f.get(key)
	if v == nil {
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		f.problem("%q must be a list of numbers", key)
		return nil
	}
	out := make([]float64, len(raw))
	for i, r := range raw {
		n, ok := number(r)
		if !ok {
			f.problem("%q[%d] is not a number", key, i)
			return nil
		}
		out[i] = n
	}
	return out
}

// pair reads named members kx and ky as a point in p's axis order.
func (f *fields) pair(kx, ky string, p geom.Profile) []float64 {
	vx, hasX := f.m[kx]
	vy, hasY := f.m[ky]
	if !hasX && !hasY {
		return nil
	}
	x, okx := number(vx)
	y, oky := number(vy)
	if !okx || !oky {
		f.problem("%q and %q must both be numbers", kx, ky)
		return nil
	}
	if p.Order == geom.YX {
		return []float64{y, x}
	}
	return []float64{x, y}
}

// whole reads a whole number (0 when missing).
func (f *fields) whole(key string) int {
	v := f.get(key)
	if v == nil {
		return 0
	}
	n, ok := number(v)
	if !ok || n != math.Trunc(n) {
		f.problem("%q must be a whole number", key)
		return 0
	}
	return int(n)
}

// firstNums reads the first of keys that is present (nil when none is).
func (f *fields) firstNums(keys ...string) []float64 {
	for _, k := range keys {
		if v := f.nums(k); v != nil {
			return v
		}
	}
	return nil
}

// actions parses the "actions" list; a bad action is a problem.
func (f *fields) actions(p geom.Profile) []action.Action {
	v := f.get("actions")
	if v == nil {
		return nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		f.problem(`"actions" must be a list of objects`)
	}
	var out []action.Action
	for i, it := range items {
		r, err := rawAction(it, p)
		if err == nil {
			var a action.Action
			if a, err = action.ParseModel(r, p.Space()); err == nil {
				out = append(out, a)
				continue
			}
			err = fmt.Errorf("(%s) %w", r.Kind, err)
		}
		f.problem("actions[%d]: %v", i, err)
	}
	return out
}

// statusWords maps the words models use to statuses.
var statusWords = map[string]Status{
	"continue": Continue, "in_progress": Continue, "running": Continue,
	"done": Done, "completed": Done, "complete": Done, "finished": Done, "success": Done,
	"blocked": Blocked, "need_human": Blocked, "needs_human": Blocked,
	"failed": Failed, "fail": Failed, "failure": Failed, "error": Failed,
}

// status reads "status"; a missing one means continue when there are actions.
func (f *fields) status(hasActions bool) Status {
	s := strings.ToLower(strings.TrimSpace(f.text("status")))
	if st, ok := statusWords[s]; ok {
		return st
	}
	switch {
	case s != "":
		f.problem("status %q is not one of continue, done, blocked, failed", s)
	case hasActions:
		return Continue
	default:
		f.problem(`"status" is missing: give continue, done, blocked or failed`)
	}
	return ""
}

// kindAliases maps spellings models use to action kinds.
var kindAliases = map[string]action.Kind{
	"left_click": action.Click, "tap": action.Click, "right_click": action.Click, "middle_click": action.Click,
	"doubleclick": action.DoubleClick, "double": action.DoubleClick, "left_double": action.DoubleClick,
	"tripleclick": action.TripleClick, "mouse_move": action.Move, "hover": action.Move, "move_to": action.Move,
	"left_click_drag": action.Drag, "type_text": action.TypeText, "input": action.TypeText, "write": action.TypeText,
	"hotkey": action.KeyPress, "keypress": action.KeyPress, "press": action.KeyPress, "key_press": action.KeyPress,
	"left_mouse_down": action.MouseDown, "left_mouse_up": action.MouseUp, "sleep": action.Wait,
}

// kindButtons are the buttons implied by a kind's spelling.
var kindButtons = map[string]string{"right_click": "right", "middle_click": "middle"}

// rawAction reads one action object of the answer into an action.Raw, its
// numbers in p's order; action.ParseModel then checks it.
func rawAction(m map[string]json.RawMessage, p geom.Profile) (action.Raw, error) {
	f := &fields{m: m}
	name := ""
	for _, k := range []string{"action", "kind", "type"} {
		if v, ok := m[k]; ok && json.Unmarshal(v, &name) == nil && name != "" {
			break
		}
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return action.Raw{}, fmt.Errorf(`missing "action": use one of %s`, kindList())
	}
	a := action.Raw{Kind: action.Kind(name), Button: kindButtons[name]}
	if k, ok := kindAliases[name]; ok {
		a.Kind = k
	}
	if a.At = f.pair("x", "y", p); a.At == nil {
		a.At = f.firstNums("point", "box", "coordinate")
	}
	if a.To = f.pair("to_x", "to_y", p); a.To == nil {
		a.To = f.firstNums("to", "end_box")
	}
	if a.Kind == action.Zoom && a.To == nil && len(a.At) == 4 { // a region: corners in profile order
		a.At, a.To = []float64{a.At[0], a.At[1]}, []float64{a.At[2], a.At[3]}
	}
	if v := f.get("path"); v != nil && json.Unmarshal(v, &a.Path) != nil {
		f.problem(`"path" must be a list of [x, y] points`)
	}
	if b := f.text("button"); b != "" {
		a.Button = b
	}
	a.Text = f.text("text")
	if a.Text == "" && a.Kind == action.TypeText {
		a.Text = f.text("content")
	}
	a.Direction, a.Target = f.text("direction"), f.text("target")
	a.Ref, a.ToRef = f.ref("ref", "from_ref"), f.ref("to_ref")
	if f.get("keys") != nil {
		a.Keys = f.list("keys", `"keys" must be a list of key names`)
	} else if k := f.text("key"); k != "" {
		a.Keys = strings.Fields(strings.ReplaceAll(k, " + ", "+"))
	}
	a.Clicks, a.Amount, a.DurationMS = f.whole("clicks"), f.whole("amount"), f.whole("duration_ms")
	if a.Kind == action.AskUser {
		f.question(&a)
	}
	if len(f.probs) > 0 {
		return action.Raw{}, fmt.Errorf("%s", strings.Join(f.probs, "; "))
	}
	return a, nil
}

// ref reads an element ref from the first of keys present: a string
// ("e12"), or a mark's bare number (12 is ref "e12", as the marks drawn on
// the screenshot are numbered).
func (f *fields) ref(keys ...string) string {
	for _, k := range keys {
		v := f.get(k)
		if v == nil {
			continue
		}
		if n, ok := number(v); ok && n == math.Trunc(n) && n >= 1 && n < 1e6 && !strings.HasPrefix(string(v), `"`) {
			return "e" + strconv.Itoa(int(n))
		}
		return f.text(k)
	}
	return ""
}

// question reads an ask_user's question, kind ("ask", or "kind" when it
// names a question kind rather than the action), options and secret flag.
func (f *fields) question(a *action.Raw) {
	a.Question = f.text("question")
	if a.Question == "" { // models sometimes put the question in "text"
		a.Question, a.Text = a.Text, ""
	}
	a.Ask = f.text("ask")
	if k := strings.ToLower(f.text("kind")); a.Ask == "" && slices.Contains([]action.AskKind{action.AskConfirm, action.AskText, action.AskChoice}, action.AskKind(k)) {
		a.Ask = k
	}
	if f.get("options") != nil {
		a.Options = f.list("options", `"options" must be a list of strings`)
	}
	if v := f.get("secret"); v != nil && json.Unmarshal(v, &a.Secret) != nil {
		f.problem(`"secret" must be true or false`)
	}
}

func kindList() string {
	s := make([]string, len(action.Kinds))
	for i, k := range action.Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
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
