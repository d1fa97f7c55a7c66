package mcpserver

import (
	"sync"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// TestCurrentDisplayIsAskedAtEachCall: a default display changed at run time
// (the settings API) applies to the next screenshot and the next task
// without a restart; a call naming a display is unaffected.
func TestCurrentDisplayIsAskedAtEachCall(t *testing.T) {
	var mu sync.Mutex
	current := "0"
	runner := &scriptedRunner{}
	displays := []geom.Display{
		{ID: "0", Name: "left", Bounds: geom.Rect{W: 800, H: 600}, Primary: true},
		{ID: "1", Name: "right", Bounds: geom.Rect{X: 800, W: 640, H: 480}},
	}
	e := newEnv(t, displays, Options{Tasks: runner, DefaultDisplay: "0", CurrentDisplay: func() string {
		mu.Lock()
		defer mu.Unlock()
		return current
	}})
	if info, _ := screenshot(t, e.cs, nil); info.Display != "0" {
		t.Fatalf("before the change: display %q", info.Display)
	}
	mu.Lock()
	current = "1"
	mu.Unlock()
	if info, _ := screenshot(t, e.cs, nil); info.Display != "1" || info.Region.Width != 640 {
		t.Fatalf("after the change: display %q region %+v", info.Display, info.Region)
	}
	if info, _ := screenshot(t, e.cs, map[string]any{"display": "0"}); info.Display != "0" {
		t.Fatalf("a call naming display 0 got %q", info.Display)
	}
	ok(t, e.cs, "gui_execute_task", map[string]any{"task": "look"})
	if d := runner.tasks[0].Display; d != "1" {
		t.Fatalf("the next task runs on display %q, want 1", d)
	}
}
