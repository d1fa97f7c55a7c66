// Package ask puts a question to a person while a run waits, and returns the
// first answer. A Broker holds the pending questions: the dashboard lists and
// answers them (Pending, Answer), and each question may also go out through
// channels of its own (the calling MCP client's elicitation). The first answer
// from any of them wins; the others are cancelled, and the dashboard sees the
// question as answered, and by whom.
//
// An answer is text (or yes/no) for whoever asked, never an action to
// execute. A secret answer's value is handed to the asker and nowhere else:
// the broker keeps only its length.
package ask

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
)

// Question is one question to a person.
type Question struct {
	ID string `json:"id"`
	// RunID, Task and Step say which run asks, and at which step (empty for
	// a question of an MCP tool call, such as a hotkey to confirm).
	RunID string `json:"run_id,omitempty"`
	Task  string `json:"task,omitempty"`
	Step  int    `json:"step,omitempty"`
	// Text is the question; Kind the answer it wants; Options a choice's options.
	Text    string         `json:"question"`
	Kind    action.AskKind `json:"kind"`
	Options []string       `json:"options,omitempty"`
	// Secret marks a text answer that must not be shown or kept (a password
	// the person types): it is never sent through MCP form elicitation.
	Secret bool `json:"secret,omitempty"`
	// Screen is a short description of the screen the question is about.
	Screen string `json:"screen,omitempty"`
	// Image is the screenshot the question is about (MIME ImageMIME), served
	// to the dashboard; never marshalled.
	Image     []byte    `json:"-"`
	ImageMIME string    `json:"-"`
	HasImage  bool      `json:"has_image"`
	Asked     time.Time `json:"asked"`
	// Deadline is when the question expires unanswered (zero: never).
	Deadline time.Time `json:"deadline,omitzero"`
}

// Message is the question as one text for a person: the question, then what
// it is about (task, step, screen).
func (q Question) Message() string {
	var b strings.Builder
	b.WriteString(q.Text)
	if q.Kind == action.AskChoice && len(q.Options) > 0 {
		b.WriteString("\nOptions: " + strings.Join(q.Options, ", "))
	}
	if q.Task != "" {
		fmt.Fprintf(&b, "\n\nTask: %s", q.Task)
		if q.Step > 0 {
			fmt.Fprintf(&b, " (step %d)", q.Step)
		}
	}
	if q.Screen != "" {
		b.WriteString("\nScreen: " + q.Screen)
	}
	return b.String()
}

// Outcome is what the person did with a question (MCP elicitation's actions).
type Outcome string

// The outcomes.
const (
	Accept  Outcome = "accept"  // answered
	Decline Outcome = "decline" // refused to answer
	Cancel  Outcome = "cancel"  // dismissed: stop what is waiting
)

// Channel names.
const (
	ByClient    = "client"    // the MCP client, through elicitation
	ByDashboard = "dashboard" // the live dashboard
)

// Answer is a person's answer.
type Answer struct {
	Outcome Outcome `json:"action"`
	// Value is the answer of an accepted question: the text, the option
	// chosen, or "yes"/"no" for a confirm.
	Value string `json:"value,omitempty"`
	// By names the channel the answer came from (ByClient, ByDashboard).
	By string `json:"by,omitempty"`
}

// Approved reports whether a is a confirm answered yes.
func (a Answer) Approved() bool { return a.Outcome == Accept && a.Value == Yes }

// The values of a confirm.
const (
	Yes = "yes"
	No  = "no"
)

// Check validates a against q: an accepted answer needs a value, a confirm's
// is yes or no, a choice's one of the options. Values are trimmed.
func (q Question) Check(a Answer) (Answer, error) {
	switch a.Outcome {
	case Decline, Cancel:
		a.Value = ""
		return a, nil
	case Accept:
	default:
		return a, fmt.Errorf("unknown answer action %q: use accept, decline or cancel", a.Outcome)
	}
	if !q.Secret {
		a.Value = strings.TrimSpace(a.Value)
	}
	switch q.Kind {
	case action.AskConfirm:
		switch strings.ToLower(a.Value) {
		case "yes", "true", "y":
			a.Value = Yes
		case "no", "false", "n":
			a.Value = No
		default:
			return a, fmt.Errorf("a confirm is answered yes or no, not %q", a.Value)
		}
	case action.AskChoice:
		if !slices.Contains(q.Options, a.Value) {
			return a, fmt.Errorf("%q is not one of the options (%s)", a.Value, strings.Join(q.Options, ", "))
		}
	default:
		if a.Value == "" {
			return a, errors.New("the answer is empty: type an answer, or decline")
		}
	}
	return a, nil
}

// Errors of Ask and Answer.
var (
	// ErrNoChannel: nobody can be asked (no dashboard, and no channel of the
	// question's own).
	ErrNoChannel = errors.New("no way to ask a person: the MCP client does not support elicitation and no dashboard is served")
	// ErrNotPending: the question was answered already, expired, or never asked.
	ErrNotPending = errors.New("the question is not pending: it was answered already or expired")
	// ErrUnsupported is returned by a Channel that cannot ask this question
	// (a secret through a form); the broker then relies on the others.
	ErrUnsupported = errors.New("this channel cannot ask this question")
)

// Channel asks one question somewhere of its own and returns the answer, or
// ctx's error once the question was answered elsewhere or expired.
type Channel interface {
	Name() string
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Event is a change of the broker's questions.
type Event struct {
	Kind     string    `json:"kind"` // EvAsked, EvAnswered, EvExpired
	Question Question  `json:"question"`
	Answer   *Answer   `json:"answer,omitempty"` // EvAnswered; a secret's value is never included
	Time     time.Time `json:"time"`
}

// Event kinds.
const (
	EvAsked    = "asked"
	EvAnswered = "answered"
	EvExpired  = "expired" // timed out, or its asker stopped waiting
)

// Broker holds the pending questions. Safe for concurrent use.
type Broker struct {
	mu        sync.Mutex
	dashboard bool
	pending   map[string]*pending
	recent    []Event // the last answered or expired questions, newest last
	subs      map[int]chan Event
	nextSub   int
}

type pending struct {
	q      Question
	answer chan Answer // buffered 1; the first answer is sent, the rest refused
}

// recentKept is how many finished questions Recent returns.
const recentKept = 10

// NewBroker returns a broker; dashboard says whether a dashboard is served
// (so a question can be answered there). SetDashboard changes it.
func NewBroker(dashboard bool) *Broker {
	return &Broker{dashboard: dashboard, pending: map[string]*pending{}, subs: map[int]chan Event{}}
}

// SetDashboard says whether a dashboard that can answer questions is served.
func (b *Broker) SetDashboard(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dashboard = on
}

// Dashboard reports whether a dashboard can answer questions.
func (b *Broker) Dashboard() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dashboard
}

// Ask registers q, sends it through each channel, and waits for the first
// valid answer from a channel or the dashboard, or for ctx to end (the
// asker's timeout: ctx's error is returned). With no dashboard and no channel
// that can take q it returns ErrNoChannel at once. q.ID and q.Asked are set here.
func (b *Broker) Ask(ctx context.Context, q Question, chs ...Channel) (Answer, error) {
	if q.Kind == "" {
		q.Kind = action.AskText
	}
	q.ID, q.Asked = newID(), time.Now()
	if d, ok := ctx.Deadline(); ok {
		q.Deadline = d
	}
	q.HasImage = len(q.Image) > 0
	var live []Channel
	for _, c := range chs {
		if c != nil {
			live = append(live, c)
		}
	}
	if len(live) == 0 && !b.Dashboard() {
		return Answer{}, ErrNoChannel
	}
	p := &pending{q: q, answer: make(chan Answer, 1)}
	b.mu.Lock()
	b.pending[q.ID] = p
	b.mu.Unlock()
	b.publish(Event{Kind: EvAsked, Question: q})

	chCtx, stop := context.WithCancel(ctx)
	defer stop()
	unsupported := make(chan struct{}, len(live))
	for _, c := range live {
		go func() {
			a, err := c.Ask(chCtx, q)
			if errors.Is(err, ErrUnsupported) {
				unsupported <- struct{}{}
				return
			}
			if err != nil {
				if chCtx.Err() == nil {
					// A channel that failed (the client went away) leaves the others.
					unsupported <- struct{}{}
				}
				return
			}
			a.By = c.Name()
			_ = b.Answer(q.ID, a)
		}()
	}
	failed := 0
	for {
		select {
		case a := <-p.answer:
			return a, nil
		case <-unsupported:
			failed++
			if failed == len(live) && !b.Dashboard() {
				b.finish(q.ID, Event{Kind: EvExpired, Question: q})
				return Answer{}, ErrNoChannel
			}
		case <-ctx.Done():
			b.finish(q.ID, Event{Kind: EvExpired, Question: q})
			select { // an answer that raced the end still wins
			case a := <-p.answer:
				return a, nil
			default:
			}
			return Answer{}, context.Cause(ctx)
		}
	}
}

// Ask is b.Ask when b is set; with no broker the question goes only to chs.
func Ask(ctx context.Context, b *Broker, q Question, chs ...Channel) (Answer, error) {
	if b == nil {
		b = NewBroker(false)
	}
	return b.Ask(ctx, q, chs...)
}

// Answer answers the pending question id with a (checked against the
// question). The first answer wins; a later one gets ErrNotPending.
func (b *Broker) Answer(id string, a Answer) error {
	b.mu.Lock()
	p, ok := b.pending[id]
	b.mu.Unlock()
	if !ok {
		return ErrNotPending
	}
	a, err := p.q.Check(a)
	if err != nil {
		return err
	}
	ev := Event{Kind: EvAnswered, Question: p.q, Answer: &a}
	if p.q.Secret {
		shown := a
		shown.Value = Masked(a.Value)
		ev.Answer = &shown
	}
	if !b.finish(id, ev) {
		return ErrNotPending
	}
	p.answer <- a
	return nil
}

// Masked is how a secret answer is shown and recorded: only its length.
func Masked(v string) string { return fmt.Sprintf("<typed %d chars>", len([]rune(v))) }

// finish removes id from the pending questions and publishes ev; false when
// it was no longer pending.
func (b *Broker) finish(id string, ev Event) bool {
	b.mu.Lock()
	if _, ok := b.pending[id]; !ok {
		b.mu.Unlock()
		return false
	}
	delete(b.pending, id)
	ev.Question.Image = nil
	ev.Time = time.Now()
	b.recent = append(b.recent, ev)
	if len(b.recent) > recentKept {
		b.recent = slices.Clone(b.recent[len(b.recent)-recentKept:])
	}
	b.mu.Unlock()
	b.publish(ev)
	return true
}

// Pending returns the pending questions, oldest first.
func (b *Broker) Pending() []Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Question, 0, len(b.pending))
	for _, p := range b.pending {
		out = append(out, p.q)
	}
	slices.SortFunc(out, func(x, y Question) int { return x.Asked.Compare(y.Asked) })
	return out
}

// Get returns the pending question id.
func (b *Broker) Get(id string) (Question, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pending[id]
	if !ok {
		return Question{}, false
	}
	return p.q, true
}

// Recent returns the last answered or expired questions, newest last.
func (b *Broker) Recent() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.recent)
}

// Subscribe returns a channel of the broker's events and its cancel. A slow
// subscriber misses events rather than holding up an answer.
func (b *Broker) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 16)
	b.mu.Lock()
	id := b.nextSub
	b.nextSub++
	b.subs[id] = ch
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.subs[id]; ok {
			delete(b.subs, id)
			close(ch)
		}
	}
}

func (b *Broker) publish(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Question.Image = nil
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ch := range b.subs {
		select {
		case ch <- ev:
		default:
		}
	}
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "q-" + hex.EncodeToString(b[:])
}
