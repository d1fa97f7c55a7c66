package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/safety"
)

var tagRE = regexp.MustCompile(`<[^>]*>`)

// visibleText approximates what a reader sees of an HTML fragment.
func visibleText(b []byte) string {
	s := tagRE.ReplaceAllString(string(b), " ")
	return strings.Join(strings.Fields(strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&amp;", "&", "&#43;", "+").Replace(s)), " ")
}

// section returns the report's step section id.
func section(t *testing.T, rep []byte, id string) []byte {
	t.Helper()
	_, rest, ok := bytes.Cut(rep, []byte(`id="`+id+`"`))
	if !ok {
		t.Fatalf("report has no %s", id)
	}
	sec, _, _ := bytes.Cut(rest, []byte("</section>"))
	return sec
}

// TestSessionReportReadsPlainly: a session click done in image pixels that
// equal screen pixels shows one coordinate column, its button and click
// count, and masked text as "<redacted N chars>", not as JSON escapes.
func TestSessionReportReadsPlainly(t *testing.T) {
	st := newTestStore(t, nil)
	rec := st.Session("plain")
	shot := &imaging.Shot{MIME: "image/jpeg", Data: encodeJPEG(t, desktopImage(320, 200, 3))}
	shot.Frame.ID, shot.Frame.Content.W, shot.Frame.Content.H = "f1", 320, 200
	rec.RecordCall(Call{Tool: "gui_screenshot", Result: `{"frame_id":"f1","note":"<b>"}`, Image: shot})
	ip, gp := geom.ImagePoint{X: 120, Y: 80}, geom.GlobalPoint{X: 120, Y: 80}
	rec.RecordCall(Call{Tool: "gui_click", Args: json.RawMessage(`{"x":120,"y":80}`), Result: "clicked", Frame: shot,
		Actions: []action.Trace{{Action: action.Action{Kind: action.Click, At: &action.Point{Space: geom.SpaceImage, X: 120, Y: 80}}, Image: &ip, Global: &gp, Outcome: "ok"}}})
	rec.RecordCall(Call{Tool: "gui_type_text", Args: safety.MaskArgs(map[string]string{"text": "Ada Lovelace & co <3"}), Result: "typed"})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := st.Get(rec.RunID())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := os.ReadFile(info.Report)
	if err != nil {
		t.Fatal(err)
	}
	click := visibleText(section(t, rep, "step-2"))
	if !strings.Contains(click, "Model coords = Image px = Screen px (global)") || strings.Count(click, "(120,80)") != 1 {
		t.Errorf("identical coordinate columns are not one column: %s", click)
	}
	if !strings.Contains(click, "click (left button, 1 click)") {
		t.Errorf("the click's parameters are not shown: %s", click)
	}
	typed := visibleText(section(t, rep, "step-3"))
	if !strings.Contains(typed, `"text": "<redacted 20 chars>"`) || strings.Contains(string(rep), `\u003c`) {
		t.Errorf("masked text is not shown plainly: %s", typed)
	}
	if shotText := visibleText(section(t, rep, "step-1")); !strings.Contains(shotText, `"note": "<b>"`) {
		t.Errorf("a JSON result is not shown plainly: %s", shotText)
	}
}

// TestStepOutcomeBadge: "10/10 actions executed" is a success; a partial run is not.
func TestStepOutcomeBadge(t *testing.T) {
	for outcome, want := range map[string]bool{"ok": true, "10/10 actions executed": true, "no actions": true,
		"3/10 actions executed": false, "action 2/3 (click) failed: x; the remaining actions were skipped": false} {
		if got := outcomeOK(outcome); got != want {
			t.Errorf("outcomeOK(%q) = %v, want %v", outcome, got, want)
		}
	}
	st := newTestStore(t, nil)
	run, err := st.Begin("badge", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	acts := []action.Trace{{Action: action.Action{Kind: action.KeyPress, Keys: []desktop.Key{desktop.Ctrl, "s"}}, Outcome: "ok"}}
	run.OnEvent(agent.Event{Kind: agent.EvStep, Step: 1, StepDone: &agent.StepTrace{Step: 1, Actions: acts, Outcome: "1/1 actions executed"}})
	run.OnEvent(agent.Event{Kind: agent.EvStep, Step: 2, StepDone: &agent.StepTrace{Step: 2, Actions: acts, Outcome: "stopped before action 1/1: cancelled"}})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	rep, _ := os.ReadFile(run.ReportPath())
	if s := section(t, rep, "step-1"); !bytes.Contains(s, []byte(`b-ok">1/1 actions executed<`)) {
		t.Errorf("a fully executed step is not shown as a success: %s", s)
	}
	if s := section(t, rep, "step-2"); !bytes.Contains(s, []byte(`b-warn">stopped before`)) {
		t.Errorf("a stopped step is shown as a success: %s", s)
	}
}

func TestUnescapeJSONHTML(t *testing.T) {
	for in, want := range map[string]string{
		`"\u003credacted 3 chars\u003e"`: `"<redacted 3 chars>"`,
		`"a \u0026 b"`:                   `"a & b"`,
		`"\\u003c is literal"`:           `"\\u003c is literal"`,
		`"\u00e9\n"`:                     `"\u00e9\n"`,
	} {
		if got := unescapeJSONHTML(in); got != want {
			t.Errorf("unescapeJSONHTML(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestListingOfLiveRuns: while recorded, a task's row counts the step under
// way (not the last finished one), and a session's row says "open", then
// "idle" once no call came for SessionIdleAfter, and "recorded" once closed;
// never "running".
func TestListingOfLiveRuns(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("live", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	disp := geom.Display{ID: "0", Bounds: geom.Rect{W: 320, H: 200}, Primary: true}
	for s := 1; s <= 3; s++ {
		img := &llm.Image{MIME: "image/jpeg", Data: encodeJPEG(t, desktopImage(320, 200, int64(s))), Frame: geom.NewFrame("f", disp, disp.Bounds, geom.Size{W: 320, H: 200})}
		run.OnEvent(agent.Event{Kind: agent.EvScreenshot, Step: s, Image: img})
		if s < 3 {
			run.OnEvent(agent.Event{Kind: agent.EvStep, Step: s, StepDone: &agent.StepTrace{Step: s, Outcome: "ok"}})
		}
	}
	info, err := st.Get(run.ID())
	if err != nil || info.Status != StatusRunning || info.Steps != 3 || info.LastActivity == nil {
		t.Errorf("running task listed as %+v, %v: want running at step 3", info, err)
	}
	run.Close()

	rec := st.Session("live-session")
	rec.RecordCall(Call{Tool: "gui_cursor_position", Result: "{}"})
	rec.RecordCall(Call{Tool: "gui_cursor_position", Result: "{}"})
	id := rec.RunID()
	if info, _ := st.Get(id); info.Status != StatusOpen || info.Steps != 2 {
		t.Errorf("open session listed as %q with %d calls, want open with 2", info.Status, info.Steps)
	}
	r := st.activeRun(id)
	r.mu.Lock()
	r.lastActivity = time.Now().Add(-SessionIdleAfter - time.Second)
	r.mu.Unlock()
	if info, _ := st.Get(id); info.Status != StatusIdle {
		t.Errorf("session without calls for %v listed as %q, want idle", SessionIdleAfter, info.Status)
	}
	rec.Close()
	if info, _ := st.Get(id); info.Status != StatusRecorded {
		t.Errorf("closed session listed as %q, want recorded", info.Status)
	}
}
