// Package flow reads, validates and runs YAML flows: a named list of steps
// that act on the desktop by description (click the Name field, type into it,
// assert what the screen says), replayed from a verified cache so that a
// repeated job runs without the model.
//
// A flow is parsed and validated whole before anything runs (Parse): invalid
// YAML is reported with its line and column, an unknown step kind lists the
// valid ones, and a ${name} that neither --var nor an earlier save_as defines
// is named. Runner executes a parsed flow: act steps go to the agent loop,
// the others locate their target through a vision.Seer (or the cache) and act
// through desktop.Input at the point the one resolver (geom) gives.
//
// The cache lives in this package too (cache.go, fingerprint.go, and
// field.go for the fingerprints of text fields, which leave out what the
// field holds): its entries are keyed by the steps' own kinds and
// descriptions and are only meaningful to this runner, so a separate
// package would export both sides of one private format.
package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Kind is a step kind: the one key of a step's YAML mapping.
type Kind string

// Step kinds.
const (
	Act     Kind = "act"      // a whole agent task (the gui_execute_task loop)
	Click   Kind = "click"    // locate, then click
	Type    Kind = "type"     // optionally locate and click, then type text
	Key     Kind = "key"      // press one key combination ("Tab", "ctrl+s")
	Hotkey  Kind = "hotkey"   // press a combination given as a list ([ctrl, s])
	Scroll  Kind = "scroll"   // scroll, over a located target when one is given
	Drag    Kind = "drag"     // locate from and to, drag between them
	WaitFor Kind = "wait_for" // ask until a condition holds or the timeout passes
	Assert  Kind = "assert"   // ask whether a statement holds; fail the flow if not
	Query   Kind = "query"    // ask a question, answer valid against a schema
	Locate  Kind = "locate"   // locate only (save_as gets "x,y" in global pixels)
	Sleep   Kind = "sleep"    // wait a number of milliseconds
)

// Kinds lists every step kind, in the order the documentation gives them.
var Kinds = []Kind{Act, Click, Type, Key, Hotkey, Scroll, Drag, WaitFor, Assert, Query, Locate, Sleep}

// Locates reports whether a step of kind k locates an element on the screen
// (and so has cache entries with fingerprints).
func (k Kind) Locates() bool {
	switch k {
	case Click, Type, Scroll, Drag, Locate:
		return true
	}
	return false
}

// Type modes.
const (
	ModeReplace = "replace" // click the target, select all, type
	ModeAppend  = "append"  // click the target, press End, type
	ModeType    = "type"    // click the target if any, type
)

// Limits of wait_for and sleep.
const (
	DefaultWaitTimeout  = 15 * time.Second
	MaxWaitTimeout      = 300 * time.Second
	DefaultWaitInterval = time.Second
	MinWaitInterval     = 250 * time.Millisecond
	MaxSleep            = 10 * time.Minute
)

// Flow is a parsed and validated flow.
type Flow struct {
	// Name is the flow's name (required).
	Name string
	// Display is the display id the flow runs on; "" = the primary display.
	Display string
	// URL is the page the flow starts on (the browser backend): a first
	// navigate step opens it.
	URL string
	// Steps are the steps in order.
	Steps []Step
}

// Step is one parsed step. Text fields may hold ${name} references, which
// Runner substitutes just before the step runs.
type Step struct {
	// Index is the step's number, from 1.
	Index int
	// Line and Column are where the step starts in the YAML text.
	Line, Column int
	Kind         Kind
	// Text is the act goal, the text typed, the assertion, the wait_for
	// condition or the query's question.
	Text string
	// Target is the element a click, type, scroll or locate acts on, or the
	// start of a drag.
	Target string
	// ByText says Target is text written on the element (`click: {text:
	// Submit}`), located by OCR with no model.
	ByText bool
	// To is the end of a drag.
	To string
	// Mode is a type step's mode (ModeReplace, ModeAppend, ModeType).
	Mode string
	// Keys is the combination of a key or hotkey step.
	Keys []desktop.Key
	// Direction and Amount describe a scroll (Amount in wheel notches).
	Direction desktop.Direction
	Amount    int
	// Timeout and Interval bound a wait_for.
	Timeout, Interval time.Duration
	// Schema is a query's answer schema (JSON Schema).
	Schema json.RawMessage
	// SaveAs names the variable a query or locate result is stored in.
	SaveAs string
	// Duration is how long a sleep sleeps.
	Duration time.Duration
	// ContinueOnError lets the flow go on when this step fails.
	ContinueOnError bool
	// Extra holds options only flows built in Go set (extra.go); nil
	// otherwise.
	Extra *Extra
}

// Describe is a one-line summary of the step for records and errors.
func (s Step) Describe() string {
	switch s.Kind {
	case Act, Assert, WaitFor, Query:
		return fmt.Sprintf("%s: %s", s.Kind, s.Text)
	case Type:
		if s.Target != "" {
			return fmt.Sprintf("type into %s (%s)", s.Target, s.Mode)
		}
		return "type"
	case Key, Hotkey:
		return fmt.Sprintf("%s: %s", s.Kind, desktop.ComboString(s.Keys))
	case Drag:
		return fmt.Sprintf("drag: %s -> %s", s.Target, s.To)
	case Sleep:
		return fmt.Sprintf("sleep: %v", s.Duration)
	case Scroll:
		return fmt.Sprintf("scroll %s %d over %s", s.Direction, s.Amount, s.Target)
	}
	return fmt.Sprintf("%s: %s", s.Kind, s.Target)
}

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("invalid flow")

// varRef matches ${name}.
var varRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// validName is what a variable name may look like.
var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// refs returns the variable names s refers to.
func refs(s string) []string {
	var out []string
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// Expand replaces every ${name} in s by vars[name]; a missing name is an
// error naming it.
func Expand(s string, vars map[string]string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("variable %s is not defined: pass --var %s=VALUE or save it with save_as in an earlier step", strings.Join(missing, ", "), missing[0])
	}
	return out, nil
}

// checkExpanded refuses the i-th of a step's texts (texts) when its ${vars}
// made it longer than that field's limit.
func checkExpanded(k Kind, i int, v string) error {
	max, what := MaxTargetChars, "target"
	switch {
	case i == 0 && k == Type:
		max, what = MaxTextChars, "text"
	case i == 0:
		max, what = MaxDescriptionChars, "text"
	}
	if n := utf8.RuneCountInString(v); n > max {
		return fmt.Errorf("the step's %s is %d characters once its ${variables} are expanded, more than the limit of %d: use shorter variables", what, n, max)
	}
	return nil
}

// texts returns pointers to the step's fields that may hold ${name}.
func (s *Step) texts() []*string {
	return []*string{&s.Text, &s.Target, &s.To}
}
