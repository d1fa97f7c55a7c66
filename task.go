package guiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
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

// Result is what a task returns: the same fields, with the same JSON names,
// as gui_execute_task's result.
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
	Outcome         string       `json:"outcome,omitempty"`
	Warnings        []string     `json:"warnings,omitempty"`
	ModelMillis     int64        `json:"model_ms"`
	StepMillis      int64        `json:"step_ms"`
}

// StepAction is one action of a step.
type StepAction struct {
	// Action is the action as the model gave it (kind, point in the model's
	// convention, text, keys...), as JSON.
	Action json.RawMessage `json:"action"`
	// Outcome is "ok" or what went wrong; Error and Warning say more.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
	Millis  int64  `json:"ms"`
}

// Usage is what a task consumed.
type Usage struct {
	ModelCalls   int   `json:"model_calls"`
	InputTokens  int   `json:"input_tokens"`
	OutputTokens int   `json:"output_tokens"`
	WallMillis   int64 `json:"wall_ms"`
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
	if o.task.MaxSteps < 0 || o.task.MaxSteps > 500 {
		return Result{}, fmt.Errorf("guiagent: WithMaxSteps(%d): want 1 to 500", o.task.MaxSteps)
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
