package action

import (
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestParseAskUser(t *testing.T) {
	a, err := ParseModel(Raw{Kind: AskUser, Question: "  Which account should I use? ", Ask: "Choice",
		Options: []string{" work ", "personal", "  "}}, geom.SpaceImage)
	if err != nil {
		t.Fatal(err)
	}
	if a.Question != "Which account should I use?" || a.Ask != AskChoice || len(a.Options) != 2 || a.Options[0] != "work" {
		t.Fatalf("parsed %+v", a)
	}
	// Without a kind, options make a choice and no options a text question.
	if a, err := ParseModel(Raw{Kind: AskUser, Question: "Which one?", Options: []string{"a", "b"}}, geom.SpaceImage); err != nil || a.AskKind() != AskChoice {
		t.Fatalf("kindless with options: %+v %v, want a choice", a, err)
	}
	if a, err := ParseModel(Raw{Kind: AskUser, Question: "Your name?"}, geom.SpaceImage); err != nil || a.AskKind() != AskText {
		t.Fatalf("kindless: %+v %v, want a text question", a, err)
	}
	if a, err := ParseModel(Raw{Kind: AskUser, Question: "Password?", Ask: "text", Secret: true}, geom.SpaceImage); err != nil || !a.Secret {
		t.Fatalf("secret text: %+v %v", a, err)
	}
	if a.Kind.ChangesScreen() || a.Kind.UsesPoint() {
		t.Error("ask_user must neither change the screen nor act at a point")
	}
}

func TestParseAskUserErrorsNameTheFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  Raw
		want []string
	}{
		{"missing question", Raw{Kind: AskUser, Ask: "text"}, []string{"needs a question"}},
		{"blank question", Raw{Kind: AskUser, Question: "   "}, []string{"needs a question"}},
		{"choice with one option", Raw{Kind: AskUser, Question: "Which?", Ask: "choice", Options: []string{"only"}}, []string{"2-20 options, got 1"}},
		{"choice with no options", Raw{Kind: AskUser, Question: "Which?", Ask: "choice"}, []string{"2-20 options, got 0"}},
		{"choice with too many options", Raw{Kind: AskUser, Question: "Which?", Options: strings.Fields(strings.Repeat("x ", 21))}, []string{"given twice", "got 21"}},
		{"duplicate option", Raw{Kind: AskUser, Question: "Which?", Options: []string{"a", "b", "a"}}, []string{`option "a" is given twice`}},
		{"options on a confirm", Raw{Kind: AskUser, Question: "Go on?", Ask: "confirm", Options: []string{"yes", "no"}}, []string{"a confirm question takes no options", `use ask "choice"`}},
		{"options on a text", Raw{Kind: AskUser, Question: "Name?", Ask: "text", Options: []string{"a", "b"}}, []string{"a text question takes no options"}},
		{"secret choice", Raw{Kind: AskUser, Question: "Which?", Options: []string{"a", "b"}, Secret: true}, []string{"only a text question can be secret"}},
		{"secret confirm", Raw{Kind: AskUser, Question: "Go on?", Ask: "confirm", Secret: true}, []string{"only a text question can be secret"}},
		{"unknown kind", Raw{Kind: AskUser, Question: "Go on?", Ask: "maybe"}, []string{`unknown question kind "maybe"`, "confirm, text or choice"}},
	} {
		_, err := ParseModel(tc.raw, geom.SpaceImage)
		if err == nil {
			t.Errorf("%s: parsed without error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}

func TestCheckAsksWantsQuestionsLast(t *testing.T) {
	click := Action{Kind: Click, At: &Point{geom.SpaceImage, 1, 2}}
	ask := Action{Kind: AskUser, Question: "Which account?"}
	for _, ok := range [][]Action{nil, {click}, {ask}, {click, ask}, {click, click, ask, ask}} {
		if err := CheckAsks(ok); err != nil {
			t.Errorf("CheckAsks(%v) = %v, want nil", ok, err)
		}
	}
	err := CheckAsks([]Action{click, ask, click})
	if err == nil || !strings.Contains(err.Error(), "actions[2] (click) comes after the ask_user at actions[1]") || !strings.Contains(err.Error(), "ask last") {
		t.Fatalf("click after a question: %v", err)
	}
}
