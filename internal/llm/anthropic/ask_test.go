package anthropic_test

import (
	"context"
	"encoding/json"
	"image"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// TestQuestionAsksTheUserAndTheAnswerComesBackAsText runs click, question,
// answer, done: the question is an ask_user text action, and the answer is
// text in the user message after the assistant's question, the message
// sequence staying valid for the Messages API (the fake checks it).
func TestQuestionAsksTheUserAndTheAnswerComesBackAsText(t *testing.T) {
	var answered string
	var sawAnswer bool
	srv := fakellm.NewAnthropicServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Point{X: 40, Y: 40})}}),
		fakellm.Fixed(fakellm.Reply{Observation: "Two accounts are listed.", Ask: &fakellm.BrainAsk{Question: "Which account should I use?"}}),
		func(t fakellm.Turn) fakellm.Reply {
			answered, sawAnswer = t.Answered("Which account should I use?")
			return fakellm.Finish("used the work account")
		},
	))
	defer srv.Close()
	a := newAdapter(t, srv)
	sess := a.NewSession("send the report")
	step := func(n int, answers ...llm.Answer) *llm.Decision {
		t.Helper()
		d, err := sess.Next(context.Background(), llm.Observation{Step: n, Screenshot: defaultScreen().shot(t, a.Profile(), n), Answers: answers})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		return d
	}
	step(1)
	d := step(2)
	if d.Status != llm.Continue || len(d.Actions) != 1 {
		t.Fatalf("question: %+v, want continue with one ask_user", d)
	}
	q := d.Actions[0]
	if q.Kind != action.AskUser || q.AskKind() != action.AskText || q.Question != "Which account should I use?" || d.Result != "" {
		t.Fatalf("question action %+v", q)
	}
	if err := llm.ValidateDecision(d); err != nil {
		t.Fatal(err)
	}
	if d = step(3, llm.Answer{Ask: q, Text: "the work one"}); d.Status != llm.Done {
		t.Fatalf("after the answer: %+v", d)
	}
	if !sawAnswer || answered != "the work one" {
		t.Fatalf("the model saw the answer %q (%v)", answered, sawAnswer)
	}
	var req struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[2].Body, &req); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
		t.Fatalf("roles %v", roles)
	}
	asked, last := req.Messages[3], req.Messages[4]
	if len(asked.Content) != 1 || !strings.Contains(string(asked.Content[0]), `QUESTION: Which account should I use?`) {
		t.Fatalf("the assistant's question is not kept: %s", asked.Content)
	}
	want := `{"text":"The user answered your question \"Which account should I use?\": \"the work one\"","type":"text"}`
	if string(last.Content[0]) != want {
		t.Fatalf("the answer message starts with %s, want %s", last.Content[0], want)
	}
	for _, c := range last.Content {
		if strings.Contains(string(c), "tool_result") {
			t.Fatalf("the answer message carries a tool_result though the question had no tool_use: %s", c)
		}
	}
}

func TestClosingTextsThatAskTheUser(t *testing.T) {
	for text, want := range map[string]string{
		"QUESTION: Which account should I use?":                   "Which account should I use?",
		"Which account should I use, work or personal?":           "Which account should I use, work or personal?",
		"Could you please provide the password for this account?": "Could you please provide the password for this account?",
	} {
		srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Raw: text})))
		a := newAdapter(t, srv)
		d, err := a.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.AskUser || d.Actions[0].Question != want || d.BlockReason != "" {
			t.Errorf("%q: %+v, want continue with ask_user %q", text, d, want)
		}
	}
}

func TestSystemPromptDocumentsQuestions(t *testing.T) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Finish("ok"))))
	defer srv.Close()
	a := newAdapter(t, srv)
	if _, err := a.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)}); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	for _, w := range []string{"start with QUESTION: followed by one question", "Never ask about ordinary steps", "start with BLOCKED:"} {
		if !strings.Contains(body, w) {
			t.Errorf("system prompt lacks %q", w)
		}
	}
}
