package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/trace"
)

const testSecret = "sk-test-secret-0123456789abcdef"

func fakeDesktop() *fake.Backend {
	b := fake.New(fake.Options{Displays: []geom.Display{{Bounds: geom.Rect{W: 800, H: 600}}}})
	b.SetElements([]desktop.Element{
		{Role: desktop.RoleWindow, Name: "Sign in", Box: geom.Rect{W: 800, H: 600}, States: desktop.States{Enabled: true}},
		{Role: desktop.RoleButton, Name: "OK " + testSecret, Box: geom.Rect{X: 10, Y: 20, W: 80, H: 30}, Depth: 1, States: desktop.States{Enabled: true}},
	})
	return b
}

func TestRecorderTakesTheOutlineOncePerStep(t *testing.T) {
	rec := &recorder{on: true, screen: fakeDesktop()}
	rec.progress(agent.Event{Kind: agent.EvProgress, Step: 1, Message: "Capturing the screen"})
	if rec.outline(1) != "" {
		t.Fatal("an outline before the model is asked")
	}
	rec.progress(agent.Event{Kind: agent.EvProgress, Step: 1, Message: "Asking the model for step 1"})
	if o := rec.outline(1); !strings.Contains(o, `e1 window "Sign in" [0,0,800,600]`) || !strings.Contains(o, `  e2 button "OK `) {
		t.Fatalf("outline:\n%s", o)
	}
	off := &recorder{screen: fakeDesktop()}
	off.progress(agent.Event{Kind: agent.EvProgress, Step: 1, Message: "Asking the model for step 1"})
	if off.outline(1) != "" {
		t.Error("an outline without --export trajectories")
	}
}

func TestAssertByTree(t *testing.T) {
	b := fakeDesktop()
	if ok, d, judged := assertByTree(context.Background(), b, "Sign in"); !ok || !judged || !strings.Contains(d, `window "Sign in"`) {
		t.Errorf("a named window: %v %v %s", ok, judged, d)
	}
	if ok, d, judged := assertByTree(context.Background(), b, "Cancel"); ok || !judged || !strings.Contains(d, `no element of the tree matches "Cancel"`) {
		t.Errorf("a missing element: %v %v %s", ok, judged, d)
	}
}

// TestExportTrajectory writes a run record as the agent does, exports it and
// decodes every line strictly: the files it names exist, the actions carry
// their points, and the secret in the decision and the outline is scrubbed.
func TestExportTrajectory(t *testing.T) {
	scrub := secret.NewScrubber(testSecret)
	so := trace.DefaultOptions()
	so.Dir, so.Scrubber = t.TempDir(), scrub
	store := trace.NewStore(so)
	defer store.Close()
	run, err := store.Begin("run1", "Sign in", map[string]string{"model": "m"})
	if err != nil {
		t.Fatal(err)
	}
	recordStep(t, run)
	if err := run.Finish(&agent.Result{Status: agent.Completed, Summary: "done", Steps: 1}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{on: true, screen: fakeDesktop(), runDir: run.Dir()}
	rec.progress(agent.Event{Kind: agent.EvProgress, Step: 1, Message: "Asking the model for step 1"})
	out := t.TempDir()
	folder := filepath.Join(out, "runs", "m", "t", "1")
	task := &Task{Name: "t", Goal: "Sign in", Display: geom.Size{W: 800, H: 600}}
	row := Row{Task: "t", Model: "m", Repeat: 1, Pass: true, Ending: Completed, Steps: 1, WallMillis: 5}
	rel, err := exportTrajectory(out, folder, rec, row, scrub, task)
	if err != nil || rel != "runs/m/t/1/"+TrajectoryFile {
		t.Fatalf("%q %v", rel, err)
	}
	b, err := os.ReadFile(filepath.Join(out, rel))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(testSecret)) || !bytes.Contains(b, []byte(secret.Marker)) {
		t.Errorf("the secret is not scrubbed:\n%s", b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b)
	}
	var head TrajectoryRun
	var st TrajectoryStep
	var end TrajectoryEnd
	for i, v := range []any{&head, &st, &end} {
		dec := json.NewDecoder(strings.NewReader(lines[i]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, lines[i])
		}
	}
	dir := filepath.Dir(filepath.Join(out, rel))
	if head.Schema != TrajectorySchema || head.Display != (Size{800, 600}) || end.Ending != Completed || !end.Pass {
		t.Errorf("head %+v end %+v", head, end)
	}
	if st.Screenshot == nil || st.Screenshot.Width != 64 || st.Request == "" || st.Response == "" || !strings.Contains(st.Elements, `button "OK`) ||
		len(st.Actions) != 1 || st.Actions[0].Image == nil || st.Actions[0].Global == nil || st.ModelMillis != 700 || st.Decision.Status != llm.Continue {
		t.Fatalf("step: %+v", st)
	}
	for _, f := range []string{st.Screenshot.File, st.Request, st.Response} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	req, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(st.Request)))
	if !bytes.Contains(req, []byte(`"`+st.Screenshot.File+`"`)) {
		t.Errorf("the request does not name its image file %s:\n%s", st.Screenshot.File, req)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("not JSON: %s", sc.Text())
		}
	}
}

// recordStep records one step as the agent loop does: screenshot, model call, action, step.
func recordStep(t *testing.T, run *trace.Run) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 64, 48)), nil); err != nil {
		t.Fatal(err)
	}
	frame := geom.Frame{ID: "f1", Display: geom.Display{Bounds: geom.Rect{W: 800, H: 600}}, Region: geom.Rect{W: 800, H: 600},
		Content: geom.Size{W: 64, H: 48}, Prepared: geom.Size{W: 64, H: 48}}
	img := &llm.Image{MIME: "image/jpeg", Data: buf.Bytes(), Frame: frame, Step: 1, Ref: "shot-1"}
	now := time.Now()
	run.OnEvent(agent.Event{Time: now, Kind: agent.EvScreenshot, Step: 1, Image: img})
	dec := &llm.Decision{Observation: "a sign-in form showing " + testSecret, Status: llm.Continue,
		Request:  []byte(`{"messages":[{"image_url":{"url":"shot-1"}}]}`),
		Response: []byte(`{"choices":[]}`)}
	run.OnEvent(agent.Event{Time: now, Kind: agent.EvModel, Step: 1, Decision: dec})
	ip, gp := geom.ImagePoint{X: 5, Y: 6}, geom.GlobalPoint{X: 62, Y: 75}
	var click action.Action
	if err := json.Unmarshal([]byte(`{"kind":"click","at":[5,6],"space":"image"}`), &click); err != nil {
		t.Fatal(err)
	}
	tr := action.Trace{Action: click, Image: &ip, Global: &gp, Outcome: action.OutcomeOK, Millis: 3}
	run.OnEvent(agent.Event{Time: now, Kind: agent.EvStep, Step: 1, StepDone: &agent.StepTrace{Step: 1, Actions: []action.Trace{tr},
		ModelStatus: llm.Continue, ModelMillis: 700, StepMillis: 900}})
}
