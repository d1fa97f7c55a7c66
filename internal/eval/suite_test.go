package eval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

const goodSuite = `name: smoke
display: 1024x768
tasks:
  - name: form
    setup:
      - guiagent sample-app --scene form
      - run: guiagent sample-app --scene dialog
        ready: '"event":"ready"'
        timeout: 10s
      - flow: prepare.yaml
    task: Fill in the form.
    check:
      - command: test -f done
      - app_output: '"event":"submit"'
      - assert: the text "Submitted." is shown
      - assert: {that: the form is empty, model: true}
      - file: {path: out.txt, content: hello}
    budget: {steps: 5, seconds: 60, tokens: 9000}
    tags: [form, smoke]
  - name: by-flow
    display: 800x600
    task: {flow: prepare.yaml}
    check: {command: "true"}
`

const prepareFlow = "name: prepare\nsteps:\n  - sleep: 100\n"

func suiteDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prepare.yaml"), []byte(prepareFlow), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestParseReadsEveryPart(t *testing.T) {
	dir := suiteDir(t)
	s, err := Parse([]byte(goodSuite), dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "smoke" || len(s.Tasks) != 2 || s.Dir != dir {
		t.Fatalf("suite %+v", s)
	}
	f := s.Tasks[0]
	if f.Display != (geom.Size{W: 1024, H: 768}) || f.Goal != "Fill in the form." || f.Flow != nil || f.Line != 4 {
		t.Errorf("task: %+v", f)
	}
	if len(f.Setup) != 3 || f.Setup[0].Run != "guiagent sample-app --scene form" || f.Setup[0].Ready != nil ||
		f.Setup[1].Ready.String() != `"event":"ready"` || f.Setup[1].Timeout != 10*time.Second || f.Setup[2].Flow.Flow.Name != "prepare" {
		t.Errorf("setup: %+v", f.Setup)
	}
	kinds := []string{}
	for _, c := range f.Checks {
		kinds = append(kinds, c.Kind())
	}
	if strings.Join(kinds, ",") != "command,app_output,assert,assert,file" || f.Checks[2].AssertModel || !f.Checks[3].AssertModel ||
		f.Checks[4].FilePath != filepath.Join(dir, "out.txt") || f.Checks[4].FileContent != "hello" {
		t.Errorf("checks: %v %+v", kinds, f.Checks)
	}
	if f.Budget != (Budget{Steps: 5, Seconds: 60, Tokens: 9000}) || strings.Join(f.Tags, ",") != "form,smoke" {
		t.Errorf("budget %+v tags %v", f.Budget, f.Tags)
	}
	if b := s.Tasks[1]; b.Flow == nil || b.Goal != "" || b.Display != (geom.Size{W: 800, H: 600}) {
		t.Errorf("flow task: %+v", b)
	}
}

// TestParseNamesEveryProblemWithItsPlace: a bad suite is refused whole,
// before anything runs, each problem with its line and column.
func TestParseNamesEveryProblemWithItsPlace(t *testing.T) {
	dir := suiteDir(t)
	cases := []struct{ text, want string }{
		{"name: x\ntasks:\n  - name: a\n    task: go\n", "line 3, column 5: task \"a\" has no check"},
		{"name: x\ntasks:\n  - name: a\n    check: {command: 'true'}\n", "line 3, column 5: task \"a\" has no task"},
		{"name: x\ntasks:\n  - name: a\n    task: go\n    check: {exit_code: 0}\n", "line 5, column 13: unknown check \"exit_code\""},
		{"name: x\ntasks:\n  - name: a\n    task: go\n    check: {app_output: '(unclosed'}\n", "line 5, column 25: app_output is not a valid regular expression"},
		{"name: x\ntasks:\n  - name: a\n    task: go\n    check: {command: x}\n    budget: {steps: -1}\n", "line 6, column 21: steps must be a whole number above 0"},
		{"name: x\ntasks:\n  - name: a\n    task: go\n    check: {command: x}\n  - name: a\n    task: go\n    check: {command: x}\n", "line 6, column 5: the task name \"a\" is used twice (first at line 3)"},
		{"name: x\ndisplay: 10x10\ntasks: []\n", "line 2, column 10: display must be WIDTHxHEIGHT"},
		{"name: x\ntasks:\n  - name: a\n    setup: {run: x, flow: prepare.yaml}\n    task: go\n    check: {command: x}\n", "line 4, column 12: a setup step has either run"},
		{"name: x\ntasks:\n  - name: a\n    setup: {flow: missing.yaml}\n    task: go\n    check: {command: x}\n", "line 4, column 19: cannot read the flow missing.yaml"},
		{"name: x\ntasks:\n  - name: a\n    task: go\n    check: {file: {path: f}}\n", "line 5, column 19: a file check needs path and content"},
		{"name: x\ntasks:\n  - name: a\n    task: go\n    check: {command: x}\n    colour: red\n", "line 6, column 5: unknown key \"colour\""},
		{"name: x\ntasks:\n  - name: a\n   task: go\n", "line 4, column"},
		{"tasks:\n  - name: a\n    task: go\n    check: {command: x}\n", "line 1, column 1: the suite has no name"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.text), dir)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
}

func TestParseListsSeveralProblemsAtOnce(t *testing.T) {
	_, err := Parse([]byte("name: x\ntasks:\n  - name: a\n  - name: b\n    task: go\n    check: {command: x}\n    budget: {steps: zero}\n"), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "line 3, column 5") || !strings.Contains(err.Error(), "line 7, column 21") {
		t.Fatalf("want both problems listed: %v", err)
	}
}

func TestParseModel(t *testing.T) {
	m, err := ParseModel("fake:sample?delay=1s")
	if err != nil || m.Fake == nil || m.Delay != time.Second || m.ID != "sample" || m.Name != "fake:sample?delay=1s" {
		t.Fatalf("%+v %v", m, err)
	}
	if m, err := ParseModel("anthropic:claude-sonnet-5-5"); err != nil || m.Fake != nil || m.Provider != "anthropic" || m.ID != "claude-sonnet-5-5" {
		t.Fatalf("%+v %v", m, err)
	}
	for s, want := range map[string]string{
		"claude":              "give provider:model",
		"nosuch:model":        "unknown provider \"nosuch\"",
		"fake:nobody":         "no fake model \"nobody\": the fake models are fake:sample",
		"fake:sample?delay=x": "delay must be a duration",
		"fake:sample?speed=2": "unknown option \"speed\"",
	} {
		if _, err := ParseModel(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseModel(%q) = %v, want %q", s, err, want)
		}
	}
}

func TestCheckCapacity(t *testing.T) {
	if err := CheckCapacity(4, 2, 8000); err != nil {
		t.Errorf("4 runs on 2 cores and 8000 MiB: %v", err)
	}
	if err := CheckCapacity(9, 2, 0); err == nil || !strings.Contains(err.Error(), "2 cores") || !strings.Contains(err.Error(), "--parallel 8 or less") {
		t.Errorf("9 runs on 2 cores: %v", err)
	}
	if err := CheckCapacity(4, 16, 600); err == nil || !strings.Contains(err.Error(), "600 MiB of available memory") || !strings.Contains(err.Error(), "--parallel 2 or less") {
		t.Errorf("4 runs in 600 MiB: %v", err)
	}
}

func TestCheckFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(p, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, d := checkFile(p, "hello"); !ok {
		t.Errorf("a trailing newline aside the content matches: %s", d)
	}
	if ok, d := checkFile(p, "bye"); ok || !strings.Contains(d, `holds "hello", not "bye"`) {
		t.Errorf("another content: %v %s", ok, d)
	}
	if ok, d := checkFile(p+".missing", "x"); ok || !strings.Contains(d, "cannot read") {
		t.Errorf("a missing file: %v %s", ok, d)
	}
}

func TestCommandRunsThisGuiagent(t *testing.T) {
	r := &runner{o: Options{Binary: "/opt/it's/guiagent"}}
	if got := r.command("guiagent sample-app --scene form"); got != `'/opt/it'\''s/guiagent' sample-app --scene form` {
		t.Errorf("got %s", got)
	}
	if got := r.command("guiagentx --help"); got != "guiagentx --help" {
		t.Errorf("got %s", got)
	}
}

func TestOptionsCheck(t *testing.T) {
	real, err := ParseModel("anthropic:claude-sonnet-5-5")
	if err != nil {
		t.Fatal(err)
	}
	fakeModel, _ := ParseModel("fake:sample")
	o := Options{Models: []Model{fakeModel, real}, Repeat: 1, Parallel: 1, Out: t.TempDir()}
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "--model anthropic:claude-sonnet-5-5: no API key for provider anthropic: set GUI_AGENT_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY") {
		t.Errorf("a real model without a key: %v", err)
	}
	o.Config.APIKey, o.Config.Provider = "sk-x", "anthropic" // GUI_AGENT_API_KEY with GUI_AGENT_PROVIDER=anthropic
	if err := o.check(); err != nil {
		t.Errorf("with a key: %v", err)
	}
	for _, bad := range []Options{{Repeat: 1, Parallel: 1, Out: "x"}, {Models: o.Models, Repeat: 0, Parallel: 1, Out: "x"}, {Models: o.Models, Repeat: 1, Parallel: 0, Out: "x"}} {
		bad.Config.APIKey = "k"
		if err := bad.check(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
