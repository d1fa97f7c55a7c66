package harmony_test

import (
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/harmony"
	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// harness shows the suite what the fake phone's uitest injected: a click
// as a left button's down and up, a long click as the right button's (a
// long press is the phone's context click), a swipe as down, motion and
// up; the text field's text.
type harness struct {
	p *harmonytest.Phone
	b *harmony.Backend
}

func (h *harness) Screen() desktop.Screen { return h.b }

func (h *harness) Except() map[string]string {
	return map[string]string{
		"CaptureFill":         "snapshot_display writes only JPEG at quality 75 (snapshot_utils.cpp), whose ringing 2-3 px from a colour edge is 10-25 levels off, past the suite's tolerance of 8 (TestCaptureAndLandscape checks a fill's inside, pixel for pixel placement and the buffer's reuse)",
		"CaptureReusesBuffer": "the same JPEG edges as CaptureFill (TestCaptureAndLandscape reuses a buffer)",
		"Click":               "a touch screen has no middle button (left is a click and right a long click: TestTapAndQuoting, TestGesturesAndKeys)",
		"ModifierClick":       "uitest's clicks carry no modifier keys",
		"Scroll":              "a touch screen has no wheel: a scroll is a swipe, which the app sees as touch down, moves and up",
		"Hotkey":              "uitest's keyEvent releases a combination's keys in the order it pressed them (ui_action.h CombinedKeys), not in reverse (TestGesturesAndKeys)",
		"Clipboard":           "the shell has no clipboard command guiagent could use; uitest types text outside ASCII through the pasteboard",
		"CancelMidAction":     "a finger off the screen has no position, so the suite's marker move is never seen by the phone",
	}
}

func (h *harness) Fill(t testing.TB, r geom.Rect, c color.RGBA) {
	h.p.Update(func(s *harmonytest.State) {
		s.Fills = append(s.Fills, harmonytest.Fill{R: image.Rect(r.X, r.Y, r.X+r.W, r.Y+r.H), C: c})
	})
}

func convert(evs []harmonytest.Event) []suite.Received {
	var out []suite.Received
	pair := func(at geom.GlobalPoint, b desktop.Button) {
		out = append(out, suite.Received{Kind: "button_down", At: at, Button: b}, suite.Received{Kind: "button_up", At: at, Button: b})
	}
	for _, e := range evs {
		at := geom.GlobalPoint{X: e.X, Y: e.Y}
		switch e.Kind {
		case "click":
			pair(at, desktop.Left)
		case "doubleClick":
			pair(at, desktop.Left)
			pair(at, desktop.Left)
		case "longClick":
			pair(at, desktop.Right)
		case "swipe", "drag":
			to := geom.GlobalPoint{X: e.X2, Y: e.Y2}
			out = append(out, suite.Received{Kind: "button_down", At: at, Button: desktop.Left},
				suite.Received{Kind: "motion", At: to}, suite.Received{Kind: "button_up", At: to, Button: desktop.Left})
		}
	}
	return out
}

func (h *harness) Events(t testing.TB, n int, timeout time.Duration) []suite.Received {
	return suite.PollEvents(n, timeout, func() []suite.Received { return convert(h.p.Events()) })
}

func (h *harness) Text(t testing.TB, want string, timeout time.Duration) string {
	return suite.PollText(want, timeout, func() string { return h.p.Read().Field })
}

func (h *harness) ResetText(t testing.TB) {
	h.p.Update(func(s *harmonytest.State) { s.Field, s.Focused, s.Events = "", true, nil })
}

func TestConformance(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	suite.Run(t, func(t *testing.T) suite.Harness {
		p.Update(func(s *harmonytest.State) { s.Fills = nil })
		h := &harness{p: p, b: b}
		h.ResetText(t)
		return h
	})
}
