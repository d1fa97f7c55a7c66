package trace

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
)

// askView is an executed ask_user as the report shows it: a question to a
// person and the answer, or why none came. It is never drawn on an overlay
// (it has no point on the screen).
type askView struct {
	N        int // the action's number in the step's table
	Question string
	Kind     action.AskKind
	Options  []string
	Secret   bool
	// Answered says a person answered; Answer is the answer as recorded (for
	// a secret only its length, "<typed N chars>"), By where it came from.
	Answered bool
	Answer   string
	By       string
	// NoAnswer says why no answer came (declined, timed out, no channel...).
	NoAnswer string
	// Failed is what went wrong after an answer came (typing a secret).
	Failed string
}

// maskedRE is how a secret answer is recorded (ask.Masked).
var maskedRE = regexp.MustCompile(`^<typed \d+ chars>$`)

// newAskView builds the view of the ask_user trace t, the n-th action of its step.
func newAskView(n int, t action.Trace) *askView {
	a := t.Action
	v := &askView{N: n, Question: a.Question, Kind: a.AskKind(), Options: a.Options, Secret: a.Secret,
		Answer: t.Answer, By: answeredBy(t.AnsweredBy)}
	v.Answered = t.Answer != "" || t.OK() && t.Error == ""
	if v.Secret && v.Answer != "" && !maskedRE.MatchString(v.Answer) {
		// A secret is recorded only by its length; should a recorder ever
		// pass the text itself, the report still shows only that.
		v.Answer = ask.Masked(v.Answer)
	}
	switch {
	case !v.Answered:
		v.NoAnswer = noAnswerReason(t)
	case t.Error != "":
		v.Failed = t.Error
	}
	return v
}

// answeredBy says where an answer came from, for a reader.
func answeredBy(by string) string {
	switch by {
	case ask.ByClient:
		return "answered in the MCP client"
	case ask.ByDashboard:
		return "answered on the dashboard"
	case "":
		return ""
	}
	return "answered by " + by
}

// noAnswerReason says why an ask_user got no answer.
func noAnswerReason(t action.Trace) string {
	switch {
	case t.Error != "":
		return t.Error
	case t.Outcome == action.OutcomeNotExecuted:
		return "not asked: the step stopped before this question"
	case t.Outcome == "":
		return "no answer was recorded (the run ended while waiting?)"
	}
	return "no answer (" + t.Outcome + ")"
}

// askLabel is an ask_user's line in the step's action table: a question to
// the user, never anything that reads like input sent to the screen.
func askLabel(a action.Action) string {
	d := fmt.Sprintf("question to the user (%s", a.AskKind())
	if a.Secret {
		d += ", secret"
	}
	return d + "): " + strconv.Quote(truncateRunes(a.Question, 80))
}

// Asks lists the step's questions to a person, in action order.
func (s *stepView) Asks() []*askView {
	var out []*askView
	for _, a := range s.Actions {
		if a.Ask != nil {
			out = append(out, a.Ask)
		}
	}
	return out
}
