package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// askRun asks with ask on step 1 through a fake Chat server in opts' format,
// answers with text on step 2, and returns the question action, what the
// brain saw as the answer, and the texts of the last message of the second
// request.
func askRun(t *testing.T, opts fakellm.ChatOptions, ask fakellm.BrainAsk, text string,
	newAdapter func(llm.Config) (llm.Adapter, error)) (q action.Action, seen string, lastTexts []string) {
	t.Helper()
	srv := fakellm.NewChatServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Ask: &ask}),
		func(t fakellm.Turn) fakellm.Reply { seen, _ = t.Answered(ask.Question); return fakellm.Finish("ok") },
	), opts)
	defer srv.Close()
	ad, err := newAdapter(llm.Config{Provider: "openai", Model: opts.Model, APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sess := ad.NewSession("send the report")
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, ad.Profile(), screen, 1280, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.AskUser {
		t.Fatalf("decision %+v, want continue with one ask_user", d)
	}
	q = d.Actions[0]
	o := llm.Observation{Step: 2, Screenshot: shot(t, ad.Profile(), screen, 1280, 2), Answers: []llm.Answer{{Ask: q, Text: text}}}
	if d, err = sess.Next(context.Background(), o); err != nil || d.Status != llm.Done {
		t.Fatalf("after the answer: %+v %v", d, err)
	}
	var req chatRequest
	if err := json.Unmarshal(srv.Requests()[1].Body, &req); err != nil {
		t.Fatal(err)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &parts); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if p.Type == "text" {
			lastTexts = append(lastTexts, p.Text)
		}
	}
	return q, seen, lastTexts
}

// chatRequest is the part of a recorded Chat Completions request the tests read.
type chatRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func TestGenericAsksAChoiceAndSendsTheAnswer(t *testing.T) {
	ask := fakellm.BrainAsk{Question: "Which account should I use?", Kind: action.AskChoice, Options: []string{"work", "personal"}}
	q, seen, texts := askRun(t, fakellm.ChatOptions{Model: "gpt-4.1"}, ask, "work", NewGeneric)
	if q.AskKind() != action.AskChoice || q.Question != ask.Question || strings.Join(q.Options, ",") != "work,personal" {
		t.Fatalf("question %+v", q)
	}
	if seen != "work" {
		t.Fatalf("the model saw the answer %q", seen)
	}
	if len(texts) == 0 || !strings.Contains(texts[0], "\nThe user answered your question \"Which account should I use?\": \"work\"\n") {
		t.Fatalf("the prompt text does not carry the answer: %q", texts)
	}
}

func TestGenericAsksASecret(t *testing.T) {
	ask := fakellm.BrainAsk{Question: "Your password?", Kind: action.AskText, Secret: true}
	q, seen, _ := askRun(t, fakellm.ChatOptions{Model: "gpt-4.1"}, ask, "typed into the focused field (12 characters)", NewGeneric)
	if !q.Secret || q.AskKind() != action.AskText {
		t.Fatalf("question %+v, want a secret text", q)
	}
	if seen != "typed into the focused field (12 characters)" {
		t.Fatalf("the model saw %q", seen)
	}
}

func TestUITARSCallUserAsksTheThought(t *testing.T) {
	opts := fakellm.ChatOptions{Format: fakellm.ChatUITARS, Profile: geom.ProfileFor("ui-tars-1.5-7b"), Model: "ui-tars-1.5-7b"}
	ask := fakellm.BrainAsk{Question: "Which account should I use?"}
	q, seen, texts := askRun(t, opts, ask, "the work one", NewUITARS)
	if q.AskKind() != action.AskText || q.Question != "Which account should I use?" {
		t.Fatalf("question %+v, want the thought as a text question", q)
	}
	if seen != "the work one" {
		t.Fatalf("the model saw the answer %q", seen)
	}
	want := `The user answered your question "Which account should I use?": "the work one"`
	if len(texts) != 1 || texts[0] != want {
		t.Fatalf("the last user message's texts are %q, want [%q] beside the screenshot", texts, want)
	}
}

func TestUITARSBlockedBrainCallsTheUser(t *testing.T) {
	// UI-TARS has no blocked: a fake brain's blocked reply is call_user()
	// with the reason as the thought, which the adapter reads as a question.
	srv := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Status: llm.Blocked, Result: "Please solve the CAPTCHA."})),
		fakellm.ChatOptions{Format: fakellm.ChatUITARS, Profile: geom.ProfileFor("ui-tars-72b-dpo")})
	defer srv.Close()
	ad, err := NewUITARS(llm.Config{Model: "ui-tars-72b-dpo", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	d, err := ad.NewSession("x").Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, ad.Profile(), screen, 1280, 1)})
	if err != nil || len(d.Actions) != 1 || d.Actions[0].Question != "Please solve the CAPTCHA." || d.Status != llm.Continue {
		t.Fatalf("decision %+v err %v", d, err)
	}
}

// TestGenericRefsInThePrompt: with Config.Refs the system prompt documents
// refs; an observation's elements outline and marks note reach the prompt
// text; a click by ref comes back as a typed ref.
func TestGenericRefsInThePrompt(t *testing.T) {
	srv := fakellm.NewChatServer(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickRef("e2")}}), fakellm.ChatOptions{Model: "gpt-4.1"})
	defer srv.Close()
	for _, refs := range []bool{false, true} {
		ad, err := NewGeneric(llm.Config{Provider: "openai", Model: "gpt-4.1", APIKey: "k", BaseURL: srv.URL, Refs: refs})
		if err != nil {
			t.Fatal(err)
		}
		outline := "Elements of the focused window \"Form\":\ne1 window \"Form\" [0,0,640,400]\n  e2 button \"Save\" [10,20,90,44]"
		d, err := ad.NewSession("save").Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, ad.Profile(), screen, 1280, 1),
			Elements: outline, Marked: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Actions) != 1 || d.Actions[0].Ref != "e2" || d.Actions[0].At != nil {
			t.Fatalf("decision actions %+v, want a click by ref e2", d.Actions)
		}
		reqs := srv.Requests()
		var req chatRequest
		if err := json.Unmarshal(reqs[len(reqs)-1].Body, &req); err != nil {
			t.Fatal(err)
		}
		var system string
		_ = json.Unmarshal(req.Messages[0].Content, &system)
		if got := strings.Contains(system, `"ref": "e12"`); got != refs {
			t.Errorf("Refs %v: the system prompt documents refs: %v", refs, got)
		}
		body := string(reqs[len(reqs)-1].Body)
		if !strings.Contains(body, `e2 button \"Save\" [10,20,90,44]`) || !strings.Contains(body, "mark N is the element with ref eN") {
			t.Errorf("the prompt text lacks the outline or the marks note")
		}
	}
}
