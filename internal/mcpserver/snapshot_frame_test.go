package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

// TestSnapshotInTheSeenFrame: after a screenshot, gui_snapshot gives its
// boxes in that screenshot's frame and captures nothing; with no
// screenshot of the display, or after the display changed shape, it takes
// one for its frame.
func TestSnapshotInTheSeenFrame(t *testing.T) {
	e := newEnvWith(t, twoDisplays, Options{}, func(b *fake.Backend) { b.SetElements(formElements()) })
	frameOf := func(name string, args map[string]any) string {
		t.Helper()
		var r struct {
			FrameID string `json:"frame_id"`
		}
		b, _ := json.Marshal(callTool(t, e.cs, name, args).StructuredContent)
		if err := json.Unmarshal(b, &r); err != nil || r.FrameID == "" {
			t.Fatalf("%s: no frame_id in %s: %s", name, b, text(callTool(t, e.cs, name, args)))
		}
		return r.FrameID
	}
	n := e.desk.Captures()
	first := frameOf("gui_snapshot", nil)
	if e.desk.Captures() != n+1 {
		t.Errorf("the first snapshot, with no screenshot seen, captured %d times, want once for its frame", e.desk.Captures()-n)
	}
	shot := frameOf("gui_screenshot", nil)
	n = e.desk.Captures()
	if got := frameOf("gui_snapshot", nil); got != shot || e.desk.Captures() != n {
		t.Errorf("a snapshot after a screenshot is in frame %s with %d captures, want the screenshot's frame %s and none (first was %s)", got, e.desk.Captures()-n, shot, first)
	}
	// The display changes (its scale here; a phone that turns changes
	// shape): a new frame is taken.
	ds := append([]geom.Display(nil), twoDisplays...)
	ds[0].Scale = 2
	e.screen.setDisplays(ds)
	n = e.desk.Captures()
	if got := frameOf("gui_snapshot", nil); got == shot || e.desk.Captures() == n {
		t.Errorf("after the display turned the snapshot kept frame %s (%d captures)", got, e.desk.Captures()-n)
	}
}
