package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

// askStep is one step of recordAskRun: its actions as executed.
type askStep []action.Trace

func askOf(kind action.AskKind, q string, opts ...string) action.Action {
	return action.Action{Kind: action.AskUser, Question: q, Ask: kind, Options: opts}
}

// askSteps are the steps of recordAskRun: a question answered in the MCP
// client after a click, a safety check approved on the dashboard, a secret,
// a declined question, a secret answered but not typed, and a question that
// timed out.
func askSteps() []askStep {
	click := agentPoint(100, 80)
	secret := askOf(action.AskText, "Type the new password for the work account")
	secret.Secret = true
	return []askStep{
		{
			{Action: action.Action{Kind: action.Click, At: &action.Point{Space: geom.SpaceImage, X: 100, Y: 80}}, Image: &click, Global: &geom.GlobalPoint{X: 200, Y: 160}, Outcome: action.OutcomeOK},
			{Action: askOf(action.AskChoice, "Which account should I use?", "personal", "the work one"), Answer: "the work one", AnsweredBy: "client", Outcome: action.OutcomeOK},
		},
		{{Action: askOf(action.AskConfirm, "The site asks to allow pop-ups. Continue?"), Answer: "yes", AnsweredBy: "dashboard", Outcome: action.OutcomeOK}},
		{{Action: secret, Answer: "<typed 11 chars>", AnsweredBy: "dashboard", Outcome: action.OutcomeOK}},
		{{Action: askOf(action.AskText, "What is the invoice number?"), Outcome: action.OutcomeFailed, Error: "declined by the user in the MCP client"}},
		{{Action: secret, Answer: "<typed 9 chars>", AnsweredBy: "client", Outcome: action.OutcomeFailed, Error: "typing the answer failed: no focused field"}},
		{{Action: askOf(action.AskConfirm, "Delete the draft?"), Outcome: action.OutcomeFailed, Error: "no answer within 300 s (GUI_AGENT_ASK_TIMEOUT_S)"}},
	}
}

// recordAskRun records a task run of askSteps, each with its screenshot, and
// returns it closed.
func recordAskRun(t *testing.T, st *Store) *Run {
	t.Helper()
	run, err := st.Begin("asks", "pay the invoice from the right account", nil)
	if err != nil {
		t.Fatal(err)
	}
	disp := geom.Display{ID: "0", Bounds: geom.Rect{W: 640, H: 400}, Primary: true}
	steps := askSteps()
	for i, acts := range steps {
		s := i + 1
		frame := geom.NewFrame(fmt.Sprintf("f%d", s), disp, disp.Bounds, geom.Size{W: 320, H: 200})
		img := &llm.Image{MIME: "image/jpeg", Data: encodeJPEG(t, desktopImage(320, 200, int64(s))), Frame: frame, Step: s,
			Ref: fmt.Sprintf("images/step-%03d.jpg", s)}
		run.OnEvent(agent.Event{Kind: agent.EvScreenshot, Step: s, Image: img})
		for j := range acts {
			run.OnEvent(agent.Event{Kind: agent.EvAction, Step: s, Action: &acts[j]})
		}
		outcome := fmt.Sprintf("%d/%d actions executed", len(acts), len(acts))
		if acts[len(acts)-1].Error != "" {
			outcome = "stopped: " + acts[len(acts)-1].Error
		}
		run.OnEvent(agent.Event{Kind: agent.EvStep, Step: s, StepDone: &agent.StepTrace{Step: s, Actions: acts, Outcome: outcome, FrameID: frame.ID}})
	}
	res := &agent.Result{Status: agent.Blocked, BlockReason: "no answer within 300 s", Steps: len(steps), RunID: run.ID()}
	run.OnEvent(agent.Event{Kind: agent.EvFinish, Step: len(steps), Result: res})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestReportShowsQuestionsAndAnswers: each ask_user of a run reads in
// report.html as a question to the user with its kind, options, the answer
// and where it came from, or why no answer came; a secret shows only its
// length; and no question is drawn on an overlay.
func TestReportShowsQuestionsAndAnswers(t *testing.T) {
	st := newTestStore(t, nil)
	run := recordAskRun(t, st)
	rep, err := os.ReadFile(run.ReportPath())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"step-1": {`question to the user (choice): "Which account should I use?"`, "Question to the user choice Which account should I use?",
			"personal the work one", "Answer the work one answered in the MCP client"},
		"step-2": {"Question to the user confirm The site asks to allow pop-ups. Continue?", "Answer yes answered on the dashboard"},
		"step-3": {"Question to the user text secret Type the new password", "Answer <typed 11 chars> answered on the dashboard · typed into the focused field; only its length is recorded"},
		"step-4": {"What is the invoice number?", "No answer declined by the user in the MCP client"},
		"step-5": {"Type the new password", "Answer <typed 9 chars> answered in the MCP client · typed into the focused field; only its length is recorded typing the answer failed: no focused field"},
		"step-6": {"Delete the draft?", "No answer no answer within 300 s (GUI_AGENT_ASK_TIMEOUT_S)"},
	}
	for id, wants := range want {
		sec := section(t, rep, id)
		text := visibleText(sec)
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not read %q:\n%s", id, w, text)
			}
		}
		if strings.Contains(text, "Answer") == strings.Contains(text, "No answer") {
			t.Errorf("%s shows both or neither of an answer and its absence:\n%s", id, text)
		}
	}
	if s := section(t, rep, "step-1"); !bytes.Contains(s, []byte(`<li class="chosen">the work one</li>`)) || bytes.Contains(s, []byte(`<li class="chosen">personal`)) {
		t.Errorf("the chosen option is not the one marked:\n%s", s)
	}
	for _, id := range []string{"step-4", "step-6"} {
		if s := section(t, rep, id); !bytes.Contains(s, []byte(`class="qa unanswered"`)) || !bytes.Contains(s, []byte(`<tr class="bad">`)) {
			t.Errorf("%s: the unanswered question is not marked as such:\n%s", id, s)
		}
	}
	if !strings.Contains(visibleText(rep), "click (left button, 1 click)") {
		t.Error("the click before the question is not shown as a click")
	}
	if c := strings.Count(visibleText(rep), "click (left button"); c != 1 {
		t.Errorf("%d clicks in the report, want the one click: a question reads as a click", c)
	}

	// Only step 1 has something to draw (its click).
	lines, _, err := ReadLines(run.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var overlays []int
	for _, ln := range lines {
		if ln.Kind == KindOverlay {
			overlays = append(overlays, ln.Step)
		}
	}
	if len(overlays) != 1 || overlays[0] != 1 {
		t.Errorf("overlays drawn for steps %v, want only step 1: a question has nothing to draw", overlays)
	}
	if _, err := os.Stat(filepath.Join(run.Dir(), ImagesDir, "overlay-002.jpg")); err == nil {
		t.Error("an overlay was written for a step that only asked a question")
	}
}

// TestSecretAnswerShownOnlyByLength: should a recorder pass a secret's text
// itself, the report still shows only its length.
func TestSecretAnswerShownOnlyByLength(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("secret", "log in", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := askOf(action.AskText, "Password?")
	a.Secret = true
	acts := []action.Trace{{Action: a, Answer: "hünter2-pass", AnsweredBy: "dashboard", Outcome: action.OutcomeOK}}
	run.OnEvent(agent.Event{Kind: agent.EvStep, Step: 1, StepDone: &agent.StepTrace{Step: 1, Actions: acts, Outcome: "1/1 actions executed"}})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	rep, _ := os.ReadFile(run.ReportPath())
	if bytes.Contains(rep, []byte("nter2")) {
		t.Error("report.html shows a secret answer")
	}
	if text := visibleText(section(t, rep, "step-1")); !strings.Contains(text, "Answer <typed 12 chars>") {
		t.Errorf("the secret's length is not shown: %s", text)
	}
}

// TestSessionReportShowsAQuestion: an MCP tool call that asked before it
// pressed (a confirmed hotkey) shows the question and answer, and its overlay
// draws only the key press; a call that only asked gets no overlay.
func TestSessionReportShowsAQuestion(t *testing.T) {
	st := newTestStore(t, nil)
	rec := st.Session("asking")
	shot := &imaging.Shot{MIME: "image/jpeg", Data: encodeJPEG(t, desktopImage(320, 200, 5))}
	shot.Frame.ID, shot.Frame.Content.W, shot.Frame.Content.H = "f1", 320, 200
	confirm := action.Trace{Action: askOf(action.AskConfirm, "Press ctrl+w (it needs a yes: GUI_AGENT_CONFIRM_HOTKEYS)?"), Answer: "yes", AnsweredBy: "client", Outcome: action.OutcomeOK}
	press := action.Trace{Action: action.Action{Kind: action.KeyPress, Keys: []desktop.Key{desktop.Ctrl, "w"}}, Outcome: action.OutcomeOK}
	rec.RecordCall(Call{Tool: "gui_hotkey", Args: json.RawMessage(`{"keys":["ctrl","w"]}`), Result: "pressed ctrl+w", Frame: shot,
		Actions: []action.Trace{confirm, press}})
	declined := action.Trace{Action: confirm.Action, Outcome: action.OutcomeFailed, Error: "declined on the dashboard"}
	rec.RecordCall(Call{Tool: "gui_hotkey", Args: json.RawMessage(`{"keys":["ctrl","w"]}`), Result: "not pressed: declined", IsError: true, Frame: shot,
		Actions: []action.Trace{declined}})
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
	if text := visibleText(section(t, rep, "step-1")); !strings.Contains(text, "Press ctrl+w (it needs a yes") || !strings.Contains(text, "Answer yes answered in the MCP client") || !strings.Contains(text, "key ctrl+w") {
		t.Errorf("the confirmed call does not show its question, answer and key press: %s", text)
	}
	if text := visibleText(section(t, rep, "step-2")); !strings.Contains(text, "No answer declined on the dashboard") {
		t.Errorf("the declined call does not say why it got no answer: %s", text)
	}
	lines, _, _ := ReadLines(filepath.Dir(info.Report))
	var overlays []int
	for _, ln := range lines {
		if ln.Kind == KindOverlay {
			overlays = append(overlays, ln.Step)
		}
	}
	if len(overlays) != 1 || overlays[0] != 1 {
		t.Errorf("overlays for calls %v, want only call 1 (its key press)", overlays)
	}
}

// TestOverlaySkipsQuestions: a question to a person draws nothing, not even
// a label in the top-left list; the actions around it are drawn as before.
func TestOverlaySkipsQuestions(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 300, 200))
	draw.Draw(src, src.Bounds(), image.NewUniform(color.RGBA{200, 200, 200, 255}), image.Point{}, draw.Src)
	ask := action.Trace{Action: askOf(action.AskChoice, "Which account should I use?", "personal", "work"), Answer: "work", Outcome: action.OutcomeOK}
	if ov := DrawOverlay(src, []action.Trace{ask}); !bytes.Equal(ov.Pix, src.Pix) {
		t.Error("a lone question changed the overlay")
	}
	failed := ask
	failed.Outcome, failed.Error = action.OutcomeFailed, "declined"
	if ov := DrawOverlay(src, []action.Trace{failed}); !bytes.Equal(ov.Pix, src.Pix) {
		t.Error("a declined question changed the overlay")
	}
	click := agentPoint(150, 100)
	ov := DrawOverlay(src, []action.Trace{{Action: action.Action{Kind: action.Click}, Image: &click, Outcome: action.OutcomeOK}, ask})
	if !isMarker(ov.At(150, 100), colorOK) {
		t.Error("the click beside a question is not drawn")
	}
}

// TestQuestionsInChromium: in a browser, the answered question and its answer
// show as a question-and-answer block, set apart from the unanswered ones.
func TestQuestionsInChromium(t *testing.T) {
	run := recordAskRun(t, newTestStore(t, nil))
	b := browsertest.New(t)
	if err := b.Do(30*time.Second, chromedp.Navigate((&url.URL{Scheme: "file", Path: filepath.ToSlash(run.ReportPath())}).String())); err != nil {
		t.Fatal(err)
	}
	type qa struct {
		Question, Answer, NoAnswer string
		Shown                      bool
		Border                     string
	}
	got, err := browsertest.Eval[[]qa](b, `[...document.querySelectorAll('#step-1 .qa, #step-4 .qa')].map(d => ({
  Question: d.querySelector('.question').innerText,
  Answer: d.querySelector('.answer') ? d.querySelector('.answer').innerText : '',
  NoAnswer: d.querySelector('.no-answer') ? d.querySelector('.no-answer').innerText : '',
  Shown: d.checkVisibility() && d.getBoundingClientRect().height > 40,
  Border: getComputedStyle(d).borderLeftColor,
}))`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Question != "Which account should I use?" || got[0].Answer != "the work one" || !got[0].Shown ||
		got[1].Question != "What is the invoice number?" || got[1].NoAnswer != "declined by the user in the MCP client" || !got[1].Shown {
		t.Fatalf("questions as shown: %+v", got)
	}
	if got[0].Border == got[1].Border {
		t.Errorf("an answered and an unanswered question look alike (border %s)", got[0].Border)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestReportShowsTheStepsElements: a step that took an element snapshot
// shows its summary and outline; one whose snapshot failed says why.
func TestReportShowsTheStepsElements(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("elements", "save", nil)
	if err != nil {
		t.Fatal(err)
	}
	outline := "UI elements of the focused window \"Form\" (...):\ne1 window \"Form\" [0,0,640,400]\n  e2 button \"Save\" [10,20,90,44]\n"
	run.OnEvent(agent.Event{Kind: agent.EvStep, Step: 1, StepDone: &agent.StepTrace{Step: 1, Outcome: "no actions",
		Elements: &agent.ElementsTrace{Mode: agent.ElementsBoth, Source: "atspi", Window: "Form", Count: 2, Marked: 1, Millis: 12, Outline: outline}}})
	run.OnEvent(agent.Event{Kind: agent.EvStep, Step: 2, StepDone: &agent.StepTrace{Step: 2, Outcome: "no actions",
		Elements: &agent.ElementsTrace{Mode: agent.ElementsText, Error: "the bus went away"}}})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	rep, _ := os.ReadFile(run.ReportPath())
	one := visibleText(section(t, rep, "step-1"))
	for _, want := range []string{"UI elements (both): 2 from atspi · window “Form” · 1 marked · 12 ms", `e2 button "Save" [10,20,90,44]`} {
		if !strings.Contains(one, want) {
			t.Errorf("step 1 does not show %q: %s", want, one)
		}
	}
	if two := visibleText(section(t, rep, "step-2")); !strings.Contains(two, "UI elements (text): none: the bus went away") {
		t.Errorf("step 2 does not say why it has no elements: %s", two)
	}
}
