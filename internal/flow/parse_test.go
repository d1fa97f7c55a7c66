package flow

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
)

// issueFlow is the example of the issue, every step kind once.
const issueFlow = `name: sign-up
display: primary            # optional
steps:
  - act: Open the sign-up dialog          # a whole agent task (the gui_execute_task loop)
  - click: the Name field                 # locate, then click
  - type: {target: the Name field, text: "${name}", mode: replace}
  - key: Tab                              # or hotkey: [ctrl, s]
  - hotkey: [ctrl, s]
  - scroll: {target: the results list, direction: down, amount: 5}
  - drag: {from: the slider knob, to: the right end of the slider}
  - wait_for: {condition: the Saved banner is visible, timeout_s: 10}
  - assert: The dialog says Saved
    continue_on_error: true
  - query: {question: "What is the order total?", schema: {type: number}, save_as: total}
  - locate: {target: "the row costing ${total}", save_as: ok}
  - sleep: 500
`

func TestParseEveryStepKind(t *testing.T) {
	f, err := Parse([]byte(issueFlow), map[string]string{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "sign-up" || f.Display != "primary" || len(f.Steps) != 12 {
		t.Fatalf("parsed %q on %q with %d steps", f.Name, f.Display, len(f.Steps))
	}
	var kinds []string
	for _, s := range f.Steps {
		kinds = append(kinds, string(s.Kind))
	}
	if got := strings.Join(kinds, " "); got != "act click type key hotkey scroll drag wait_for assert query locate sleep" {
		t.Errorf("kinds %s", got)
	}
	s := f.Steps
	if s[2].Target != "the Name field" || s[2].Text != "${name}" || s[2].Mode != ModeReplace {
		t.Errorf("type step %+v", s[2])
	}
	if desktop.ComboString(s[3].Keys) != desktop.ComboString(s[4].Keys[:0]) && len(s[3].Keys) != 1 {
		t.Errorf("key step keys %v", s[3].Keys)
	}
	if len(s[4].Keys) != 2 || s[5].Direction != desktop.Down || s[5].Amount != 5 {
		t.Errorf("hotkey %v, scroll %v %d", s[4].Keys, s[5].Direction, s[5].Amount)
	}
	if s[6].Target != "the slider knob" || s[6].To != "the right end of the slider" {
		t.Errorf("drag %+v", s[6])
	}
	if s[7].Timeout != 10*time.Second || s[7].Interval != DefaultWaitInterval || !s[8].ContinueOnError || s[7].ContinueOnError {
		t.Errorf("wait_for %+v, assert continue_on_error %v", s[7], s[8].ContinueOnError)
	}
	if string(s[9].Schema) != `{"type":"number"}` || s[9].SaveAs != "total" || s[11].Duration != 500*time.Millisecond {
		t.Errorf("query schema %s save_as %q, sleep %v", s[9].Schema, s[9].SaveAs, s[11].Duration)
	}
	if s[3].Line != 7 || s[3].Column != 5 {
		t.Errorf("key step at line %d column %d, want 7, 5", s[3].Line, s[3].Column)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		vars       map[string]string
		want       []string
	}{
		{"syntax error has line and column", "name: x\nsteps:\n  - click: a\n   - click: b\n", nil,
			[]string{"line 4, column 4:"}},
		{"unclosed flow mapping", "name: x\nsteps:\n  - type: {target: a, text: b\n", nil,
			[]string{"line 3, column 12:"}},
		{"question mark in a flow mapping", "name: x\nsteps:\n  - query: {question: Total?, save_as: t}\n", nil,
			[]string{"line 3", `put text that contains "?" in quotes`}},
		{"unknown kind lists the valid ones", "name: x\nsteps:\n  - tap: the OK button\n", nil,
			[]string{`line 3, column 5: unknown step kind "tap": use one of act, click, type, key, hotkey, scroll, drag, wait_for, assert, query, locate, sleep`}},
		{"missing variable is named", "name: x\nsteps:\n  - type: {target: a, text: \"${who}\"}\n", map[string]string{"name": "x"},
			[]string{`variable "who" is not defined: pass --var who=VALUE`}},
		{"save_as defines only later steps", "name: x\nsteps:\n  - click: \"${t}\"\n  - query: {question: q, save_as: t}\n", nil,
			[]string{`line 3, column 12: variable "t" is not defined`}},
		{"two kinds in a step", "name: x\nsteps:\n  - click: a\n    key: Tab\n", nil, []string{"a step has one kind"}},
		{"no name and no steps", "display: 1\n", nil, []string{"has no name", "steps must be a non-empty list"}},
		{"bad values", "name: x\nsteps:\n  - key: ctrl+nosuchkey\n  - sleep: soon\n  - wait_for: {condition: c, timeout_s: 999}\n  - scroll: {direction: sideways}\n  - type: {text: a, mode: overwrite}\n", nil,
			[]string{"line 3, column 10: key:", "line 4, column 12: sleep (milliseconds) must be a whole number", "timeout_s 999: give 1 to 300 seconds", "scroll:", `mode "overwrite": use replace, append or type`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), c.vars)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestExpand(t *testing.T) {
	got, err := Expand("hello ${a} and ${b}", map[string]string{"a": "1", "b": "2"})
	if err != nil || got != "hello 1 and 2" {
		t.Errorf("Expand = %q, %v", got, err)
	}
	if _, err := Expand("${missing}", nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing variable: %v", err)
	}
}

// TestFlowLimits: a flow's size, step count, variables and the size of its
// texts once ${vars} are expanded are bounded, each refused with an error
// that names the limit, and a long flow's syntax error is placed in a few
// parses rather than one per line.
func TestFlowLimits(t *testing.T) {
	big := "name: x\nsteps:\n" + strings.Repeat("  - sleep: 0\n", MaxBytes/13+1)
	if _, err := Parse([]byte(big), nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "more than the limit of 1048576") {
		t.Errorf("a %d-byte flow: %v", len(big), err)
	}
	many := "name: x\nsteps:\n" + strings.Repeat("  - sleep: 0\n", MaxSteps+1)
	if _, err := Parse([]byte(many), nil); err == nil || !strings.Contains(err.Error(), "1001 steps, more than the limit of 1000") {
		t.Errorf("a flow of %d steps: %v", MaxSteps+1, err)
	}
	unknown := "name: x\nsteps:\n" + strings.Repeat("  - tap: a\n", 900)
	if _, err := Parse([]byte(unknown), nil); err == nil || !strings.Contains(err.Error(), "... and 880 more problems") || len(err.Error()) > 8000 {
		t.Errorf("900 unknown steps: an error of %d bytes: %.300v", len(err.Error()), err)
	}
	if _, err := Parse([]byte(issueFlow), map[string]string{"name": strings.Repeat("x", MaxVarChars+1)}); err == nil || !strings.Contains(err.Error(), "variable name is 100001 characters") {
		t.Errorf("an oversized variable: %v", err)
	}
	// 20,000 lines with an error at the end are placed exactly.
	long := "name: x\nsteps:\n" + strings.Repeat("  - sleep: 0\n", 20000) + "  - click: a\n   - click: b\n"
	var parses int
	countParses = func() { parses++ }
	defer func() { countParses = func() {} }()
	_, err := Parse([]byte(long), nil)
	if err == nil || !strings.Contains(err.Error(), "line 20004, column 4:") {
		t.Errorf("syntax error of a long flow: %v", err)
	}
	if parses > 64 {
		t.Errorf("placing the syntax error took %d parses, want a bisection's few dozen", parses)
	}
}

func TestExpandedTextsAreBounded(t *testing.T) {
	for i, c := range []struct {
		kind Kind
		text string
		ok   bool
	}{
		{Type, strings.Repeat("a", MaxTextChars), true},
		{Type, strings.Repeat("a", MaxTextChars+1), false},
		{Act, strings.Repeat("a", MaxDescriptionChars+1), false},
	} {
		if err := checkExpanded(c.kind, 0, c.text); (err == nil) != c.ok {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if err := checkExpanded(Click, 1, strings.Repeat("a", MaxTargetChars+1)); err == nil || !strings.Contains(err.Error(), "target is 4097 characters") {
		t.Errorf("an oversized target: %v", err)
	}
}

func TestCacheNamesKeepEveryScript(t *testing.T) {
	names := map[string]string{}
	for name, want := range map[string]string{
		"Send It":       "send-it",
		"注文を送る":         "注文を送る",
		"Ünïcödé flow!": "ünïcödé-flow",
		"заказ":         "заказ",
		"!!!":           "",
		"???":           "",
	} {
		got := strings.TrimSuffix(filepath.Base(CachePath("", name, "/c")), ".cache.yaml")
		if want != "" && got != want {
			t.Errorf("cache of %q is %q, want %q", name, got, want)
		}
		if other, ok := names[got]; ok {
			t.Errorf("%q and %q share the cache %s", name, other, got)
		}
		names[got] = name
	}
	long := CachePath("", strings.Repeat("é", 300), "/c")
	if n := len(filepath.Base(long)); n > 255 {
		t.Errorf("a long name's cache file name is %d bytes", n)
	}
}
