package guiagent_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestExecuteWithElements: Options.Elements (GUI_AGENT_ELEMENTS) reaches the
// task loop and the generic adapter: the system prompt documents refs, each
// step says why it has no elements (accessibility off), and the result's
// step carries the snapshot's summary.
func TestExecuteWithElements(t *testing.T) {
	testenv.NeedX(t)
	model := fakellm.NewChatServer(func(tu fakellm.Turn) fakellm.Reply {
		if !strings.Contains(tu.Prompt, `{"action": "click", "ref": "e12"}`) {
			return fakellm.Reply{Status: llm.Failed, Result: "the prompt does not document refs"}
		}
		if !strings.Contains(tu.Prompt, "UI elements: none at this step (the desktop has no element source") {
			return fakellm.Reply{Status: llm.Failed, Result: "the prompt does not say there are no elements"}
		}
		return fakellm.Reply{Status: llm.Done, Result: "wired"}
	}, fakellm.ChatOptions{Model: "scripted"})
	defer model.Close()
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		Provider: "openai", Model: "scripted", BaseURL: model.URL, APIKey: "sk-test-not-a-real-key",
		VirtualDisplay: guiagent.Size{Width: 640, Height: 480}, AlwaysVirtualDisplay: true, Accessibility: "off", Elements: "text",
		RunsDir: t.TempDir(), StateDir: t.TempDir(), Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Execute(ctx, "look")
	if err != nil || res.Status != guiagent.Completed || res.Result != "wired" {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if e := res.Trace[0].Elements; e == nil || e.Mode != "text" || !strings.Contains(e.Error, "no element source") {
		t.Fatalf("step elements %+v", res.Trace[0].Elements)
	}
}
