package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/eval"
	"github.com/guiagent/guiagent/internal/testenv"
)

// evalSuite has four tasks on the sample application: one the scripted
// model can do, one whose check asks for what nobody typed, one whose setup
// fails, and one whose step budget is too small for the dialog's three steps.
const evalSuite = `name: e2e sample app
display: 1024x768
tasks:
  - name: form
    setup:
      - run: guiagent sample-app --scene form
        ready: '"event":"ready"'
    task: In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit.
    check:
      - app_output: '"event":"submit".*"Ada Lovelace"'
      - command: test -n "$DISPLAY"
    budget: {steps: 6, seconds: 90}
    tags: [form]
  - name: wrong-check
    setup: {run: guiagent sample-app --scene form, ready: '"event":"ready"'}
    task: Fill in the sample form and submit it.
    check:
      app_output: '"Grace Hopper"'
    budget: {steps: 6}
  - name: broken-setup
    setup:
      - run: echo the application cannot start; exit 3
    task: Anything at all.
    check:
      command: "true"
  - name: dialog-over-budget
    setup: {run: guiagent sample-app --scene dialog, ready: '"event":"ready"'}
    task: Go through the dialog with Next, then confirm with OK.
    check:
      app_output: '"event":"confirmed"'
    budget: {steps: 1}
    tags: [dialog]
`

// runEval runs guiagent eval with args in dir and returns its exit code and output.
func runEval(t testing.TB, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"eval"}, args...)...)
	cmd.Dir = dir
	state := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("guiagent eval: %v\n%s", err, errb.String())
	}
	return code, out.String(), errb.String()
}

func TestEvalSuiteTwoModels(t *testing.T) {
	testenv.NeedX(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(evalSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runEval(t, dir, "suite.yaml", "--model", "fake:sample", "--model", "fake:done",
		"--repeat", "2", "--parallel", "2", "--out", "out", "--export", "trajectories", "--min-pass", "0.5")
	if code != 1 || !strings.Contains(stderr, "under --min-pass 50%") {
		t.Fatalf("exit %d (want 1: the pass rate is under --min-pass)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "eval: [16/16]") || !strings.Contains(stderr, "start fake:done · form · #2") {
		t.Errorf("no progress on the terminal:\n%s", stderr)
	}
	res, err := eval.ReadResults(filepath.Join(dir, "out", eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 16 || res.Interrupted {
		t.Fatalf("%d runs (want 4 tasks x 2 models x 2 repeats = 16), interrupted %v", len(res.Runs), res.Interrupted)
	}
	endings := map[string]string{} // model/task -> ending, the same in both repeats
	for _, r := range res.Runs {
		k := r.Model + "/" + r.Task
		if prev, ok := endings[k]; ok && prev != r.Ending {
			t.Errorf("%s ended %s and %s in its two repeats", k, prev, r.Ending)
		}
		endings[k] = r.Ending
		checkRow(t, r)
	}
	want := map[string]string{
		"fake:sample/form": eval.Completed, "fake:sample/wrong-check": eval.Completed,
		"fake:sample/broken-setup": eval.SetupError, "fake:sample/dialog-over-budget": eval.OutOfBudget,
		"fake:done/form": eval.Completed, "fake:done/wrong-check": eval.Completed, "fake:done/broken-setup": eval.SetupError, "fake:done/dialog-over-budget": eval.Completed,
	}
	for k, e := range want {
		if endings[k] != e {
			t.Errorf("%s ended %q, want %q", k, endings[k], e)
		}
	}
	checkSummaries(t, res)
	checkSummaryHTML(t, filepath.Join(dir, "out"), res)
	checkTrajectory(t, filepath.Join(dir, "out"), res)
}

// checkRow holds what every row must say of itself.
func checkRow(t *testing.T, r eval.Row) {
	t.Helper()
	switch {
	case r.Task == "form" && r.Model == "fake:sample":
		if !r.Pass || r.Steps != 2 || r.ModelCalls != 2 || len(r.Checks) != 2 || r.Report == "" {
			t.Errorf("the form run should pass in 2 steps and 2 calls with its report: %+v", r)
		}
	case r.Task == "wrong-check":
		if r.Pass || len(r.Checks) != 1 || r.Checks[0].Pass || !strings.Contains(r.Checks[0].Detail, "did not match") {
			t.Errorf("the wrong-check run should fail its check: %+v", r)
		}
	case r.Task == "broken-setup":
		if r.Pass || !strings.Contains(r.Reason, "exited with status 3") || !strings.Contains(r.Reason, "cannot start") || r.ModelCalls != 0 {
			t.Errorf("the broken setup should be a setup error naming the status and output, with no model call: %+v", r)
		}
	case r.Task == "dialog-over-budget" && r.Model == "fake:sample":
		if r.Pass || r.Steps != 1 || !strings.Contains(r.Reason, "step limit") {
			t.Errorf("the dialog run should run out of its 1-step budget: %+v", r)
		}
	case r.Model == "fake:done":
		if r.Pass || r.ModelCalls != 1 {
			t.Errorf("a model that claims success at once must fail the checks after 1 call: %+v", r)
		}
	}
	if r.Ending != eval.SetupError && r.WallMillis <= 0 {
		t.Errorf("%s/%s: no wall time", r.Model, r.Task)
	}
}

func checkSummaries(t *testing.T, res *eval.Results) {
	t.Helper()
	if len(res.Summary) != 2 {
		t.Fatalf("%d model summaries, want 2", len(res.Summary))
	}
	for _, s := range res.Summary {
		// 8 runs each; the 2 setup errors are not scored.
		if s.Runs != 8 || s.Scored != 6 || s.SetupErrors != 2 || s.K != 2 {
			t.Errorf("%s: runs %d scored %d setup errors %d k %d, want 8, 6, 2, 2", s.Model, s.Runs, s.Scored, s.SetupErrors, s.K)
		}
		switch s.Model {
		case "fake:sample":
			// form passes both times; wrong-check and the dialog never: 2/6,
			// and of 3 scored tasks 1 passes at least once and every time.
			if s.Passed != 2 || !near(s.PassRate, 2.0/6) || !near(s.PassAtK, 1.0/3) || !near(s.PassHatK, 1.0/3) {
				t.Errorf("fake:sample: %+v", s)
			}
			if s.MedianModelCalls != 2 {
				t.Errorf("fake:sample: median model calls %v, want 2 (form 2, wrong-check 2, dialog 1)", s.MedianModelCalls)
			}
		case "fake:done":
			if s.Passed != 0 || s.PassRate != 0 || s.PassAtK != 0 || s.MedianSteps != 1 {
				t.Errorf("fake:done: %+v", s)
			}
		}
	}
	if !near(res.PassRate(), 2.0/12) {
		t.Errorf("overall pass rate %v, want 2/12", res.PassRate())
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// checkSummaryHTML: the grid and each run's report link, which must exist.
func checkSummaryHTML(t *testing.T, out string, res *eval.Results) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, eval.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, s := range []string{"<h2>Tasks by model</h2>", "<td>form</td><td class=\"pass\">2/2</td><td class=\"fail\">0/2</td>", "0/0 · 2 setup errors", "<h2>fake:done</h2>"} {
		if !strings.Contains(html, s) {
			t.Errorf("summary.html lacks %q", s)
		}
	}
	for _, r := range res.Runs {
		if r.Report == "" {
			continue
		}
		if !strings.Contains(html, `href="`+r.Report+`"`) {
			t.Errorf("summary.html does not link %s", r.Report)
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(r.Report))); err != nil {
			t.Errorf("the run's report: %v", err)
		}
	}
}

// checkTrajectory decodes the form run's trajectory strictly, in the schema
// the README documents, and checks the files it names.
func checkTrajectory(t *testing.T, out string, res *eval.Results) {
	t.Helper()
	var row eval.Row
	for _, r := range res.Runs {
		if r.Task == "form" && r.Model == "fake:sample" {
			row = r
		}
	}
	if row.Trajectory == "" {
		t.Fatal("the form run has no trajectory")
	}
	path := filepath.Join(out, filepath.FromSlash(row.Trajectory))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 4 {
		t.Fatalf("%d trajectory lines, want run, 2 steps, end:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var head eval.TrajectoryRun
	strict(t, lines[0], &head)
	if head.Type != "run" || head.Schema != eval.TrajectorySchema || head.Display != (eval.Size{Width: 1024, Height: 768}) || head.Goal == "" {
		t.Errorf("first line: %+v", head)
	}
	dir := filepath.Dir(path)
	for i, ln := range lines[1:3] {
		var st eval.TrajectoryStep
		strict(t, ln, &st)
		if st.Type != "step" || st.Step != i+1 || st.Screenshot == nil || st.Request == "" || st.Response == "" || st.Decision == nil || st.StepMillis <= 0 {
			t.Errorf("step line %d: %+v", i+1, st)
			continue
		}
		for _, file := range []string{st.Screenshot.File, st.Request, st.Response} {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(file))); err != nil {
				t.Errorf("step %d names %s: %v", st.Step, file, err)
			}
		}
		req, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(st.Request)))
		if !strings.Contains(string(req), `"`+st.Screenshot.File+`"`) || strings.Contains(string(req), "base64,") {
			t.Errorf("step %d: the request should refer to its image by file (%s), not embed it", st.Step, st.Screenshot.File)
		}
		if i == 0 {
			a := st.Actions[0]
			if len(st.Actions) != 10 || a.Image == nil || a.Global == nil || a.Outcome != "ok" {
				t.Errorf("step 1 should hold the 10 executed actions with image and screen points: %+v", st.Actions)
			}
		}
	}
	var end eval.TrajectoryEnd
	strict(t, lines[3], &end)
	if end.Type != "end" || end.Ending != eval.Completed || !end.Pass || end.Steps != 2 {
		t.Errorf("last line: %+v", end)
	}
	if bytes.Contains([]byte(strings.Join(lines, "\n")), []byte("fake-no-key")) {
		t.Error("the trajectory holds the model's key")
	}
}

func strict(t *testing.T, line string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v in %s", err, line)
	}
}

// TestEvalInterruptWritesPartialResults: Ctrl-C (SIGINT) while a run waits
// for its model stops the eval: the run ends cancelled, its private display
// is gone, the runs not started are left out, and results.json says so.
func TestEvalInterruptWritesPartialResults(t *testing.T) {
	testenv.NeedX(t)
	dir := t.TempDir()
	suite := "name: interrupt\ntasks:\n  - name: form\n    setup: {run: guiagent sample-app --scene form, ready: '\"event\":\"ready\"'}\n" +
		"    task: In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit.\n" +
		"    check: {app_output: submit}\n"
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(suite), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "eval", "suite.yaml", "--model", "fake:sample?delay=5s", "--repeat", "3", "--out", "out")
	cmd.Dir, cmd.Env = dir, serverEnv(t)
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "out", "runs", "fake_sample_delay_5s", "form", "1", "guiagent.log")
	var display string
	if !waitFor(60*time.Second, func() bool {
		b, _ := os.ReadFile(log)
		if _, rest, ok := strings.Cut(string(b), `display="x11 :`); ok && strings.Contains(string(b), "task started") {
			display, _, _ = strings.Cut(rest, `"`)
			return true
		}
		return false
	}) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the first run's task did not start:\n%s", stderr)
	}
	socket := "/tmp/.X11-unix/X" + display
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("the run's display :%s has no socket: %v", display, err)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupted after 1 of 3 runs") {
			t.Fatalf("exit %v, want 1 saying it was interrupted:\n%s", err, stderr)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("guiagent eval did not stop within 30 s of Ctrl-C:\n%s", stderr)
	}
	if _, err := os.Stat(socket); err == nil {
		t.Errorf("the run's private display :%s is still there after Ctrl-C", display)
	}
	res, err := eval.ReadResults(filepath.Join(dir, "out", eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Runs) != 1 || res.Runs[0].Ending != eval.Cancelled || res.Runs[0].Pass {
		t.Fatalf("results: interrupted %v, runs %+v; want one cancelled run", res.Interrupted, res.Runs)
	}
	if s := res.Summary[0]; s.Cancelled != 1 || s.Scored != 0 {
		t.Errorf("a cancelled run is not the model's failure: %+v", s)
	}
}

// TestEvalAssertAndFileChecks: an assert naming text is judged by OCR (the
// sample application has no accessibility tree), one naming no text cannot
// be judged without model: true, and file checks compare a file's content.
func TestEvalAssertAndFileChecks(t *testing.T) {
	testenv.NeedX(t)
	// tesseract-ocr is in the ci packages (scripts/debian-packages.sh).
	dir := t.TempDir()
	suite := `name: checks
tasks:
  - name: dialog
    setup:
      - run: printf 'made by setup\n' > made.txt
      - run: guiagent sample-app --scene dialog
        ready: '"event":"ready"'
      - flow: pause.yaml
    task: Go through the dialog with Next, then confirm with OK.
    check:
      - assert: the text "Confirmed." is shown
      - file: {path: made.txt, content: made by setup}
  - name: failing-checks
    setup: {run: guiagent sample-app --scene dialog, ready: '"event":"ready"'}
    task: Go through the dialog with Next, then confirm with OK.
    check:
      - assert: the text "Rejected" is shown
      - assert: the dialog looks finished
      - file: {path: made.txt, content: something else}
  - name: flow-task
    task: {flow: pause.yaml}
    check: {command: "true"}
`
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(suite), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pause.yaml"), []byte("name: pause\nsteps:\n  - sleep: 200\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runEval(t, dir, "suite.yaml", "--model", "fake:sample", "--out", "out", "--export", "trajectories")
	if code != 0 {
		t.Fatalf("exit %d (no --min-pass: 0 whatever passed):\n%s", code, stderr)
	}
	res, err := eval.ReadResults(filepath.Join(dir, "out", eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	ok, bad, fl := res.Runs[0], res.Runs[1], res.Runs[2]
	if !fl.Pass || fl.Ending != eval.Completed || fl.Steps != 1 || fl.ModelCalls != 0 || fl.Report == "" || fl.Trajectory == "" {
		t.Errorf("a task that is a flow of one sleep step should pass in 1 step without the model, with its report: %+v", fl)
	}
	if !ok.Pass || ok.Checks[0].JudgedBy != "ocr" || !ok.Checks[1].Pass {
		t.Errorf("the dialog run should pass, its assert judged by OCR: %+v", ok)
	}
	want := []struct {
		by, detail string
	}{{"ocr", `OCR does not read "Rejected"`}, {"", "add model: true"}, {"", `holds "made by setup", not "something else"`}}
	for i, w := range want {
		c := bad.Checks[i]
		if c.Pass || c.JudgedBy != w.by || !strings.Contains(c.Detail, w.detail) {
			t.Errorf("check %d: %+v, want failed by %q saying %q", i, c, w.by, w.detail)
		}
	}
	if bad.Pass || bad.Ending != eval.Completed {
		t.Errorf("the run completed but its checks failed: %+v", bad)
	}
}

// TestEvalREADMESuiteRunsOffline: the suite of docs/eval.md of three tasks passes
// with the scripted model, and eval diff of its results against themselves
// finds no change.
func TestEvalREADMESuiteRunsOffline(t *testing.T) {
	testenv.NeedX(t)
	readme, err := os.ReadFile("../docs/eval.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- eval-suite -->\n```yaml\n")
	suite, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("docs/eval.md has no <!-- eval-suite --> yaml block")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(suite), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runEval(t, dir, "suite.yaml", "--model", "fake:sample", "--parallel", "2", "--out", "results", "--min-pass", "1")
	if code != 0 || !strings.Contains(stdout, "fake:sample: pass rate 100% (3/3)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	results := filepath.Join("results", eval.ResultsFile)
	if code, stdout, stderr := runEval(t, dir, "diff", results, results); code != 0 || stdout != "no change in pass rates\n" {
		t.Errorf("eval diff of a file with itself: exit %d, %q %s", code, stdout, stderr)
	}
	if code, _, stderr := runEval(t, dir, "suite.yaml", "--model", "fake:sample", "--out", "results"); code != 1 || !strings.Contains(stderr, "already holds results") {
		t.Errorf("a second eval into the same folder: exit %d: %s", code, stderr)
	}
}
