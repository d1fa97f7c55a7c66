package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop/fake"
)

// TestFrameAcrossSessions: a client takes a screenshot at 1280 px in one MCP
// session and clicks in a new session (as an MCP host may reconnect between
// calls). The click is scaled by that screenshot, not mapped 1:1, and the
// result says which frame was used; a frame_id picks an older screenshot of
// any session; an unknown frame_id is refused with the fix.
func TestFrameAcrossSessions(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	first, _ := screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 1280}) // scale 0.5

	second := e.connect(nil)
	out := ok(t, second, "gui_click", map[string]any{"x": 100, "y": 50, "display": "1"})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if abs(down.At.X-(1920+200)) > 1 || abs(down.At.Y-(-200+100)) > 1 {
		t.Fatalf("image (100,50) of the other session's 1280 px screenshot landed at %v, want about (2120,-100)", down.At)
	}
	if !strings.Contains(out, "frame "+first.FrameID) {
		t.Errorf("result %q does not name the frame used (%s)", out, first.FrameID)
	}

	// The first session takes a smaller screenshot; the second still names the first one.
	later, _ := screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 640}) // scale 0.25
	out = ok(t, second, "gui_click", map[string]any{"x": 100, "y": 50, "display": "1", "frame_id": first.FrameID})
	if down = lastEvent(t, e.desk, fake.OpButtonDown); abs(down.At.X-(1920+200)) > 1 || abs(down.At.Y-(-200+100)) > 1 {
		t.Fatalf("click over frame %s landed at %v, want about (2120,-100)", first.FrameID, down.At)
	}
	if !strings.Contains(out, "frame "+first.FrameID) {
		t.Errorf("result %q does not name frame %s", out, first.FrameID)
	}
	// Without frame_id the second session (which took no screenshot) uses the server's latest.
	ok(t, second, "gui_move", map[string]any{"x": 100, "y": 50, "display": "1"})
	if ev := lastEvent(t, e.desk, fake.OpMove); abs(ev.At.X-(1920+400)) > 2 || abs(ev.At.Y-(-200+200)) > 2 {
		t.Fatalf("move over the server's latest frame %s landed at %v, want about (2320,0)", later.FrameID, ev.At)
	}
	// A frame_id without display acts on the frame's display.
	ok(t, second, "gui_move", map[string]any{"x": 10, "y": 10, "frame_id": first.FrameID})
	if ev := lastEvent(t, e.desk, fake.OpMove); abs(ev.At.X-(1920+20)) > 2 || abs(ev.At.Y-(-200+20)) > 2 {
		t.Fatalf("move over frame %s without display landed at %v, want about (1940,-180)", first.FrameID, ev.At)
	}

	before := len(e.desk.Events())
	fails(t, second, "gui_click", map[string]any{"x": 1, "y": 1, "frame_id": "f999"}, "f999", "gui_screenshot")
	fails(t, second, "gui_click", map[string]any{"x": 1, "y": 1, "display": "0", "frame_id": first.FrameID}, "display 1", "display 0")
	if got := e.desk.Events()[before:]; len(got) != 0 {
		t.Errorf("refused calls sent input: %v", ops(got))
	}
}

// TestRecentFramesAreBounded: the server keeps MaxRecentFrames frames by id;
// an older id is refused with the fix, never silently read over another frame.
func TestRecentFramesAreBounded(t *testing.T) {
	e := newEnv(t, nil, Options{})
	first, _ := screenshot(t, e.cs, map[string]any{"max_long_edge": 320})
	for i := 0; i < MaxRecentFrames; i++ {
		screenshot(t, e.cs, map[string]any{"max_long_edge": 320 + i})
	}
	fails(t, e.cs, "gui_move", map[string]any{"x": 1, "y": 1, "frame_id": first.FrameID}, first.FrameID, fmt.Sprint(MaxRecentFrames), "gui_screenshot")
	if n := e.srv.frames.held(); n != MaxRecentFrames {
		t.Errorf("the server holds %d frames, want %d", n, MaxRecentFrames)
	}
	// The server's instructions tell clients how many are kept (once, for every tool taking frame_id).
	if instr := e.cs.InitializeResult().Instructions; !strings.Contains(instr, fmt.Sprintf("keeps the %d most recent", MaxRecentFrames)) {
		t.Errorf("the instructions do not say the server keeps %d frames: %s", MaxRecentFrames, instr)
	}
}
