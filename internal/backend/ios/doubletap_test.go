package ios_test

import (
	"testing"

	"github.com/guiagent/guiagent/internal/backend/ios/iostest"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TestDoubleTapIsOneActionsCall: a double click is one W3C action sequence
// with two presses, both landing.
func TestDoubleTapIsOneActionsCall(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	in := desktop.NewInput(b)
	p := centre(iostest.ButtonRect)
	w.Requests()
	if err := in.Click(testCtx(t), &p, desktop.Left, 2, nil); err != nil {
		t.Fatal(err)
	}
	if got := w.Counter(); got != 2 {
		t.Errorf("after a double tap on Increment the counter shows %d, want 2", got)
	}
	if reqs := w.Requests(); len(reqs) != 1 || count(reqs, "/actions") != 1 {
		t.Errorf("a double tap made requests %q, want one POST /actions", reqs)
	}
}
