package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
)

// OnBusy values: what a task does when another one is running.
const (
	// BusyQueue waits (cancellably) for the running task to finish.
	BusyQueue = "queue"
	// BusyPreempt ends the running task as superseded and starts at once.
	BusyPreempt = "preempt"
	// BusyReject returns a failed Result saying a task is already running.
	BusyReject = "reject"
)

// KeyPolicy vets key combinations before they are pressed (safety.KeyPolicy).
type KeyPolicy interface {
	// Check returns an error naming the blocked combination, or nil.
	Check(keys []desktop.Key) error
}

// ConfirmPolicy says which key combinations need a person's yes before they
// are sent (safety.KeyPolicy.NeedsConfirm).
type ConfirmPolicy interface {
	// NeedsConfirm returns the configured combination keys contain, if any.
	NeedsConfirm(keys []desktop.Key) (combo string, ok bool)
}

// keyPolicy is Policy and Confirm as the executor's one key policy.
type keyPolicy struct {
	check   KeyPolicy
	confirm ConfirmPolicy
}

func (k keyPolicy) Check(keys []desktop.Key) error {
	if k.check == nil {
		return nil
	}
	return k.check.Check(keys)
}

func (k keyPolicy) NeedsConfirm(keys []desktop.Key) (string, bool) {
	if k.confirm == nil {
		return "", false
	}
	return k.confirm.NeedsConfirm(keys)
}

// KillSwitch reports whether all input must stop (safety.KillSwitch).
type KillSwitch interface {
	// Engaged is true while input is forbidden.
	Engaged() bool
}

// Settle bounds the wait for the screen to stop changing before a screenshot
// is shown to the model: screenshots are taken every Interval until two in a
// row differ by less than Threshold (mean absolute thumbnail difference, 0..1),
// for at most MaxWait.
type Settle struct {
	// Threshold is the largest thumbnail difference that counts as "still"; zero = 0.004.
	Threshold float64
	// Interval is the time between two screenshots; zero = 120 ms.
	Interval time.Duration
	// MaxWait bounds the whole wait; zero = 3 s; negative disables settling
	// (one screenshot per step).
	MaxWait time.Duration
}

// Stuck configures stuck detection: Steps steps in a row whose screenshot did
// not change after acting add a warning to the next prompt; one more ends the
// run as failed.
type Stuck struct {
	// Steps is the number of unchanged steps before the warning; zero = 3.
	Steps int
	// Threshold is the thumbnail difference (0..1) under which the screen
	// counts as unchanged; zero = 0.002.
	Threshold float64
}

// Options configure a Runner. Zero values are documented per field.
type Options struct {
	// Input is the desktop's input layer; required unless Executor is given.
	// Its Gate is where the kill switch plugs in (set it before New).
	Input *desktop.Input
	// Executor performs every action (the one shared with the MCP tools,
	// flows and the Go API); nil = one over Input with Policy, Confirm,
	// KillSwitch and MaxWaitAction. With it, Policy and Confirm only say
	// whether the run asks (the executor's own key policy decides).
	Executor *operate.Executor
	// Screen captures screenshots; nil = Input.Screen().
	Screen desktop.Screen
	// Shots encodes screenshots; nil = a new imaging.Pipeline.
	Shots *imaging.Pipeline
	// Shot are the screenshot options; Shot.Profile is always replaced by the
	// adapter's profile, so images are sized the way the model expects.
	Shot imaging.Options
	// Adapter talks to the model; required.
	Adapter llm.Adapter
	// MemoryModel condenses old steps when the history outgrows its budget;
	// nil = older steps are shortened and truncated without a model.
	MemoryModel llm.TextModel
	// Grounder locates actions that name a Target instead of coordinates; nil =
	// such actions are refused and the model is asked for coordinates.
	Grounder llm.Grounder
	// Policy vets key combinations; nil = no key is blocked.
	Policy KeyPolicy
	// KillSwitch, when engaged, stops the run as blocked (kill_switch); nil = none.
	KillSwitch KillSwitch
	// Confirm names key combinations that need a person's yes before they are
	// sent (GUI_AGENT_CONFIRM_HOTKEYS); nil = none. Policy still blocks first.
	Confirm ConfirmPolicy

	// Questions is where the model's questions (ask_user) and confirmations
	// wait for a person: the dashboard answers them there, and Task.Ask, the
	// caller's own channel, is asked too. nil = questions go only to Task.Ask;
	// with neither the run ends blocked with the question as next_user_action.
	Questions *ask.Broker
	// AskTimeout bounds the wait for one answer; zero = DefaultAskTimeout
	// (GUI_AGENT_ASK_TIMEOUT_S).
	AskTimeout time.Duration

	// MaxSteps bounds model steps per task; zero = 50. Task.MaxSteps overrides it.
	MaxSteps int
	// Timeout bounds a task's wall time; zero = 10 minutes. Task.Timeout overrides it.
	Timeout time.Duration
	// TokenBudget bounds input+output tokens per task; zero = unlimited.
	TokenBudget int
	// StepDelay is an extra pause after each step's actions, before the settle
	// wait; zero = none.
	StepDelay time.Duration
	// KeepImages is how many screenshots a model call carries, the current one
	// included (K); zero = llm.DefaultKeepImages. The adapter's Config.KeepImages
	// must be the same (cmd sets both from GUI_AGENT_SCREENSHOT_KEEP).
	KeepImages int
	// MaxWaitAction bounds one wait or hold_key action; zero = 10 s.
	MaxWaitAction time.Duration
	// RecentBudgetChars and SummaryBudgetChars bound the memory layers (see
	// memory.go); zero = 1500 and 2000 characters.
	RecentBudgetChars, SummaryBudgetChars int

	// Settle bounds the wait for a still screen.
	Settle Settle
	// Stuck configures stuck detection.
	Stuck Stuck
	// OnBusy is BusyQueue (zero value), BusyPreempt or BusyReject.
	OnBusy string
	// DisableHumanOverride turns human-takeover detection off. By default (false)
	// a pointer moved by someone else stops the run as blocked (human_override).
	DisableHumanOverride bool
	// OverrideTolerancePx is how far (global logical pixels) the pointer may be
	// from where Input put it before it counts as a human; zero = 4.
	OverrideTolerancePx int
	// Elements is what each step shows the model of the UI's elements
	// (GUI_AGENT_ELEMENTS): with the desktop's element source
	// (desktop.ElementsOf) a snapshot of the focused window is taken beside
	// each screenshot; ElementsText adds its outline to the observation,
	// ElementsMarks draws numbered marks on the screenshot, ElementsBoth
	// does both, and refs in the model's actions resolve against it. ""
	// (ElementsOff) takes none.
	Elements ElementsMode

	// ProgressEvery is the interval of "still waiting" progress while the model
	// thinks; zero = 5 s.
	ProgressEvery time.Duration

	// Logger receives diagnostics; nil = slog.Default().
	Logger *slog.Logger
	// NewRecorder, when set, is called at the start of every run; its
	// Recorder gets that run's events, names the run's directory and report in
	// the Result, and is closed after the finish event, before Run returns (the
	// run recorder, e.g. a *trace.Run from trace.Store.Begin).
	NewRecorder func(runID string, t Task) (Recorder, error)
}

// Recorder records one run: an Observer of its events that knows where the
// record is. Close is called once, after the finish event.
type Recorder interface {
	Observer
	// Dir is the run's record directory ("" when there is none).
	Dir() string
	// ReportPath is the run's HTML report file ("" when there is none).
	ReportPath() string
	// Close finishes the record.
	Close() error
}

// withDefaults returns o with zero values replaced and checks what is required.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if o.Input == nil && o.Executor != nil {
		o.Input = o.Executor.Input()
	}
	if o.Input == nil {
		errs = append(errs, errors.New("agent: Options.Input is nil: pass desktop.NewInput(screen)"))
	}
	if o.Adapter == nil {
		errs = append(errs, errors.New("agent: Options.Adapter is nil: configure a model provider ("+config.Vars("Provider", "Model")+")"))
	}
	switch o.OnBusy {
	case "":
		o.OnBusy = BusyQueue
	case BusyQueue, BusyPreempt, BusyReject:
	default:
		errs = append(errs, fmt.Errorf("agent: OnBusy %q is not valid: use queue, preempt or reject (%s)", o.OnBusy, config.Var("OnBusy")))
	}
	if err := o.Elements.check(); err != nil {
		errs = append(errs, err)
	}
	if o.MaxSteps < 0 || o.TokenBudget < 0 || o.KeepImages < 0 || o.Timeout < 0 {
		errs = append(errs, errors.New("agent: MaxSteps, TokenBudget, KeepImages and Timeout must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	if o.Screen == nil {
		o.Screen = o.Input.Screen()
	}
	if o.Shots == nil {
		o.Shots = imaging.NewPipeline()
	}
	o.Shot.Profile = o.Adapter.Profile()
	if o.MaxSteps == 0 {
		o.MaxSteps = 50
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.KeepImages == 0 {
		o.KeepImages = llm.DefaultKeepImages
	}
	if o.MaxWaitAction == 0 {
		o.MaxWaitAction = 10 * time.Second
	}
	if o.Settle.Threshold == 0 {
		o.Settle.Threshold = 0.004
	}
	if o.Settle.Interval == 0 {
		o.Settle.Interval = 120 * time.Millisecond
	}
	if o.Settle.MaxWait == 0 {
		o.Settle.MaxWait = 3 * time.Second
	}
	if o.Stuck.Steps == 0 {
		o.Stuck.Steps = 3
	}
	if o.Stuck.Threshold == 0 {
		o.Stuck.Threshold = 0.002
	}
	if o.OverrideTolerancePx == 0 {
		o.OverrideTolerancePx = 4
	}
	if o.AskTimeout <= 0 {
		o.AskTimeout = DefaultAskTimeout
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Executor == nil {
		eo := operate.Options{Keys: keyPolicy{o.Policy, o.Confirm}, MaxWait: o.MaxWaitAction, Logger: o.Logger}
		if o.KillSwitch != nil {
			eo.KillSwitch = o.KillSwitch
		}
		o.Executor = operate.New(o.Input, eo)
	}
	return o, nil
}
