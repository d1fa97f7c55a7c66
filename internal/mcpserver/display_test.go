package mcpserver

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// TestSetTasksOffersAndWithdrawsTheTaskTool: a server started without a
// model offers gui_execute_task once it is given a runner (connected clients
// are told the tool list changed) and withdraws it when the runner goes.
func TestSetTasksOffersAndWithdrawsTheTaskTool(t *testing.T) {
	changed := make(chan struct{}, 4)
	e := newEnv(t, nil, Options{})
	cs := e.connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	has := func() bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == "gui_execute_task" {
				return true
			}
		}
		return false
	}
	if has() {
		t.Fatal("gui_execute_task offered without a runner")
	}
	runner := &scriptedRunner{}
	e.srv.SetTasks(runner)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after SetTasks")
	}
	if !has() || !slices.Contains(e.srv.ToolNames(), "gui_execute_task") {
		t.Fatal("gui_execute_task not offered after SetTasks")
	}
	ok(t, cs, "gui_execute_task", map[string]any{"task": "count"})
	if len(runner.tasks) != 1 {
		t.Fatalf("the runner got %d tasks", len(runner.tasks))
	}
	e.srv.SetTasks(nil)
	if has() || slices.Contains(e.srv.ToolNames(), "gui_execute_task") {
		t.Fatal("gui_execute_task still offered after SetTasks(nil)")
	}
	// A selection without the task group never offers it.
	e2 := newEnv(t, nil, Options{Tools: []string{GroupObserve}})
	e2.srv.SetTasks(runner)
	if slices.Contains(e2.srv.ToolNames(), "gui_execute_task") {
		t.Fatal("SetTasks offered gui_execute_task outside the tool selection")
	}
}
