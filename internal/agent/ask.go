package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
)

// DefaultAskTimeout bounds the wait for one answer when Options.AskTimeout is zero.
const DefaultAskTimeout = 300 * time.Second

// askCountsAtMost is how much of one wait for a person counts toward the
// task's deadline: the deadline stands still while the run waits, and moves
// on by at most this much when the answer comes. A person who takes four
// minutes to answer costs the task a minute of its time budget; a question
// asked with less than that left can time the task out right after the answer.
// The wait never uses up steps: a step that only asks does not count toward
// max_steps (at most max_steps such steps per run).
var askCountsAtMost = time.Minute

// asking is what a run needs to put a question to a person.
type asking struct {
	screen string // the model's short description of the screen at this step
	image  llm.Image
	checks []string // the provider safety checks of the decision being executed
}

// askUser executes an ask_user action: the question goes to the person, and
// an accepted answer is kept for the model's next observation. A declined,
// cancelled, expired or impossible question ends the run (halt).
func (ru *run) askUser(step int, p *planned) (halt *ending) {
	a := p.trace.Action
	q := ru.question(step, a.Question, a.AskKind(), a.Options, a.Secret)
	ans, end := ru.waitAnswer(q)
	if end != nil {
		if len(ru.asking.checks) > 0 && end.status == Blocked {
			end.blockReason, end.checks = ReasonSafetyCheck, append([]string(nil), ru.asking.checks...)
		}
		p.trace.Error = end.summary
		return end
	}
	p.trace.AnsweredBy = ans.By
	text := ans.Value
	if a.Secret {
		p.trace.Answer = ask.Masked(ans.Value)
		if _, err := ru.o.Executor.Do(ru.ctx, operate.Op{Action: action.Action{Kind: action.TypeText, Text: ans.Value}}); err != nil {
			p.trace.Error = "typing the answer failed: " + err.Error()
			return &ending{status: Failed, summary: "typing the user's secret answer into the focused field failed: " + err.Error()}
		}
		text = fmt.Sprintf("The user typed their answer into the focused field themselves (%d characters); it is not shown to you.", len([]rune(ans.Value)))
	} else {
		p.trace.Answer = ans.Value
	}
	ru.answers = append(ru.answers, llm.Answer{Ask: a, Text: text, Approved: ans.Approved()})
	return nil
}

// confirmKeys asks the person before a combination that needs a yes is
// pressed. asked is the question as an ask_user trace of the step (nil when
// none was needed); refused is an error for the action when they say no;
// halt ends the run when nobody answers.
// The executor calls it (operate.Op.Confirm) for keys its key policy lists
// as combo.
func (ru *run) confirmKeys(step int, keys []desktop.Key, combo string) (asked *action.Trace, halt *ending, refused error) {
	text := ask.KeysQuestion("The agent", desktop.ComboString(keys), combo).Text
	q := ru.question(step, text, action.AskConfirm, nil, false)
	start := time.Now()
	ans, end := ru.waitAnswer(q)
	t := action.Trace{Action: action.Action{Kind: action.AskUser, Question: text, Ask: action.AskConfirm},
		Answer: ans.Value, AnsweredBy: ans.By, Outcome: action.OutcomeOK, Millis: time.Since(start).Milliseconds()}
	if end != nil {
		t.Outcome, t.Error = action.OutcomeNotExecuted, end.summary
	}
	t = ru.actionDone(step, t)
	if end != nil {
		if end.status == Blocked {
			end.blockReason = ReasonConfirmation
		}
		return &t, end, nil
	}
	if !ans.Approved() {
		return &t, nil, fmt.Errorf("the user did not allow %s (answered %q from the %s)", desktop.ComboString(keys), ans.Value, ans.By)
	}
	return &t, nil, nil
}

// question builds a question of this run at step.
func (ru *run) question(step int, text string, kind action.AskKind, options []string, secret bool) ask.Question {
	q := ask.Question{RunID: ru.id, Task: ru.task.Task, Step: step, Text: text, Kind: kind,
		Options: options, Secret: secret, Screen: shorten(oneLine(ru.asking.screen), 300)}
	if img := ru.asking.image; len(img.Data) > 0 {
		q.Image, q.ImageMIME = img.Data, img.MIME
	}
	return q
}

// waitAnswer puts q to the person through the broker and the task's own
// channel and waits, at most AskTimeout, with "waiting for the user"
// progress. The deadline stands still meanwhile (see askCountsAtMost); the
// human-override watcher is re-armed afterwards, since the person may have
// used the pointer to answer. end is non-nil when there is no usable answer.
func (ru *run) waitAnswer(q ask.Question) (ask.Answer, *ending) {
	next := "answer the question, then run the task again with the answer in it: " + q.Text
	if ru.o.Questions == nil && ru.task.Ask == nil {
		return ask.Answer{}, &ending{status: Blocked, blockReason: ReasonNoAnswer, next: next,
			summary: "blocked: the model asks the user: " + q.Text + " (" + ask.ErrNoChannel.Error() + ")"}
	}
	ru.setPhase(q.Step, "waiting for the user")
	msg := "waiting for the user: " + shorten(oneLine(q.Text), 200)
	ru.progressEvent(float64(q.Step-1)+0.2, msg)
	stopTick := ru.tick(func(waited time.Duration) {
		ru.progressEvent(float64(q.Step-1)+0.2, fmt.Sprintf("%s (%s)", msg, waited.Round(time.Second)))
	})
	ru.holdDeadline()
	ctx, cancel := context.WithTimeoutCause(ru.ctx, ru.o.AskTimeout, errNoAnswer)
	ans, err := ask.Ask(ctx, ru.o.Questions, q, ru.task.Ask)
	cancel()
	stopTick()
	ru.releaseDeadline()
	if ru.watcher != nil {
		_ = ru.watcher.Arm(ru.ctx)
	}
	ru.o.Logger.Info("question to the user", "run", ru.id, "step", q.Step, "kind", q.Kind, "outcome", ans.Outcome, "by", ans.By, "err", err)
	switch {
	case err == nil && ans.Outcome == ask.Accept:
		return ans, nil
	case err == nil && ans.Outcome == ask.Decline:
		return ans, &ending{status: Blocked, blockReason: ReasonUserDeclined, next: next,
			summary: "blocked: the user declined to answer: " + q.Text}
	case err == nil:
		return ans, &ending{status: Cancelled, summary: "cancelled: the user cancelled the question: " + q.Text}
	case errors.Is(err, errNoAnswer):
		return ans, &ending{status: Blocked, blockReason: ReasonNoAnswer, next: next,
			summary: fmt.Sprintf("blocked: no answer within %s (%s) to: %s", ru.o.AskTimeout, config.Var("AskTimeout"), q.Text)}
	case errors.Is(err, ask.ErrNoChannel):
		return ans, &ending{status: Blocked, blockReason: ReasonNoAnswer, next: next,
			summary: "blocked: the model asks the user: " + q.Text + " (" + err.Error() + ")"}
	}
	if e := ru.stopEnding(); e != nil {
		return ans, e
	}
	return ans, &ending{status: Failed, summary: "asking the user failed: " + err.Error()}
}

// errNoAnswer is the cause of a question's timeout.
var errNoAnswer = errors.New("no answer in time")

// tick calls f every ProgressEvery with the time since tick was called, until
// the returned stop is called.
func (ru *run) tick(f func(time.Duration)) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(ru.o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f(time.Since(start))
			}
		}
	}()
	return func() { close(done); <-finished }
}
