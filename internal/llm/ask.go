package llm

import (
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
)

// answerLead starts every answer note; AnswerNote and AnswerPrefix share it.
const answerLead = "The user answered your question "

// AnswerNote is the text that gives a person's answer back to the model, the
// same for every adapter (each sends it in its own wire format):
//
//	The user answered your question "Which account should I use?": "the work one"
//
// A confirm's answer is yes or no, unquoted; a secret's is a.Text as given
// (which only says the answer was typed into the focused field), unquoted.
// Quoted texts are Go-quoted, so the note is one line.
func AnswerNote(a Answer) string {
	return AnswerPrefix(a.Ask.Question) + answerValue(a)
}

// AnswerPrefix is the start of the AnswerNote of a question, up to the answer.
func AnswerPrefix(question string) string {
	return answerLead + strconv.Quote(question) + ": "
}

func answerValue(a Answer) string {
	switch {
	case a.Ask.Secret:
		return oneLine(a.Text)
	case a.Ask.AskKind() == action.AskConfirm:
		if t := strings.ToLower(strings.TrimSpace(a.Text)); t == "yes" || t == "no" {
			return t
		}
		if a.Approved {
			return "yes"
		}
		return "no"
	}
	return strconv.Quote(a.Text)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// AnswerNotes returns the AnswerNote of each answer, in order.
func AnswerNotes(answers []Answer) []string {
	out := make([]string, 0, len(answers))
	for _, a := range answers {
		out = append(out, AnswerNote(a))
	}
	return out
}

// HelpQuestion is the question of an ask_user made from a model's request
// for help that names no question (UI-TARS call_user() without a thought).
const HelpQuestion = "The model asks for your help to go on with the task. What should it do?"
