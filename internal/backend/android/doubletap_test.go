package android_test

import (
	"image"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TestDoubleTapIsOneCommand: a double click is two taps in one shell
// command, both landing, so the phone gets them as close as it can.
func TestDoubleTapIsOneCommand(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	in := desktop.NewInput(b)
	p := centre(b, image.Pt(1080, 2400), androidtest.IncrementAt)
	d.Phone.Commands()
	if err := in.Click(testCtx(t), &p, desktop.Left, 2, nil); err != nil {
		t.Fatal(err)
	}
	if got := d.Phone.Counter(); got != 2 {
		t.Errorf("after a double tap on Increment the counter shows %d, want 2", got)
	}
	if cmds := d.Phone.Commands(); len(cmds) != 1 || strings.Count(cmds[0], "input tap ") != 2 {
		t.Errorf("a double tap ran %q, want one command with two taps", cmds)
	}
}
