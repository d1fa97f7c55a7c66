package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/llm"
)

// person is an ask.Channel that answers every question with the next of its
// scripted answers (after delay) and keeps the questions it was asked.
type person struct {
	mu      sync.Mutex
	answers []ask.Answer
	delay   time.Duration
	asked   []ask.Question
}

func (p *person) Name() string { return ask.ByClient }

func (p *person) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	p.mu.Lock()
	p.asked = append(p.asked, q)
	var a ask.Answer
	if len(p.answers) > 0 {
		a, p.answers = p.answers[0], p.answers[1:]
	}
	p.mu.Unlock()
	if a.Outcome == "" { // nothing scripted: never answers
		<-ctx.Done()
		return a, ctx.Err()
	}
	select {
	case <-time.After(p.delay):
		return a, nil
	case <-ctx.Done():
		return a, ctx.Err()
	}
}

func (p *person) questions() []ask.Question {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ask.Question(nil), p.asked...)
}

func askAction(r action.Raw) action.Raw {
	r.Kind = action.AskUser
	return r
}

func asks(r action.Raw) llm.Decision {
	d := act(askAction(r))
	d.Observation = "an account picker with two accounts"
	return d
}

func TestAskedChoiceReachesTheModelAndTheRunGoesOn(t *testing.T) {
	d := newDesk(t)
	who := &person{answers: []ask.Answer{{Outcome: ask.Accept, Value: "the work one"}}}
	ad := newScript(d.opts(nil).Shot.Profile,
		reply(asks(action.Raw{Question: "Which account should I use?", Ask: "choice", Options: []string{"the work one", "the personal one"}})),
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			if len(obs.Answers) != 1 || obs.Answers[0].Text != "the work one" || obs.Answers[0].Ask.Question != "Which account should I use?" {
				return &llm.Decision{Status: llm.Failed, Result: "no answer seen"}, nil
			}
			return &llm.Decision{Status: llm.Done, Result: "used the work account"}, nil
		})
	o := d.opts(ad)
	o.MaxSteps = 1 // the asking step must not use up the only step
	var progress []string
	var pmu sync.Mutex
	res := d.runner(o).Run(context.Background(), Task{Task: "log in", Ask: who}, func(ev Event) {
		pmu.Lock()
		progress = append(progress, ev.Message)
		pmu.Unlock()
	})
	statusOf(t, res, Completed)
	if res.Result != "used the work account" || res.Steps != 2 {
		t.Fatalf("result %q after %d steps, want the work account after 2", res.Result, res.Steps)
	}
	q := who.questions()
	if len(q) != 1 || q[0].Kind != action.AskChoice || len(q[0].Options) != 2 || q[0].Step != 1 || q[0].Task != "log in" ||
		q[0].Screen != "an account picker with two accounts" || len(q[0].Image) == 0 {
		t.Fatalf("questions asked: %+v", q)
	}
	tr := res.Trace[0].Actions
	if len(tr) != 1 || tr[0].Answer != "the work one" || tr[0].AnsweredBy != ask.ByClient || !tr[0].OK() {
		t.Fatalf("step 1 trace %+v, want the answer recorded", tr)
	}
	pmu.Lock()
	defer pmu.Unlock()
	if !containsPrefix(progress, "waiting for the user: Which account should I use?") {
		t.Fatalf("no 'waiting for the user' progress in %q", progress)
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func TestQuestionWithoutAnAnswer(t *testing.T) {
	q := action.Raw{Question: "Which account should I use?"}
	cases := []struct {
		name       string
		who        *person
		broker     *ask.Broker
		want       Status
		reason     string
		askTimeout time.Duration
	}{
		{"declined", &person{answers: []ask.Answer{{Outcome: ask.Decline}}}, nil, Blocked, ReasonUserDeclined, 0},
		{"cancelled", &person{answers: []ask.Answer{{Outcome: ask.Cancel}}}, nil, Cancelled, "", 0},
		{"nobody answers in time", &person{}, nil, Blocked, ReasonNoAnswer, 100 * time.Millisecond},
		{"dashboard nobody looks at", nil, ask.NewBroker(true), Blocked, ReasonNoAnswer, 100 * time.Millisecond},
		{"no way to ask", nil, ask.NewBroker(false), Blocked, ReasonNoAnswer, 0},
		{"no broker, no channel", nil, nil, Blocked, ReasonNoAnswer, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDesk(t)
			ad := newScript(d.opts(nil).Shot.Profile, reply(asks(q)), done("should not get here"))
			o := d.opts(ad)
			o.Questions, o.AskTimeout = c.broker, c.askTimeout
			task := Task{Task: "log in"}
			if c.who != nil {
				task.Ask = c.who
			}
			// A minute, far below the default ask timeout (5 min): a run that
			// waited for it ends cancelled, not with the status wanted.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res := d.runner(o).Run(ctx, task, nil)
			statusOf(t, res, c.want)
			if res.BlockReason != c.reason || ad.callCount() != 1 {
				t.Fatalf("block reason %q after %d model calls; want %q after 1", res.BlockReason, ad.callCount(), c.reason)
			}
			if c.want == Blocked && !strings.Contains(res.NextUserAction, "Which account should I use?") {
				t.Fatalf("next_user_action %q does not carry the question", res.NextUserAction)
			}
			d.assertNothingHeld()
		})
	}
}

func TestSecretAnswerIsTypedAndNeverShown(t *testing.T) {
	d := newDesk(t)
	const pw = "hunter2-correct-horse"
	who := &person{answers: []ask.Answer{{Outcome: ask.Accept, Value: pw}}}
	var seen llm.Observation
	ad := newScript(d.opts(nil).Shot.Profile,
		reply(asks(action.Raw{Question: "Please type your password", Secret: true})),
		func(_ context.Context, obs llm.Observation) (*llm.Decision, error) {
			seen = obs
			return &llm.Decision{Status: llm.Done, Result: "logged in"}, nil
		})
	var events []Event
	var emu sync.Mutex
	r := d.runner(d.opts(ad))
	r.AddObserver(ObserverFunc(func(ev Event) { emu.Lock(); events = append(events, ev); emu.Unlock() }))
	res := r.Run(context.Background(), Task{Task: "log in", Ask: who}, nil)
	statusOf(t, res, Completed)
	if got := d.fb.Typed(); got != pw {
		t.Fatalf("typed %q, want the secret typed into the focused field", got)
	}
	if len(seen.Answers) != 1 || strings.Contains(seen.Answers[0].Text, pw) || !strings.Contains(seen.Answers[0].Text, "21 characters") {
		t.Fatalf("the model was told %+v", seen.Answers)
	}
	if a := res.Trace[0].Actions[0]; a.Answer != "<typed 21 chars>" {
		t.Fatalf("recorded answer %q, want only its length", a.Answer)
	}
	emu.Lock()
	defer emu.Unlock()
	for _, ev := range events {
		if strings.Contains(ev.Message, pw) || ev.Action != nil && strings.Contains(ev.Action.Answer, pw) {
			t.Fatalf("event %s carries the secret: %+v", ev.Kind, ev)
		}
	}
}

// confirmPolicy needs a yes for ctrl+w.
type confirmPolicy struct{}

func (confirmPolicy) NeedsConfirm(keys []desktop.Key) (string, bool) {
	return "ctrl+w", desktop.ComboString(keys) == desktop.ComboString([]desktop.Key{desktop.Ctrl, "w"})
}

func TestConfirmHotkeys(t *testing.T) {
	for _, c := range []struct {
		answer  string
		pressed bool
	}{{ask.Yes, true}, {ask.No, false}} {
		t.Run(c.answer, func(t *testing.T) {
			d := newDesk(t)
			who := &person{answers: []ask.Answer{{Outcome: ask.Accept, Value: c.answer}}}
			ad := newScript(d.opts(nil).Shot.Profile,
				reply(act(action.Raw{Kind: action.KeyPress, Keys: []string{"ctrl", "w"}})), done("closed"))
			o := d.opts(ad)
			o.Confirm = confirmPolicy{}
			res := d.runner(o).Run(context.Background(), Task{Task: "close the tab", Ask: who}, nil)
			statusOf(t, res, Completed)
			pressed := false
			for _, e := range d.fb.Events() {
				if e.Op == fake.OpKeyDown && e.Key == "w" {
					pressed = true
				}
			}
			if pressed != c.pressed {
				t.Fatalf("answered %s: w pressed = %v", c.answer, pressed)
			}
			q := who.questions()
			if len(q) != 1 || q[0].Kind != action.AskConfirm || !strings.Contains(q[0].Text, "ctrl+w") {
				t.Fatalf("questions %+v, want one confirm naming ctrl+w", q)
			}
			tr := res.Trace[0].Actions
			if len(tr) != 2 || tr[0].Action.Kind != action.AskUser || tr[0].Answer != c.answer || tr[0].AnsweredBy != ask.ByClient ||
				tr[1].Action.Kind != action.KeyPress || tr[1].OK() != c.pressed {
				t.Fatalf("answered %s: step traces %+v, want the confirmation then the key", c.answer, tr)
			}
			d.assertNothingHeld()
		})
	}
}

func TestWaitingForAPersonDoesNotUseTheDeadline(t *testing.T) {
	d := newDesk(t)
	// The person takes longer than the whole task may; only 100 ms of it counts.
	who := &person{answers: []ask.Answer{{Outcome: ask.Accept, Value: "ok"}}, delay: 2500 * time.Millisecond}
	ad := newScript(d.opts(nil).Shot.Profile, reply(asks(action.Raw{Question: "Go on?"})), done("went on"))
	o := d.opts(ad)
	o.Timeout = 2 * time.Second
	old := askCountsAtMost
	askCountsAtMost = 100 * time.Millisecond
	defer func() { askCountsAtMost = old }()
	res := d.runner(o).Run(context.Background(), Task{Task: "t", Ask: who}, nil)
	statusOf(t, res, Completed)
}

func TestFirstAnswerWinsBetweenClientAndDashboard(t *testing.T) {
	d := newDesk(t)
	b := ask.NewBroker(true)
	events, cancel := b.Subscribe()
	defer cancel()
	go func() { // the dashboard answers first; the client never does
		for ev := range events {
			if ev.Kind == ask.EvAsked {
				_ = b.Answer(ev.Question.ID, ask.Answer{Outcome: ask.Accept, Value: "the personal one", By: ask.ByDashboard})
			}
		}
	}()
	who := &person{}
	ad := newScript(d.opts(nil).Shot.Profile,
		reply(asks(action.Raw{Question: "Which account?", Options: []string{"the work one", "the personal one"}})), done("ok"))
	o := d.opts(ad)
	o.Questions = b
	res := d.runner(o).Run(context.Background(), Task{Task: "t", Ask: who}, nil)
	statusOf(t, res, Completed)
	if a := res.Trace[0].Actions[0]; a.Answer != "the personal one" || a.AnsweredBy != ask.ByDashboard {
		t.Fatalf("trace %+v, want the dashboard's answer", a)
	}
	if len(b.Pending()) != 0 {
		t.Fatalf("questions still pending: %+v", b.Pending())
	}
	if r := b.Recent(); len(r) != 1 || r[0].Answer == nil || r[0].Answer.By != ask.ByDashboard {
		t.Fatalf("recent %+v", r)
	}
}
