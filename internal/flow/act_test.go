package flow

import (
	"context"
	"image/color"
	"path/filepath"
	"sync"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// watchedAgent is an act step's agent that reports its screenshots and
// actions to observers as agent.Runner does: it looks at the screen, clicks
// the Submit button (found by colour) and types "sent".
type watchedAgent struct {
	desk *fake.Backend
	in   *desktop.Input
	runs []string

	mu  sync.Mutex
	obs []agent.Observer
}

func (w *watchedAgent) AddObserver(o agent.Observer) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs = append(w.obs, o)
	return func() { w.mu.Lock(); w.obs = nil; w.mu.Unlock() }
}

func (w *watchedAgent) emit(ev agent.Event) {
	ev.RunID = "agent-run"
	for _, o := range w.obs {
		o.OnEvent(ev)
	}
}

func (w *watchedAgent) Run(ctx context.Context, t agent.Task, _ func(agent.Event)) agent.Result {
	w.runs = append(w.runs, t.Task)
	w.emit(agent.Event{Kind: agent.EvStart, Message: t.Task})
	ds, _ := w.desk.Displays(ctx)
	shot, err := imaging.NewPipeline().Shoot(ctx, w.desk, ds[0], ds[0].Bounds, imaging.Options{Format: "jpeg", KeepPixels: true}, "agent-frame")
	if err != nil {
		return agent.Result{Status: agent.Failed, Summary: err.Error()}
	}
	img := llm.Image{MIME: shot.MIME, Data: shot.Data, Frame: shot.Frame}
	w.emit(agent.Event{Kind: agent.EvScreenshot, Step: 1, Image: &img})
	seer := &flowtest.ColorSeer{}
	loc, _, _ := seer.Locate(ctx, img, "the Submit button")
	if !loc.Found {
		return agent.Result{Status: agent.Blocked, Summary: "no Submit button"}
	}
	c := loc.Box.Center()
	g, _ := shot.Frame.Resolve(c, false)
	if err := w.in.Click(ctx, &g.Global, desktop.Left, 1, nil); err != nil {
		return agent.Result{Status: agent.Failed, Summary: err.Error()}
	}
	w.emit(agent.Event{Kind: agent.EvAction, Step: 1, Action: &action.Trace{Action: action.Action{Kind: action.Click}, Image: &c, Global: &g.Global, Outcome: action.OutcomeOK}})
	_ = w.in.Type(ctx, "sent")
	w.emit(agent.Event{Kind: agent.EvAction, Step: 1, Action: &action.Trace{Action: action.Action{Kind: action.TypeText, Text: "sent"}, Outcome: action.OutcomeOK}})
	return agent.Result{Status: agent.Completed, Summary: "sent", RunID: "agent-run"}
}

func clicks(b *fake.Backend) []geom.GlobalPoint {
	var out []geom.GlobalPoint
	for _, ev := range b.Events() {
		if ev.Op == fake.OpButtonDown {
			out = append(out, ev.At)
		}
	}
	return out
}

func TestActStepReplaysVerifiedActionsAndFallsBackWhenTheScreenDiverges(t *testing.T) {
	bg := color.RGBA{220, 220, 220, 255}
	b := fakeDesk(t)
	ag := &watchedAgent{desk: b, in: desktop.NewInput(b)}
	r := fakeRunner(t, b, nil, ag, nil)
	f := mustParse(t, "name: act\nsteps:\n  - act: Press Submit and type sent\n", nil)
	path := filepath.Join(t.TempDir(), "act.cache.yaml")
	run := func() Result {
		cache, err := OpenCache(path, ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		return r.Run(context.Background(), f, nil, cache)
	}
	if res := run(); res.Status != Passed || len(ag.runs) != 1 {
		t.Fatalf("first run: %s %s, agent runs %d", res.Status, res.Summary, len(ag.runs))
	}
	// Same screen: replayed from the cache, the agent is not asked.
	if res := run(); res.Status != Passed || len(ag.runs) != 1 || res.Steps[0].Cache != CacheHit || b.Typed() != "sentsent" {
		t.Fatalf("replay: %s %s, agent runs %d, cache %q, typed %q", res.Status, res.Summary, len(ag.runs), res.Steps[0].Cache, b.Typed())
	}
	// The button moved: found by its fingerprint, clicked at its new place.
	b.Fill(geom.Rect{X: 360, Y: 470, W: 200, H: 64}, bg)
	b.Fill(geom.Rect{X: 700, Y: 200, W: 200, H: 64}, sampleapp.SubmitColor.ToRGBA())
	if res := run(); res.Status != Passed || len(ag.runs) != 1 {
		t.Fatalf("moved: %s %s, agent runs %d", res.Status, res.Summary, len(ag.runs))
	}
	cs := clicks(b)
	moved := geom.Rect{X: 700, Y: 200, W: 200, H: 64}
	if last, first := cs[len(cs)-1], cs[0]; !moved.Contains(last) || last.X-first.X != 340 || last.Y-first.Y != -270 {
		t.Errorf("moved button clicked at %v, want inside %v and moved as the button did (+340,-270) from %v", last, moved, first)
	}
	// Another button instead: the replay diverges before clicking; the agent runs.
	b.Fill(geom.Rect{X: 700, Y: 200, W: 200, H: 64}, sampleapp.OKColor.ToRGBA())
	n := len(clicks(b))
	res := run()
	if len(ag.runs) != 2 || res.Steps[0].Cache != CacheMiss || len(clicks(b)) != n {
		t.Errorf("diverged: agent runs %d, cache %q, clicks %d (was %d): a cached click must not hit the OK button", len(ag.runs), res.Steps[0].Cache, len(clicks(b)), n)
	}
}
