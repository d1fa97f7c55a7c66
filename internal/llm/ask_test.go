package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestAnswerNote(t *testing.T) {
	q := func(question string, kind action.AskKind) action.Action {
		return action.Action{Kind: action.AskUser, Question: question, Ask: kind}
	}
	for _, tc := range []struct {
		a    Answer
		want string
	}{
		{Answer{Ask: q("Which account should I use?", ""), Text: "the work one"},
			`The user answered your question "Which account should I use?": "the work one"`},
		{Answer{Ask: action.Action{Kind: action.AskUser, Question: "Which one?", Options: []string{"a", "b"}}, Text: "b"},
			`The user answered your question "Which one?": "b"`},
		{Answer{Ask: q("Send it?", action.AskConfirm), Text: "yes", Approved: true}, `The user answered your question "Send it?": yes`},
		{Answer{Ask: q("Send it?", action.AskConfirm), Text: "No"}, `The user answered your question "Send it?": no`},
		{Answer{Ask: q("Send it?", action.AskConfirm), Approved: true}, `The user answered your question "Send it?": yes`},
		{Answer{Ask: action.Action{Kind: action.AskUser, Question: "Your password?", Secret: true},
			Text: "typed into the focused field\n(12 characters)"},
			`The user answered your question "Your password?": typed into the focused field (12 characters)`},
		{Answer{Ask: q(`Name the "file"`, action.AskText), Text: "a\nb \"c\""},
			`The user answered your question "Name the \"file\"": "a\nb \"c\""`},
	} {
		if got := AnswerNote(tc.a); got != tc.want {
			t.Errorf("AnswerNote(%+v) = %q, want %q", tc.a, got, tc.want)
		}
		if strings.Contains(AnswerNote(tc.a), "\n") {
			t.Errorf("note of %+v spans lines", tc.a)
		}
	}
}

func TestParseAnswerAskUser(t *testing.T) {
	px := geom.ProfileFor("gpt-4o")
	for _, tc := range []struct{ name, text, want string }{
		{"choice", `{"actions":[{"action":"ask_user","question":"Which account should I use?","ask":"choice","options":["work","personal"]}],"status":"continue"}`,
			`[{"kind":"ask_user","question":"Which account should I use?","ask":"choice","options":["work","personal"]}]`},
		{"kind as the question kind", `{"actions":[{"action":"ask_user","question":"Send it?","kind":"confirm"}],"status":"continue"}`,
			`[{"kind":"ask_user","question":"Send it?","ask":"confirm"}]`},
		{"question in text", `{"actions":[{"action":"ask_user","text":"Your name?"}],"status":"continue"}`,
			`[{"kind":"ask_user","question":"Your name?"}]`},
		{"secret after a click", `{"actions":[{"action":"click","x":1,"y":2},{"action":"ask_user","question":"Your password?","ask":"text","secret":true}]}`,
			`[{"kind":"click","at":[1,2],"space":"image"},{"kind":"ask_user","question":"Your password?","ask":"text","secret":true}]`},
	} {
		d, err := ParseAnswer(tc.text, px)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got, _ := json.Marshal(d.Actions)
		if string(got) != tc.want || d.Status != Continue {
			t.Errorf("%s: actions %s status %s, want %s continue", tc.name, got, d.Status, tc.want)
		}
	}
	for _, tc := range []struct{ name, text, want string }{
		{"no question", `{"actions":[{"action":"ask_user","ask":"text"}],"status":"continue"}`, "needs a question"},
		{"choice of one", `{"actions":[{"action":"ask_user","question":"Which?","ask":"choice","options":["a"]}],"status":"continue"}`, "a choice needs 2-20 options, got 1"},
		{"options on a confirm", `{"actions":[{"action":"ask_user","question":"Go?","ask":"confirm","options":["y","n"]}],"status":"continue"}`, "a confirm question takes no options"},
		{"secret choice", `{"actions":[{"action":"ask_user","question":"Which?","options":["a","b"],"secret":true}],"status":"continue"}`, "only a text question can be secret"},
		{"bad secret", `{"actions":[{"action":"ask_user","question":"Pw?","secret":"yes"}],"status":"continue"}`, `"secret" must be true or false`},
		{"bad options", `{"actions":[{"action":"ask_user","question":"Which?","options":[1,2]}],"status":"continue"}`, `"options" must be a list of strings`},
		{"not last", `{"actions":[{"action":"ask_user","question":"Which?"},{"action":"click","x":1,"y":2}],"status":"continue"}`, "comes after the ask_user at actions[0]: ask last"},
	} {
		d, err := ParseAnswer(tc.text, px)
		if !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), tc.want) || d != nil {
			t.Errorf("%s: err = %v, want ErrBadOutput saying %q", tc.name, err, tc.want)
		}
	}
}

func TestAnswerInstructionsDocumentAskUser(t *testing.T) {
	text := AnswerInstructions(geom.ProfileFor("gpt-4o"))
	for _, w := range []string{`{"action": "ask_user", "question": `, `"ask": "confirm"`, `"secret": true only for a password the user types`,
		"only when the information or the decision is theirs", "Never ask about ordinary steps", "Put ask_user last"} {
		if !strings.Contains(text, w) {
			t.Errorf("instructions lack %q", w)
		}
	}
}
