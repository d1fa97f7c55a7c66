package ios_test

import (
	"image"
	"image/color"
	"math"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/ios"
	"github.com/guiagent/guiagent/internal/backend/ios/iostest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// harness shows the suite what the fake WDA's touch events were: a touch
// that comes up in place within 500ms as a left button, one held longer as
// a right button (a long press is the phone's context click), its moves as
// motion; the text field's text.
type harness struct {
	w *iostest.WDA
	b *ios.Backend
}

func (h *harness) Screen() desktop.Screen { return h.b }

func (h *harness) Except() map[string]string {
	return map[string]string{
		"Click":           "a touch screen has no middle button (left is a tap and right a long press: TestTapIsOneActionsCall, TestGestures)",
		"ModifierClick":   "a tap carries no modifier keys: WDA's W3C touch actions have none",
		"Scroll":          "a touch screen has no wheel: a scroll is a swipe, which the app sees as touch down, move and up (TestGestures)",
		"Hotkey":          "WebDriverAgent types text (/wda/keys); it has no modifier keys to hold (TestKeys)",
		"Clipboard":       "reading the pasteboard through WebDriverAgent raises iOS's paste prompt; guiagent offers no clipboard on iOS",
		"CancelMidAction": "a finger off the screen has no position, so the suite's marker move is never seen by the phone",
	}
}

func (h *harness) Fill(t testing.TB, r geom.Rect, c color.RGBA) {
	s := h.w.Scale()
	h.w.Fill(image.Rect(int(math.Round(float64(r.X)*s)), int(math.Round(float64(r.Y)*s)),
		int(math.Round(float64(r.X+r.W)*s)), int(math.Round(float64(r.Y+r.H)*s))), c)
}

func (h *harness) convert(evs []iostest.Event) []suite.Received {
	var out []suite.Received
	var btn desktop.Button
	for i, e := range evs {
		at := geom.GlobalPoint{X: e.X, Y: e.Y}
		switch e.Kind {
		case "down":
			// The button is known at the release: a long press in place is right.
			btn = desktop.Left
			for _, u := range evs[i+1:] {
				if u.Kind == "up" {
					if u.X == e.X && u.Y == e.Y && u.Held >= 500*time.Millisecond {
						btn = desktop.Right
					}
					break
				}
			}
			out = append(out, suite.Received{Kind: "button_down", At: at, Button: btn})
		case "move":
			out = append(out, suite.Received{Kind: "motion", At: at})
		case "up":
			out = append(out, suite.Received{Kind: "button_up", At: at, Button: btn})
		}
	}
	return out
}

func (h *harness) Events(t testing.TB, n int, timeout time.Duration) []suite.Received {
	return suite.PollEvents(n, timeout, func() []suite.Received { return h.convert(h.w.Events()) })
}

func (h *harness) Text(t testing.TB, want string, timeout time.Duration) string {
	return suite.PollText(want, timeout, h.w.Field)
}

func (h *harness) ResetText(t testing.TB) {
	h.w.SetField("")
	h.w.Events()
}

func TestConformance(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	suite.Run(t, func(t *testing.T) suite.Harness {
		w.Clear()
		h := &harness{w: w, b: b}
		h.ResetText(t)
		return h
	})
}
