// Package operate is guiagent's one action executor. Every front end hands
// it an action with its points placed (or a target to place): the agent loop
// (internal/agent), flows (internal/flow), the MCP input tools
// (internal/mcpserver) and the public Go API (the module root). It owns what
// they must all do the same way:
//
//   - placing a point: the caller's own (coordinates through the geom
//     resolver), or a Locator step (vision today; accessibility refs and
//     OCR later) whose name each result carries as located_by;
//   - the key policy (blocked combinations) and confirmations
//     (GUI_AGENT_CONFIRM_HOTKEYS, asked through internal/ask);
//   - waits and holds and their caps;
//   - the keys of the type modes (replace selects all in a way every
//     toolkit understands);
//   - the release ledger of what an action leaves held on purpose
//     (mouse_down, a key down) — per Scope, and at once when the kill switch
//     engages;
//   - the error for an action it cannot perform (ErrCannotPerform).
//
// Input itself goes through desktop.Input, which serializes actions, gates
// every primitive with the kill switch and releases what a failed action
// pressed.
package operate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop"
)

// Limits and defaults of execution.
const (
	// DefaultMaxWait bounds one wait or hold_key action when Options.MaxWait is zero.
	DefaultMaxWait = 10 * time.Second
	// DefaultAskTimeout bounds the wait for a confirmation's answer when
	// Options.AskTimeout is zero (GUI_AGENT_ASK_TIMEOUT_S's default).
	DefaultAskTimeout = 300 * time.Second
	// StopEvery is how often a wait or a hold checks Op.Stop.
	StopEvery = 100 * time.Millisecond
	// HeldEvery is how often, while something is held on purpose, the kill
	// switch is looked at (the kill switch itself trusts a stat this long).
	HeldEvery = 100 * time.Millisecond
	// ReleaseTimeout bounds one release of held input.
	ReleaseTimeout = 2 * time.Second
)

// ErrCannotPerform is wrapped by the error for an action the executor cannot
// perform: a kind that is not input (zoom, ask_user: the caller's own), a
// cached or parsed action of a kind it does not know, or one missing the
// point it needs.
var ErrCannotPerform = errors.New("cannot be performed")

// ErrInterrupted is wrapped by the error of a wait or hold that Op.Stop or
// the context ended early.
var ErrInterrupted = errors.New("interrupted")

// KeyPolicy vets key combinations before they are pressed (safety.KeyPolicy).
type KeyPolicy interface {
	Check(keys []desktop.Key) error
	ask.Confirmer
}

// KillSwitch reports whether all input must stop (safety.KillSwitch).
type KillSwitch interface{ Engaged() bool }

// PolicyError is a combination the key policy refused; nothing was sent.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// RefusedError is a combination a person did not confirm (or nobody could
// be asked about); nothing was sent.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Options configure an Executor. Zero values are documented per field.
type Options struct {
	// Keys is the key policy and the list of combinations to confirm; nil =
	// nothing is blocked or confirmed.
	Keys KeyPolicy
	// Questions is where confirmations wait for a person (the dashboard
	// answers them), besides each Op's own channels; nil = only those.
	Questions *ask.Broker
	// AskTimeout bounds the wait for one confirmation; zero = DefaultAskTimeout.
	AskTimeout time.Duration
	// KillSwitch, when set, releases everything held the moment it engages
	// (its Gate, on desktop.Input, stops new input); nil = none.
	KillSwitch KillSwitch
	// MaxWait caps one wait or hold_key action; zero = DefaultMaxWait.
	MaxWait time.Duration
	// Platform chooses the type modes' keys ("darwin": cmd); "" =
	// runtime.GOOS, or PlatformPhone on a touch backend.
	Platform string
	// Logger receives diagnostics; nil = slog.Default().
	Logger *slog.Logger
}

// Executor performs actions on one desktop for every caller. It is safe for
// concurrent use; desktop.Input serializes the input itself.
type Executor struct {
	in *desktop.Input
	o  Options

	watching atomic.Bool
	closeMu  sync.Mutex
	closed   chan struct{}
}

// New returns the executor of in.
func New(in *desktop.Input, o Options) *Executor {
	if o.AskTimeout <= 0 {
		o.AskTimeout = DefaultAskTimeout
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Platform == "" {
		o.Platform = runtime.GOOS
		if _, ok := desktop.CapabilityOf[desktop.Touch](in.Screen()); ok {
			o.Platform = PlatformPhone
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Executor{in: in, o: o, closed: make(chan struct{})}
}

// Input is the serialized input layer the executor drives.
func (e *Executor) Input() *desktop.Input { return e.in }

// MaxWait is the cap of one wait or hold_key action.
func (e *Executor) MaxWait() time.Duration { return e.o.MaxWait }

// Close stops watching held input for the kill switch; it releases nothing.
func (e *Executor) Close() {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	select {
	case <-e.closed:
	default:
		close(e.closed)
	}
}

// ReleaseAll releases every key and button desktop.Input holds (at the end
// of a task, at shutdown).
func (e *Executor) ReleaseAll() error { return e.in.ReleaseAll() }

// Op is one action to perform and what it needs besides the action.
type Op struct {
	// Action is the parsed action (kind, button, keys, text...). Its points
	// are as the caller received them: the executor acts at At and To.
	Action action.Action
	// At and To are the placed points of the action (nil: the current pointer
	// position, or none); Path holds a drag's intermediate points.
	At, To *Place
	Path   []Place
	// Locate places Action.Target when At is nil and the kind acts at a
	// point; nil = such an action cannot be performed.
	Locate Locator
	// Display is the display a Target is looked for on ("" = the default).
	Display string
	// Mode is how a type action treats the field's text.
	Mode TypeMode
	// Who names the caller in a confirmation ("A tool call (gui_hotkey)").
	Who string
	// Ask are the caller's own channels for a confirmation (the MCP client).
	Ask []ask.Channel
	// Confirm, when set, asks the confirmation instead of the executor (the
	// agent records its question as a step of its own): nil = yes.
	Confirm func(ctx context.Context, keys []desktop.Key, combo string) error
	// Stop is checked every StopEvery during waits and holds; an error ends
	// them early (ErrInterrupted).
	Stop func() error
	// Scope, when set, remembers what the action leaves held on purpose, for
	// Scope.Release.
	Scope *Scope
}

// Result is what performing an Op did.
type Result struct {
	// Prep are the key presses made before the action (a type mode's
	// select-all or go-to-end), in order.
	Prep []action.Trace
	// Trace is the action itself: its points, located_by, outcome, error and duration.
	Trace action.Trace
	// At is where the action acted: the caller's point, or the one a Locator
	// placed (nil: none, or not placed).
	At *Place
}

// Traces are Prep followed by Trace.
func (r Result) Traces() []action.Trace {
	return append(append([]action.Trace(nil), r.Prep...), r.Trace)
}

// Executed reports whether the action ran (ok or failed while running),
// rather than being refused or impossible.
func (r Result) Executed() bool { return r.Trace.Outcome != action.OutcomeNotExecuted }

// Do performs op: places its point, checks and confirms its keys, performs
// it and returns its trace. An error says why it failed or was not
// performed; the trace's outcome tells which (OutcomeNotExecuted: nothing
// was sent).
func (e *Executor) Do(ctx context.Context, op Op) (Result, error) {
	start := time.Now()
	res := Result{Trace: action.Trace{Action: op.Action}}
	fail := func(err error, executed bool) (Result, error) {
		res.Trace.Outcome, res.Trace.Error = action.OutcomeNotExecuted, err.Error()
		if executed {
			res.Trace.Outcome = action.OutcomeFailed
		}
		res.Trace.Millis = time.Since(start).Milliseconds()
		return res, err
	}
	// Keys first: a blocked modifier must not cost a locate.
	if err := e.vet(ctx, op, op.Action.Keys); err != nil {
		return fail(err, false)
	}
	if err := e.place(ctx, &op); err != nil {
		return fail(err, false)
	}
	res.Trace, res.At = traceOf(op), op.At
	if op.Action.Kind == action.TypeText {
		prep, err := e.prepareField(ctx, op)
		res.Prep = prep
		if err != nil {
			return fail(err, len(prep) > 0 && prep[len(prep)-1].Outcome == action.OutcomeFailed)
		}
	}
	err := e.perform(ctx, op)
	e.noteHeld(op, err)
	res.Trace.Millis = time.Since(start).Milliseconds()
	if err != nil {
		if errors.Is(err, ErrCannotPerform) {
			return fail(err, false)
		}
		return fail(err, true)
	}
	res.Trace.Outcome = action.OutcomeOK
	return res, nil
}

// traceOf is the trace of op with its placed points.
func traceOf(op Op) action.Trace {
	t := action.Trace{Action: op.Action}
	if op.At != nil {
		g := op.At.Global
		t.Global, t.Image, t.LocatedBy, t.Warning = &g, op.At.Image, op.At.LocatedBy, op.At.Warning
	}
	if op.To != nil {
		g := op.To.Global
		t.GlobalTo, t.ImageTo = &g, op.To.Image
		if op.To.Warning != "" {
			t.Warning = joinWarn(t.Warning, op.To.Warning)
		}
		if t.LocatedBy == "" {
			t.LocatedBy = op.To.LocatedBy
		}
	}
	return t
}

func joinWarn(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// vet checks keys against the key policy and, when they need a person's
// yes, asks for it (op.Confirm, else the broker and op.Ask).
func (e *Executor) vet(ctx context.Context, op Op, keys []desktop.Key) error {
	if len(keys) == 0 || e.o.Keys == nil {
		return nil
	}
	if err := e.o.Keys.Check(keys); err != nil {
		return &PolicyError{err}
	}
	var err error
	if op.Confirm != nil {
		if combo, ok := e.o.Keys.NeedsConfirm(keys); ok {
			err = op.Confirm(ctx, keys, combo)
		}
	} else {
		who := op.Who
		if who == "" {
			who = "guiagent"
		}
		err = ask.ConfirmKeys(ctx, e.o.Questions, e.o.Keys, keys, who, e.o.AskTimeout, op.Ask...)
	}
	if err != nil {
		return &RefusedError{err}
	}
	return nil
}

// perform sends one placed, vetted action through desktop.Input.
func (e *Executor) perform(ctx context.Context, op Op) error {
	in, a := e.in, op.Action
	at, to := globalOf(op.At), globalOf(op.To)
	btn := a.ButtonOrLeft()
	switch a.Kind {
	case action.Click, action.DoubleClick, action.TripleClick:
		return in.Click(ctx, at, btn, a.Clicks(), a.Keys)
	case action.Move:
		if at == nil {
			return fmt.Errorf("move %w without a position: give the point to move to", ErrCannotPerform)
		}
		return in.Move(ctx, *at, a.Keys...)
	case action.Drag:
		if at == nil || to == nil {
			return fmt.Errorf("drag %w without a start and an end position", ErrCannotPerform)
		}
		path := make([]geomPoint, len(op.Path))
		for i, p := range op.Path {
			path[i] = p.Global
		}
		return in.Drag(ctx, *at, path, *to, btn, a.Keys...)
	case action.Scroll:
		return in.Scroll(ctx, at, a.Direction, a.Notches(), a.Keys)
	case action.TypeText:
		return in.Type(ctx, a.Text)
	case action.KeyPress:
		return e.pressKeys(ctx, a.Keys, a.Repeats())
	case action.HoldKey:
		return e.holdKeys(ctx, a.Keys, a.Duration, op.Stop)
	case action.MouseDown:
		return in.MouseDown(ctx, at, btn)
	case action.MouseUp:
		return in.MouseUp(ctx, at, btn)
	case action.Wait:
		_, err := e.Wait(ctx, a.WaitFor(e.o.MaxWait), e.o.MaxWait, op.Stop)
		return err
	case action.Zoom, action.AskUser:
		return fmt.Errorf("%s %w as input: it is the caller's own (a capture, a question)", a.Kind, ErrCannotPerform)
	}
	return fmt.Errorf("action %q %w: the executor knows %v", a.Kind, ErrCannotPerform, action.Kinds)
}

// pressKeys presses a combination repeat times: the last key with the
// others held, or (all modifiers) the whole combination as a hotkey.
func (e *Executor) pressKeys(ctx context.Context, keys []desktop.Key, repeat int) error {
	if len(keys) == 0 {
		return fmt.Errorf("a key action %w without keys: name the key, e.g. Return or ctrl+s", ErrCannotPerform)
	}
	last := keys[len(keys)-1]
	if !last.IsModifier() {
		return e.in.PressKey(ctx, last, repeat, keys[:len(keys)-1])
	}
	for range repeat {
		if err := e.in.Hotkey(ctx, keys); err != nil {
			return err
		}
	}
	return nil
}

// holdKeys presses keys, holds them for d (at most MaxWait, interruptible)
// and releases them in reverse order, whatever happens.
func (e *Executor) holdKeys(ctx context.Context, keys []desktop.Key, d time.Duration, stop func() error) (err error) {
	var pressed []desktop.Key
	defer func() {
		rel := context.WithoutCancel(ctx)
		for i := len(pressed) - 1; i >= 0; i-- {
			if uerr := e.in.KeyUp(rel, pressed[i]); uerr != nil && err == nil {
				err = uerr
			}
		}
	}()
	for _, k := range keys {
		if err := e.in.KeyDown(ctx, k); err != nil {
			return err
		}
		pressed = append(pressed, k)
	}
	_, err = e.Wait(ctx, d, e.o.MaxWait, stop)
	return err
}

// Wait waits d, at most limit (zero: MaxWait), checking stop every
// StopEvery; it returns how long it meant to wait. A context end or a stop
// error ends it early with an error wrapping ErrInterrupted.
func (e *Executor) Wait(ctx context.Context, d, limit time.Duration, stop func() error) (time.Duration, error) {
	if limit <= 0 {
		limit = e.o.MaxWait
	}
	d = max(min(d, limit), 0)
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return d, nil
		}
		t := time.NewTimer(min(left, StopEvery))
		select {
		case <-ctx.Done():
			t.Stop()
			return d, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
		case <-t.C:
		}
		if stop != nil {
			if err := stop(); err != nil {
				return d, fmt.Errorf("%w: %v", ErrInterrupted, err)
			}
		}
	}
}
