package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// structured decodes a tool result's JSON text into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(textOf(res)), v); err != nil {
		t.Fatalf("result %q is not the expected JSON: %v", textOf(res), err)
	}
}

// The vision tools over MCP on the sample app's form, with a model that
// looks at the screenshots it receives (fakellm's colour brain): fill the
// form by describing the fields, wait for the submission, read and check
// the screen.
func TestVisionToolsOverMCP(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	model := startModel(t, fakellm.VisionBrain(fakellm.SampleAppWidgets))
	_, cs := startStdio(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-vision-")}, nil)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range tools.Tools {
		listed[tl.Name] = true
	}
	for _, want := range []string{"gui_locate", "gui_query", "gui_assert", "gui_wait_for"} {
		if !listed[want] {
			t.Fatalf("%s is not listed with a model configured", want)
		}
	}

	msg := textOf(call(t, cs, "gui_type", map[string]any{"target": "the Name field", "text": "Ada Lovelace"}))
	waitEvent(t, d.app, "the name typed", func(e sampleapp.Event) bool {
		return e.Event == "change" && e.Field == "name" && e.Value == "Ada Lovelace"
	})
	if !strings.Contains(msg, `located "the Name field"`) {
		t.Errorf("gui_type does not say what it located: %s", msg)
	}
	call(t, cs, "gui_type", map[string]any{"target": "the Name field", "text": "Grace Hopper", "mode": "replace"})
	waitEvent(t, d.app, "the name replaced", func(e sampleapp.Event) bool {
		return e.Event == "change" && e.Field == "name" && e.Value == "Grace Hopper"
	})
	call(t, cs, "gui_type", map[string]any{"target": "the City field", "text": "Arlington"})
	waitEvent(t, d.app, "the city typed", func(e sampleapp.Event) bool {
		return e.Event == "change" && e.Field == "city" && e.Value == "Arlington"
	})

	var q struct {
		Data int `json:"data"`
	}
	structured(t, call(t, cs, "gui_query", map[string]any{"question": "How many widgets are visible?", "schema": map[string]any{"type": "integer"}}), &q)
	if q.Data != 4 {
		t.Fatalf("query: %d widgets, want 4 (Name, Email, City, Submit)", q.Data)
	}
	var a struct {
		Pass   bool   `json:"pass"`
		Reason string `json:"reason"`
	}
	structured(t, call(t, cs, "gui_assert", map[string]any{"assertion": "the form was submitted"}), &a)
	if a.Pass {
		t.Fatalf("assert before submitting: %+v", a)
	}

	// Wait for the submission while it happens: the screen changes once.
	var w struct {
		Met        bool  `json:"met"`
		Checks     int   `json:"checks"`
		ModelCalls int   `json:"model_calls"`
		ElapsedMS  int64 `json:"elapsed_ms"`
	}
	var wg sync.WaitGroup
	var waited *mcp.CallToolResult
	var waitErr error
	asked := model.Calls()
	wg.Add(1)
	go func() { // no t.Fatal off the test goroutine: the result is checked below
		defer wg.Done()
		waited, waitErr = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_wait_for",
			Arguments: map[string]any{"condition": "the form was submitted", "interval_ms": 250, "timeout_s": 60}})
	}()
	// Submit once the model has judged the form unsubmitted (the event, not a sleep).
	for deadline := time.Now().Add(time.Minute); model.Calls() == asked && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	call(t, cs, "gui_click", map[string]any{"target": "the Submit button"})
	ev := waitEvent(t, d.app, "submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
	wg.Wait()
	if waitErr != nil {
		t.Fatalf("gui_wait_for: %v", waitErr)
	}
	if waited.IsError {
		t.Fatalf("gui_wait_for failed: %s", textOf(waited))
	}
	structured(t, waited, &w)
	if ev.Fields["name"] != "Grace Hopper" || ev.Fields["city"] != "Arlington" {
		t.Fatalf("the app received %v", ev.Fields)
	}
	t.Logf("wait_for across the submission: %+v", w)
	if !w.Met || w.ModelCalls > 2 || w.Checks < 2 {
		t.Fatalf("wait_for: %+v; want met with at most 2 model calls over several checks", w)
	}

	var l struct {
		Found  bool   `json:"found"`
		Reason string `json:"reason"`
	}
	structured(t, call(t, cs, "gui_locate", map[string]any{"target": "the OK button"}), &l)
	if l.Found || l.Reason == "" {
		t.Fatalf("locate of a button not on the form: %+v", l)
	}
}

func TestVisionToolsNeedAModel(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneButtons)
	_, cs := startStdio(t, serverConfig{display: d.display}, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "gui_locate" || tl.Name == "gui_wait_for" {
			t.Fatalf("%s is listed without a model", tl.Name)
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_click", Arguments: map[string]any{"target": "the red button"}})
	// target is advertised only with a model: without one, a call giving it is refused.
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "target") {
		t.Fatalf("a target without a model: %v %s", err, textOf(res))
	}
}
