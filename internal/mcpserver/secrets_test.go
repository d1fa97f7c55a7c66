package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/trace"
)

// leakyRunner repeats a key in its progress and in every part of its result,
// as a model told the key (or a provider echoing it) could.
type leakyRunner struct{ key string }

func (l leakyRunner) Run(_ context.Context, _ agent.Task, progress func(agent.Event)) agent.Result {
	progress(agent.Event{Kind: agent.EvProgress, Message: "saw " + l.key, Total: 1})
	return agent.Result{Status: agent.Completed, Summary: "done with " + l.key, Memory: []string{"key " + l.key},
		Trace: []agent.StepTrace{{Step: 1, Observation: "screen shows " + l.key}}, RunID: "r1", Report: "/runs/r1/report.html"}
}

// TestSecretsAreScrubbedFromEverythingTheServerReturns: a key that reaches a
// task result, a progress message or a tool error comes out of the server
// (tool result text and structured content, notifications, the audit and the
// session record) as secret.Marker, and the rest of the result is kept. The
// key is added to the shared scrubber after the server was built, as the
// settings API does with a key set at run time.
func TestSecretsAreScrubbedFromEverythingTheServerReturns(t *testing.T) {
	const key = `key-with"quote-0123456789`
	rec := &recorder{}
	scrub := secret.NewScrubber("start-up-token-value")
	e := newEnv(t, nil, Options{Tasks: leakyRunner{key}, Scrubber: scrub, Records: func(string) ToolRecorder { return rec }})
	scrub.Add(key, "abc")
	var mu sync.Mutex
	var msgs []string
	cs := e.connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		msgs = append(msgs, req.Params.Message)
		mu.Unlock()
	}})
	params := &mcp.CallToolParams{Name: "gui_execute_task", Arguments: map[string]any{"task": "look"}}
	params.SetProgressToken("p")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var r agent.Result
	jsonOf(t, res, &r)
	if r.Status != agent.Completed || r.RunID != "r1" || r.Report != "/runs/r1/report.html" || len(r.Trace) != 1 ||
		r.Summary != "done with "+secret.Marker || r.Trace[0].Observation != "screen shows "+secret.Marker || r.Memory[0] != "key "+secret.Marker {
		t.Errorf("task result %+v; want every copy of the key shown as %s and the rest kept", r, secret.Marker)
	}
	if strings.Contains(string(structured), "0123456789") || !strings.Contains(string(structured), secret.Marker) {
		t.Errorf("structured content %s still holds the key", structured)
	}
	// A failing call whose error echoes what the client sent.
	bad := callTool(t, cs, "gui_press_key", map[string]any{"key": key})
	if !bad.IsError || strings.Contains(text(bad), "0123456789") || !strings.Contains(text(bad), secret.Marker) {
		t.Errorf("press_key error %q; want the key shown as %s", text(bad), secret.Marker)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(msgs)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	if len(msgs) != 1 || msgs[0] != "saw "+secret.Marker {
		t.Errorf("progress messages %q; want [\"saw %s\"]", msgs, secret.Marker)
	}
	mu.Unlock()
	audit, _ := json.Marshal(e.srv.Audit().Snapshot())
	if strings.Contains(string(audit), "0123456789") || strings.Count(string(audit), secret.Marker) < 2 {
		t.Errorf("audit %s; want the task's summary and the key error with %s", audit, secret.Marker)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	calls, _ := json.Marshal(struct {
		Calls []trace.Call
		Texts []string
	}{rec.got, rec.calls})
	if strings.Contains(string(calls), "0123456789") || !strings.Contains(string(calls), secret.Marker) {
		t.Errorf("session record %s still holds the key", calls)
	}
}
