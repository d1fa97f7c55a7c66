package agent

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// stepFunc answers one model call.
type stepFunc func(ctx context.Context, obs llm.Observation) (*llm.Decision, error)

// scriptAdapter is an llm.Adapter whose sessions answer from a script and
// record every observation they were shown.
type scriptAdapter struct {
	prof geom.Profile

	mu    sync.Mutex
	steps []stepFunc
	calls int
	obs   []llm.Observation
}

func newScript(prof geom.Profile, steps ...stepFunc) *scriptAdapter {
	return &scriptAdapter{prof: prof, steps: steps}
}

func (s *scriptAdapter) Name() string                  { return "script" }
func (s *scriptAdapter) Profile() geom.Profile         { return s.prof }
func (s *scriptAdapter) NewSession(string) llm.Session { return s }

func (s *scriptAdapter) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	s.mu.Lock()
	i := s.calls
	s.calls++
	s.obs = append(s.obs, obs)
	var f stepFunc
	if i < len(s.steps) {
		f = s.steps[i]
	} else if len(s.steps) > 0 {
		f = s.steps[len(s.steps)-1] // the last step repeats
	}
	s.mu.Unlock()
	if f == nil {
		return nil, errors.New("script has no steps")
	}
	return f(ctx, obs)
}

func (s *scriptAdapter) observations() []llm.Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Observation(nil), s.obs...)
}

func (s *scriptAdapter) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// reply returns a step answering with d (a fresh copy each call).
func reply(d llm.Decision) stepFunc {
	return func(context.Context, llm.Observation) (*llm.Decision, error) {
		cp := d
		cp.Actions = append([]action.Action(nil), d.Actions...)
		if cp.Usage == (llm.Usage{}) {
			cp.Usage = llm.Usage{Calls: 1, InputTokens: 100, OutputTokens: 20}
		}
		return &cp, nil
	}
}

func done(result string) stepFunc { return reply(llm.Decision{Status: llm.Done, Result: result}) }

// block waits until ctx ends, like a model call that never answers in time.
func block(ctx context.Context, _ llm.Observation) (*llm.Decision, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func act(actions ...action.Raw) llm.Decision {
	return llm.Decision{Status: llm.Continue, Actions: raws(actions...), Observation: "screen seen", ExpectedOutcome: "progress"}
}

// raws parses actions written in image pixels, as an adapter would.
func raws(rs ...action.Raw) []action.Action {
	return rawsIn(geom.SpaceImage, rs...)
}

// rawsIn parses actions whose numbers are in space sp.
func rawsIn(sp geom.Space, rs ...action.Raw) []action.Action {
	acts, err := action.ParseModelAll(rs, sp)
	if err != nil {
		panic(err)
	}
	return acts
}

func click(x, y float64) action.Raw { return action.Raw{Kind: action.Click, At: []float64{x, y}} }

// testDesk is a fake desktop with a patterned background, an Input and a Runner factory.
type testDesk struct {
	t  *testing.T
	fb *fake.Backend
	in *desktop.Input
}

func newDesk(t *testing.T, displays ...geom.Display) *testDesk {
	t.Helper()
	fb := fake.New(fake.Options{Displays: displays, Background: color.RGBA{40, 44, 52, 255}})
	// A patterned screen so thumbnails have structure.
	ds, _ := fb.Displays(context.Background())
	for _, d := range ds {
		for i := 0; i < 12; i++ {
			fb.Fill(geom.Rect{X: d.Bounds.X + i*d.Bounds.W/12, Y: d.Bounds.Y, W: d.Bounds.W / 24, H: d.Bounds.H / 10},
				color.RGBA{uint8(20 * i), 90, 160, 255})
		}
	}
	return &testDesk{t: t, fb: fb, in: desktop.NewInput(fb)}
}

// changeOnInput repaints a band of the screen with a new colour after every
// button release or typed text, like an application reacting.
func (d *testDesk) changeOnInput() {
	var mu sync.Mutex
	n := 0
	d.fb.OnEvent(func(e fake.Event) {
		if e.Op != fake.OpButtonUp && e.Op != fake.OpType && e.Op != fake.OpKeyUp {
			return
		}
		mu.Lock()
		n++
		c := color.RGBA{uint8(60 * n), uint8(255 - 40*n), uint8(90 * n), 255}
		mu.Unlock()
		d.fb.Fill(geom.Rect{X: 0, Y: 700, W: 1920, H: 380}, c)
	})
}

func (d *testDesk) opts(a llm.Adapter) Options {
	return Options{
		Input: d.in, Adapter: a, Logger: slog.New(slog.DiscardHandler),
		Settle: Settle{MaxWait: -1},
		Shot:   imaging.Options{MaxLongEdge: 1280},
	}
}

func (d *testDesk) runner(o Options) *Runner {
	d.t.Helper()
	r, err := New(o)
	if err != nil {
		d.t.Fatal(err)
	}
	return r
}

// clicks returns the global points of left-button presses.
func (d *testDesk) clicks() []geom.GlobalPoint {
	var out []geom.GlobalPoint
	for _, e := range d.fb.Events() {
		if e.Op == fake.OpButtonDown {
			out = append(out, e.At)
		}
	}
	return out
}

func (d *testDesk) assertNothingHeld() {
	d.t.Helper()
	keys, buttons := d.fb.Pressed()
	if len(keys) > 0 || len(buttons) > 0 {
		d.t.Fatalf("input left pressed at the end of the run: keys %v, buttons %v", keys, buttons)
	}
	lk, lb := d.in.Held()
	if len(lk) > 0 || len(lb) > 0 {
		d.t.Fatalf("input ledger still holds keys %v, buttons %v", lk, lb)
	}
}

// decode decodes a screenshot the model received.
func decode(t testing.TB, img llm.Image) image.Image {
	t.Helper()
	m, _, err := image.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("screenshot %s does not decode: %v", img.Ref, err)
	}
	if got, want := m.Bounds().Size(), img.Frame.ImageSize(); got.X != want.W || got.Y != want.H {
		t.Fatalf("screenshot is %v but its frame says %dx%d", got, want.W, want.H)
	}
	return m
}

// findColor returns the centre of the pixels within tol of c (image pixels).
func findColor(m image.Image, c color.RGBA, tol int) (image.Point, bool) {
	b := m.Bounds()
	var sx, sy, n int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := m.At(x, y).RGBA()
			if absI(int(r>>8)-int(c.R)) <= tol && absI(int(g>>8)-int(c.G)) <= tol && absI(int(bl>>8)-int(c.B)) <= tol {
				sx, sy, n = sx+x, sy+y, n+1
			}
		}
	}
	if n == 0 {
		return image.Point{}, false
	}
	return image.Point{X: sx / n, Y: sy / n}, true
}

func absI(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func within(p geom.GlobalPoint, r geom.Rect) bool { return r.Contains(p) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // far beyond a passing run's wait, even under -race on a busy machine
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func statusOf(t *testing.T, res Result, want Status) {
	t.Helper()
	if res.Status != want {
		t.Fatalf("status %s, want %s; summary: %s", res.Status, want, res.Summary)
	}
	if res.RunID == "" {
		t.Fatalf("result has no run id")
	}
}
