package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/vision"
)

var pinkWidgets = []fakellm.Widget{{Name: "the pink button", Word: "pink", Color: boxColor}}

func visionService(t *testing.T, brain fakellm.Brain) (*vision.Service, *fakellm.AnthropicServer) {
	t.Helper()
	srv := fakellm.NewAnthropicServer(brain)
	t.Cleanup(srv.Close)
	m, err := anthropic.NewVisionModel(llm.Config{Provider: "anthropic", Model: "claude-sonnet-4-5", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := vision.NewService(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}

func TestVisionLocateThroughAForcedToolCall(t *testing.T) {
	s, srv := visionService(t, fakellm.VisionBrain(pinkWidgets))
	sc := defaultScreen()
	img := sc.shot(t, claudeProfile(t), 1) // 1920x1080 sent at 1568x882
	loc, u, err := s.Locate(context.Background(), img, "the pink button")
	if err != nil || !loc.Found || u.Calls != 1 {
		t.Fatalf("Locate: %+v %+v %v", loc, u, err)
	}
	r, err := img.Frame.Resolve(loc.Box.Center(), true)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.box.Contains(r.Global) {
		t.Fatalf("the located centre %v is not on the button %v", r.Global, sc.box)
	}
	var req struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice struct{ Type, Name string } `json:"tool_choice"`
		Messages   []struct {
			Content []struct{ Type string } `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 1 || req.ToolChoice.Type != "tool" || req.ToolChoice.Name != req.Tools[0].Name ||
		!strings.Contains(string(req.Tools[0].InputSchema), `"found"`) {
		t.Fatalf("the request does not force one tool whose input_schema is the locate shape: %+v", req)
	}
	if c := req.Messages[0].Content; len(c) != 2 || c[0].Type != "image" {
		t.Fatalf("the user message is not the image and the prompt: %+v", c)
	}
	if strings.Contains(string(srv.Requests()[0].Body), testKey) {
		t.Fatal("the key is in the body")
	}
}

func TestVisionAssertAndQuery(t *testing.T) {
	s, _ := visionService(t, fakellm.VisionBrain(pinkWidgets))
	img := defaultScreen().shot(t, claudeProfile(t), 1)
	v, _, err := s.Assert(context.Background(), img, "the pink button is not visible")
	if err != nil || v.Pass {
		t.Fatalf("assert: %+v %v", v, err)
	}
	a, _, err := s.Query(context.Background(), img, "Which buttons are there?", json.RawMessage(`{"type":"array","items":{"type":"string"}}`))
	if err != nil || string(a.Data) != `["the pink button"]` {
		t.Fatalf("query: %s %v", a.Data, err)
	}
}

func TestVisionTextInsteadOfToolIsReaskedThenAnError(t *testing.T) {
	s, srv := visionService(t, fakellm.Script(fakellm.Fixed(fakellm.Reply{Raw: "I would rather not say."})))
	img := defaultScreen().shot(t, claudeProfile(t), 1)
	_, _, err := s.Assert(context.Background(), img, "the pink button is visible")
	if !errors.Is(err, vision.ErrBadAnswer) || !strings.Contains(err.Error(), "rather not say") || srv.Calls() != 2 {
		t.Fatalf("want ErrBadAnswer with the text after 2 calls; got %v after %d", err, srv.Calls())
	}
}

func TestNewVisionModelNeedsModelAndKey(t *testing.T) {
	if _, err := anthropic.NewVisionModel(llm.Config{Model: "claude-sonnet-4-5", Vars: llm.Vars{APIKey: "GUI_AGENT_API_KEY"}}); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_API_KEY") {
		t.Fatalf("no key: %v", err)
	}
}

func claudeProfile(t *testing.T) geom.Profile {
	p, err := llm.ProfileFor(llm.AdapterAnthropic, "claude-sonnet-4-5", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVisionJSONInTextIsAcceptedWithoutTheToolCall(t *testing.T) {
	s, _ := visionService(t, fakellm.Script(fakellm.Fixed(fakellm.Reply{Raw: "Sure.\n```json\n{\"pass\": true, \"reason\": \"I see it\"}\n```"})))
	v, u, err := s.Assert(context.Background(), defaultScreen().shot(t, claudeProfile(t), 1), "the pink button is visible")
	if err != nil || !v.Pass || v.Reason != "I see it" || u.Calls != 1 {
		t.Fatalf("%+v %+v %v", v, u, err)
	}
}
