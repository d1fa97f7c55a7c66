package harmony_test

import (
	"testing"

	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TestDoubleTapIsUitestsDoubleClick: a double click is uitest's own
// doubleClick, one gesture.
func TestDoubleTapIsUitestsDoubleClick(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	in := desktop.NewInput(b)
	c := centre(harmonytest.ButtonRect)
	p.Commands()
	if err := in.Click(testCtx(t), &c, desktop.Left, 2, nil); err != nil {
		t.Fatal(err)
	}
	if cmds := p.Commands(); len(cmds) != 1 || cmds[0] != "uitest uiInput doubleClick 200 440" {
		t.Errorf("a double tap ran %q, want one `uitest uiInput doubleClick 200 440`", cmds)
	}
}
