package android_test

import (
	"image"
	"image/color"
	"math"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/android"
	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// harness shows the suite what the fake phone's input dispatcher saw: a
// touch that comes up in place within the long-press timeout as a left
// button, one held 500ms or more as a right button (a long press is the
// phone's context click), its moves as motion; key events by key name;
// the focused field's text.
type harness struct {
	d       *androidtest.Device
	b       *android.Backend
	pending []androidtest.Event // a touch not yet lifted
}

func (h *harness) Screen() desktop.Screen { return h.b }

func (h *harness) Except() map[string]string {
	return map[string]string{
		"Click":           "a touch screen has no middle button (left is a tap and right a long press: TestTapLandsWithOneCommand, TestGestures)",
		"ModifierClick":   "a tap carries no modifier keys: the input tool's touch events have no meta state",
		"Scroll":          "a touch screen has no wheel: a scroll is a swipe, which the application sees as touch down, moves and up (TestGestures)",
		"Hotkey":          "Android's `input keycombination` releases the keys in the order it pressed them (InputShellCommand.sendKeyCombination), not in reverse (TestHotkeyCombination)",
		"Clipboard":       "Android 10 and later let only the focused app and the input method read the clipboard; the shell has no clipboard command",
		"CancelMidAction": "a finger off the screen has no position, so the suite's marker move is never seen by the phone",
	}
}

func (h *harness) Fill(t testing.TB, r geom.Rect, c color.RGBA) {
	s := h.b.Scale()
	h.d.Phone.Fill(image.Rect(int(math.Round(float64(r.X)*s)), int(math.Round(float64(r.Y)*s)),
		int(math.Round(float64(r.X+r.W)*s)), int(math.Round(float64(r.Y+r.H)*s))), c)
}

func (h *harness) point(e androidtest.Event) geom.GlobalPoint {
	s := h.b.Scale()
	return geom.GlobalPoint{X: int(math.Round(float64(e.X) / s)), Y: int(math.Round(float64(e.Y) / s))}
}

var keyNames = map[string]desktop.Key{"KEYCODE_CTRL_LEFT": desktop.Ctrl, "KEYCODE_SHIFT_LEFT": desktop.Shift, "KEYCODE_ALT_LEFT": desktop.Alt,
	"KEYCODE_META_LEFT": desktop.Super, "KEYCODE_ENTER": "Return", "KEYCODE_DEL": "BackSpace"}

func (h *harness) convert(evs []androidtest.Event) []suite.Received {
	var out []suite.Received
	for _, e := range evs {
		switch e.Kind {
		case "down", "move":
			h.pending = append(h.pending, e)
		case "up":
			if len(h.pending) == 0 {
				continue
			}
			down := h.pending[0]
			btn := desktop.Left
			moved := false
			for _, m := range h.pending[1:] {
				if m.X != down.X || m.Y != down.Y {
					moved = true
				}
			}
			if !moved && e.X == down.X && e.Y == down.Y && e.Held >= 500*time.Millisecond {
				btn = desktop.Right
			}
			out = append(out, suite.Received{Kind: "button_down", At: h.point(down), Button: btn})
			for _, m := range h.pending[1:] {
				out = append(out, suite.Received{Kind: "motion", At: h.point(m)})
			}
			out = append(out, suite.Received{Kind: "button_up", At: h.point(e), Button: btn})
			h.pending = nil
		case "key_down", "key_up":
			k, ok := keyNames[e.Key]
			if !ok {
				k = desktop.Key(e.Key)
				if len(e.Key) == len("KEYCODE_A") {
					k = desktop.Key(string(e.Key[8] | 0x20))
				}
			}
			out = append(out, suite.Received{Kind: e.Kind, Key: k})
		}
	}
	return out
}

func (h *harness) Events(t testing.TB, n int, timeout time.Duration) []suite.Received {
	return suite.PollEvents(n, timeout, func() []suite.Received { return h.convert(h.d.Phone.Events()) })
}

func (h *harness) Text(t testing.TB, want string, timeout time.Duration) string {
	return suite.PollText(want, timeout, h.d.Phone.FocusedText)
}

func (h *harness) ResetText(t testing.TB) {
	h.d.Phone.SetField("name", "")
	h.d.Phone.Events()
	h.pending = nil
}

func TestConformance(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	suite.Run(t, func(t *testing.T) suite.Harness {
		d.Phone.ClearFills()
		d.Phone.SetRotation(0)
		h := &harness{d: d, b: b}
		h.ResetText(t)
		return h
	})
}
