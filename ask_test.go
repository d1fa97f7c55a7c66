package guiagent_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestExecuteAsksThroughWithAsk: the model asks which account to use; the
// program's WithAsk function answers, and the task completes with it.
func TestExecuteAsksThroughWithAsk(t *testing.T) {
	testenv.NeedX(t)
	const question = "Which account should I use?"
	model := fakellm.NewChatServer(func(tu fakellm.Turn) fakellm.Reply {
		if a, ok := tu.Answered(question); ok {
			return fakellm.Reply{Status: llm.Done, Result: "used " + a}
		}
		return fakellm.Reply{Ask: &fakellm.BrainAsk{Question: question, Kind: action.AskChoice, Options: []string{"work", "personal"}}}
	}, fakellm.ChatOptions{Model: "scripted"})
	defer model.Close()
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		Provider: "openai", Model: "scripted", BaseURL: model.URL, APIKey: "sk-test-not-a-real-key",
		VirtualDisplay: guiagent.Size{Width: 640, Height: 480}, AlwaysVirtualDisplay: true,
		RunsDir: t.TempDir(), StateDir: t.TempDir(), Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var asked []guiagent.Question
	res, err := a.Execute(ctx, "log in", guiagent.WithAsk(func(_ context.Context, q guiagent.Question) (guiagent.Reply, error) {
		asked = append(asked, q)
		return guiagent.Reply{Action: "accept", Value: "work"}, nil
	}))
	if err != nil || res.Status != guiagent.Completed || res.Result != "used work" {
		t.Fatalf("Execute = %+v, %v; want completed with the answer", res, err)
	}
	if len(asked) != 1 || asked[0].Text != question || asked[0].Kind != "choice" || len(asked[0].Options) != 2 || asked[0].Task != "log in" {
		t.Fatalf("asked %+v", asked)
	}
	if got := res.Trace[0].Actions[0]; got.Answer != "work" || got.AnsweredBy != "client" {
		t.Fatalf("step 1 action %+v, want the answer recorded", got)
	}

	// Declining ends the task blocked, with the question to answer next.
	res, err = a.Execute(ctx, "log in", guiagent.WithAsk(func(context.Context, guiagent.Question) (guiagent.Reply, error) {
		return guiagent.Reply{Action: "decline"}, nil
	}))
	if err != nil || res.Status != guiagent.Blocked || res.BlockReason != "user_declined" {
		t.Fatalf("declined: %+v, %v", res, err)
	}
}

// TestAskSettingsLoad: GUI_AGENT_CONFIRM_HOTKEYS and GUI_AGENT_ASK_TIMEOUT_S
// reach Options (and so the server the command builds from them).
func TestAskSettingsLoad(t *testing.T) {
	env := map[string]string{"GUI_AGENT_CONFIRM_HOTKEYS": "ctrl+w, ctrl+shift+delete", "GUI_AGENT_ASK_TIMEOUT_S": "42",
		"GUI_AGENT_SETTINGS_FILE": t.TempDir() + "/none.json"}
	o, _, err := guiagent.LoadOptions(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(o.ConfirmHotkeys) != 2 || o.ConfirmHotkeys[1] != "ctrl+shift+delete" || o.AskTimeout != 42*time.Second {
		t.Fatalf("options: confirm %q, ask timeout %v", o.ConfirmHotkeys, o.AskTimeout)
	}
}

// TestNoDashboardUntilTheHandlerServes: an Agent served over stdio (or any
// transport but its Handler) has no dashboard to answer questions, so
// gui://status says so and a question fails at once instead of waiting out
// the ask timeout; once the Handler serves a request, the dashboard counts.
func TestNoDashboardUntilTheHandlerServes(t *testing.T) {
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 800, Height: 600}, AlwaysVirtualDisplay: true, RunsDir: t.TempDir(), Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	if _, err := a.MCPServer().Connect(ctx, serverSide, nil); err != nil {
		t.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	dashboard := func() bool {
		res, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "gui://status"})
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Questions struct {
				Dashboard bool `json:"dashboard"`
			} `json:"questions"`
		}
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &st); err != nil {
			t.Fatal(err)
		}
		return st.Questions.Dashboard
	}
	if dashboard() {
		t.Error("gui://status says a dashboard is served, but only the MCP server is")
	}
	a.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	if !dashboard() {
		t.Error("gui://status says no dashboard after the Handler served a request")
	}
}
