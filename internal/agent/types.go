package agent

import (
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/llm"
)

// Status is how a task run ended.
type Status string

// Run statuses.
const (
	Completed  Status = "completed"
	Blocked    Status = "blocked"
	Failed     Status = "failed"
	Cancelled  Status = "cancelled"
	Timeout    Status = "timeout"
	Superseded Status = "superseded"
)

// Block reasons.
const (
	ReasonModel         = "model_requested_human"
	ReasonHumanOverride = "human_override"
	ReasonPolicy        = "policy"
	ReasonKillSwitch    = "kill_switch"
	ReasonConfirmation  = "confirmation_refused"
	ReasonSafetyCheck   = "safety_check"
	// ReasonUserDeclined: the person declined to answer the model's question.
	ReasonUserDeclined = "user_declined"
	// ReasonNoAnswer: the model asked a question that nobody answered in time,
	// or that nobody could be asked (no elicitation, no dashboard).
	ReasonNoAnswer = "no_answer"
)

// Task is one gui_execute_task request.
type Task struct {
	Task     string        `json:"task"`
	Display  string        `json:"display,omitempty"`
	MaxSteps int           `json:"max_steps,omitempty"`
	Timeout  time.Duration `json:"-"`
	// Ask, when set, is the caller's own way to ask its user a question (the
	// MCP client's elicitation); questions also go to Options.Questions.
	Ask ask.Channel `json:"-"`
}

// StepTrace is one step of a run.
type StepTrace struct {
	Step            int            `json:"step"`
	Observation     string         `json:"observation,omitempty"`
	Reasoning       string         `json:"reasoning,omitempty"`
	Actions         []action.Trace `json:"actions"`
	ExpectedOutcome string         `json:"expected_outcome,omitempty"`
	ModelStatus     llm.Status     `json:"model_status,omitempty"`
	Outcome         string         `json:"outcome,omitempty"`
	Warnings        []string       `json:"warnings,omitempty"`
	Usage           llm.Usage      `json:"usage"`
	ModelMillis     int64          `json:"model_ms"`
	StepMillis      int64          `json:"step_ms"`
	// FrameID is the screenshot this step's decision was made on.
	FrameID string `json:"frame_id,omitempty"`
	// Elements is the step's element snapshot, compact (GUI_AGENT_ELEMENTS
	// on); refs of the step's actions were resolved against it.
	Elements *ElementsTrace `json:"elements,omitempty"`
}

// RunUsage is what a run consumed.
type RunUsage struct {
	llm.Usage
	WallMillis int64 `json:"wall_ms"`
}

// Result is what gui_execute_task returns.
type Result struct {
	Status         Status      `json:"status"`
	Summary        string      `json:"summary"`
	Result         string      `json:"result,omitempty"`
	BlockReason    string      `json:"block_reason,omitempty"`
	NextUserAction string      `json:"next_user_action,omitempty"`
	SafetyChecks   []string    `json:"safety_checks,omitempty"`
	Steps          int         `json:"steps"`
	Memory         []string    `json:"memory,omitempty"`
	Warnings       []string    `json:"warnings,omitempty"`
	Trace          []StepTrace `json:"trace"`
	Usage          RunUsage    `json:"usage"`
	RunID          string      `json:"run_id"`
	RunDir         string      `json:"run_dir,omitempty"`
	Report         string      `json:"report,omitempty"`
}

// EventKind names a run event.
type EventKind string

// Run events, in the order they usually occur.
const (
	EvStart      EventKind = "start"      // Message = task
	EvProgress   EventKind = "progress"   // Message = human-readable progress
	EvScreenshot EventKind = "screenshot" // Image = the screenshot sent to the model
	EvModel      EventKind = "model"      // Decision (with Request/Response bodies)
	EvAction     EventKind = "action"     // Action = the executed action
	EvStep       EventKind = "step"       // Step = the finished step
	EvWarning    EventKind = "warning"    // Message
	EvFinish     EventKind = "finish"     // Result
)

// Event is something that happened during a run. Observers must not keep or
// modify the pointed-to values after returning, except Image.Data which is
// never modified after the event.
type Event struct {
	Time     time.Time     `json:"time"`
	RunID    string        `json:"run_id"`
	Kind     EventKind     `json:"kind"`
	Step     int           `json:"step,omitempty"`
	Message  string        `json:"message,omitempty"`
	Image    *llm.Image    `json:"-"`
	Decision *llm.Decision `json:"decision,omitempty"`
	Action   *action.Trace `json:"action,omitempty"`
	StepDone *StepTrace    `json:"step_trace,omitempty"`
	Result   *Result       `json:"result,omitempty"`
	// Progress and Total count progress units (for MCP progress notifications).
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
}

// Observer receives run events synchronously; it must return quickly (record
// off the hot path). Implementations must be safe for use by one run at a time.
type Observer interface {
	OnEvent(ev Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// OnEvent calls f(ev).
func (f ObserverFunc) OnEvent(ev Event) { f(ev) }
