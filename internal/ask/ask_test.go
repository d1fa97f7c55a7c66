package ask

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
)

// chanFunc is a Channel from a function.
type chanFunc struct {
	name string
	f    func(ctx context.Context, q Question) (Answer, error)
}

func (c chanFunc) Name() string                                        { return c.name }
func (c chanFunc) Ask(ctx context.Context, q Question) (Answer, error) { return c.f(ctx, q) }

func choice() Question {
	return Question{Text: "Which account should I use?", Kind: action.AskChoice, Options: []string{"the work one", "the personal one"}}
}

func TestFirstAnswerWinsAndTheOtherChannelIsCancelled(t *testing.T) {
	b := NewBroker(true)
	cancelled := make(chan struct{})
	slow := chanFunc{ByClient, func(ctx context.Context, q Question) (Answer, error) {
		<-ctx.Done()
		close(cancelled)
		return Answer{}, ctx.Err()
	}}
	events, stop := b.Subscribe()
	defer stop()
	go func() {
		ev := <-events
		if err := b.Answer(ev.Question.ID, Answer{Outcome: Accept, Value: "the work one", By: ByDashboard}); err != nil {
			t.Errorf("dashboard answer: %v", err)
		}
		if err := b.Answer(ev.Question.ID, Answer{Outcome: Accept, Value: "the personal one", By: ByDashboard}); !errors.Is(err, ErrNotPending) {
			t.Errorf("second answer: %v, want ErrNotPending", err)
		}
	}()
	a, err := b.Ask(context.Background(), choice(), slow)
	if err != nil || a.Value != "the work one" || a.By != ByDashboard {
		t.Fatalf("Ask = %+v, %v", a, err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's question was not cancelled after the dashboard answered")
	}
	r := b.Recent()
	if len(r) != 1 || r[0].Kind != EvAnswered || r[0].Answer.Value != "the work one" {
		t.Fatalf("recent = %+v", r)
	}
}

func TestAnswersAreCheckedAgainstTheQuestion(t *testing.T) {
	cases := []struct {
		q    Question
		a    Answer
		want string // value after checking, or "error: <substring>"
	}{
		{choice(), Answer{Outcome: Accept, Value: " the work one "}, "the work one"},
		{choice(), Answer{Outcome: Accept, Value: "the other one"}, "error: not one of the options"},
		{Question{Kind: action.AskConfirm}, Answer{Outcome: Accept, Value: "Yes"}, Yes},
		{Question{Kind: action.AskConfirm}, Answer{Outcome: Accept, Value: "false"}, No},
		{Question{Kind: action.AskConfirm}, Answer{Outcome: Accept, Value: "maybe"}, "error: yes or no"},
		{Question{Kind: action.AskText}, Answer{Outcome: Accept, Value: "  "}, "error: empty"},
		{Question{Kind: action.AskText, Secret: true}, Answer{Outcome: Accept, Value: " pw "}, " pw "},
		{Question{Kind: action.AskText}, Answer{Outcome: "maybe"}, "error: accept, decline or cancel"},
		{Question{Kind: action.AskText}, Answer{Outcome: Decline, Value: "x"}, ""},
	}
	for _, c := range cases {
		got, err := c.q.Check(c.a)
		if w, ok := strings.CutPrefix(c.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Check(%+v) error %v, want one containing %q", c.a, err, w)
			}
			continue
		}
		if err != nil || got.Value != c.want {
			t.Errorf("Check(%+v) = %q, %v; want %q", c.a, got.Value, err, c.want)
		}
	}
}

func TestNoWayToAsk(t *testing.T) {
	b := NewBroker(false)
	if _, err := b.Ask(context.Background(), choice()); !errors.Is(err, ErrNoChannel) {
		t.Fatalf("no dashboard, no channel: %v", err)
	}
	// A channel that cannot take the question (a secret through a form) and no dashboard.
	unsupported := chanFunc{ByClient, func(context.Context, Question) (Answer, error) { return Answer{}, ErrUnsupported }}
	secret := Question{Text: "password?", Secret: true}
	if _, err := b.Ask(context.Background(), secret, unsupported); !errors.Is(err, ErrNoChannel) {
		t.Fatalf("only an unsupporting channel: %v", err)
	}
	if len(b.Pending()) != 0 {
		t.Fatalf("pending after giving up: %+v", b.Pending())
	}
}

func TestTimeoutExpiresTheQuestion(t *testing.T) {
	b := NewBroker(true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Ask(ctx, choice()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if r := b.Recent(); len(r) != 1 || r[0].Kind != EvExpired || len(b.Pending()) != 0 {
		t.Fatalf("recent %+v pending %+v", r, b.Pending())
	}
}

func TestSecretIsNeverKeptOrPublished(t *testing.T) {
	b := NewBroker(true)
	events, stop := b.Subscribe()
	defer stop()
	const pw = "s3cret-value"
	go func() {
		ev := <-events
		_ = b.Answer(ev.Question.ID, Answer{Outcome: Accept, Value: pw, By: ByDashboard})
	}()
	a, err := b.Ask(context.Background(), Question{Text: "password?", Kind: action.AskText, Secret: true, Image: []byte{1, 2}})
	if err != nil || a.Value != pw {
		t.Fatalf("the asker must get the secret: %+v %v", a, err)
	}
	ev := <-events
	if ev.Kind != EvAnswered || ev.Answer.Value != "<typed 12 chars>" || ev.Question.Image != nil {
		t.Fatalf("published %+v", ev)
	}
	if r := b.Recent(); r[0].Answer.Value != "<typed 12 chars>" {
		t.Fatalf("recent keeps %q", r[0].Answer.Value)
	}
}

func TestMessageSaysWhatTheQuestionIsAbout(t *testing.T) {
	q := choice()
	q.Task, q.Step, q.Screen = "log in to the mail", 3, "an account picker"
	m := q.Message()
	for _, want := range []string{"Which account should I use?", "the work one, the personal one", "log in to the mail (step 3)", "an account picker"} {
		if !strings.Contains(m, want) {
			t.Errorf("message %q lacks %q", m, want)
		}
	}
}
