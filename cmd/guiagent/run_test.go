package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

func TestRunRejectsABadFlowBeforeTouchingTheDesktop(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nsteps:\n  - tap: the OK button\n  - type: {target: a, text: \"${who}\"}\n"), 0o600)
	env := baseEnv(t)
	env["DISPLAY"] = ":none" // never opened: the flow is invalid
	code, _, stderr := runCmd(t, env, "run", bad)
	for _, want := range []string{"bad.yaml: invalid flow", `line 3, column 5: unknown step kind "tap": use one of act, click`, `variable "who" is not defined: pass --var who=VALUE`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if code, _, stderr := runCmd(t, env, "run", bad, "--cache", "sometimes"); code != 1 || !strings.Contains(stderr, "use read-write, read-only, write-only or off") {
		t.Errorf("bad --cache: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, env, "run"); code != 1 || !strings.Contains(stderr, "no flow file given") {
		t.Errorf("no flow: exit %d, %s", code, stderr)
	}
}

// TestRunFlowTwice is `guiagent run` as a new user would use it: a flow file,
// a --var, a real X display with the sample app; the second run replays
// every located element from FLOW.cache.yaml without the model.
func TestRunFlowTwice(t *testing.T) {
	vd := xvfbtest.Start(t, 1280, 800)
	seer := useColorSeer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "form.yaml")
	os.WriteFile(path, []byte(`name: fill the form
steps:
  - type: {target: the Name field, text: "${name}"}
  - type: {target: the City field, text: Oslo}
  - click: the Submit button
`), 0o600)
	env := baseEnv(t)
	for i, want := range []string{"[cache miss]", "[cache hit]"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		app, err := sampleapp.Start(ctx, sampleapp.Options{Display: vd.Display})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCmd(t, env, "run", path, "--var", "name=Ada", "--display", vd.Display)
		hist := app.History()
		app.Close()
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, stdout, stderr)
		}
		if strings.Count(stdout, want) != 3 || !strings.Contains(stdout, "passed") || !strings.Contains(stdout, "report: ") {
			t.Errorf("run %d output, want 3 steps %s:\n%s", i+1, want, stdout)
		}
		submitted := false
		for _, ev := range hist {
			if ev.Event == "submit" && ev.Fields["name"] == "Ada" && ev.Fields["city"] == "Oslo" {
				submitted = true
			}
		}
		if !submitted {
			t.Errorf("run %d: the app got no submit of Ada/Oslo: %+v", i+1, hist)
		}
	}
	if n := len(seer.Locates()); n != 3 {
		t.Errorf("model asked %d times over both runs, want 3 (first run only)", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "form.cache.yaml")); err != nil {
		t.Errorf("no cache beside the flow: %v", err)
	}
	if code, stdout, _ := runCmd(t, env, "runs", "--kind", "flow"); code != 0 || strings.Count(stdout, "flow: fill the form") != 2 {
		t.Errorf("runs --kind flow: exit %d, want both flow runs listed:\n%s", code, stdout)
	}
}

// TestRunMidsceneComputerScript: a Midscene script for the computer
// (`computer: {}`) runs on this desktop (Xvfb here): its aiInput and aiTap
// items fill in and submit the sample app's form, and the second run
// replays them from the cache without asking the model.
func TestRunMidsceneComputerScript(t *testing.T) {
	vd := xvfbtest.Start(t, 1280, 800)
	seer := useColorSeer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "form.yaml")
	os.WriteFile(path, []byte(`computer: {}

tasks:
  - name: fill the form
    flow:
      - aiInput: the Name field
        value: Ada
      - aiInput: Oslo
        locate: the City field
      - aiTap: the Submit button
`), 0o600)
	env := baseEnv(t)
	for run := 1; run <= 2; run++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		app, err := sampleapp.Start(ctx, sampleapp.Options{Display: vd.Display})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCmd(t, env, "run", path, "--display", vd.Display)
		hist := app.History()
		app.Close()
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", run, code, stdout, stderr)
		}
		submitted := false
		for _, ev := range hist {
			submitted = submitted || (ev.Event == "submit" && ev.Fields["name"] == "Ada" && ev.Fields["city"] == "Oslo")
		}
		if !submitted {
			t.Errorf("run %d: the app got no submit of Ada/Oslo: %+v", run, hist)
		}
		if run == 1 && len(seer.Locates()) != 3 {
			t.Errorf("the first run asked the model %d times, want 3 (one a located item)", len(seer.Locates()))
		}
	}
	if n := len(seer.Locates()); n != 3 {
		t.Errorf("the model was asked %d times over both runs, want 3: the second run replays from the cache", n)
	}
}

// useColorSeer has guiagent run find targets by their colours, as a
// vision model would by sight, for the test.
func useColorSeer(t *testing.T) *flowtest.ColorSeer {
	seer := &flowtest.ColorSeer{}
	runSeer = seer
	t.Cleanup(func() { runSeer = nil })
	return seer
}
