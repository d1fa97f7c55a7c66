package trace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestScriptedRunLayout(t *testing.T) {
	st := newTestStore(t, nil)
	cfg := testConfig{Provider: "openai", Model: "test-model", APIKey: canary, MaxTokens: 2048, HTTPToken: "tok-0123456789abcdef", Hotkeys: []string{"alt+f4"}}
	run, err := st.Begin("run-1", "open the invoice and read its total", cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc := script{steps: 6, w: 640, h: 400, pngEvery: 4, repeatEach: 3, finish: true}
	sentEv := play(t, run, run.ID(), sc)
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	dir := run.Dir()
	for _, f := range []string{EventsFile, TaskFile, ConfigFile, ResultFile, MetaFile, ReportFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, TaskFile)); string(b) != "open the invoice and read its total" {
		t.Errorf("task.txt = %q", b)
	}
	var c map[string]any
	readJSON(t, filepath.Join(dir, ConfigFile), &c)
	if c["api_key"] != secret.Marker || c["http_token"] != secret.Marker || c["model"] != "test-model" || c["max_tokens"] != float64(2048) {
		t.Errorf("config.json not redacted as expected: %v", c)
	}
	if hk, _ := c["blocked_hotkeys"].([]any); len(hk) != 1 || hk[0] != "alt+f4" {
		t.Errorf("blocked_hotkeys was altered: %v", c["blocked_hotkeys"])
	}

	lines, skipped, err := ReadLines(dir)
	if err != nil || skipped != 0 {
		t.Fatalf("events.jsonl: %v, %d skipped", err, skipped)
	}
	kinds := map[string]int{}
	for _, ln := range lines {
		kinds[ln.Kind]++
	}
	overlays := kinds[KindOverlay]
	if len(lines)-overlays != sentEv.events {
		t.Errorf("events.jsonl has %d agent events, sent %d", len(lines)-overlays, sentEv.events)
	}
	if overlays != sc.steps || kinds["step"] != sc.steps || kinds["finish"] != 1 {
		t.Errorf("kinds = %v", kinds)
	}

	// Screenshots: each distinct content stored once, every ref resolves to a file with the sent bytes.
	imgs, _ := filepath.Glob(filepath.Join(dir, ImagesDir, "step-*"))
	if len(imgs) != sentEv.distinct {
		t.Errorf("stored %d screenshots %v, want %d distinct", len(imgs), imgs, sentEv.distinct)
	}
	for _, ln := range lines {
		if ln.Kind != "screenshot" {
			continue
		}
		if ln.Image == nil || ln.Image.Ref == "" {
			t.Fatalf("screenshot line without image ref: %+v", ln)
		}
		b, err := os.ReadFile(filepath.Join(dir, ln.Image.Ref))
		if err != nil || len(b) != ln.Image.Bytes {
			t.Errorf("step %d image %s: %v (%d bytes, line says %d)", ln.Step, ln.Image.Ref, err, len(b), ln.Image.Bytes)
		}
		if ln.Image.Frame.ID != sentEv.frames[ln.Step].ID {
			t.Errorf("step %d frame %q", ln.Step, ln.Image.Frame.ID)
		}
	}

	// Step files; the request's image reference points at a stored file.
	for s := 1; s <= sc.steps; s++ {
		sd := filepath.Join(dir, StepsDir, "00"+string(rune('0'+s)))
		for _, f := range []string{"request.json", "response.json", "parsed.json", "usage.json"} {
			if _, err := os.Stat(filepath.Join(sd, f)); err != nil {
				t.Errorf("step %d: %v", s, err)
			}
		}
		var req struct {
			Messages []struct {
				Content []struct {
					ImageURL *struct{ URL string } `json:"image_url"`
				}
			}
		}
		readJSON(t, filepath.Join(sd, "request.json"), &req)
		ref := req.Messages[0].Content[1].ImageURL.URL
		if _, err := os.Stat(filepath.Join(dir, ref)); err != nil {
			t.Errorf("step %d request refers to %q which is not stored: %v", s, ref, err)
		}
		var parsed llm.Decision
		readJSON(t, filepath.Join(sd, "parsed.json"), &parsed)
		if len(parsed.Actions) != 5 || parsed.Actions[0].Kind != action.Click {
			t.Errorf("step %d parsed.json: %+v", s, parsed)
		}
		var usage struct {
			Usage   llm.Usage `json:"usage"`
			ModelMS int64     `json:"model_ms"`
		}
		readJSON(t, filepath.Join(sd, "usage.json"), &usage)
		if usage.Usage.InputTokens != 1500+s || usage.ModelMS != 900 {
			t.Errorf("step %d usage.json: %+v", s, usage)
		}

		// The overlay shows the click where it landed: the pixel under the
		// click point changed to the marker colour.
		ov := decodeFile(t, filepath.Join(dir, ImagesDir, "overlay-00"+string(rune('0'+s))+".jpg"))
		if ov.Bounds().Dx() != sc.w || ov.Bounds().Dy() != sc.h {
			t.Errorf("overlay %d is %v, want %dx%d", s, ov.Bounds(), sc.w, sc.h)
		}
		p := sentEv.clicks[s]
		r, g, b, _ := ov.At(int(p.X), int(p.Y)).RGBA()
		if !(r>>8 > 150 && g>>8 < 90 && b>>8 < 120) {
			t.Errorf("overlay %d: pixel at click %v is rgb(%d,%d,%d), want the red marker", s, p, r>>8, g>>8, b>>8)
		}
	}

	var res agent.Result
	readJSON(t, filepath.Join(dir, ResultFile), &res)
	if res.Status != agent.Completed || res.RunDir != dir || res.Report != filepath.Join(dir, ReportFile) || len(res.Trace) != sc.steps {
		t.Errorf("result.json: status %s dir %q report %q trace %d", res.Status, res.RunDir, res.Report, len(res.Trace))
	}

	rep, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for s := 1; s <= sc.steps; s++ {
		if !bytes.Contains(rep, []byte(`id="step-`+string(rune('0'+s))+`"`)) {
			t.Errorf("report lacks step %d", s)
		}
	}
	for _, want := range []string{"overlay-001.jpg", "Opened the invoice; the total is 1,234.50 EUR", "blocked hotkey ctrl&#43;s", "total &lt;b&gt;&amp;amp; 日本", "[REDACTED]"} {
		if !bytes.Contains(rep, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	if bytes.Contains(rep, []byte("<b>&amp;")) {
		t.Error("report does not escape model text")
	}

	// The store lists and finds it.
	runs, err := st.List()
	if err != nil || len(runs) != 1 || runs[0].ID != run.ID() || runs[0].Status != "completed" || runs[0].Steps != sc.steps {
		t.Fatalf("List = %+v, %v", runs, err)
	}
	got, err := st.Get(run.ID())
	if err != nil || got.Result == nil || got.Result.Result != "1,234.50 EUR" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if p, err := st.ReportPath(run.ID()); err != nil || p != res.Report {
		t.Errorf("ReportPath = %q, %v", p, err)
	}
	if _, err := st.Path("../etc"); err == nil {
		t.Error("Path accepted a traversal id")
	}
	assertNoCanary(t, dir)
}

func decodeFile(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := jpeg.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// assertNoCanary fails when any file under dir contains the canary API key.
func assertNoCanary(t *testing.T, dir string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(canary)) || bytes.Contains(b, []byte("CANARY-h7")) {
			t.Errorf("%s contains the API key", p)
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no files checked")
	}
}

func TestCanaryScrubbedFromEverything(t *testing.T) {
	// The key reaches the recorder through the config only, and shows up in a
	// provider response, a warning and the task text.
	st := newTestStore(t, nil)
	run, err := st.Begin("canary", "log in with "+canary, map[string]any{"llm": map[string]any{"apiKey": canary}})
	if err != nil {
		t.Fatal(err)
	}
	play(t, run, run.ID(), script{steps: 3, w: 320, h: 200, finish: true})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	assertNoCanary(t, run.Dir())
	rep, _ := os.ReadFile(run.ReportPath())
	if !strings.Contains(string(rep), "invalid key "+secret.Marker) && !strings.Contains(string(rep), "log in with "+secret.Marker) {
		t.Error("report does not show where the key was removed")
	}
}

func TestDebugImagesOffKeepsTextOnly(t *testing.T) {
	st := newTestStore(t, func(o *Options) { o.DebugImages = false })
	run, err := st.Begin("text-only", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	play(t, run, run.ID(), script{steps: 2, w: 320, h: 200})
	if err := run.Finish(&agent.Result{Status: agent.Failed, Summary: "gave up", Steps: 2}); err != nil {
		t.Fatal(err)
	}
	if info, _ := st.Get(run.ID()); info.Status != "failed" || info.Result == nil || info.Result.Summary != "gave up" {
		t.Errorf("Finish did not record the result: %+v", info)
	}
	if _, err := os.Stat(filepath.Join(run.Dir(), ImagesDir)); !os.IsNotExist(err) {
		t.Errorf("images folder exists with DebugImages off: %v", err)
	}
	rep, _ := os.ReadFile(run.ReportPath())
	if bytes.Contains(rep, []byte("<img")) || !bytes.Contains(rep, []byte("screenshot not stored")) {
		t.Error("text-only report should name the missing screenshots and show no images")
	}
	lines, _, _ := ReadLines(run.Dir())
	for _, ln := range lines {
		if ln.Kind == "screenshot" && (ln.Image == nil || ln.Image.SHA256 == "" || ln.Image.Ref != "") {
			t.Errorf("text-only screenshot line: %+v", ln.Image)
		}
	}
}

func TestAbandonedRunLeavesReadableEvents(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("abandoned", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	sentEv := play(t, run, run.ID(), script{steps: 4, w: 320, h: 200})
	run.Flush() // the writer caught up; nobody calls Close
	lines, skipped, err := ReadLines(run.Dir())
	if err != nil || skipped != 0 {
		t.Fatalf("ReadLines: %v, %d skipped", err, skipped)
	}
	agentEvents := 0
	for _, ln := range lines {
		if ln.Kind != KindOverlay {
			agentEvents++
		}
	}
	if agentEvents != sentEv.events {
		t.Errorf("%d events on disk, %d sent", agentEvents, sentEv.events)
	}
	info, _ := st.Get(run.ID())
	if info.Status != StatusRunning {
		t.Errorf("status while recording = %q", info.Status)
	}
	// A report can be produced from what is on disk.
	p, err := st.EnsureReport(run.ID())
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := os.ReadFile(p)
	if !bytes.Contains(rep, []byte(`id="step-4"`)) || !bytes.Contains(rep, []byte("still being recorded")) {
		t.Error("live report lacks the recorded steps")
	}
}

func TestRetentionRemovesOldestRuns(t *testing.T) {
	st := newTestStore(t, func(o *Options) { o.MaxRuns = 3 })
	var ids []string
	for i := 0; i < 5; i++ {
		run, err := st.Begin("r", "task", nil)
		if err != nil {
			t.Fatal(err)
		}
		play(t, run, run.ID(), script{steps: 1, w: 160, h: 100, finish: true})
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID())
	}
	runs, _ := st.List()
	if len(runs) != 3 || runs[0].ID != ids[4] || runs[2].ID != ids[2] {
		t.Fatalf("kept %v, want the newest three of %v", runs, ids)
	}
	// A foreign folder in the runs folder is never removed.
	os.Mkdir(filepath.Join(st.Dir(), "not-a-run"), 0o700)
	stBytes := NewStore(Options{Dir: st.Dir(), MaxBytes: 1, MaxRuns: -1, DebugImages: true})
	run, err := stBytes.Begin("last", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	run.Close()
	runs, _ = stBytes.List()
	if len(runs) != 0 {
		t.Errorf("byte limit of 1 kept %d runs", len(runs))
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), "not-a-run")); err != nil {
		t.Error("retention removed a folder that is not a run")
	}
}

func TestSessionRecordsToolCalls(t *testing.T) {
	scrub := secret.NewScrubber()
	st := newTestStore(t, func(o *Options) { o.Scrubber = scrub })
	rec := st.Session("mcp-session-1")
	if rec != st.Session("mcp-session-1") {
		t.Fatal("Session returned a new recorder for the same id")
	}
	scrub.Add(canary) // learned after the store and the session began, as a key PUT to the settings API is
	d := desktopImage(320, 200, 1)
	run := script{}
	_ = run
	img := &imaging.Shot{MIME: "image/jpeg", Data: encodeJPEG(t, d)}
	img.Frame.Content.W, img.Frame.Content.H = 320, 200
	rec.RecordCall(Call{Tool: "screenshot", Args: map[string]any{"display": "0"}, Result: "1 display, 320x200", Image: img})
	p := agentPoint(100, 50)
	rec.RecordCall(Call{Tool: "click", Args: map[string]any{"x": 100, "y": 50}, Result: "clicked at (200,100)", Image: img,
		Actions: []action.Trace{{Action: action.Action{Kind: action.Click, At: &action.Point{Space: geom.SpaceImage, X: 100, Y: 50}}, Image: &p, Outcome: "ok"}}, Millis: 30})
	rec.RecordCall(Call{Tool: "type_text", Args: map[string]any{"text": "hi " + canary}, Result: "typed"})
	if rec.RunID() == "" {
		t.Fatal("no run id after recording")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rec.RecordCall(Call{Tool: "late", Result: "dropped"})
	info, err := st.Get(rec.RunID())
	if err != nil || info.Kind != KindSession || info.Steps != 3 || info.Status != StatusRecorded || info.SessionID != "mcp-session-1" {
		t.Fatalf("Get = %+v, %v", info, err)
	}
	lines, _, _ := ReadLines(info.Dir)
	tools := 0
	for _, ln := range lines {
		if ln.Kind == KindTool {
			tools++
		}
	}
	if tools != 3 {
		t.Errorf("%d tool lines, want 3", tools)
	}
	ov := decodeFile(t, filepath.Join(info.Dir, ImagesDir, "overlay-002.jpg"))
	if r, g, _, _ := ov.At(100, 50).RGBA(); r>>8 < 180 || g>>8 > 90 {
		t.Error("session overlay lacks the click marker")
	}
	rep, _ := os.ReadFile(info.Report)
	for _, want := range []string{"Call 1: screenshot", "Call 2: click", "clicked at (200,100)", "overlay-002.jpg", "Call 3: type_text"} {
		if !bytes.Contains(rep, []byte(want)) {
			t.Errorf("session report lacks %q", want)
		}
	}
	assertNoCanary(t, info.Dir)
}

func TestRunImageBudgetCapsTheDirectory(t *testing.T) {
	const budget = 300 << 10
	st := newTestStore(t, func(o *Options) { o.MaxRunImageBytes = budget })
	run, err := st.Begin("budget", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	play(t, run, run.ID(), script{steps: 12, w: 640, h: 400, finish: true})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if n := dirSizeOf(filepath.Join(run.Dir(), ImagesDir)); n > budget {
		t.Errorf("images use %d bytes, budget %d", n, budget)
	}
	lines, _, _ := ReadLines(run.Dir())
	omitted, warned := 0, false
	for _, ln := range lines {
		if ln.Kind == "screenshot" && ln.Image.Omitted != "" {
			omitted++
		}
		warned = warned || ln.Kind == "warning" && strings.Contains(ln.Message, "image budget")
	}
	if omitted == 0 || !warned {
		t.Errorf("omitted %d screenshots, warned %v", omitted, warned)
	}
	rep, _ := os.ReadFile(run.ReportPath())
	if !bytes.Contains(rep, []byte("image budget")) || !bytes.Contains(rep, []byte(`id="step-12"`)) {
		t.Error("report does not explain the omitted screenshots")
	}
}

// TestSessionOverlayIsDrawnOnTheFrameActedOn: a click whose result carries a
// fresh screenshot (taken after the click) is drawn on the earlier screenshot
// its coordinates refer to, which is stored once, and a failed call is marked.
func TestSessionOverlayIsDrawnOnTheFrameActedOn(t *testing.T) {
	st := newTestStore(t, nil)
	rec := st.Session("mcp-session-2")
	before := &imaging.Shot{MIME: "image/jpeg", Data: encodeJPEG(t, desktopImage(320, 200, 1))}
	before.Frame.ID, before.Frame.Content.W, before.Frame.Content.H = "f1", 320, 200
	after := &imaging.Shot{MIME: "image/jpeg", Data: encodeJPEG(t, desktopImage(320, 200, 2))}
	after.Frame.ID, after.Frame.Content.W, after.Frame.Content.H = "f2", 320, 200
	rec.RecordCall(Call{Tool: "gui_screenshot", Result: "{}", Image: before})
	p := agentPoint(250, 150)
	rec.RecordCall(Call{Tool: "gui_click", Result: "clicked", Image: after, Frame: before,
		Actions: []action.Trace{{Action: action.Action{Kind: action.Click, At: &action.Point{Space: geom.SpaceImage, X: 250, Y: 150}}, Image: &p, Outcome: "ok"}}})
	rec.RecordCall(Call{Tool: "gui_hotkey", Result: "error: blocked", IsError: true, Millis: 3})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := st.Get(rec.RunID())
	if err != nil {
		t.Fatal(err)
	}
	lines, _, _ := ReadLines(info.Dir)
	var shotRef string
	var overlay *ImageRecord
	for _, ln := range lines {
		switch {
		case ln.Kind == KindTool && ln.Step == 1:
			shotRef = ln.Image.Ref
		case ln.Kind == KindOverlay && ln.Step == 2:
			overlay = ln.Image
		case ln.Kind == KindTool && ln.Step == 3 && !ln.IsError:
			t.Error("the failed call is not marked as an error in events.jsonl")
		}
	}
	if overlay == nil || overlay.SentAs != shotRef || overlay.Frame.ID != "f1" {
		t.Fatalf("overlay %+v, want one drawn on the screenshot %s (frame f1)", overlay, shotRef)
	}
	ov := decodeFile(t, filepath.Join(info.Dir, filepath.FromSlash(overlay.Ref)))
	if r, g, _, _ := ov.At(250, 150).RGBA(); r>>8 < 180 || g>>8 > 90 {
		t.Error("the overlay lacks the click marker at the click's image point")
	}
	files, _ := os.ReadDir(filepath.Join(info.Dir, ImagesDir))
	if len(files) != 3 { // screenshot, after-click screenshot, overlay
		t.Errorf("images %v, want the frame stored once", files)
	}
	rep, _ := os.ReadFile(info.Report)
	ovBytes, _ := os.ReadFile(filepath.Join(info.Dir, filepath.FromSlash(overlay.Ref)))
	if !bytes.Contains(rep, []byte(`src="data:image/jpeg;base64,`+base64.StdEncoding.EncodeToString(ovBytes)+`"`)) {
		t.Error("the report does not embed the click's overlay")
	}
	_, call3, _ := bytes.Cut(rep, []byte(`id="step-3"`))
	if head, _, _ := bytes.Cut(call3, []byte("</h2>")); !bytes.Contains(head, []byte(`b-bad">error<`)) {
		t.Errorf("the report does not mark call 3 as failed: %s", head)
	}
}
