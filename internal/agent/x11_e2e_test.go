package agent

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/openai"
	"github.com/guiagent/guiagent/internal/llm/responses"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// The end-to-end tests run the loop for real: a private Xvfb larger than the
// images sent (so every convention is exercised on a downscaled screen), the
// X11 backend injecting input with XTEST, the sample application reporting
// what it received, and fake providers speaking each wire format whose brain
// finds the widgets by colour in the screenshot it was sent.

const e2eW, e2eH = 1920, 1200

type x11Env struct {
	display string
	be      *x11.Backend
	in      *desktop.Input
}

func startX11(t *testing.T) *x11Env {
	t.Helper()
	vd := xvfbtest.Start(t, e2eW, e2eH)
	be := x11.New(x11.Options{Display: vd.Display, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		t.Fatalf("start the X11 backend on %s: %v", vd.Display, err)
	}
	t.Cleanup(func() { be.Close() })
	return &x11Env{display: vd.Display, be: be, in: desktop.NewInput(be)}
}

func (e *x11Env) app(t *testing.T, scene string) *sampleapp.App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: e.display, Scene: scene})
	if err != nil {
		t.Fatalf("start the sample app (%s): %v", scene, err)
	}
	t.Cleanup(func() { app.Close() })
	return app
}

func (e *x11Env) run(t *testing.T, a llm.Adapter, shot imaging.Options, task string) Result {
	t.Helper()
	r, err := New(Options{Input: e.in, Adapter: a, Shot: shot, MaxSteps: 6, Timeout: 60 * time.Second,
		Settle: Settle{Interval: 50 * time.Millisecond, MaxWait: 2 * time.Second}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), Task{Task: task}, nil)
}

// adapterCase builds an adapter talking to a fake server run by brain.
type adapterCase struct {
	name  string
	start func(t *testing.T, brain fakellm.Brain) (llm.Adapter, *fakellm.Core)
	shot  imaging.Options
}

const testKey = "sk-test-e2e-not-a-real-key"

func chatCase(name, provider, model string, opts fakellm.ChatOptions, uitars bool, maxEdge int) adapterCase {
	return adapterCase{name: name, shot: imaging.Options{MaxLongEdge: maxEdge}, start: func(t *testing.T, brain fakellm.Brain) (llm.Adapter, *fakellm.Core) {
		opts.Profile = geom.ProfileFor(model)
		srv := fakellm.NewChatServer(brain, opts)
		t.Cleanup(srv.Close)
		cfg := llm.Config{Provider: provider, Model: model, APIKey: testKey, BaseURL: srv.URL}
		if provider == "gemini" {
			cfg.BaseURL = srv.Root + "/v1beta/openai/"
		}
		var a llm.Adapter
		var err error
		if uitars {
			a, err = openai.NewUITARS(cfg)
		} else {
			a, err = openai.NewGeneric(cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		return a, srv.Core
	}}
}

func anthropicCase(name, model string) adapterCase {
	return adapterCase{name: name, start: func(t *testing.T, brain fakellm.Brain) (llm.Adapter, *fakellm.Core) {
		srv := fakellm.NewAnthropicServer(brain)
		t.Cleanup(srv.Close)
		a, err := anthropic.New(llm.Config{Provider: "anthropic", Model: model, APIKey: testKey, BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		return a, srv.Core
	}}
}

func adapterCases() []adapterCase {
	return []adapterCase{
		chatCase("generic-pixels", "openai", "gpt-4o", fakellm.ChatOptions{}, false, 1280),
		chatCase("generic-gemini-yx-0-1000-boxes", "gemini", "gemini-2.5-flash", fakellm.ChatOptions{Boxes: true, Fenced: true}, false, 1280),
		chatCase("generic-qwen3-0-1000", "openai", "qwen3-vl-235b-a22b", fakellm.ChatOptions{}, false, 1000),
		chatCase("ui-tars-1.0-0-1000", "openai", "ui-tars-72b-dpo", fakellm.ChatOptions{Format: fakellm.ChatUITARS}, true, 1280),
		chatCase("ui-tars-1.5-smart-resize", "openai", "ui-tars-1.5-7b", fakellm.ChatOptions{Format: fakellm.ChatUITARS, Spelling: fakellm.TARSBoxTokens}, true, 0),
		anthropicCase("anthropic-computer-legacy", "claude-sonnet-4-5"),
		anthropicCase("anthropic-computer-toolset", "claude-sonnet-5-5"),
		{name: "openai-computer", shot: imaging.Options{MaxLongEdge: 1024}, start: func(t *testing.T, brain fakellm.Brain) (llm.Adapter, *fakellm.Core) {
			srv := fakellm.NewResponsesServer(brain)
			t.Cleanup(srv.Close)
			a, err := responses.New(llm.Config{Provider: "openai", Model: "gpt-5.5", APIKey: testKey, BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			return a, srv.Core
		}},
	}
}

// The three-field form is filled in one batched step and confirmed in a
// second call, through every adapter and its coordinate convention.
func TestX11FormEveryAdapter(t *testing.T) {
	env := startX11(t)
	form := scripted.DemoForm{Name: "Ada Lovelace", Email: "ada@example.org", City: "London"}
	for _, tc := range adapterCases() {
		t.Run(tc.name, func(t *testing.T) {
			app := env.app(t, sampleapp.SceneForm)
			adapter, core := tc.start(t, scripted.DemoFormBrain(form))
			res := env.run(t, adapter, tc.shot, "Fill in the form with name Ada Lovelace, email ada@example.org, city London and submit it")
			statusOf(t, res, Completed)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ev, err := app.WaitFor(ctx, func(e sampleapp.Event) bool { return e.Event == "submit" })
			if err != nil {
				t.Fatalf("the app never saw a submit: %v (history %v)", err, app.History())
			}
			want := map[string]string{"name": form.Name, "email": form.Email, "city": form.City}
			for k, v := range want {
				if ev.Fields[k] != v {
					t.Fatalf("submitted %v, want %v", ev.Fields, want)
				}
			}
			if res.Usage.Calls > 2 || core.Calls() != res.Usage.Calls {
				t.Fatalf("%d model calls (server saw %d); the target is at most 2", res.Usage.Calls, core.Calls())
			}
			img := res.Trace[0]
			if len(img.Actions) != 10 {
				t.Fatalf("step 1 should batch 10 actions, got %d", len(img.Actions))
			}
			first := img.Actions[0]
			if first.Global == nil || first.Image == nil {
				t.Fatalf("trace lacks coordinates: %+v", first)
			}
			t.Logf("%s: %d calls, %d input tokens, first click image %v -> global %v", tc.name, res.Usage.Calls, res.Usage.InputTokens, *first.Image, *first.Global)
		})
	}
}

// The two-screen dialog takes a step per screen and a confirmation.
func TestX11TwoScreenDialog(t *testing.T) {
	env := startX11(t)
	app := env.app(t, sampleapp.SceneDialog)
	adapter, _ := adapterCases()[0].start(t, scripted.DemoDialogBrain())
	res := env.run(t, adapter, imaging.Options{MaxLongEdge: 1280}, "Go through the dialog and confirm it")
	statusOf(t, res, Completed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := app.WaitFor(ctx, func(e sampleapp.Event) bool { return e.Event == "confirmed" }); err != nil {
		t.Fatalf("no confirmed event: %v (history %v)", err, app.History())
	}
	if res.Usage.Calls != 3 || res.Steps != 3 {
		t.Fatalf("calls %d steps %d, want 3 (next, ok, confirm)", res.Usage.Calls, res.Steps)
	}
}

// A human moving the real pointer while the model thinks stops the run
// before its next action.
func TestX11HumanTakeover(t *testing.T) {
	env := startX11(t)
	app := env.app(t, sampleapp.SceneForm)
	human := x11.New(x11.Options{Display: env.display, Logger: slog.New(slog.DiscardHandler)})
	if err := human.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer human.Close()
	form := scripted.DemoFormBrain(scripted.DefaultDemoForm)
	brain := fakellm.Script(
		func(tu fakellm.Turn) fakellm.Reply { // step 1: click into the name field only
			r := form(tu)
			return fakellm.Reply{Actions: r.Actions[:1]}
		},
		func(tu fakellm.Turn) fakellm.Reply {
			if err := human.MoveTo(context.Background(), geom.GlobalPoint{X: 1800, Y: 1100}); err != nil {
				return fakellm.Reply{Status: "failed", Result: err.Error()}
			}
			return form(tu)
		})
	adapter, _ := adapterCases()[0].start(t, brain)
	res := env.run(t, adapter, imaging.Options{MaxLongEdge: 1280}, "fill the form")
	statusOf(t, res, Blocked)
	if res.BlockReason != ReasonHumanOverride {
		t.Fatalf("block reason %q: %s", res.BlockReason, res.Summary)
	}
	time.Sleep(200 * time.Millisecond)
	for _, e := range app.History() {
		if e.Event == "change" || e.Event == "submit" {
			t.Fatalf("input continued after the takeover: %v", e)
		}
	}
	p, err := env.be.CursorPosition(context.Background())
	if err != nil || p != (geom.GlobalPoint{X: 1800, Y: 1100}) {
		t.Fatalf("pointer at %v (%v): guiagent moved it after the takeover", p, err)
	}
}
