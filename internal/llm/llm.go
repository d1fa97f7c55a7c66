// Package llm holds provider-neutral types for talking to multimodal models: what
// the agent loop shows a model each step (Observation), what it gets back
// (Decision), and the small interfaces provider adapters implement. A
// Decision's Actions are package action's typed vocabulary, their points in
// the space of the model's convention: each adapter parses its wire format
// with action.ParseModel (ParseActions), once. The defaults of a model call and
// the choice of a model's coordinate profile (ProfileFor) live in config.go.
// Provider wire formats live in subpackages; only internal/app picks one
// (and names, in Config.Vars, the variables a model was configured by).
package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// Image is one encoded screenshot with the frame that maps its pixels to the screen.
type Image struct {
	MIME  string     // "image/jpeg" or "image/png"
	Data  []byte     // encoded bytes, exactly what is sent
	Frame geom.Frame // Frame.ImageSize() is the size of Data's image
	Step  int        // the step it was taken at
	// Ref is how records refer to the image instead of embedding it ("images/step-003.jpg").
	Ref string
}

// Observation is what the loop shows the model at one step.
type Observation struct {
	Step int
	Task string
	// Screenshot is the current screen; Recent holds up to K earlier screenshots,
	// oldest first, that the adapter may include (older steps are in History as text).
	Screenshot Image
	Recent     []Image
	// Memory is the composed memory text (summary, recent steps, facts).
	Memory string
	// History is a short text of the recent steps and their outcomes.
	History string
	// Warnings are added to the prompt (stuck or loop detected, clamped points...).
	Warnings []string
	// Feedback reports what happened to the previous decision's actions, or the
	// validation error of a malformed answer that the model must fix (a re-ask).
	Feedback string
	// ReAsk is set when Feedback is a validation error of the previous answer.
	ReAsk bool
	// Cursor is the pointer position in Screenshot's image pixels; nil when the
	// loop cannot read it or it lies off the screenshot. Native tools answer
	// "where is the cursor" from it.
	Cursor *geom.ImagePoint
	// Elements is the UI's elements at this step as text for the model (the
	// agent's GUI_AGENT_ELEMENTS text or both): a heading line, then one line
	// per element (ref, role, quoted name, states, box in the screenshot's
	// coordinates); "" when there is none. Adapters that can show text add it
	// to the prompt as it is.
	Elements string
	// Marked is set when Screenshot shows numbered marks on the elements
	// (mark N is the element with ref eN).
	Marked bool
	// Answers are a person's answers to the previous decision's ask_user
	// actions, in order. Adapters give them to the model in their own wire
	// format. An answer is text for the model, never an action to execute.
	Answers []Answer
}

// Answer is a person's answer to one ask_user action.
type Answer struct {
	// Ask is the ask_user action as the model (or the adapter) gave it; its
	// CallID is how an adapter matches the answer to its own question (a
	// provider safety check's id).
	Ask action.Action
	// Text is the answer for the model: the text typed, the option chosen, or
	// "yes"/"no" for a confirm. For a secret it says only that the answer was
	// typed into the focused field, and how long it was.
	Text string
	// Approved is true for a confirm answered yes.
	Approved bool
}

// Status is the model's verdict on the task.
type Status string

// Model statuses.
const (
	Continue Status = "continue"
	Done     Status = "done"
	Blocked  Status = "blocked"
	Failed   Status = "failed"
)

// Usage counts model calls and tokens.
type Usage struct {
	Calls        int `json:"model_calls"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.Calls + o.Calls, u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens}
}

// Decision is a model's answer for one step.
type Decision struct {
	Observation     string          `json:"observation,omitempty"`
	Reasoning       string          `json:"reasoning,omitempty"`
	Actions         []action.Action `json:"actions,omitempty"`
	MemoryUpdate    []string        `json:"memory_update,omitempty"`
	ExpectedOutcome string          `json:"expected_outcome,omitempty"`
	Status          Status          `json:"status"`
	Result          string          `json:"result,omitempty"`
	BlockReason     string          `json:"block_reason,omitempty"`
	NextUserAction  string          `json:"next_user_action,omitempty"`
	// SafetyChecks are provider safety checks awaiting a human (OpenAI computer tool).
	SafetyChecks []string `json:"safety_checks,omitempty"`
	// Released marks a decision a session gave from its own state, without
	// a model call (actions held for a safety check, released once approved).
	Released bool `json:"released,omitempty"`
	// ImageSize is the image size the model says it saw, when it says so; the
	// resolver then scales from it.
	ImageSize *geom.Size `json:"image_size,omitempty"`
	Usage     Usage      `json:"usage"`
	// Request is the request body as sent, with image data replaced by Image.Ref;
	// Response is the raw response body. Both are for the run record.
	Request  []byte `json:"-"`
	Response []byte `json:"-"`
}

// Session is one task's conversation with a model. Next is called once per step
// with the current observation; stateful adapters keep their own history (and
// prune old images to the same K). A Session is used by one goroutine.
type Session interface {
	Next(ctx context.Context, obs Observation) (*Decision, error)
}

// Adapter is a model family on a provider: its wire format and coordinate convention.
type Adapter interface {
	// Name is the adapter name ("generic", "anthropic-computer", ...).
	Name() string
	// Profile is the coordinate convention and image sizing the adapter uses.
	Profile() geom.Profile
	// NewSession starts a conversation for task.
	NewSession(task string) Session
}

// TextModel completes plain text (memory summaries).
type TextModel interface {
	Complete(ctx context.Context, system, prompt string) (string, Usage, error)
}

// Grounder finds named targets on a screenshot: one point per target, over
// img's frame and carrying the space of the grounder's convention, or nil for
// a target it cannot find. The points come through action.ParsePoint.
type Grounder interface {
	Ground(ctx context.Context, img Image, targets []string) ([]*action.Point, Usage, error)
}

// ErrBadOutput wraps a model answer that does not parse or validate; the loop
// re-asks once with the message.
var ErrBadOutput = errors.New("model answer is not valid")

// APIError is a provider's error response.
type APIError struct {
	Provider   string
	StatusCode int
	Type       string // provider error type ("rate_limit_error", "insufficient_quota", ...)
	Message    string
	// RetryAfter is the server's Retry-After, when given.
	RetryAfter time.Duration
}

// Error names the provider, status and message. It never contains credentials.
func (e *APIError) Error() string {
	s := fmt.Sprintf("%s API error: HTTP %d", e.Provider, e.StatusCode)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Retryable reports whether the request may succeed if repeated: 408, 409, 429
// (unless it is a quota error), 5xx and overloaded (529). Authentication and
// quota errors are not retryable.
func (e *APIError) Retryable() bool {
	switch e.Type {
	case "insufficient_quota", "billing_error", "authentication_error", "permission_error", "invalid_api_key":
		return false
	}
	switch {
	case e.StatusCode == 401 || e.StatusCode == 403:
		return false
	case e.StatusCode == 408, e.StatusCode == 409, e.StatusCode == 429, e.StatusCode >= 500:
		return true
	}
	return false
}
