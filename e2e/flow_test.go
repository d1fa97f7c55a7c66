package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/sampleapp"
)

// TestRunFlowOverStdio runs a flow through the binary's gui_run_flow: steps
// that need no model (type, key, sleep) reach the sample app; a step that
// needs the vision model fails with a message saying how to configure one,
// and nothing after it runs.
func TestRunFlowOverStdio(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneTyping)
	_, cs := startStdio(t, serverConfig{display: d.display}, nil)
	res := call(t, cs, "gui_run_flow", map[string]any{
		"yaml": "name: greet\nsteps:\n  - type: \"${greeting}, world\"\n  - sleep: 50\n  - key: Return\n",
		"vars": map[string]any{"greeting": "hello"},
	})
	var out struct {
		Status string `json:"status"`
		Steps  []struct {
			Status string `json:"status"`
		} `json:"steps"`
		Report string `json:"report"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &out); err != nil || out.Status != "passed" || len(out.Steps) != 3 || out.Report == "" {
		t.Fatalf("result %s (%v)", textOf(res), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := d.app.WaitFor(ctx, func(e sampleapp.Event) bool { return e.Event == "text" })
	if err != nil || ev.Value != "hello, world" {
		t.Fatalf("the app got %+v (%v), want the line \"hello, world\"", ev, err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	r, err := cs.CallTool(ctx2, &mcp.CallToolParams{Name: "gui_run_flow", Arguments: map[string]any{
		"yaml": "name: needs a model\nsteps:\n  - click: the Text field\n  - type: never typed\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(textOf(r), "needs a vision model") || !strings.Contains(textOf(r), "GUI_AGENT_PROVIDER") {
		t.Errorf("a locating step without a model: IsError %v, %s", r.IsError, textOf(r))
	}
	if v := d.app.Field("text"); strings.Contains(v, "never") {
		t.Errorf("a step after the failed one ran: field is %q", v)
	}
}
