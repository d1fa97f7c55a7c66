package fakellm

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
)

func TestTurnAnswered(t *testing.T) {
	q := action.Action{Kind: action.AskUser, Question: `Which "account"?`}
	prompt := "Task: x\n" + llm.AnswerNote(llm.Answer{Ask: q, Text: "the work one\nplease"}) + "\n" +
		llm.AnswerNote(llm.Answer{Ask: action.Action{Kind: action.AskUser, Question: "Send it?", Ask: action.AskConfirm}, Approved: true}) + "\nmore text"
	turn := Turn{Prompt: prompt}
	if a, ok := turn.Answered(`Which "account"?`); !ok || a != "the work one\nplease" {
		t.Fatalf("Answered = %q %v", a, ok)
	}
	if a, ok := turn.Answered("Send it?"); !ok || a != "yes" {
		t.Fatalf("confirm Answered = %q %v", a, ok)
	}
	if _, ok := turn.Answered("Never asked?"); ok {
		t.Fatal("an unasked question has an answer")
	}
}

func TestChatJSONRendersAskUserLast(t *testing.T) {
	s := NewChatServer(nil, ChatOptions{})
	defer s.Close()
	out := s.render(Turn{}, Reply{Actions: []BrainAction{TypeText("a")},
		Ask: &BrainAsk{Question: "Which?", Kind: action.AskChoice, Options: []string{"x", "y"}}})
	d, err := llm.ParseAnswer(out, s.opts.Profile)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if d.Status != llm.Continue || len(d.Actions) != 2 || d.Actions[1].Kind != action.AskUser || d.Actions[1].AskKind() != action.AskChoice ||
		strings.Join(d.Actions[1].Options, ",") != "x,y" {
		t.Fatalf("decision %+v from %s", d, out)
	}
}

func TestNativeServersRefuseAnAskWithActions(t *testing.T) {
	rep := Reply{Actions: []BrainAction{TypeText("a")}, Ask: &BrainAsk{Question: "Which?"}}
	rec := httptest.NewRecorder()
	(&anthropicWire{s: &AnthropicServer{}}).WriteReply(rec, Turn{}, rep, 1)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "without tool calls") {
		t.Fatalf("anthropic: %d %s", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	(&responsesWire{s: &ResponsesServer{calls: map[string][]issuedCall{}}}).WriteReply(rec, Turn{}, rep, 1)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "without a computer_call") {
		t.Fatalf("responses: %d %s", rec.Code, rec.Body.String())
	}
}
