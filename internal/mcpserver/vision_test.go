package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/openai"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/vision"
)

var (
	visionDisplays = []geom.Display{{ID: "0", Name: "ONE", Bounds: geom.Rect{W: 1280, H: 800}, Scale: 1, Primary: true}}
	nameRect       = geom.Rect{X: 300, Y: 200, W: 400, H: 40}
	submitRect     = geom.Rect{X: 700, Y: 520, W: 160, H: 50}
	okRect         = geom.Rect{X: 900, Y: 650, W: 120, H: 40}
)

// visionEnv is a server over a fake desktop showing the Name field and the
// Submit button, whose vision model is the Chat Completions VisionModel
// talking to a fakellm server with the colour brain.
type visionEnv struct {
	*testEnv
	llm *fakellm.ChatServer
}

func newVisionEnv(t *testing.T, model string, opts fakellm.ChatOptions) *visionEnv {
	t.Helper()
	p, err := llm.ProfileFor(llm.AdapterGeneric, model, "")
	if err != nil {
		t.Fatal(err)
	}
	opts.Profile = p
	srv := fakellm.NewChatServer(fakellm.VisionBrain(fakellm.SampleAppWidgets), opts)
	t.Cleanup(srv.Close)
	m, err := openai.NewVisionModel(llm.Config{Provider: "openai", Model: model, BaseURL: srv.URL, Profile: &p})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := vision.NewService(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, visionDisplays, Options{Vision: svc, VisionProfile: p})
	e.desk.Fill(geom.Rect{W: 1280, H: 800}, sampleapp.BackgroundColor.ToRGBA())
	e.desk.Fill(nameRect, sampleapp.NameFieldColor.ToRGBA())
	e.desk.Fill(submitRect, sampleapp.SubmitColor.ToRGBA())
	return &visionEnv{testEnv: e, llm: srv}
}

func onRect(g geom.GlobalPoint, r geom.Rect, tol int) bool {
	cx, cy := r.X+r.W/2, r.Y+r.H/2
	return r.Contains(g) && abs(g.X-cx) <= tol && abs(g.Y-cy) <= tol
}

func TestLocateToolReturnsTheBoxInItsFrame(t *testing.T) {
	for _, model := range []string{"gpt-4.1", "glm-4.5v", "gemini-2.5-flash"} {
		t.Run(model, func(t *testing.T) {
			e := newVisionEnv(t, model, fakellm.ChatOptions{})
			var r LocateResult
			jsonOf(t, callTool(t, e.cs, "gui_locate", map[string]any{"target": "the Submit button"}), &r)
			if !r.Found || r.Box == nil || r.Center == nil || r.FrameID == "" {
				t.Fatalf("locate: %+v", r)
			}
			// The centre, given back to gui_click in image pixels of that frame, clicks the button.
			ok(t, e.cs, "gui_click", map[string]any{"x": r.Center.X, "y": r.Center.Y})
			if down := lastEvent(t, e.desk, fake.OpButtonDown); !onRect(down.At, submitRect, 3) {
				t.Fatalf("the centre %+v of frame %s clicked %v, not the Submit button %v", r.Center, r.FrameID, down.At, submitRect)
			}
			var miss LocateResult
			jsonOf(t, callTool(t, e.cs, "gui_locate", map[string]any{"target": "the OK button"}), &miss)
			if miss.Found || miss.Box != nil || !strings.Contains(miss.Reason, "OK") {
				t.Fatalf("a missing element: %+v, want found false with a reason", miss)
			}
		})
	}
}

func TestClickTargetSaysWhatItLocatedAndClicks(t *testing.T) {
	e := newVisionEnv(t, "gpt-4.1", fakellm.ChatOptions{})
	msg := ok(t, e.cs, "gui_click", map[string]any{"target": "the Submit button"})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if !onRect(down.At, submitRect, 3) {
		t.Fatalf("clicked %v, not the Submit button %v", down.At, submitRect)
	}
	for _, w := range []string{`located "the Submit button"`, "box (700,520)-(860,570)", "clicked left", down.At.String()} {
		if !strings.Contains(msg, w) {
			t.Errorf("result %q does not say %q", msg, w)
		}
	}
	n := len(e.desk.Events())
	fails(t, e.cs, "gui_click", map[string]any{"target": "the Submit button", "x": 5, "y": 5}, "either coordinates or target")
	fails(t, e.cs, "gui_click", map[string]any{}, "coordinates", "target")
	fails(t, e.cs, "gui_click", map[string]any{"target": "the OK button"}, "could not find", "nothing was done")
	fails(t, e.cs, "gui_click", map[string]any{"target": "the Submit button", "modifiers": []string{"nosuchkey"}}, "nosuchkey")
	if len(e.desk.Events()) != n {
		t.Fatalf("a refused call sent input: %v", ops(e.desk.Events()[n:]))
	}
	if calls := e.llm.Calls(); calls != 2 {
		t.Errorf("%d model calls; a call refused before locating must not ask the model (want 2: the click and the missing OK button)", calls)
	}
}

func TestTargetOnEveryInputTool(t *testing.T) {
	e := newVisionEnv(t, "gpt-4.1", fakellm.ChatOptions{})
	ok(t, e.cs, "gui_move", map[string]any{"target": "the Name field"})
	if mv := lastEvent(t, e.desk, fake.OpMove); !onRect(mv.At, nameRect, 3) {
		t.Fatalf("moved to %v", mv.At)
	}
	ok(t, e.cs, "gui_double_click", map[string]any{"target": "the Submit button"})
	if up := lastEvent(t, e.desk, fake.OpButtonUp); !onRect(up.At, submitRect, 3) {
		t.Fatalf("double-clicked at %v", up.At)
	}
	ok(t, e.cs, "gui_scroll", map[string]any{"target": "the Name field", "direction": "down"})
	if sc := lastEvent(t, e.desk, fake.OpScroll); !onRect(sc.At, nameRect, 3) {
		t.Fatalf("scrolled at %v", sc.At)
	}
	ok(t, e.cs, "gui_mouse_down", map[string]any{"target": "the Submit button"})
	ok(t, e.cs, "gui_mouse_up", map[string]any{})
	if d := lastEvent(t, e.desk, fake.OpButtonDown); !onRect(d.At, submitRect, 3) {
		t.Fatalf("pressed at %v", d.At)
	}
	msg := ok(t, e.cs, "gui_drag", map[string]any{"from_target": "the Name field", "to_target": "the Submit button"})
	if d, u := lastEvent(t, e.desk, fake.OpButtonDown), lastEvent(t, e.desk, fake.OpButtonUp); !onRect(d.At, nameRect, 3) || !onRect(u.At, submitRect, 3) {
		t.Fatalf("dragged %v -> %v (%s)", d.At, u.At, msg)
	}
	// One end located, the other given in image pixels.
	ok(t, e.cs, "gui_drag", map[string]any{"from_target": "the Name field", "to_x": 10, "to_y": 10})
	if u := lastEvent(t, e.desk, fake.OpButtonUp); u.At != (geom.GlobalPoint{X: 10, Y: 10}) {
		t.Fatalf("drag to (10,10) ended at %v", u.At)
	}
	fails(t, e.cs, "gui_drag", map[string]any{"from_target": "the Name field", "from_x": 1, "from_y": 1, "to_x": 10, "to_y": 10}, "from_target")
}

func TestTypeTargetClicksThenReplaces(t *testing.T) {
	e := newVisionEnv(t, "gpt-4.1", fakellm.ChatOptions{})
	n := len(e.desk.Events())
	msg := ok(t, e.cs, "gui_type", map[string]any{"target": "the Name field", "text": "Ada", "mode": "replace"})
	evs := e.desk.Events()[n:]
	got := strings.Join(ops(evs), " ")
	down := -1
	for i, ev := range evs {
		if ev.Op == fake.OpButtonDown {
			down = i
			if !onRect(ev.At, nameRect, 3) {
				t.Fatalf("clicked %v, not the Name field", ev.At)
			}
		}
	}
	// Select all as every toolkit reads it (operate.FieldKeys), never ctrl+a.
	ia, it := strings.Index(got, "key_down(Shift_L) key_down(End)"), strings.Index(got, `type("Ada")`)
	if down < 0 || ia < 0 || it < ia || strings.Contains(got, "key_down(a)") {
		t.Fatalf("want click, Home, shift+End, then the text; got %s", got)
	}
	if !strings.Contains(msg, "selected its text and typed 3 characters; not verified: this desktop has no accessibility tree") {
		t.Errorf("result %q", msg)
	}
	n = len(e.desk.Events())
	msg = ok(t, e.cs, "gui_type", map[string]any{"target": "the Name field", "text": "!", "mode": "append"})
	if got := strings.Join(ops(e.desk.Events()[n:]), " "); !strings.Contains(got, "key_down(End)") || strings.Index(got, "key_down(End)") > strings.Index(got, `type("!")`) {
		t.Fatalf("append: want the End key before the text, got %s", got)
	}
	if !strings.Contains(msg, "went to the end") {
		t.Errorf("result %q", msg)
	}
	fails(t, e.cs, "gui_type", map[string]any{"text": "x", "mode": "overwrite"}, "mode", "replace")
}

func TestAssertAndQueryTools(t *testing.T) {
	e := newVisionEnv(t, "gpt-4.1", fakellm.ChatOptions{})
	var a AssertResult
	jsonOf(t, callTool(t, e.cs, "gui_assert", map[string]any{"assertion": "the Submit button is visible"}), &a)
	if !a.Pass || a.Reason == "" {
		t.Fatalf("assert: %+v", a)
	}
	jsonOf(t, callTool(t, e.cs, "gui_assert", map[string]any{"assertion": "the OK button is visible"}), &a)
	if a.Pass {
		t.Fatalf("assert OK: %+v", a)
	}
	var q QueryResult
	jsonOf(t, callTool(t, e.cs, "gui_query", map[string]any{"question": "How many widgets are visible?", "schema": map[string]any{"type": "integer"}}), &q)
	if string(q.Data) != "2" {
		t.Fatalf("query: %s", q.Data)
	}
	// A region around the Submit button only: the model sees one widget.
	jsonOf(t, callTool(t, e.cs, "gui_query", map[string]any{"question": "Which widgets are visible?",
		"schema": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"region": map[string]any{"x1": 650, "y1": 480, "x2": 900, "y2": 600, "space": "screen"}}), &q)
	if string(q.Data) != `["the Submit button"]` {
		t.Fatalf("query of a region: %s", q.Data)
	}
	fails(t, e.cs, "gui_query", map[string]any{"question": "q", "schema": map[string]any{"type": 7}}, "schema")
}

func TestWaitForAsksAgainOnlyWhenTheScreenChanged(t *testing.T) {
	e := newVisionEnv(t, "gpt-4.1", fakellm.ChatOptions{})
	// The screen stays still for three checks after the model's first "no",
	// then changes once. The test waits on those events, not on the clock:
	// how many checks fit in a second depends on how busy the machine is.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var looked int
		until(t, "the model's first answer", func() bool {
			if e.llm.Calls() != 1 {
				return false
			}
			looked = e.desk.Captures() // the screenshot the model judged is among these
			return true
		})
		until(t, "three more looks at the screen", func() bool { return e.desk.Captures() >= looked+3 })
		if n := e.llm.Calls(); n != 1 {
			t.Errorf("the model was asked %d times about a screen that did not change", n)
		}
		e.desk.Fill(okRect, sampleapp.OKColor.ToRGBA()) // the screen changes once
	}()
	var r WaitForResult
	jsonOf(t, callTool(t, e.cs, "gui_wait_for", map[string]any{"condition": "the OK button is visible", "interval_ms": 250, "timeout_s": 60}), &r)
	wg.Wait()
	t.Logf("screen changing once: %+v", r)
	if !r.Met || r.ModelCalls != 2 || r.ModelCalls != e.llm.Calls() || r.Checks < 4 {
		t.Fatalf("wait_for: %+v with %d model requests; want met after 2 model calls over at least 4 checks", r, e.llm.Calls())
	}

	// An unchanging screen to the timeout: not met, one model call.
	before := e.llm.Calls()
	jsonOf(t, callTool(t, e.cs, "gui_wait_for", map[string]any{"condition": "the Cancel button is visible", "interval_ms": 250, "timeout_s": 0.5}), &r)
	t.Logf("still screen: %+v", r)
	if r.Met || r.ModelCalls != 1 || e.llm.Calls()-before != 1 || r.Checks < 1 || !strings.Contains(r.Reason, "not met") {
		t.Fatalf("wait_for on a still screen: %+v (%d requests)", r, e.llm.Calls()-before)
	}
	fails(t, e.cs, "gui_wait_for", map[string]any{"condition": "x", "interval_ms": 100}, "interval_ms", "250")
	fails(t, e.cs, "gui_wait_for", map[string]any{"condition": "x", "timeout_s": 301}, "timeout_s")
}

// until polls cond until it holds; it fails the test after a minute, far
// beyond any wait a passing run has.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("gave up waiting for %s", what)
			return
		}
	}
}

func TestVisionToolsAreInTheObserveGroup(t *testing.T) {
	e := newEnv(t, visionDisplays, Options{Vision: blindSeer{}, Tools: []string{GroupObserve}})
	names := strings.Join(e.srv.ToolNames(), ",")
	for _, want := range []string{"gui_locate", "gui_query", "gui_assert", "gui_wait_for", "gui_screenshot"} {
		if !strings.Contains(names, want) {
			t.Errorf("--tools observe lacks %s: %s", want, names)
		}
	}
	if strings.Contains(names, "gui_click") {
		t.Errorf("--tools observe offers gui_click: %s", names)
	}
}

func TestWithoutAModelTheVisionToolsAreNotListed(t *testing.T) {
	e := newEnv(t, visionDisplays, Options{})
	res, err := e.cs.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if strings.HasPrefix(tl.Name, "gui_locate") || tl.Name == "gui_query" || tl.Name == "gui_assert" || tl.Name == "gui_wait_for" {
			t.Errorf("%s is listed without a vision model", tl.Name)
		}
	}
	// target is not advertised without a model, so a call giving it is refused.
	fails(t, e.cs, "gui_click", map[string]any{"target": "the OK button"}, "target")
	if len(e.desk.Events()) != 0 {
		t.Fatal("input was sent")
	}
}

// blindSeer is a vision.Seer that sees nothing (for listing the tools).
type blindSeer struct{}

func (blindSeer) Locate(context.Context, llm.Image, string) (vision.Location, llm.Usage, error) {
	return vision.Location{Reason: "blind"}, llm.Usage{}, nil
}

func (blindSeer) Query(context.Context, llm.Image, string, json.RawMessage) (vision.Answer, llm.Usage, error) {
	return vision.Answer{}, llm.Usage{}, errors.New("blind")
}

func (blindSeer) Assert(context.Context, llm.Image, string) (vision.Verdict, llm.Usage, error) {
	return vision.Verdict{Reason: "blind"}, llm.Usage{}, nil
}

// TestSetVisionOffersAndWithdrawsTheVisionTools: a model configured at run
// time (the settings API) offers the vision tools and makes `target` work;
// clearing it withdraws them.
func TestSetVisionOffersAndWithdrawsTheVisionTools(t *testing.T) {
	changed := make(chan struct{}, 8)
	e := newEnv(t, visionDisplays, Options{})
	cs := e.connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	listed := func() string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return strings.Join(names, ",")
	}
	if strings.Contains(listed(), "gui_locate") {
		t.Fatal("gui_locate offered without a model")
	}
	e.srv.SetVision(blindSeer{}, geom.Profile{}, geom.Profile{})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after SetVision")
	}
	for _, want := range []string{"gui_locate", "gui_query", "gui_assert", "gui_wait_for"} {
		if !strings.Contains(listed(), want) {
			t.Fatalf("%s not offered after SetVision: %s", want, listed())
		}
	}
	fails(t, cs, "gui_click", map[string]any{"target": "the OK button"}, "could not find", "blind")
	e.srv.SetVision(nil, geom.Profile{}, geom.Profile{})
	if l := listed(); strings.Contains(l, "gui_locate") || strings.Contains(l, "gui_wait_for") || !strings.Contains(l, "gui_click") {
		t.Fatalf("after SetVision(nil): %s", l)
	}
	fails(t, cs, "gui_click", map[string]any{"target": "the OK button"}, "target")
}
