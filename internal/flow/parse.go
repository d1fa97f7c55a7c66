package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Parse reads a flow from YAML text and validates all of it: every step's
// kind and arguments, and every ${name} against vars (the --var values) and
// the save_as names of earlier steps. The error lists every problem found,
// each with its line and column.
func Parse(text []byte, vars map[string]string) (*Flow, error) {
	if err := checkSize(text, vars); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, syntaxError(text, err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: the YAML is empty: give a mapping with name and steps", ErrInvalid)
	}
	p := &parser{defined: map[string]bool{}, lines: bytes.Count(text, []byte("\n")) + 1}
	for k := range vars {
		p.defined[k] = true
	}
	f := p.flow(doc.Content[0])
	if len(p.errs) > 0 {
		errs := p.errs
		if len(errs) > maxErrors {
			errs = append(errs[:maxErrors:maxErrors], fmt.Sprintf("... and %d more problems", len(p.errs)-maxErrors))
		}
		return nil, fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(errs, "\n  "))
	}
	return f, nil
}

// Limits of a flow, each named in the error that refuses it.
const (
	// MaxBytes is the largest flow text.
	MaxBytes = 1 << 20
	// MaxSteps is the most steps a flow may have.
	MaxSteps = 1000
	// MaxVars is the most --var values a run may have; MaxVarChars the
	// longest one.
	MaxVars     = 256
	MaxVarChars = MaxTextChars
	// MaxTextChars is the longest text a step may type once its ${vars}
	// are expanded (gui_type's cap); MaxDescriptionChars the longest
	// act goal, assertion, condition or question (gui_execute_task's cap on
	// a task), and MaxTargetChars the longest description of an element.
	MaxTextChars        = 100_000
	MaxDescriptionChars = 32 << 10
	MaxTargetChars      = 4096
	// maxErrors is how many problems an error lists.
	maxErrors = 20
)

// checkSize refuses a flow or variables beyond the limits before parsing.
func checkSize(text []byte, vars map[string]string) error {
	if len(text) > MaxBytes {
		return fmt.Errorf("%w: the flow is %d bytes, more than the limit of %d (1 MiB): split it into smaller flows", ErrInvalid, len(text), MaxBytes)
	}
	if len(vars) > MaxVars {
		return fmt.Errorf("%w: %d variables, more than the limit of %d", ErrInvalid, len(vars), MaxVars)
	}
	for k, v := range vars {
		if n := utf8.RuneCountInString(v); n > MaxVarChars {
			return fmt.Errorf("%w: variable %s is %d characters, more than the limit of %d", ErrInvalid, k, n, MaxVarChars)
		}
	}
	return nil
}

type parser struct {
	errs    []string
	defined map[string]bool
	// lines is the text's number of lines: yaml places the empty document
	// of a text ending in "---" on the line after the last.
	lines int
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line, col := n.Line, n.Column
	if line > p.lines {
		line, col = p.lines, 1
	}
	p.errs = append(p.errs, fmt.Sprintf("line %d, column %d: ", line, col)+fmt.Sprintf(format, args...))
}

// mapping returns the key/value pairs of n in order.
func mapping(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func (p *parser) flow(n *yaml.Node) *Flow {
	f := &Flow{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a flow is a mapping with name, display and url (optional) and steps")
		return f
	}
	var steps *yaml.Node
	for _, kv := range mapping(n) {
		switch kv[0].Value {
		case "name":
			f.Name = p.str(kv[1], "name")
		case "display":
			f.Display = p.str(kv[1], "display")
		case "url":
			f.URL = p.str(kv[1], "url")
			if u, err := url.Parse(f.URL); err != nil || u.Scheme == "" {
				p.errf(kv[1], "url %q is not an address a browser opens: give http://, https://, file:// or data: (the page the flow starts on, with --backend browser)", f.URL)
			}
		case "steps":
			steps = kv[1]
		default:
			p.errf(kv[0], "unknown key %q: a flow has name, display, url and steps", kv[0].Value)
		}
	}
	if strings.TrimSpace(f.Name) == "" {
		p.errf(n, "the flow has no name: add name: <what it does>")
	}
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		where := n
		if steps != nil {
			where = steps
		}
		p.errf(where, "steps must be a non-empty list of steps such as - click: the OK button")
		return f
	}
	if n := len(steps.Content); n > MaxSteps {
		p.errf(steps, "the flow has %d steps, more than the limit of %d: split it into smaller flows", n, MaxSteps)
		return f
	}
	if f.URL != "" { // the start page: a first step that opens it
		f.Steps = append(f.Steps, Step{Index: 1, Line: n.Line, Column: n.Column, Kind: Navigate, Target: f.URL})
	}
	for _, sn := range steps.Content {
		st := p.step(sn)
		st.Index = len(f.Steps) + 1
		f.Steps = append(f.Steps, st)
	}
	return f
}

func kindNames() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// step parses one step mapping: one kind key, and optionally continue_on_error.
func (p *parser) step(n *yaml.Node) Step {
	st := Step{Line: n.Line, Column: n.Column}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a step is a mapping such as - click: the OK button (kinds: %s)", kindNames())
		return st
	}
	var body *yaml.Node
	unknown := false
	for _, kv := range mapping(n) {
		k := kv[0].Value
		switch {
		case k == "continue_on_error":
			st.ContinueOnError = p.boolean(kv[1], k)
		case slices.Contains(Kinds, Kind(k)):
			if body != nil {
				p.errf(kv[0], "a step has one kind, this one has %s and %s: split it into two steps", st.Kind, k)
				continue
			}
			st.Kind, body = Kind(k), kv[1]
		default:
			unknown = true
			p.errf(kv[0], "unknown step kind %q: use one of %s", k, kindNames())
		}
	}
	if body == nil {
		if !unknown {
			p.errf(n, "the step has no kind: use one of %s", kindNames())
		}
		return st
	}
	p.body(&st, body)
	for _, t := range st.texts() {
		for _, name := range refs(*t) {
			if !validName.MatchString(name) {
				p.errf(body, "${%s} is not a valid variable name: use letters, digits and _", name)
			} else if !p.defined[name] {
				p.errf(body, "variable %q is not defined: pass --var %s=VALUE, or save it with save_as in an earlier step", name, name)
			}
		}
	}
	if st.SaveAs != "" {
		if !validName.MatchString(st.SaveAs) {
			p.errf(body, "save_as %q is not a valid variable name: use letters, digits and _", st.SaveAs)
		}
		p.defined[st.SaveAs] = true
	}
	return st
}

// fields reads a step's mapping body into a map from key to node, reporting
// keys not in allowed.
func (p *parser) fields(st *Step, n *yaml.Node, allowed ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for _, kv := range mapping(n) {
		k := kv[0].Value
		if k == "continue_on_error" {
			st.ContinueOnError = p.boolean(kv[1], k)
			continue
		}
		if !slices.Contains(allowed, k) {
			p.errf(kv[0], "%s: unknown key %q: use %s", st.Kind, k, strings.Join(allowed, ", "))
			continue
		}
		out[k] = kv[1]
	}
	return out
}

// scalarOr reads a step whose body is either a scalar (into the field named
// main) or a mapping with the allowed keys.
func (p *parser) scalarOr(st *Step, n *yaml.Node, main string, allowed ...string) map[string]*yaml.Node {
	if n.Kind == yaml.ScalarNode {
		return map[string]*yaml.Node{main: n}
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s takes text or a mapping with %s", st.Kind, strings.Join(allowed, ", "))
		return map[string]*yaml.Node{}
	}
	return p.fields(st, n, allowed...)
}

func (p *parser) body(st *Step, n *yaml.Node) {
	switch st.Kind {
	case Act, Assert:
		key := map[Kind]string{Act: "task", Assert: "assertion"}[st.Kind]
		m := p.scalarOr(st, n, key, key)
		st.Text = p.need(n, m, key, st.Kind)
	case Click, Locate:
		m := p.scalarOr(st, n, "target", "target", "text", "save_as")
		if _, ok := m["text"]; ok {
			if _, both := m["target"]; both {
				p.errf(n, "%s takes target (an element in words) or text (the words written on it), not both", st.Kind)
			}
			st.Target, st.ByText = p.need(n, m, "text", st.Kind), true
		} else {
			st.Target = p.need(n, m, "target", st.Kind)
		}
		st.SaveAs = p.opt(m, "save_as")
	case Type:
		p.typeStep(st, n)
	case Key:
		p.keyStep(st, n)
	case Hotkey:
		var names []string
		if n.Kind != yaml.SequenceNode || n.Decode(&names) != nil || len(names) == 0 {
			p.errf(n, "hotkey takes a list of key names such as [ctrl, s]")
			return
		}
		keys, err := desktop.ParseKeys(names)
		if err != nil {
			p.errf(n, "hotkey: %v", err)
		}
		st.Keys = keys
	case Scroll:
		p.scrollStep(st, n)
	case Drag:
		m := p.scalarOr(st, n, "", "from", "to")
		st.Target, st.To = p.need(n, m, "from", st.Kind), p.need(n, m, "to", st.Kind)
	case WaitFor:
		p.waitStep(st, n)
	case Query:
		p.queryStep(st, n)
	case Sleep:
		ms := p.integer(n, "sleep (milliseconds)")
		st.Duration = time.Duration(ms) * time.Millisecond
		if ms < 0 || st.Duration > MaxSleep {
			p.errf(n, "sleep %d ms: give 0 to %d milliseconds", ms, MaxSleep.Milliseconds())
		}
	}
}

func (p *parser) typeStep(st *Step, n *yaml.Node) {
	m := p.scalarOr(st, n, "text", "target", "text", "mode")
	st.Target = p.opt(m, "target")
	if tn, ok := m["text"]; ok {
		st.Text = p.str(tn, "text")
	} else {
		p.errf(n, "type has no text: add text: <what to type>")
	}
	st.Mode = p.opt(m, "mode")
	switch {
	case st.Mode == "" && st.Target != "":
		st.Mode = ModeReplace
	case st.Mode == "":
		st.Mode = ModeType
	case st.Mode != ModeReplace && st.Mode != ModeAppend && st.Mode != ModeType:
		p.errf(m["mode"], "type: mode %q: use replace, append or type", st.Mode)
	case st.Mode != ModeType && st.Target == "":
		p.errf(m["mode"], "type: mode %s needs a target to click first", st.Mode)
	}
}

func (p *parser) keyStep(st *Step, n *yaml.Node) {
	combo := p.str(n, "key")
	keys, err := desktop.ParseCombo(combo)
	if err != nil {
		p.errf(n, "key: %v", err)
	}
	st.Keys = keys
}

func (p *parser) scrollStep(st *Step, n *yaml.Node) {
	m := p.scalarOr(st, n, "direction", "target", "direction", "amount")
	st.Target = p.opt(m, "target")
	d, err := desktop.ParseDirection(p.need(n, m, "direction", st.Kind))
	if err != nil {
		p.errf(n, "scroll: %v", err)
	}
	st.Direction, st.Amount = d, 3
	if an, ok := m["amount"]; ok {
		st.Amount = p.integer(an, "amount")
		if st.Amount < 1 || st.Amount > 50 {
			p.errf(an, "scroll: amount %d: give 1 to 50 notches", st.Amount)
		}
	}
}

func (p *parser) waitStep(st *Step, n *yaml.Node) {
	m := p.scalarOr(st, n, "condition", "condition", "timeout_s", "interval_ms")
	st.Text = p.need(n, m, "condition", st.Kind)
	st.Timeout, st.Interval = DefaultWaitTimeout, DefaultWaitInterval
	if tn, ok := m["timeout_s"]; ok {
		s := p.integer(tn, "timeout_s")
		st.Timeout = time.Duration(s) * time.Second
		if s < 1 || st.Timeout > MaxWaitTimeout {
			p.errf(tn, "wait_for: timeout_s %d: give 1 to %d seconds", s, int(MaxWaitTimeout.Seconds()))
		}
	}
	if in, ok := m["interval_ms"]; ok {
		ms := p.integer(in, "interval_ms")
		st.Interval = time.Duration(ms) * time.Millisecond
		if st.Interval < MinWaitInterval {
			p.errf(in, "wait_for: interval_ms %d: give at least %d", ms, MinWaitInterval.Milliseconds())
		}
	}
}

func (p *parser) queryStep(st *Step, n *yaml.Node) {
	m := p.scalarOr(st, n, "question", "question", "schema", "save_as")
	st.Text = p.need(n, m, "question", st.Kind)
	st.SaveAs = p.opt(m, "save_as")
	st.Schema = json.RawMessage(`{"type":"string"}`)
	if sn, ok := m["schema"]; ok {
		var v any
		if err := sn.Decode(&v); err != nil {
			p.errf(sn, "query: schema: %v", err)
			return
		}
		b, err := json.Marshal(v)
		if err != nil || sn.Kind != yaml.MappingNode {
			p.errf(sn, "query: schema must be a JSON Schema mapping such as {type: number}")
			return
		}
		st.Schema = b
	}
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, "%s must be text", what)
		return ""
	}
	return n.Value
}

func (p *parser) opt(m map[string]*yaml.Node, key string) string {
	if n, ok := m[key]; ok {
		return p.str(n, key)
	}
	return ""
}

// need reads a required text field of a step.
func (p *parser) need(at *yaml.Node, m map[string]*yaml.Node, key string, k Kind) string {
	n, ok := m[key]
	if !ok {
		p.errf(at, "%s has no %s: add %s: <text>", k, key, key)
		return ""
	}
	s := p.str(n, key)
	if strings.TrimSpace(s) == "" && n.Kind == yaml.ScalarNode {
		p.errf(n, "%s: %s is empty", k, key)
	}
	return s
}

func (p *parser) integer(n *yaml.Node, what string) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		p.errf(n, "%s must be a whole number, not %q", what, n.Value)
	}
	return v
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.errf(n, "%s must be true or false, not %q", what, n.Value)
	}
	return b
}

// countParses is called for each parse syntaxError makes (tests count them).
var countParses = func() {}

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// SyntaxError is syntaxError for other YAML formats built like flows (eval
// suites): the same "line L, column C: problem" for a yaml.Unmarshal error.
func SyntaxError(text []byte, err error) string { return syntaxError(text, err) }

// syntaxError turns a YAML syntax error into "line L, column C: problem".
// yaml.v3 reports the line of the enclosing construct, or none, and no
// column, so the place is found by parsing prefixes of the text: the first
// line, then the first column of that line, at which a prefix fails with the
// same error is where the problem is. When no prefix does, it is the
// reported line's first non-blank character.
func syntaxError(text []byte, err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	same := func(prefix string) bool {
		countParses()
		var n yaml.Node
		e := yaml.Unmarshal([]byte(prefix), &n)
		return e != nil && e.Error() == err.Error()
	}
	lines := strings.Split(string(text), "\n")
	line, col := 0, 1
	if m[1] != "" {
		line, _ = strconv.Atoi(m[1])
	}
	// The first failing prefix is found by bisection (a prefix that fails
	// with the error keeps failing with it as it grows), so a long flow costs
	// a few dozen parses, not one per line.
	if l := firstTrue(len(lines), func(l int) bool { return same(strings.Join(lines[:l], "\n")) }); l > 0 {
		line = l
	}
	if line >= 1 && line <= len(lines) {
		before := strings.Join(lines[:line-1], "\n")
		if line > 1 {
			before += "\n"
		}
		l := lines[line-1]
		col = len(l) - len(strings.TrimLeft(l, " \t")) + 1
		if c := firstTrue(len(l), func(c int) bool { return same(before + l[:c]) }); c > 0 {
			col = c
		}
	}
	hint := "fix the YAML syntax there"
	if line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "?") && strings.Contains(lines[line-1], "{") {
		hint += `; inside {...} put text that contains "?" in quotes`
	}
	return fmt.Sprintf("line %d, column %d: %s (%s)", line, col, m[2], hint)
}

// firstTrue is the smallest i in 1..n with ok(i), for ok false up to some
// point and true from there on, or 0 when ok(n) is false.
func firstTrue(n int, ok func(int) bool) int {
	if n < 1 || !ok(n) {
		return 0
	}
	lo, hi := 1, n // ok(hi) holds
	for lo < hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
