// Package eval runs suites of desktop tasks against models and scores them
// (`guiagent eval`): each run of a task gets a private virtual desktop, its
// setup (commands that start the application, or a flow), the task (a goal
// for the agent loop, or a flow), and checks that decide whether it passed.
// Results are one JSON file (a row per run and a summary per model), an HTML
// summary linking each run's own report, and, on request, trajectories
// (JSONL) for training and replay.
package eval

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/geom"
)

// ErrInvalid wraps every error about a suite's text.
var ErrInvalid = errors.New("invalid suite")

// Limits of a suite, each named in the error that refuses it.
const (
	MaxSuiteBytes = 1 << 20
	MaxTasks      = 1000
	// DefaultSetupTimeout is how long a setup command's ready pattern is
	// waited for when the suite gives no timeout.
	DefaultSetupTimeout = 30 * time.Second
	// DefaultCheckTimeout bounds a check command.
	DefaultCheckTimeout = 60 * time.Second
	maxErrors           = 20
)

// DefaultDisplay is a task's desktop size when neither it nor the suite gives one.
var DefaultDisplay = geom.Size{W: 1280, H: 800}

// Suite is a parsed, validated suite.
type Suite struct {
	Name string
	// Dir is the folder of the suite file: setup and check commands run there
	// and flow paths are relative to it.
	Dir   string
	Tasks []Task
}

// Task is one task of a suite.
type Task struct {
	Name    string
	Display geom.Size
	// URL, when set, runs the task on a web page: a private browser of its
	// own (the browser backend) with a viewport of Display, opened at URL
	// once the setup's commands have started (a local server, say).
	URL   string
	Setup []SetupStep
	// Goal is the text for the agent loop; Flow is set instead when the task
	// is a flow to run.
	Goal   string
	Flow   *FlowRef
	Checks []Check
	Budget Budget
	Tags   []string
	// Line is where the task starts in the suite file.
	Line int
}

// SetupStep is one step of a task's setup: a command started on the task's
// desktop (Run), or a flow (Flow).
type SetupStep struct {
	Run string
	// Ready, when set, is a pattern the command's output must match before
	// the setup goes on; Timeout bounds the wait.
	Ready   *regexp.Regexp
	Timeout time.Duration
	Flow    *FlowRef
}

// FlowRef is a flow file a suite names, parsed when the suite is.
type FlowRef struct {
	Path string // as resolved against the suite's folder
	Text []byte
	Flow *flow.Flow
}

// Check is one way of judging a run: exactly one of its fields is set.
type Check struct {
	// Command passes when it exits 0.
	Command string
	// AppOutput passes when what the setup commands printed matches it.
	AppOutput *regexp.Regexp
	// Assert is a statement about the screen, judged by the accessibility
	// tree or OCR, and by the model only when AssertModel is set.
	Assert      string
	AssertModel bool
	// File passes when the file at FilePath holds FileContent (trailing
	// newlines aside).
	FilePath, FileContent string
}

// Kind names the check's kind as the suite spells it.
func (c Check) Kind() string {
	switch {
	case c.Command != "":
		return "command"
	case c.AppOutput != nil:
		return "app_output"
	case c.Assert != "":
		return "assert"
	default:
		return "file"
	}
}

// Budget bounds one run; zero fields leave the configured default.
type Budget struct {
	Steps   int
	Seconds int
	Tokens  int
}

// ParseFile reads and parses the suite at path.
func ParseFile(path string) (*Suite, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the suite: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(text, filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads a suite from YAML text and validates all of it (every task,
// setup step, check, budget and the flows it names, read from dir) before
// anything runs. The error lists every problem, each with its line and column.
func Parse(text []byte, dir string) (*Suite, error) {
	if len(text) > MaxSuiteBytes {
		return nil, fmt.Errorf("%w: the suite is %d bytes, more than the limit of %d (1 MiB): split it", ErrInvalid, len(text), MaxSuiteBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, flow.SyntaxError(text, err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: the YAML is empty: give a mapping with name and tasks", ErrInvalid)
	}
	p := &parser{dir: dir, names: map[string]int{}}
	s := p.suite(doc.Content[0])
	s.Dir = dir
	if len(p.errs) > 0 {
		errs := p.errs
		if len(errs) > maxErrors {
			errs = append(errs[:maxErrors:maxErrors], fmt.Sprintf("... and %d more problems", len(p.errs)-maxErrors))
		}
		return nil, fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(errs, "\n  "))
	}
	return s, nil
}

type parser struct {
	dir   string
	errs  []string
	names map[string]int // task name -> line of its first use
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf("line %d, column %d: ", n.Line, n.Column)+fmt.Sprintf(format, args...))
}

func pairs(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func (p *parser) suite(n *yaml.Node) *Suite {
	s := &Suite{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a suite is a mapping with name, display (optional) and tasks")
		return s
	}
	display := DefaultDisplay
	var tasks *yaml.Node
	for _, kv := range pairs(n) {
		switch kv[0].Value {
		case "name":
			s.Name = p.str(kv[1], "name")
		case "display":
			display = p.size(kv[1])
		case "tasks":
			tasks = kv[1]
		default:
			p.errf(kv[0], "unknown key %q: a suite has name, display and tasks", kv[0].Value)
		}
	}
	if s.Name == "" {
		p.errf(n, "the suite has no name: add name: followed by a short title")
	}
	switch {
	case tasks == nil:
		p.errf(n, "the suite has no tasks: add tasks: with a list of tasks (name, setup, task, check)")
	case tasks.Kind != yaml.SequenceNode || len(tasks.Content) == 0:
		p.errf(tasks, "tasks must be a non-empty list of tasks")
	case len(tasks.Content) > MaxTasks:
		p.errf(tasks, "%d tasks, more than the limit of %d", len(tasks.Content), MaxTasks)
	default:
		for _, tn := range tasks.Content {
			s.Tasks = append(s.Tasks, p.task(tn, display))
		}
	}
	return s
}

func (p *parser) task(n *yaml.Node, display geom.Size) Task {
	t := Task{Display: display, Line: n.Line}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a task is a mapping with name, display, url, setup, task, check, budget and tags")
		return t
	}
	seen := map[string]bool{}
	for _, kv := range pairs(n) {
		k, v := kv[0].Value, kv[1]
		seen[k] = true
		switch k {
		case "name":
			t.Name = p.str(v, "name")
		case "display":
			t.Display = p.size(v)
		case "url":
			t.URL = p.str(v, "url")
			if u, err := url.Parse(t.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file" && u.Scheme != "data") {
				p.errf(v, "url %q is not a web address: give http://, https://, file:// or data: (the page the task starts on)", t.URL)
			}
		case "setup":
			t.Setup = p.setup(v)
		case "task":
			t.Goal, t.Flow = p.goal(v)
		case "check":
			t.Checks = p.checks(v)
		case "budget":
			t.Budget = p.budget(v)
		case "tags":
			t.Tags = p.strings(v, "tags")
		default:
			p.errf(kv[0], "unknown key %q: a task has name, display, url, setup, task, check, budget and tags", k)
		}
	}
	switch {
	case t.Name == "":
		p.errf(n, "the task has no name: add name: (a word or two, unique in the suite)")
	case p.names[t.Name] != 0:
		p.errf(n, "the task name %q is used twice (first at line %d): task names must be unique", t.Name, p.names[t.Name])
	case strings.ContainsAny(t.Name, "/\\\x00") || t.Name == "." || t.Name == "..":
		p.errf(n, "the task name %q holds a slash: it names files of the results, so use letters, digits, - and _", t.Name)
	default:
		p.names[t.Name] = n.Line
	}
	if !seen["task"] {
		p.errf(n, "task %q has no task: give the goal in words (task: Fill in the form...) or a flow (task: {flow: file.yaml})", t.Name)
	}
	if !seen["check"] {
		p.errf(n, "task %q has no check: without one nothing decides whether it passed (add check: with command, app_output, assert or file)", t.Name)
	}
	return t
}

// setup reads a list of steps: "command", {run: command, ready: regex,
// timeout: 30s} or {flow: file.yaml}. A single step may stand alone.
func (p *parser) setup(n *yaml.Node) []SetupStep {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []SetupStep
	for _, it := range items {
		st := SetupStep{Timeout: DefaultSetupTimeout}
		switch it.Kind {
		case yaml.ScalarNode:
			st.Run = p.str(it, "a setup command")
		case yaml.MappingNode:
			var ready *yaml.Node
			hasFlow := false
			for _, kv := range pairs(it) {
				switch kv[0].Value {
				case "run":
					st.Run = p.str(kv[1], "run")
				case "ready":
					ready = kv[1]
				case "timeout":
					st.Timeout = p.duration(kv[1])
				case "flow":
					st.Flow, hasFlow = p.flowRef(kv[1]), true
				default:
					p.errf(kv[0], "unknown key %q: a setup step is a command, {run, ready, timeout} or {flow}", kv[0].Value)
				}
			}
			if ready != nil {
				st.Ready = p.regex(ready, "ready")
			}
			if (st.Run == "") == !hasFlow {
				p.errf(it, "a setup step has either run (a command) or flow (a flow file), not both or neither")
			}
		default:
			p.errf(it, "a setup step is a command, {run: command, ready: pattern, timeout: 30s} or {flow: file.yaml}")
		}
		out = append(out, st)
	}
	return out
}

// goal reads a task's task: goal text, or {flow: file.yaml}.
func (p *parser) goal(n *yaml.Node) (string, *FlowRef) {
	if n.Kind == yaml.MappingNode {
		var ref *FlowRef
		named := false
		for _, kv := range pairs(n) {
			if kv[0].Value != "flow" {
				p.errf(kv[0], "unknown key %q: a task is goal text or {flow: file.yaml}", kv[0].Value)
				continue
			}
			ref, named = p.flowRef(kv[1]), true
		}
		if !named {
			p.errf(n, "task: {} names no flow: give {flow: file.yaml} or the goal in words")
		}
		return "", ref
	}
	g := strings.TrimSpace(p.str(n, "task"))
	if g == "" && n.Kind == yaml.ScalarNode {
		p.errf(n, "the task is empty: describe the goal in plain words")
	}
	if len(g) > flow.MaxDescriptionChars {
		p.errf(n, "the task is %d characters, more than the limit of %d", len(g), flow.MaxDescriptionChars)
	}
	return g, nil
}

// checks reads check: one mapping of kinds, or a list of them.
func (p *parser) checks(n *yaml.Node) []Check {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []Check
	for _, it := range items {
		if it.Kind != yaml.MappingNode || len(it.Content) == 0 {
			p.errf(it, "a check is a mapping with command, app_output, assert or file")
			continue
		}
		for _, kv := range pairs(it) {
			if c, ok := p.check(kv[0], kv[1]); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

func (p *parser) check(k, v *yaml.Node) (Check, bool) {
	var c Check
	switch k.Value {
	case "command":
		c.Command = p.str(v, "command")
		if strings.TrimSpace(c.Command) == "" {
			p.errf(v, "the check command is empty")
		}
	case "app_output":
		c.AppOutput = p.regex(v, "app_output")
	case "assert":
		c.Assert, c.AssertModel = p.assert(v)
	case "file":
		c.FilePath, c.FileContent = p.file(v)
	default:
		p.errf(k, "unknown check %q: a check is command, app_output, assert or file", k.Value)
		return c, false
	}
	return c, true
}

// assert reads "statement" or {that: statement, model: true}.
func (p *parser) assert(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.MappingNode {
		s := strings.TrimSpace(p.str(n, "assert"))
		if s == "" {
			p.errf(n, "the assertion is empty: state what should be true of the screen")
		}
		return s, false
	}
	var that string
	var model bool
	for _, kv := range pairs(n) {
		switch kv[0].Value {
		case "that":
			that = strings.TrimSpace(p.str(kv[1], "that"))
		case "model":
			model = p.boolean(kv[1], "model")
		default:
			p.errf(kv[0], "unknown key %q: an assert is a statement or {that: statement, model: true}", kv[0].Value)
		}
	}
	if that == "" {
		p.errf(n, "the assert has no statement: give that: with what should be true of the screen")
	}
	return that, model
}

// file reads {path: ..., content: ...}.
func (p *parser) file(n *yaml.Node) (path, content string) {
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a file check is {path: file, content: expected text}")
		return "", ""
	}
	hasContent := false
	for _, kv := range pairs(n) {
		switch kv[0].Value {
		case "path":
			path = p.str(kv[1], "path")
		case "content":
			content, hasContent = p.str(kv[1], "content"), true
		default:
			p.errf(kv[0], "unknown key %q: a file check has path and content", kv[0].Value)
		}
	}
	if path == "" || !hasContent {
		p.errf(n, "a file check needs path and content")
	}
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	return path, content
}

func (p *parser) budget(n *yaml.Node) Budget {
	var b Budget
	if n.Kind != yaml.MappingNode {
		p.errf(n, "budget is a mapping with steps, seconds and tokens")
		return b
	}
	for _, kv := range pairs(n) {
		v := p.positive(kv[1], kv[0].Value)
		switch kv[0].Value {
		case "steps":
			b.Steps = v
		case "seconds":
			b.Seconds = v
		case "tokens":
			b.Tokens = v
		default:
			p.errf(kv[0], "unknown key %q: a budget has steps, seconds and tokens", kv[0].Value)
		}
	}
	if b.Steps > flow.MaxSteps {
		p.errf(n, "budget steps %d is more than the limit of %d", b.Steps, flow.MaxSteps)
	}
	return b
}

// flowRef reads a flow file name and parses the flow it names.
func (p *parser) flowRef(n *yaml.Node) *FlowRef {
	name := p.str(n, "flow")
	if name == "" {
		p.errf(n, "the flow is empty: give the path of a flow file")
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		p.errf(n, "cannot read the flow %s: %v", name, err)
		return nil
	}
	f, err := flow.Parse(text, nil)
	if err != nil {
		p.errf(n, "the flow %s (lines of that file follow): %v", name, err)
		return nil
	}
	return &FlowRef{Path: path, Text: text, Flow: f}
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, "%s must be text", what)
		return ""
	}
	return n.Value
}

func (p *parser) strings(n *yaml.Node, what string) []string {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "%s must be a list of words", what)
		return nil
	}
	var out []string
	for _, it := range n.Content {
		out = append(out, p.str(it, what))
	}
	return out
}

func (p *parser) positive(n *yaml.Node, what string) int {
	v, err := strconv.Atoi(p.str(n, what))
	if err != nil || v <= 0 {
		p.errf(n, "%s must be a whole number above 0, not %q", what, n.Value)
	}
	return v
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	switch p.str(n, what) {
	case "true", "yes":
		return true
	case "false", "no":
		return false
	}
	p.errf(n, "%s must be true or false, not %q", what, n.Value)
	return false
}

func (p *parser) duration(n *yaml.Node) time.Duration {
	d, err := time.ParseDuration(p.str(n, "timeout"))
	if err != nil || d <= 0 {
		p.errf(n, "timeout must be a duration such as 30s or 2m, not %q", n.Value)
	}
	return d
}

func (p *parser) regex(n *yaml.Node, what string) *regexp.Regexp {
	s := p.str(n, what)
	re, err := regexp.Compile(s)
	if err != nil {
		p.errf(n, "%s is not a valid regular expression: %v", what, err)
		return nil
	}
	if s == "" {
		p.errf(n, "%s is empty: give a regular expression", what)
	}
	return re
}

// size reads WxH.
func (p *parser) size(n *yaml.Node) geom.Size {
	s := p.str(n, "display")
	w, h, ok := strings.Cut(s, "x")
	wi, e1 := strconv.Atoi(w)
	hi, e2 := strconv.Atoi(h)
	if !ok || e1 != nil || e2 != nil || wi < 320 || hi < 240 || wi > 8192 || hi > 8192 {
		p.errf(n, "display must be WIDTHxHEIGHT in pixels (320x240 to 8192x8192), such as 1280x800, not %q", s)
		return DefaultDisplay
	}
	return geom.Size{W: wi, H: hi}
}
