// Package suite is the conformance suite every desktop backend must pass: the
// fake always, X11 under a private Xvfb (and Xorg dummy for two monitors) in CI.
// A backend's test supplies a Harness that shows the suite, from the
// application's side, what really arrived.
package suite

import (
	"image/color"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Received is one input event as an application saw it.
type Received struct {
	// Kind is "motion", "button_down", "button_up", "key_down", "key_up" or "scroll".
	Kind string
	// At is the pointer position (global logical pixels) for pointer events.
	At geom.GlobalPoint
	// Button is set for button events.
	Button desktop.Button
	// Direction is set for scroll events.
	Direction desktop.Direction
	// Key is set for key events: the canonical key name (desktop.Key).
	Key desktop.Key
	// Modifiers lists the modifiers held (short names: ctrl, shift, alt, super),
	// sorted, for button and key events.
	Modifiers []string
}

// Harness is a backend under test plus an application-side observer.
type Harness interface {
	// Screen is the backend under test, started.
	Screen() desktop.Screen
	// Fill paints r (global logical pixels) with c so that Capture must see it.
	Fill(t testing.TB, r geom.Rect, c color.RGBA)
	// Events waits until at least n events arrived since the last call (or timeout)
	// and returns them all.
	Events(t testing.TB, n int, timeout time.Duration) []Received
	// Text waits until the focused text field holds want (or timeout) and returns what it holds.
	Text(t testing.TB, want string, timeout time.Duration) string
	// ResetText empties the text field and forgets events.
	ResetText(t testing.TB)
}

// Excepter is implemented by a harness whose backend cannot do some of what
// the suite checks by its nature (a web page has no clipboard of the
// desktop's, a phone no mouse buttons): Except maps the suite's test names
// ("Clipboard", "ModifierClick", ...) to the reason. Those tests are not
// run, and the reason is logged; every other test must pass.
type Excepter interface {
	Except() map[string]string
}

// PollEvents serves a Harness's Events from next, which returns the events
// that arrived since it was last called: it asks every 20ms until n have
// come or timeout has passed, and returns them all.
func PollEvents(n int, timeout time.Duration, next func() []Received) []Received {
	var out []Received
	deadline := time.Now().Add(timeout)
	for {
		out = append(out, next()...)
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PollText serves a Harness's Text from read, which returns what the
// focused field holds: it asks every 20ms until the field holds want or
// timeout has passed, and returns the last answer.
func PollText(want string, timeout time.Duration, read func() string) string {
	deadline := time.Now().Add(timeout)
	for {
		got := read()
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}
