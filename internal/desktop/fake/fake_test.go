package fake_test

import (
	"context"
	"image/color"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// harness shows the suite what the fake received, as an application would see it.
type harness struct {
	b    *fake.Backend
	seen int
}

func (h *harness) Screen() desktop.Screen { return h.b }

func (h *harness) Fill(_ testing.TB, r geom.Rect, c color.RGBA) { h.b.Fill(r, c) }

func (h *harness) Events(_ testing.TB, n int, timeout time.Duration) []suite.Received {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		evs := h.b.Events()
		if len(evs)-h.seen >= n || ctx.Err() != nil {
			out := received(evs[min(h.seen, len(evs)):])
			h.seen = len(evs)
			return out
		}
		h.b.WaitEvents(ctx, len(evs))
	}
}

// received converts fake events to what an application sees; typed text is
// seen through Text, not as events.
func received(evs []fake.Event) []suite.Received {
	var out []suite.Received
	for _, e := range evs {
		r := suite.Received{At: e.At, Button: e.Button, Key: e.Key, Direction: e.Direction, Modifiers: e.Modifiers}
		switch e.Op {
		case fake.OpMove:
			r.Kind = "motion"
		case fake.OpButtonDown, fake.OpButtonUp, fake.OpKeyDown, fake.OpKeyUp:
			r.Kind = e.Op
		case fake.OpScroll:
			for range e.Notches { // one event per notch, as X11 applications see them
				out = append(out, suite.Received{Kind: "scroll", At: e.At, Direction: e.Direction, Modifiers: e.Modifiers})
			}
			continue
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

func (h *harness) Text(_ testing.TB, want string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		n := len(h.b.Events())
		if got := h.b.Typed(); got == want || ctx.Err() != nil {
			return got
		}
		h.b.WaitEvents(ctx, n)
	}
}

func (h *harness) ResetText(testing.TB) {
	h.b.ResetTyped()
	h.b.ResetEvents()
	h.seen = 0
}

func runSuite(t *testing.T, o fake.Options) {
	suite.Run(t, func(t *testing.T) suite.Harness {
		b := fake.New(o)
		t.Cleanup(func() { _ = b.Close() })
		return &harness{b: b}
	})
}

func TestSuiteDefault(t *testing.T) { runSuite(t, fake.Options{}) }

func TestSuiteTwoDisplaysNegativeOriginScaled(t *testing.T) {
	runSuite(t, fake.Options{Displays: []geom.Display{
		{ID: "0", Bounds: geom.Rect{W: 1280, H: 800}, Scale: 1, Primary: true},
		{ID: "1", Bounds: geom.Rect{X: -1440, Y: -300, W: 1440, H: 900}, Scale: 1.5},
	}})
}

func TestSuiteHiDPIPortrait(t *testing.T) {
	runSuite(t, fake.Options{Displays: []geom.Display{
		{ID: "main", Bounds: geom.Rect{W: 1512, H: 982}, Scale: 2, Primary: true},
		{ID: "side", Bounds: geom.Rect{X: 1512, Y: -200, W: 1080, H: 1920}, Scale: 1.25},
	}})
}
