package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/safety"
)

// roundsEnv confirms ctrl+w through the client, with time to leave questions
// unanswered.
func roundsEnv(t *testing.T) *testEnv {
	t.Helper()
	keys, err := safety.NewKeyPolicy(safety.KeyPolicyOptions{Confirm: []string{"ctrl+w"}})
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, nil, Options{Keys: keys, Questions: ask.NewBroker(false), AskTimeout: time.Minute})
}

// manualClient speaks 2026-07-28 and handles input_required results itself.
func (e *testEnv) manualClient() *mcp.ClientSession {
	e.t.Helper()
	never := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		e.t.Error("the client was asked by a nested elicitation; want an input_required result")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return e.connectAt("2026-07-28", &mcp.ClientOptions{ElicitationHandler: never, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
}

func callRaw(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cs.CallTool(ctx, p)
}

// askCtrlW starts gui_hotkey ctrl+w and returns its input_required result.
func askCtrlW(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	res, err := callRaw(t, cs, &mcp.CallToolParams{Name: "gui_hotkey", Arguments: map[string]any{"keys": []string{"ctrl", "w"}}})
	if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("gui_hotkey ctrl+w: %v %+v; want an input_required result", err, res)
	}
	return res
}

func approve(res *mcp.CallToolResult) mcp.InputResponseMap {
	out := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		out[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	}
	return out
}

// A requestState resumes only the call it came from: replayed on gui_type
// (or on gui_hotkey with other keys) it is refused, resumes nothing and
// types nothing; the same call, its arguments encoded anew, resumes it.
func TestRequestStateIsBoundToItsCall(t *testing.T) {
	e := roundsEnv(t)
	cs := e.manualClient()
	first := askCtrlW(t, cs)
	for _, p := range []*mcp.CallToolParams{
		{Name: "gui_type", Arguments: map[string]any{"text": "zzz"}},
		{Name: "gui_hotkey", Arguments: map[string]any{"keys": []string{"ctrl", "q"}}},
	} {
		p.RequestState, p.InputResponses = first.RequestState, approve(first)
		res, err := callRaw(t, cs, p)
		if err != nil || !res.IsError || !strings.Contains(text(res), "belongs to another call") {
			t.Fatalf("%s %v with gui_hotkey ctrl+w's requestState: %v %s; want it refused", p.Name, p.Arguments, err, text(res))
		}
	}
	for _, ev := range e.desk.Events() {
		if ev.Op == fake.OpKeyDown {
			t.Fatalf("a replayed requestState pressed %q", ev.Key)
		}
	}
	for _, entry := range e.srv.audit.Snapshot() {
		if entry.Tool == "gui_type" && strings.Contains(entry.Result, "pressed") {
			t.Fatalf("the audit records the gui_type call as %q", entry.Result)
		}
	}
	// The same call with its arguments re-encoded (spacing, key order) resumes.
	res, err := callRaw(t, cs, &mcp.CallToolParams{Name: "gui_hotkey", Arguments: json.RawMessage(` { "keys" : [ "ctrl", "w" ] } `),
		RequestState: first.RequestState, InputResponses: approve(first)})
	if err != nil || res.IsError || !pressedW(e) {
		t.Fatalf("the retry of gui_hotkey ctrl+w with its state: %v %s, w pressed %v; want it pressed", err, text(res), pressedW(e))
	}
}

// Calls waiting for an answer are capped per session and over all sessions,
// each refusal naming its limit; answering one makes room again.
func TestRoundTripJobsAreCapped(t *testing.T) {
	e := roundsEnv(t)
	cs := e.manualClient()
	var pending []*mcp.CallToolResult
	for range MaxSessionJobs {
		pending = append(pending, askCtrlW(t, cs))
	}
	res, err := callRaw(t, cs, &mcp.CallToolParams{Name: "gui_hotkey", Arguments: map[string]any{"keys": []string{"ctrl", "w"}}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "16 calls waiting for an answer (the limit)") {
		t.Fatalf("call %d of one session: %v %s; want refused naming the limit", MaxSessionJobs+1, err, text(res))
	}
	res, err = callRaw(t, cs, &mcp.CallToolParams{Name: "gui_hotkey", Arguments: map[string]any{"keys": []string{"ctrl", "w"}},
		RequestState: pending[0].RequestState, InputResponses: approve(pending[0])})
	if err != nil || res.IsError {
		t.Fatalf("answering a waiting call: %v %s", err, text(res))
	}
	askCtrlW(t, cs) // its slot is free again

	n := MaxSessionJobs
	for n < MaxJobs {
		other := e.manualClient()
		for range min(MaxSessionJobs, MaxJobs-n) {
			askCtrlW(t, other)
			n++
		}
	}
	res, err = callRaw(t, e.manualClient(), &mcp.CallToolParams{Name: "gui_hotkey", Arguments: map[string]any{"keys": []string{"ctrl", "w"}}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "256 calls waiting for an answer (the limit, over all sessions)") {
		t.Fatalf("call %d over all sessions: %v %s; want refused naming the limit", MaxJobs+1, err, text(res))
	}
}
