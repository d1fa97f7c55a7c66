package guiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/config"
)

// Status is how a task ended.
type Status string

// Task statuses.
const (
	Completed  Status = "completed"
	Blocked    Status = "blocked"
	Failed     Status = "failed"
	Cancelled  Status = "cancelled"
	Timeout    Status = "timeout"
	Superseded Status = "superseded"
)

// Result is what a task returns: the fields of gui_execute_task's result,
// with the same JSON names (TestResultMirrorsTheTool holds them to it).
type Result struct {
	Status  Status `json:"status"`
	Summary string `json:"summary"`
	// Result is the answer the task asked for, if any.
	Result string `json:"result,omitempty"`
	// BlockReason says why a blocked task stopped (e.g. "human_override",
	// "kill_switch", "model_requested_human"); NextUserAction what a person
	// should do.
	BlockReason    string   `json:"block_reason,omitempty"`
	NextUserAction string   `json:"next_user_action,omitempty"`
	SafetyChecks   []string `json:"safety_checks,omitempty"`
	Steps          int      `json:"steps"`
	Memory         []string `json:"memory,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	Trace          []Step   `json:"trace"`
	Usage          Usage    `json:"usage"`
	// RunID names the run record in RunDir; Report is its HTML report.
	RunID  string `json:"run_id"`
	RunDir string `json:"run_dir,omitempty"`
	Report string `json:"report,omitempty"`
}

// Step is one step of a task: what the model saw and decided, and the
// actions done.
type Step struct {
	Step            int          `json:"step"`
	Observation     string       `json:"observation,omitempty"`
	Reasoning       string       `json:"reasoning,omitempty"`
	Actions         []StepAction `json:"actions"`
	ExpectedOutcome string       `json:"expected_outcome,omitempty"`
	// ModelStatus is what the model said of the task at this step:
	// "continue", "done", "blocked" or "failed".
	ModelStatus string   `json:"model_status,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// Usage is what this step's model calls consumed.
	Usage       StepUsage `json:"usage"`
	ModelMillis int64     `json:"model_ms"`
	StepMillis  int64     `json:"step_ms"`
	// FrameID names the screenshot the step's decision was made on (its
	// image is in the run record).
	FrameID string `json:"frame_id,omitempty"`
	// Elements summarizes the snapshot of the UI's elements the step took
	// (Options.Elements on); nil when none was asked for.
	Elements *StepElements `json:"elements,omitempty"`
}

// StepElements is a step's snapshot of the UI's elements (the accessibility
// tree), summarized.
type StepElements struct {
	// Mode is what the model was shown: "text", "marks" or "both".
	Mode string `json:"mode"`
	// Source names the element source ("atspi"); Window the focused window.
	Source string `json:"source,omitempty"`
	Window string `json:"window,omitempty"`
	// Count is the number of elements; Marked how many were marked on the screenshot.
	Count  int `json:"count"`
	Marked int `json:"marked,omitempty"`
	// Truncated says the walk stopped early; TruncatedBy why.
	Truncated   bool   `json:"truncated,omitempty"`
	TruncatedBy string `json:"truncated_by,omitempty"`
	Millis      int64  `json:"ms"`
	// Outline is the elements' text outline; a task's result leaves it out
	// (the run record keeps it).
	Outline string `json:"outline,omitempty"`
	// Error is why the step has no snapshot.
	Error string `json:"error,omitempty"`
}

// StepAction is one action of a step.
type StepAction struct {
	// Action is the action as the model gave it (kind, point in the model's
	// convention, text, keys...), as JSON.
	Action json.RawMessage `json:"action"`
	// Image is where the action pointed, in pixels of the step's screenshot,
	// and Screen where its input went; ImageTo and ScreenTo are the same for
	// a drag's end or a zoom's far corner. They are nil for an action
	// without a point.
	Image    *ImageXY  `json:"image,omitempty"`
	Screen   *ScreenXY `json:"global,omitempty"`
	ImageTo  *ImageXY  `json:"image_to,omitempty"`
	ScreenTo *ScreenXY `json:"global_to,omitempty"`
	// Outcome is "ok" or what went wrong; Error and Warning say more.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
	// LocatedBy says how a target was found ("vision", "grounding",
	// "cache", ...), empty for coordinates the model gave.
	LocatedBy string `json:"located_by,omitempty"`
	// Answer is a person's answer to an ask_user action (a secret's only as
	// "<typed N chars>"), AnsweredBy where it came from ("client" for the MCP
	// client or WithAsk, "dashboard").
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by,omitempty"`
	Millis     int64  `json:"ms"`
}

// ImageXY is a position in pixels of a screenshot's image, origin at its
// top-left (fractions allowed).
type ImageXY struct{ X, Y float64 }

// ScreenXY is a position in screen pixels: logical pixels of the virtual
// desktop, origin at the primary display's top-left (may be negative).
type ScreenXY struct{ X, Y int }

// Question is what a running task asks a person: the model's question
// (ask_user), a provider's safety check to approve, or a key combination of
// Options.ConfirmHotkeys to allow.
type Question struct {
	Text string
	// Kind is "confirm" (answer "yes" or "no"), "text" or "choice" (answer
	// one of Options).
	Kind    string
	Options []string
	// Secret marks a text answer (a password) that is typed into the focused
	// field and never shown to the model or recorded; only its length is.
	Secret bool
	// Task and Step say which task asks, at which step; Screen is a short
	// description of the screen.
	Task   string
	Step   int
	Screen string
}

// Reply is a person's answer to a Question.
type Reply struct {
	// Action is "accept" (Value is the answer), "decline" (the task ends
	// blocked) or "cancel" (the task ends cancelled).
	Action string
	Value  string
}

// WithAsk lets the task ask a person through f (besides the dashboard of an
// HTTP server, if one is served; the first answer wins). f is called from
// the task's goroutine and should return when ctx ends. Without any way to
// ask, a task whose model asks ends blocked with the question as
// NextUserAction.
func WithAsk(f func(ctx context.Context, q Question) (Reply, error)) TaskOption {
	return func(o *taskOptions) { o.task.Ask = askFunc(f) }
}

// askFunc is a WithAsk function as an ask.Channel.
type askFunc func(ctx context.Context, q Question) (Reply, error)

func (askFunc) Name() string { return ask.ByClient }

func (f askFunc) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	a, err := f(ctx, Question{Text: q.Text, Kind: string(q.Kind), Options: q.Options, Secret: q.Secret,
		Task: q.Task, Step: q.Step, Screen: q.Screen})
	return ask.Answer{Outcome: ask.Outcome(a.Action), Value: a.Value}, err
}

// Usage is what a task consumed.
type Usage struct {
	ModelCalls   int   `json:"model_calls"`
	InputTokens  int   `json:"input_tokens"`
	OutputTokens int   `json:"output_tokens"`
	WallMillis   int64 `json:"wall_ms"`
}

// StepUsage is what one step's model calls consumed.
type StepUsage struct {
	ModelCalls   int `json:"model_calls"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Progress is one progress report of a running task.
type Progress struct {
	// Message says what the task is doing, e.g. "step 2: click (120,44)".
	Message string
	// Done counts progress units so far, of Total (0 when unknown).
	Done, Total float64
}

// TaskOption changes how Execute runs one task.
type TaskOption func(*taskOptions)

type taskOptions struct {
	task     agent.Task
	progress func(Progress)
}

// WithProgress calls f with the task's progress as it happens, from the
// task's goroutine; f must return quickly.
func WithProgress(f func(Progress)) TaskOption {
	return func(o *taskOptions) { o.progress = f }
}

// OnDisplay runs the task on the display with this id (see Displays);
// default: Options.Display, else the primary display.
func OnDisplay(id string) TaskOption {
	return func(o *taskOptions) { o.task.Display = id }
}

// WithMaxSteps bounds the task's model steps (1-500); default Options.MaxSteps.
func WithMaxSteps(n int) TaskOption {
	return func(o *taskOptions) { o.task.MaxSteps = n }
}

// WithTimeout bounds the task's wall time; default Options.TaskTimeout.
func WithTimeout(d time.Duration) TaskOption {
	return func(o *taskOptions) { o.task.Timeout = d }
}

// Execute hands task, a goal in plain words, to guiagent's vision agent, which
// looks at the screen and uses mouse and keyboard until the goal is done,
// blocked or failed, and returns the result. One task runs at a time (others
// queue, preempt or are refused per Options.OnBusy). The error is ErrNoModel
// when no model is configured, or names a bad argument; how the task ended
// (failed included) is in Result.Status. Cancelling ctx stops the task.
func (a *Agent) Execute(ctx context.Context, task string, opts ...TaskOption) (Result, error) {
	o := taskOptions{task: agent.Task{Task: task}}
	for _, opt := range opts {
		opt(&o)
	}
	if strings.TrimSpace(task) == "" {
		return Result{}, errors.New("guiagent: the task is empty: describe the goal in plain words")
	}
	if o.task.MaxSteps < 0 || o.task.MaxSteps > config.MaxStepsLimit {
		return Result{}, fmt.Errorf("guiagent: WithMaxSteps(%d): want 1 to %d", o.task.MaxSteps, config.MaxStepsLimit)
	}
	if o.task.Timeout < 0 {
		return Result{}, fmt.Errorf("guiagent: WithTimeout(%v): want a positive duration", o.task.Timeout)
	}
	if !a.app.HasModel() {
		return Result{}, ErrNoModel
	}
	var progress func(agent.Event)
	if o.progress != nil {
		progress = func(ev agent.Event) {
			if ev.Kind == agent.EvProgress {
				o.progress(Progress{Message: ev.Message, Done: ev.Progress, Total: ev.Total})
			}
		}
	}
	r := a.app.RunTask(ctx, o.task, progress)
	return publicResult(r)
}

// publicResult converts through gui_execute_task's JSON, so Result carries
// exactly what the tool returns.
func publicResult(r agent.Result) (Result, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return Result{}, fmt.Errorf("guiagent: encoding the result: %w", err)
	}
	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		return Result{}, fmt.Errorf("guiagent: decoding the result: %w", err)
	}
	if out.Trace == nil {
		out.Trace = []Step{}
	}
	return out, nil
}
