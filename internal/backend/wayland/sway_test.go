//go:build linux

package wayland_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// env is one sway with the GTK fixture, shared by a test's subtests.
type env struct {
	s   *swaytest.Sway
	app *swaytest.App
}

func startEnv(t *testing.T) *env {
	t.Helper()
	s := swaytest.Start(t)
	return &env{s: s, app: s.StartApp(t)}
}

// harness is the suite's view of one backend on the shared sway.
type harness struct {
	e      *env
	b      *wayland.Backend
	bounds map[string]geom.Rect // output name -> global bounds
}

func (e *env) harness(t *testing.T) *harness {
	t.Helper()
	b := e.s.Open(t)
	ds, err := b.Displays(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{e: e, b: b, bounds: map[string]geom.Rect{}}
	for _, d := range ds {
		h.bounds[d.Name] = d.Bounds
	}
	e.app.Send(t, map[string]any{"cmd": "clear"})
	h.ResetText(t)
	return h
}

// pointerTo puts the pointer on output d, at the middle of its bottom edge
// (clear of the suite's fills and points and of the fixture's widgets), when
// it is elsewhere: with a pointer device present, headless sway 1.7 (pixman)
// repaints only the output the cursor is on (measured: a fill on HEADLESS-2
// reached neither grim nor screencopy while the cursor was on HEADLESS-1, and
// did as soon as it moved there).
func (h *harness) pointerTo(t testing.TB, d geom.Rect) {
	t.Helper()
	ctx := context.Background()
	if p, err := h.b.CursorPosition(ctx); err == nil && d.Contains(p) {
		return
	}
	if err := h.b.MoveTo(ctx, geom.GlobalPoint{X: d.X + d.W/2, Y: d.Y + d.H - 3}); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) Screen() desktop.Screen { return h.b }

func (h *harness) output(t testing.TB, p geom.GlobalPoint) (string, geom.Rect) {
	t.Helper()
	for n, r := range h.bounds {
		if r.Contains(p) {
			return n, r
		}
	}
	t.Fatalf("point %v is on no output of %v", p, h.bounds)
	return "", geom.Rect{}
}

func (h *harness) Fill(t testing.TB, r geom.Rect, c color.RGBA) {
	t.Helper()
	n, o := h.output(t, geom.GlobalPoint{X: r.X, Y: r.Y})
	h.pointerTo(t, o)
	h.e.app.Fill(t, n, r.X-o.X, r.Y-o.Y, r.W, r.H, c.R, c.G, c.B)
	// The fill is on screen when grim, the oracle, sees it at its centre.
	cx, cy := r.X+r.W/2, r.Y+r.H/2
	deadline := time.Now().Add(5 * time.Second)
	for {
		px := grimPixel(t, h.e.s, cx, cy)
		if px == c || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// grimPixel returns the pixel at global logical (x, y) as grim captures it
// (the primary output is at the layout's origin in these tests).
func grimPixel(t testing.TB, s *swaytest.Sway, x, y int) color.RGBA {
	t.Helper()
	img := grimImage(t, s, "-g", fmt.Sprintf("%d,%d 1x1", x, y))
	return img.RGBAAt(img.Rect.Min.X, img.Rect.Min.Y)
}

// grimImage is grim's image with args (swaytest.Sway.Grim).
func grimImage(t testing.TB, s *swaytest.Sway, args ...string) *image.RGBA {
	t.Helper()
	return s.Grim(t, args...)
}

// received converts a fixture event to the suite's form.
func (h *harness) received(e swaytest.Event) (suite.Received, bool) {
	o := h.bounds[e.Win]
	at := geom.GlobalPoint{X: o.X + int(math.Floor(e.X)), Y: o.Y + int(math.Floor(e.Y))}
	r := suite.Received{Kind: e.Ev, At: at, Modifiers: e.Mods}
	switch e.Ev {
	case "motion":
	case "button_down", "button_up":
		b, err := desktop.ParseButton(e.Button)
		if err != nil {
			return r, false
		}
		r.Button = b
	case "scroll":
		r.Direction = desktop.Direction(e.Dir)
	case "key_down", "key_up":
		r.Key = desktop.Key(e.Key)
	default:
		return r, false
	}
	return r, true
}

func (h *harness) Events(t testing.TB, n int, timeout time.Duration) []suite.Received {
	var out []suite.Received
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range h.e.app.Take() {
			if r, ok := h.received(e); ok {
				out = append(out, r)
			}
		}
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) Text(t testing.TB, want string, timeout time.Duration) string {
	got := ""
	deadline := time.Now().Add(timeout)
	for {
		evs := h.e.app.Take()
		for _, e := range evs {
			if e.Ev == "text" {
				got = e.Text
			}
		}
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) ResetText(t testing.TB) {
	t.Helper()
	h.e.s.Focus(t, swaytest.Output1)
	h.e.app.Reset(t)
}

// TestSuite runs the desktop conformance suite on sway: two outputs, the
// second at scale 2, a native GTK application as the observer.
func TestSuite(t *testing.T) {
	e := startEnv(t)
	suite.Run(t, func(t *testing.T) suite.Harness { return e.harness(t) })
}

// TestDisplaysMatchSway checks the layout against swaymsg's.
func TestDisplaysMatchSway(t *testing.T) {
	s := swaytest.Start(t)
	b := s.Open(t)
	ds, err := b.Displays(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	outs := s.Outputs(t)
	if len(ds) != len(outs) {
		t.Fatalf("Displays = %+v, sway has %+v", ds, outs)
	}
	for _, o := range outs {
		i := slices.IndexFunc(ds, func(d geom.Display) bool { return d.Name == o.Name })
		if i < 0 {
			t.Errorf("sway's output %s is missing from %+v", o.Name, ds)
			continue
		}
		want := geom.Rect{X: o.Rect.X, Y: o.Rect.Y, W: o.Rect.Width, H: o.Rect.Height}
		if d := ds[i]; d.Bounds != want || d.Scale != o.Scale {
			t.Errorf("display %s: bounds %v scale %v, sway says %v scale %v", o.Name, d.Bounds, d.Scale, want, o.Scale)
		}
	}
}

// stuckEvents names keys and buttons that went down in evs and did not come up.
func stuckEvents(evs []suite.Received) string {
	down := map[string]int{}
	for _, e := range evs {
		k := "key " + strings.ToLower(string(e.Key))
		if strings.HasPrefix(e.Kind, "button") {
			k = "button " + e.Button.String()
		}
		switch e.Kind {
		case "key_down", "button_down":
			down[k]++
		case "key_up", "button_up":
			down[k] = 0
		}
	}
	var out []string
	for k, n := range down {
		if n > 0 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
