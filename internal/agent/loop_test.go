package agent

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

var (
	nameColor   = color.RGBA{230, 40, 40, 255}
	emailColor  = color.RGBA{40, 200, 60, 255}
	cityColor   = color.RGBA{40, 80, 230, 255}
	submitColor = color.RGBA{240, 200, 20, 255}
	doneColor   = color.RGBA{250, 250, 250, 255}
)

// A form of three fields and a submit button on one downscaled screen: the
// model finds them by colour in the image it got, fills everything in one
// batched step, and confirms in a second call.
func TestFormFilledInOneBatchedStep(t *testing.T) {
	d := newDesk(t)
	fields := map[color.RGBA]geom.Rect{
		nameColor:   {X: 300, Y: 200, W: 400, H: 60},
		emailColor:  {X: 300, Y: 320, W: 400, H: 60},
		cityColor:   {X: 300, Y: 440, W: 400, H: 60},
		submitColor: {X: 300, Y: 560, W: 200, H: 70},
	}
	for c, r := range fields {
		d.fb.Fill(r, c)
	}
	d.fb.OnEvent(func(e fake.Event) {
		if e.Op == fake.OpButtonUp && within(e.At, fields[submitColor]) {
			d.fb.Fill(geom.Rect{X: 1200, Y: 100, W: 300, H: 300}, doneColor)
		}
	})
	find := func(t *testing.T, obs llm.Observation, c color.RGBA) []float64 {
		p, ok := findColor(decode(t, obs.Screenshot), c, 30)
		if !ok {
			t.Errorf("step %d: colour %v not in the screenshot", obs.Step, c)
		}
		return []float64{float64(p.X), float64(p.Y)}
	}
	script := newScript(geom.ProfileFor("gpt-4o"),
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			return &llm.Decision{Status: llm.Continue, MemoryUpdate: []string{"form has name, email, city"}, Actions: raws(
				action.Raw{Kind: action.Click, At: find(t, obs, nameColor)}, action.Raw{Kind: action.TypeText, Text: "Ada Lovelace"},
				action.Raw{Kind: action.Click, At: find(t, obs, emailColor)}, action.Raw{Kind: action.TypeText, Text: "ada@example.org"},
				action.Raw{Kind: action.Click, At: find(t, obs, cityColor)}, action.Raw{Kind: action.TypeText, Text: "London"},
				action.Raw{Kind: action.Click, At: find(t, obs, submitColor)})}, nil
		},
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			if _, ok := findColor(decode(t, obs.Screenshot), doneColor, 10); !ok {
				return &llm.Decision{Status: llm.Failed, Result: "no confirmation visible"}, nil
			}
			return &llm.Decision{Status: llm.Done, Result: "form submitted"}, nil
		})
	r := d.runner(d.opts(script))
	res := r.Run(context.Background(), Task{Task: "fill the form"}, nil)
	statusOf(t, res, Completed)
	if res.Usage.Calls != 2 || res.Steps != 2 {
		t.Fatalf("model calls %d, steps %d; want 2 and 2", res.Usage.Calls, res.Steps)
	}
	if got := d.fb.Typed(); got != "Ada Lovelaceada@example.orgLondon" {
		t.Fatalf("typed %q", got)
	}
	clicks := d.clicks()
	order := []color.RGBA{nameColor, emailColor, cityColor, submitColor}
	if len(clicks) != 4 {
		t.Fatalf("clicks %v, want 4", clicks)
	}
	for i, c := range order {
		if !within(clicks[i], fields[c]) {
			t.Errorf("click %d at %v, outside its widget %v", i, clicks[i], fields[c])
		}
	}
	// The trace holds image and global coordinates: the image is 1280 wide
	// (downscaled from 1920), so global = image * 1.5.
	a := res.Trace[0].Actions[0]
	if a.Image == nil || a.Global == nil {
		t.Fatalf("trace lacks coordinates: %+v", a)
	}
	if dx := float64(a.Global.X) - (a.Image.X+0.5)*1.5; dx > 1.5 || dx < -1.5 {
		t.Errorf("image %v -> global %v is not the 1.5x mapping", *a.Image, *a.Global)
	}
	if res.Trace[0].FrameID == "" || res.Result != "form submitted" || !slices.Contains(res.Memory, "form has name, email, city") {
		t.Errorf("result incomplete: %+v", res)
	}
	obs := script.observations()
	if w := obs[0].Screenshot.Frame.ImageSize(); w.W != 1280 || w.H != 720 {
		t.Errorf("screenshot sent at %v, want 1280x720", w)
	}
	if !strings.Contains(obs[1].Memory, "form has name, email, city") || !strings.Contains(obs[1].History, "Step 1") {
		t.Errorf("step 2 did not see memory/history: %q / %q", obs[1].Memory, obs[1].History)
	}
	if len(obs[1].Recent) != 1 || obs[1].Recent[0].Step != 1 {
		t.Errorf("step 2 should carry the step-1 screenshot, got %d recent", len(obs[1].Recent))
	}
	d.assertNothingHeld()
}

// Every coordinate convention in the profile table lands on the target,
// including a model that declares the image size it saw.
func TestCoordinateConventions(t *testing.T) {
	target := geom.Rect{X: 1500, Y: 820, W: 60, H: 40} // on a 1920x1080 screen
	cases := []struct {
		name     string
		prof     geom.Profile
		declared *geom.Size
	}{
		{"pixels", geom.ProfileFor("gpt-4o"), nil},
		{"anthropic", geom.ProfileFor("claude-sonnet-4-5"), nil},
		{"gemini-yx-1000", geom.ProfileFor("gemini-2.5-pro"), nil},
		{"normalized-1000", geom.ProfileFor("qwen3-vl-235b"), nil},
		{"normalized-1", geom.ProfileFor("showui-2b"), nil},
		{"qwen-padded", geom.ProfileFor("qwen2.5-vl-72b"), nil},
		{"ui-tars-1.5-smart", geom.ProfileFor("ui-tars-1.5-7b"), nil},
		{"declared-1000x563", geom.ProfileFor("unknown-model"), &geom.Size{W: 1000, H: 563}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesk(t)
			d.fb.Fill(target, submitColor)
			script := newScript(tc.prof, func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
				p, ok := findColor(decode(t, obs.Screenshot), submitColor, 30)
				if !ok {
					t.Fatal("target not visible")
				}
				f := obs.Screenshot.Frame
				ip := geom.ImagePoint{X: float64(p.X), Y: float64(p.Y)}
				if tc.declared != nil { // the model worked on a resized copy
					img := f.ImageSize()
					ip = geom.ImagePoint{X: (ip.X+0.5)*float64(tc.declared.W)/float64(img.W) - 0.5,
						Y: (ip.Y+0.5)*float64(tc.declared.H)/float64(img.H) - 0.5}
					f = geom.ScaleFromDeclared(f, *tc.declared)
				}
				return &llm.Decision{Status: llm.Done, ImageSize: tc.declared,
					Actions: rawsIn(tc.prof.Space(), action.Raw{Kind: action.Click, At: tc.prof.FromImage(ip, f)})}, nil
			})
			res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "click the yellow box"}, nil)
			statusOf(t, res, Completed)
			c := d.clicks()
			if len(c) != 1 || !within(c[0], target) {
				t.Fatalf("clicked %v, want inside %v (trace %+v)", c, target, res.Trace[0].Actions)
			}
		})
	}
}

// A point in the padding of a padded image is never clicked: the action is
// refused and the model is told why.
func TestPaddingPointIsNotClicked(t *testing.T) {
	d := newDesk(t)
	prof := geom.ProfileFor("qwen2.5-vl-7b")
	script := newScript(prof,
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			f := obs.Screenshot.Frame
			if f.Prepared == f.Content {
				t.Fatalf("expected a padded frame, got %+v", f)
			}
			return &llm.Decision{Status: llm.Continue, Actions: raws(
				action.Raw{Kind: action.Click, At: []float64{10, float64(f.Prepared.H - 2)}}, action.Raw{Kind: action.TypeText, Text: "never"})}, nil
		},
		done("ok"))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	if len(d.clicks()) != 0 || d.fb.Typed() != "" {
		t.Fatalf("padding click or later action executed: %v %q", d.clicks(), d.fb.Typed())
	}
	fb := script.observations()[1].Feedback
	if !strings.Contains(fb, "padding") || !strings.Contains(fb, "not executed") {
		t.Fatalf("feedback does not explain the refused action: %q", fb)
	}
}

func TestStuckWarnsThenFails(t *testing.T) {
	d := newDesk(t) // clicks change nothing on this screen
	x := 100.0
	script := newScript(geom.ProfileFor("gpt-4o"), func(context.Context, llm.Observation) (*llm.Decision, error) {
		x += 50 // different targets, so it is not a loop
		return &llm.Decision{Status: llm.Continue, Actions: raws(click(x, 300))}, nil
	})
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, "stuck") {
		t.Fatalf("summary %q does not say stuck", res.Summary)
	}
	obs := script.observations()
	if len(obs) != 4 {
		t.Fatalf("model called %d times, want 4 (3 unchanged steps, a warning, then the end)", len(obs))
	}
	if !strings.Contains(strings.Join(obs[3].Warnings, " "), "has not changed") {
		t.Fatalf("step 4 got no stuck warning: %v", obs[3].Warnings)
	}
	if strings.Contains(strings.Join(obs[2].Warnings, " "), "has not changed") {
		t.Fatalf("warning came too early: %v", obs[2].Warnings)
	}
}

func TestLoopWarnsThenFails(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput() // the screen changes, so only loop detection can end it
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(click(400, 300))))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, "loop") || !strings.Contains(res.Summary, "repeated") {
		t.Fatalf("summary %q", res.Summary)
	}
	obs := script.observations()
	if len(obs) != 4 {
		t.Fatalf("model called %d times, want 4", len(obs))
	}
	if !strings.Contains(strings.Join(obs[3].Warnings, " "), "repeated the same action") {
		t.Fatalf("no loop warning before the last call: %v", obs[3].Warnings)
	}
	if n := len(d.clicks()); n != 3 {
		t.Fatalf("the 4th repetition must not run: %d clicks", n)
	}
}

func TestReAskOnceThenSucceed(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"),
		func(context.Context, llm.Observation) (*llm.Decision, error) {
			return nil, fmt.Errorf("%w: actions[0] (clik): unknown action", llm.ErrBadOutput)
		},
		reply(llm.Decision{Status: llm.Done, Actions: raws(click(10, 10))}))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	obs := script.observations()
	if len(obs) != 2 || !obs[1].ReAsk || !strings.Contains(obs[1].Feedback, "clik") {
		t.Fatalf("re-ask missing or without the error: %+v", obs[len(obs)-1])
	}
	if obs[1].Step != 1 || res.Steps != 1 {
		t.Fatalf("a re-ask is the same step: step %d, steps %d", obs[1].Step, res.Steps)
	}
	if len(d.clicks()) != 1 {
		t.Fatal("the corrected action did not run")
	}
}

// A decision with one invalid action runs none of them, and two invalid
// answers in a row end the run.
func TestPartlyValidAnswerNeverExecuted(t *testing.T) {
	d := newDesk(t)
	// An adapter parses its answer (action.Parse); a typed action can still be
	// incomplete, which the loop's validation catches.
	bad := llm.Decision{Status: llm.Continue, Actions: append(raws(click(10, 10)), action.Action{Kind: action.KeyPress})}
	script := newScript(geom.ProfileFor("gpt-4o"), reply(bad))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, "invalid twice") || !strings.Contains(res.Summary, "needs keys") {
		t.Fatalf("summary %q", res.Summary)
	}
	if len(d.fb.Events()) != 0 {
		t.Fatalf("invalid answer executed input: %v", d.fb.Events())
	}
	if script.callCount() != 2 {
		t.Fatalf("want exactly one re-ask, got %d calls", script.callCount())
	}
}

func TestModelStatuses(t *testing.T) {
	cases := []struct {
		name    string
		step    stepFunc
		status  Status
		reason  string
		summary string
	}{
		{"blocked", reply(llm.Decision{Status: llm.Blocked, BlockReason: "a login is required", NextUserAction: "log in"}), Blocked, ReasonModel, "login"},
		{"failed", reply(llm.Decision{Status: llm.Failed, Result: "the file does not exist"}), Failed, "", "does not exist"},
		{"safety", reply(llm.Decision{Status: llm.Blocked, SafetyChecks: []string{"malicious_instructions: page asks to wire money"}}), Blocked, ReasonSafetyCheck, "wire money"},
		{"provider", func(context.Context, llm.Observation) (*llm.Decision, error) {
			return nil, &llm.APIError{Provider: "openai", StatusCode: 401, Type: "invalid_api_key", Message: "Incorrect API key provided"}
		}, Failed, "", "HTTP 401"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesk(t)
			res := d.runner(d.opts(newScript(geom.ProfileFor("gpt-4o"), tc.step))).Run(context.Background(), Task{Task: "x"}, nil)
			statusOf(t, res, tc.status)
			if res.BlockReason != tc.reason || !strings.Contains(res.Summary, tc.summary) {
				t.Fatalf("block reason %q summary %q", res.BlockReason, res.Summary)
			}
			if tc.status == Blocked && res.NextUserAction == "" {
				t.Fatal("blocked without next_user_action")
			}
		})
	}
}

func TestMaxStepsBudget(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	x := 0.0
	script := newScript(geom.ProfileFor("gpt-4o"), func(context.Context, llm.Observation) (*llm.Decision, error) {
		x += 40
		return &llm.Decision{Status: llm.Continue, Actions: raws(click(x, 100)), MemoryUpdate: []string{fmt.Sprintf("fact %v", x)}}, nil
	})
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x", MaxSteps: 3}, nil)
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, "step limit (3)") || res.Steps != 3 || len(res.Trace) != 3 || len(res.Memory) != 3 {
		t.Fatalf("summary %q steps %d trace %d memory %v", res.Summary, res.Steps, len(res.Trace), res.Memory)
	}
}

func TestTokenBudget(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	x := 0.0
	script := newScript(geom.ProfileFor("gpt-4o"), func(context.Context, llm.Observation) (*llm.Decision, error) {
		x += 40
		return &llm.Decision{Status: llm.Continue, Actions: raws(click(x, 100)), Usage: llm.Usage{Calls: 1, InputTokens: 1000, OutputTokens: 50}}, nil
	})
	o := d.opts(script)
	o.TokenBudget = 2500
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Failed)
	if !strings.Contains(res.Summary, "token budget") || res.Usage.InputTokens != 3000 || len(d.clicks()) != 2 {
		t.Fatalf("summary %q usage %+v clicks %d", res.Summary, res.Usage, len(d.clicks()))
	}
}

func TestDeadlineEndsAsTimeout(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), block)
	start := time.Now()
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x", Timeout: 200 * time.Millisecond}, nil)
	statusOf(t, res, Timeout)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("timeout took %v", el)
	}
	if len(res.Trace) != 1 || res.Usage.Calls != 1 {
		t.Fatalf("the interrupted step should be recorded: trace %d calls %d", len(res.Trace), res.Usage.Calls)
	}
}

// A run cut short by the caller's own deadline ends as a timeout that says so,
// not as if the task's timeout (here the default 10 minutes) had passed.
func TestCallerDeadlineEndsAsTimeout(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), block)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := d.runner(d.opts(script)).Run(ctx, Task{Task: "x"}, nil)
	statusOf(t, res, Timeout)
	if !strings.Contains(res.Summary, "caller's request deadline") || strings.Contains(res.Summary, "raise timeout_s") {
		t.Fatalf("summary %q: want the caller's deadline named, not the task's timeout", res.Summary)
	}
}

// Cancelling mid-step while the model holds a key down (for 8 s) releases
// it, and the run ends as cancelled without waiting the hold out: within 3 s
// of the cancellation (measured from it, so that a loaded machine's slow
// start does not count).
func TestCancelMidStepReleasesHeldKey(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(
		action.Raw{Kind: action.MouseDown, At: []float64{100, 100}},
		action.Raw{Kind: action.HoldKey, Keys: []string{"shift"}, DurationMS: 8000},
	)))
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan time.Time, 1)
	go func() {
		waitFor(t, "shift held", func() bool { k, _ := d.fb.Pressed(); return len(k) == 1 })
		cancelled <- time.Now()
		cancel()
	}()
	res := d.runner(d.opts(script)).Run(ctx, Task{Task: "x"}, nil)
	statusOf(t, res, Cancelled)
	if el := time.Since(<-cancelled); el > 3*time.Second {
		t.Fatalf("the run ended %v after its cancellation; the hold (8 s) should not be waited out", el)
	}
	d.assertNothingHeld()
	var ups []string
	for _, e := range d.fb.Events() {
		if e.Op == fake.OpKeyUp || e.Op == fake.OpButtonUp {
			ups = append(ups, e.String())
		}
	}
	if len(ups) != 2 {
		t.Fatalf("want the key and the button released, got %v", ups)
	}
}

// Cancelling while the model thinks, with a button still held from the
// previous step, releases it too.
func TestCancelDuringModelCallReleasesButton(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	script := newScript(geom.ProfileFor("gpt-4o"),
		reply(act(action.Raw{Kind: action.MouseDown, At: []float64{100, 100}})), block)
	r := d.runner(d.opts(script))
	done := make(chan Result)
	go func() { done <- r.Run(context.Background(), Task{Task: "x"}, nil) }()
	waitFor(t, "second model call", func() bool { return script.callCount() == 2 })
	if _, b := d.fb.Pressed(); len(b) != 1 {
		t.Fatalf("button should be held while the model thinks: %v", b)
	}
	if !r.Cancel("user pressed stop") {
		t.Fatal("Cancel found no running task")
	}
	res := <-done
	statusOf(t, res, Cancelled)
	if !strings.Contains(res.Summary, "user pressed stop") {
		t.Fatalf("summary %q", res.Summary)
	}
	d.assertNothingHeld()
}

func TestHumanTakeoverBetweenSteps(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	script := newScript(geom.ProfileFor("gpt-4o"),
		reply(act(click(100, 100))),
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			d.fb.SetCursor(geom.GlobalPoint{X: 1700, Y: 900}) // a human grabs the mouse while the model thinks
			return &llm.Decision{Status: llm.Continue, Actions: raws(click(500, 500))}, nil
		})
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Blocked)
	if res.BlockReason != ReasonHumanOverride || res.NextUserAction == "" {
		t.Fatalf("block reason %q next %q", res.BlockReason, res.NextUserAction)
	}
	if n := len(d.clicks()); n != 1 {
		t.Fatalf("the action after the takeover ran: %d clicks", n)
	}
}

// TestHumanOverrideOffWhereThePointerIsNotSeen: on a backend that only
// echoes guiagent's own pointer moves (Wayland, the portal, VNC), the run
// says that human-override detection is off and why, instead of watching a
// position that can never show a person's move.
func TestHumanOverrideOffWhereThePointerIsNotSeen(t *testing.T) {
	d := newDesk(t)
	d.fb.EchoPointer(true)
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(click(100, 100))), done("ok"))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "human-override detection is off") && strings.Contains(w, "shows guiagent no pointer position")
	}
	if !found {
		t.Errorf("warnings %q do not say that human-override detection is off", res.Warnings)
	}
	if desktop.NewInput(d.fb).ObservesPointer() {
		t.Error("the echoing backend's input claims to observe the pointer")
	}
}

func TestHumanTakeoverDuringWait(t *testing.T) {
	d := newDesk(t)
	// A wait far longer than the task may take: only the takeover can end it
	// in time (a wait that ran out would end the task cancelled, not blocked).
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(click(100, 100), action.Raw{Kind: action.Wait, DurationMS: 3_600_000}, click(300, 300))))
	go func() {
		waitFor(t, "first click", func() bool { return len(d.clicks()) == 1 })
		time.Sleep(100 * time.Millisecond)
		d.fb.SetCursor(geom.GlobalPoint{X: 10, Y: 1000})
	}()
	o := d.opts(script)
	o.MaxWaitAction = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := d.runner(o).Run(ctx, Task{Task: "x"}, nil)
	statusOf(t, res, Blocked)
	if res.BlockReason != ReasonHumanOverride || len(d.clicks()) != 1 {
		t.Fatalf("reason %q with %d clicks", res.BlockReason, len(d.clicks()))
	}
}

// The pointer may start anywhere: only movement after the run started counts.
func TestNoFalseTakeover(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	d.fb.SetCursor(geom.GlobalPoint{X: 5, Y: 5})
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(click(100, 100), action.Raw{Kind: action.Move, At: []float64{600, 400}})), done("ok"))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
}

type switchFlag struct{ on atomicBool }

type atomicBool struct {
	mu sync.Mutex
	v  bool
}

func (s *switchFlag) Engaged() bool { s.on.mu.Lock(); defer s.on.mu.Unlock(); return s.on.v }
func (s *switchFlag) set()          { s.on.mu.Lock(); s.on.v = true; s.on.mu.Unlock() }

func TestKillSwitchBlocks(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	ks := &switchFlag{}
	script := newScript(geom.ProfileFor("gpt-4o"),
		reply(act(click(100, 100))),
		func(context.Context, llm.Observation) (*llm.Decision, error) {
			ks.set()
			return &llm.Decision{Status: llm.Continue, Actions: raws(click(500, 500))}, nil
		})
	o := d.opts(script)
	o.KillSwitch = ks
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Blocked)
	if res.BlockReason != ReasonKillSwitch || len(d.clicks()) != 1 {
		t.Fatalf("reason %q clicks %d", res.BlockReason, len(d.clicks()))
	}
}

type denyPolicy struct{}

func (denyPolicy) Check(keys []desktop.Key) error {
	if desktop.ComboString(keys) == "alt+f4" {
		return errors.New("alt+f4 is blocked by the key policy")
	}
	return nil
}

func TestKeyPolicyBlocks(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(
		action.Raw{Kind: action.KeyPress, Keys: []string{"ctrl", "s"}},
		action.Raw{Kind: action.KeyPress, Keys: []string{"alt", "F4"}})))
	o := d.opts(script)
	o.Policy = denyPolicy{}
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Blocked)
	if res.BlockReason != ReasonPolicy || !strings.Contains(res.Summary, "alt+f4") {
		t.Fatalf("reason %q summary %q", res.BlockReason, res.Summary)
	}
	for _, e := range d.fb.Events() {
		if e.Key == "F4" || e.Key == desktop.Alt {
			t.Fatalf("blocked combination was pressed: %v", d.fb.Events())
		}
	}
	if len(d.fb.Events()) != 4 { // ctrl down, s down, s up, ctrl up
		t.Fatalf("ctrl+s before the blocked combination should run: %v", d.fb.Events())
	}
}

func TestKeyActions(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), reply(llm.Decision{Status: llm.Done, Actions: raws(
		action.Raw{Kind: action.KeyPress, Keys: []string{"Down"}, Amount: 3},
		action.Raw{Kind: action.KeyPress, Keys: []string{"ctrl+shift+t"}},
		action.Raw{Kind: action.Scroll, At: []float64{200, 200}, Direction: "down", Amount: 2, Keys: []string{"shift"}},
		action.Raw{Kind: action.Drag, At: []float64{100, 100}, To: []float64{300, 100}},
		action.Raw{Kind: action.TripleClick, At: []float64{50, 60}},
		action.Raw{Kind: action.Scroll, Direction: "up", Amount: 100000})}))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	var got []string
	for _, e := range d.fb.Events() {
		if e.Op != fake.OpMove {
			got = append(got, e.String())
		}
	}
	want := []string{
		"key_down(Down)", "key_up(Down)", "key_down(Down)", "key_up(Down)", "key_down(Down)", "key_up(Down)",
		"key_down(Control_L)", "key_down(Shift_L)", "key_down(t)", "key_up(t)", "key_up(Shift_L)", "key_up(Control_L)",
		"key_down(Shift_L)", "scroll(down,2)(300,300)", "key_up(Shift_L)",
		"button_down(left)(150,150)", "button_up(left)(450,150)",
		"button_down(left)(75,90)", "button_up(left)(75,90)", "button_down(left)(75,90)", "button_up(left)(75,90)", "button_down(left)(75,90)", "button_up(left)(75,90)",
		"scroll(up,50)(75,90)", // a huge amount is capped
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("input\n got %v\nwant %v", got, want)
	}
}

// Zoom captures the region and the next observation carries it.
func TestZoomFeedsNextObservation(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"),
		reply(act(action.Raw{Kind: action.Zoom, At: []float64{100, 100}, To: []float64{300, 200}})), done("seen"))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	obs := script.observations()[1]
	if len(obs.Recent) != 2 {
		t.Fatalf("want the step-1 screenshot and the zoom, got %d images", len(obs.Recent))
	}
	z := obs.Recent[1]
	want := geom.Rect{X: 150, Y: 150, W: 301, H: 151}
	if z.Frame.Region != want || !strings.Contains(z.Ref, "zoom") {
		t.Fatalf("zoom frame region %v ref %q, want %v", z.Frame.Region, z.Ref, want)
	}
	decode(t, z)
	if !strings.Contains(obs.Feedback, "zoom") {
		t.Fatalf("feedback does not mention the zoom: %q", obs.Feedback)
	}
}

type fakeGrounder struct {
	calls   int
	targets [][]string
	prof    geom.Profile
	point   func(img llm.Image, target string) []float64
}

func (g *fakeGrounder) Profile() geom.Profile { return g.prof }
func (g *fakeGrounder) Ground(_ context.Context, img llm.Image, targets []string) ([]*action.Point, llm.Usage, error) {
	g.calls++
	g.targets = append(g.targets, targets)
	out := make([]*action.Point, len(targets))
	for i, t := range targets {
		if nums := g.point(img, t); nums != nil {
			pt, err := action.ParsePoint(nums, g.prof.Space())
			if err != nil {
				return nil, llm.Usage{}, err
			}
			out[i] = &pt
		}
	}
	return out, llm.Usage{Calls: 1, InputTokens: 900}, nil
}

func TestGrounderResolvesSeveralTargetsInOneCall(t *testing.T) {
	d := newDesk(t)
	red, blue := geom.Rect{X: 100, Y: 800, W: 80, H: 80}, geom.Rect{X: 1600, Y: 200, W: 80, H: 80}
	d.fb.Fill(red, nameColor)
	d.fb.Fill(blue, cityColor)
	g := &fakeGrounder{prof: geom.ProfileFor("qwen3-vl"), point: func(img llm.Image, target string) []float64 {
		c := map[string]color.RGBA{"red box": nameColor, "blue box": cityColor}[target]
		p, ok := findColor(decode(t, img), c, 30)
		if !ok {
			return nil
		}
		return geom.ProfileFor("qwen3-vl").FromImage(geom.ImagePoint{X: float64(p.X), Y: float64(p.Y)}, img.Frame)
	}}
	script := newScript(geom.ProfileFor("gpt-4o"), reply(llm.Decision{Status: llm.Done, Actions: raws(
		action.Raw{Kind: action.Click, Target: "red box"}, action.Raw{Kind: action.Click, Target: "blue box"})}))
	o := d.opts(script)
	o.Grounder = g
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	c := d.clicks()
	if g.calls != 1 || len(c) != 2 || !within(c[0], red) || !within(c[1], blue) {
		t.Fatalf("grounder calls %d, clicks %v", g.calls, c)
	}
	if res.Usage.Calls != 2 || res.Usage.InputTokens != 1000 {
		t.Fatalf("grounding usage not counted: %+v", res.Usage)
	}
}

func TestTargetWithoutGrounderIsReAsked(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"),
		reply(llm.Decision{Status: llm.Continue, Actions: raws(action.Raw{Kind: action.Click, Target: "OK button"})}),
		done("ok"))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	if fb := script.observations()[1].Feedback; !strings.Contains(fb, "coordinates") {
		t.Fatalf("feedback %q", fb)
	}
}

// Without a grounding model, a target named on an action that needs no
// position (type, key) is ignored and the action runs; a target on an action
// whose position is optional (scroll) is re-asked before anything runs, never
// refused halfway through the batch as if a grounding model had failed.
func TestTargetWithoutGrounderOnOtherActions(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"),
		reply(llm.Decision{Status: llm.Continue, Actions: raws(
			action.Raw{Kind: action.TypeText, Text: "hello", Target: "search box"},
			action.Raw{Kind: action.Scroll, Direction: "down", Target: "result list"})}),
		reply(llm.Decision{Status: llm.Done, Actions: raws(action.Raw{Kind: action.TypeText, Text: "world", Target: "search box"})}))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	obs := script.observations()
	if fb := obs[1].Feedback; !strings.Contains(fb, "coordinates") || strings.Contains(fb, "grounding model could not find") {
		t.Fatalf("feedback %q: want a request for coordinates", fb)
	}
	var ops []string
	for _, e := range d.fb.Events() {
		ops = append(ops, e.String())
	}
	if typed := d.fb.Typed(); typed != "world" {
		t.Fatalf("typed %q (input %v): want only the second answer's text, typed although it names a target", typed, ops)
	}
	for _, op := range ops {
		if strings.HasPrefix(op, "scroll") {
			t.Fatalf("the invalid batch scrolled: %v", ops)
		}
	}
}

// animScreen repaints the whole screen with a new grey on each of its first
// frames captures (forever when frames < 0), like an animation.
type animScreen struct {
	*fake.Backend
	mu     sync.Mutex
	frames int
	n      int
}

func (a *animScreen) Capture(ctx context.Context, r geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	a.mu.Lock()
	if a.frames < 0 || a.n < a.frames {
		a.n++
		g := uint8(40 + (a.n*50)%200)
		a.Backend.Fill(geom.Rect{X: 0, Y: 0, W: 1920, H: 1080}, color.RGBA{g, g, g, 255})
		if a.n == a.frames {
			a.Backend.Fill(geom.Rect{X: 0, Y: 0, W: 1920, H: 1080}, doneColor)
		}
	}
	a.mu.Unlock()
	return a.Backend.Capture(ctx, r, dst)
}

// The screenshot the model sees is taken after the screen stopped changing.
func TestSettleWaitsForStillScreen(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
		if _, ok := findColor(decode(t, obs.Screenshot), doneColor, 5); !ok {
			return &llm.Decision{Status: llm.Failed, Result: "saw a transition frame"}, nil
		}
		return &llm.Decision{Status: llm.Done}, nil
	})
	o := d.opts(script)
	anim := &animScreen{Backend: d.fb, frames: 5}
	o.Screen = anim
	o.Settle = Settle{Interval: 10 * time.Millisecond, MaxWait: 30 * time.Second}
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	if anim.n != 5 || len(script.observations()[0].Warnings) != 0 {
		t.Fatalf("frames %d, warnings %v", anim.n, script.observations()[0].Warnings)
	}
}

func TestSettleGivesUpOnEndlessAnimation(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("gpt-4o"), done("ok"))
	o := d.opts(script)
	o.Screen = &animScreen{Backend: d.fb, frames: -1}
	o.Settle = Settle{Interval: 20 * time.Millisecond, MaxWait: 200 * time.Millisecond}
	start := time.Now()
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	if w := script.observations()[0].Warnings; len(w) != 1 || !strings.Contains(w[0], "still changing") {
		t.Fatalf("warnings %v", w)
	}
	if el := time.Since(start); el > 10*time.Second { // MaxWait plus the captures in flight (slow under -race)
		t.Fatalf("settle wait not bounded: %v", el)
	}
}

func TestProgressEvents(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	stillWaiting := make(chan struct{})
	var once sync.Once
	script := newScript(geom.ProfileFor("gpt-4o"),
		func(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
			select { // a slow model: it answers once "still waiting" has fired, however long that takes
			case <-stillWaiting:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &llm.Decision{Status: llm.Continue, Actions: raws(click(10, 10), action.Raw{Kind: action.TypeText, Text: "hi"})}, nil
		}, done("ok"))
	o := d.opts(script)
	o.ProgressEvery = 50 * time.Millisecond
	var mu sync.Mutex
	var msgs []string
	last := -1.0
	res := d.runner(o).Run(context.Background(), Task{Task: "x", MaxSteps: 10}, func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Kind != EvProgress {
			t.Errorf("progress got a %s event", ev.Kind)
		}
		if ev.Progress < last || ev.Total != 10 {
			t.Errorf("progress %v/%v after %v", ev.Progress, ev.Total, last)
		}
		last = ev.Progress
		msgs = append(msgs, ev.Message)
		if strings.HasPrefix(ev.Message, "Still waiting for the model for step 1") {
			once.Do(func() { close(stillWaiting) })
		}
	})
	statusOf(t, res, Completed)
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"Capturing the screen", "Asking the model for step 1", "Still waiting for the model for step 1",
		"Step 1 action 1/2: click", "Step 1 action 2/2: type", "Capturing the updated screen after step 1", "Asking the model for step 2", "Finished: completed"} {
		if !strings.Contains(all, want) {
			t.Errorf("no progress %q in:\n%s", want, all)
		}
	}
	if last != 10 {
		t.Errorf("final progress %v, want total", last)
	}
}

type recorder struct {
	mu     sync.Mutex
	events []Event
	closed bool
}

func (r *recorder) OnEvent(ev Event) { r.mu.Lock(); r.events = append(r.events, ev); r.mu.Unlock() }
func (r *recorder) Close() error     { r.mu.Lock(); r.closed = true; r.mu.Unlock(); return nil }
func (r *recorder) Dir() string      { return "/runs/x" }
func (r *recorder) ReportPath() string {
	return "/runs/x/report.html"
}
func (r *recorder) kinds() []EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var k []EventKind
	for _, e := range r.events {
		if len(k) == 0 || k[len(k)-1] != e.Kind {
			k = append(k, e.Kind)
		}
	}
	return k
}

func TestObserversSeeEveryEvent(t *testing.T) {
	d := newDesk(t)
	d.changeOnInput()
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(click(10, 10))), done("ok"))
	o := d.opts(script)
	rec := &recorder{}
	var gotID string
	o.NewRecorder = func(runID string, task Task) (Recorder, error) { gotID = runID; return rec, nil }
	r := d.runner(o)
	live := &recorder{}
	remove := r.AddObserver(live)
	res := r.Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	if gotID != res.RunID || res.RunDir != "/runs/x" || res.Report != "/runs/x/report.html" || !rec.closed {
		t.Fatalf("recorder not wired: id %q dir %q closed %v", gotID, res.RunDir, rec.closed)
	}
	want := []EventKind{EvStart, EvProgress, EvScreenshot, EvProgress, EvModel, EvProgress, EvAction, EvStep,
		EvProgress, EvScreenshot, EvProgress, EvModel, EvStep, EvProgress, EvFinish}
	if got := rec.kinds(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	if !slices.Equal(live.kinds(), want) {
		t.Fatalf("live observer got %v", live.kinds())
	}
	for _, e := range rec.events {
		if e.RunID != res.RunID || e.Time.IsZero() {
			t.Fatalf("event not stamped: %+v", e)
		}
		if e.Kind == EvFinish && (e.Result == nil || e.Result.Status != Completed || e.Result.RunDir == "") {
			t.Fatalf("finish event lacks the result: %+v", e.Result)
		}
	}
	remove()
	r.Run(context.Background(), Task{Task: "y"}, nil)
	if n := len(live.kinds()); n != len(want) {
		t.Fatalf("removed observer still receives events (%d)", n)
	}
}

func TestEmptyTaskAndBadOptions(t *testing.T) {
	d := newDesk(t)
	r := d.runner(d.opts(newScript(geom.ProfileFor("gpt-4o"), done("x"))))
	res := r.Run(context.Background(), Task{Task: "  "}, nil)
	if res.Status != Failed || !strings.Contains(res.Summary, "empty") {
		t.Fatalf("%+v", res)
	}
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "Input") || !strings.Contains(err.Error(), "Adapter") {
		t.Fatalf("New(Options{}) = %v", err)
	}
	if _, err := New(Options{Input: d.in, Adapter: newScript(geom.Profile{}), OnBusy: "later"}); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_ON_BUSY") {
		t.Fatalf("bad OnBusy accepted: %v", err)
	}
	res = r.Run(context.Background(), Task{Task: "x", Display: "7"}, nil)
	if res.Status != Failed || !strings.Contains(res.Summary, "no such display") {
		t.Fatalf("unknown display: %+v", res.Summary)
	}
}

// A second display with a negative origin: clicks land on it.
func TestSecondDisplayNegativeOrigin(t *testing.T) {
	left := geom.Display{ID: "1", Bounds: geom.Rect{X: -1280, Y: 0, W: 1280, H: 1024}}
	main := geom.Display{ID: "0", Bounds: geom.Rect{X: 0, Y: 0, W: 1920, H: 1080}, Primary: true}
	d := newDesk(t, main, left)
	box := geom.Rect{X: -400, Y: 500, W: 50, H: 50}
	d.fb.Fill(box, submitColor)
	script := newScript(geom.ProfileFor("gpt-4o"), func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
		p, ok := findColor(decode(t, obs.Screenshot), submitColor, 30)
		if !ok {
			t.Fatal("box not on display 1's screenshot")
		}
		return &llm.Decision{Status: llm.Done, Actions: raws(click(float64(p.X), float64(p.Y)))}, nil
	})
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x", Display: "1"}, nil)
	statusOf(t, res, Completed)
	if c := d.clicks(); len(c) != 1 || !within(c[0], box) {
		t.Fatalf("clicks %v want in %v", c, box)
	}
}

// A "done" whose own actions did not all run is not taken as done.
func TestDoneWithRefusedActionAsksAgain(t *testing.T) {
	d := newDesk(t)
	script := newScript(geom.ProfileFor("qwen2.5-vl-7b"),
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			f := obs.Screenshot.Frame
			return &llm.Decision{Status: llm.Done, Result: "clicked", Actions: raws(action.Raw{Kind: action.Click, At: []float64{5, float64(f.Prepared.H - 1)}})}, nil
		},
		done("really done"))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	if res.Result != "really done" || script.callCount() != 2 {
		t.Fatalf("result %q after %d calls", res.Result, script.callCount())
	}
}

// An application that repaints a moment after the click: the next step must
// see the repainted screen, not the unchanged (and so "still") old one.
func TestSettleWaitsForALateRepaint(t *testing.T) {
	d := newDesk(t)
	late := color.RGBA{250, 30, 200, 255}
	d.fb.OnEvent(func(e fake.Event) {
		if e.Op == fake.OpButtonUp {
			time.AfterFunc(250*time.Millisecond, func() { d.fb.Fill(geom.Rect{X: 0, Y: 700, W: 1920, H: 380}, late) })
		}
	})
	script := newScript(geom.ProfileFor("gpt-4o"), reply(act(click(100, 100))),
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			if _, ok := findColor(decode(t, obs.Screenshot), late, 5); !ok {
				return &llm.Decision{Status: llm.Failed, Result: "the screenshot was taken before the app repainted"}, nil
			}
			return &llm.Decision{Status: llm.Done}, nil
		})
	o := d.opts(script)
	o.Settle = Settle{Interval: 30 * time.Millisecond, MaxWait: 3 * time.Second}
	res := d.runner(o).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
}

// A drag to x = 1e15 (an action an adapter handed over as typed values) is
// refused before anything runs or is drawn, and the model is asked again once.
func TestPointFarOffTheImageIsReAsked(t *testing.T) {
	d := newDesk(t)
	far := llm.Decision{Status: llm.Continue, Actions: []action.Action{{Kind: action.Drag,
		At: &action.Point{Space: geom.SpaceImage, X: 10, Y: 10}, To: &action.Point{Space: geom.SpaceImage, X: 1e15, Y: 10}}}}
	script := newScript(geom.ProfileFor("gpt-4o"), reply(far), reply(llm.Decision{Status: llm.Done, Actions: raws(click(10, 10))}))
	res := d.runner(d.opts(script)).Run(context.Background(), Task{Task: "x"}, nil)
	statusOf(t, res, Completed)
	obs := script.observations()
	if len(obs) != 2 || !obs[1].ReAsk || !strings.Contains(obs[1].Feedback, "far outside the 1280x720 screenshot") {
		t.Fatalf("no re-ask naming the point: %+v", obs)
	}
	if n := len(d.clicks()); n != 1 {
		t.Fatalf("%d presses; want only the corrected click (the drag must not run)", n)
	}
}
