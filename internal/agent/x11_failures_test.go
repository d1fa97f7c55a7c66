package agent

import (
	"bytes"
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// Failure paths of the loop, end to end on a real Xvfb with the sample app and
// a fake OpenAI-compatible provider.

// submitted waits for the app's submit event and checks the demo form values.
func submitted(t *testing.T, app *sampleapp.App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := app.WaitFor(ctx, func(e sampleapp.Event) bool { return e.Event == "submit" })
	if err != nil {
		t.Fatalf("the app never saw a submit: %v (history %v)", err, app.History())
	}
	f := scripted.DefaultDemoForm
	if ev.Fields["name"] != f.Name || ev.Fields["email"] != f.Email || ev.Fields["city"] != f.City {
		t.Fatalf("submitted %v", ev.Fields)
	}
}

// A 429 with Retry-After is waited out and retried inside the step; the run
// then completes with the usual two successful model calls.
func TestX11RateLimitedThenSucceeds(t *testing.T) {
	env := startX11(t)
	app := env.app(t, sampleapp.SceneForm)
	form := scripted.DemoFormBrain(scripted.DefaultDemoForm)
	brain := fakellm.Script(
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 429, RetryAfter: "1", ErrorType: "rate_limit_error", Result: "slow down"}),
		form)
	adapter, core := adapterCases()[0].start(t, brain)
	start := time.Now()
	res := env.run(t, adapter, imaging.Options{MaxLongEdge: 1280}, "fill the form and submit it")
	statusOf(t, res, Completed)
	submitted(t, app)
	if core.Calls() != 3 || res.Usage.Calls != 2 {
		t.Fatalf("server saw %d requests (want 429 + 2), run counted %d model calls (want 2)", core.Calls(), res.Usage.Calls)
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("run took %v: the 1 s Retry-After was not honoured", el)
	}
}

// A malformed answer is re-asked once with the validation error; the good
// answer that follows completes the task, and nothing of the bad one ran.
func TestX11MalformedAnswerThenGood(t *testing.T) {
	env := startX11(t)
	app := env.app(t, sampleapp.SceneForm)
	form := scripted.DemoFormBrain(scripted.DefaultDemoForm)
	brain := fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Raw: `{"observation":"a form","actions":[{"action":"click","x":640}],"status":"continue"}`}),
		form)
	adapter, core := adapterCases()[0].start(t, brain)
	res := env.run(t, adapter, imaging.Options{MaxLongEdge: 1280}, "fill the form and submit it")
	statusOf(t, res, Completed)
	submitted(t, app)
	reqs := core.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (bad answer, re-ask, confirm)", len(reqs))
	}
	if !bytes.Contains(reqs[1].Body, []byte("not valid")) && !bytes.Contains(reqs[1].Body, []byte("invalid")) {
		t.Fatalf("the re-ask does not carry the validation error: %.600s", reqs[1].Body)
	}
	for _, e := range app.History() {
		if e.Event == "click" && e.X == 640 && e.Y == 0 {
			t.Fatalf("the malformed click ran: %v", e)
		}
	}
}

// Clicks that change nothing on screen are noticed: a warning reaches the
// model, and the run then ends as failed with the stuck reason.
func TestX11StuckRunFails(t *testing.T) {
	env := startX11(t)
	app := env.app(t, sampleapp.SceneForm)
	// Each step clicks a different spot of the empty background (so this is not
	// the repeated-action loop), which changes nothing on screen.
	brain := func(tu fakellm.Turn) fakellm.Reply {
		return fakellm.Reply{Observation: "a form", Actions: []fakellm.BrainAction{
			fakellm.ClickAt(image.Pt(60+tu.Step*90, tu.ImageSize.H-40))}}
	}
	adapter, core := adapterCases()[0].start(t, brain)
	res := env.run(t, adapter, imaging.Options{MaxLongEdge: 1280}, "do something useful")
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, "stuck") {
		t.Fatalf("summary %q does not give the stuck reason", res.Summary)
	}
	warned := false
	for _, r := range core.Requests() {
		warned = warned || bytes.Contains(r.Body, []byte("has not changed"))
	}
	if !warned {
		t.Fatal("the model was never warned that the screen does not change")
	}
	clicks := 0
	for _, e := range app.History() {
		if e.Event == "click" && e.Target == "" {
			clicks++
		}
	}
	if clicks < 3 || clicks != res.Steps-1 && clicks != res.Steps {
		t.Fatalf("the app saw %d background clicks over %d steps", clicks, res.Steps)
	}
}
