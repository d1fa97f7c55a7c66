// Package action is guiagent's one vocabulary of input actions: what a model
// or an MCP client asks the desktop to do, parsed once at the edge into typed
// values, and what was then executed.
//
//   - Kind names an action (click, drag, scroll, type, key, ...).
//   - Action is one parsed, valid action: buttons, keys, scroll directions as
//     desktop types, and every Point carrying its geom.Space.
//   - Raw is an action as a wire writes it (strings and number arrays); Parse
//     turns it into an Action, or an error naming every problem and its fix.
//     Every model adapter and every MCP input tool goes through Parse.
//   - Trace is one executed (or refused) action with the pixels it went to; the
//     agent, the MCP server and the run records all keep this one type.
//
// Points are resolved to screen pixels by Point.Resolve, which is the one
// resolver geom.ResolveIn.
package action

import (
	"fmt"
	"math"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Kind names one action of the action set.
type Kind string

// The action set.
const (
	Click       Kind = "click"        // At (or Target, or Ref), Button, Count 1-3, Keys = modifiers held
	DoubleClick Kind = "double_click" // At (or Target), Keys = modifiers
	TripleClick Kind = "triple_click" // At (or Target), Keys = modifiers
	Move        Kind = "move"         // At (or Target)
	Drag        Kind = "drag"         // At (from, or Target, or Ref), To (or ToRef), Path, Button
	Scroll      Kind = "scroll"       // At (optional), Direction, Amount = notches, Keys = modifiers
	TypeText    Kind = "type"         // Text
	KeyPress    Kind = "key"          // Keys: one combination such as ctrl+s, Amount = repeats
	HoldKey     Kind = "hold_key"     // Keys held for Duration
	MouseDown   Kind = "mouse_down"   // At (optional), Button
	MouseUp     Kind = "mouse_up"     // At (optional), Button
	Wait        Kind = "wait"         // Duration (0: DefaultWait)
	Zoom        Kind = "zoom"         // At and To: corners of a region to look at closer
	AskUser     Kind = "ask_user"     // Question, Ask (confirm, text or choice), Options of a choice, Secret
)

// AskKind is what answer an ask_user action wants.
type AskKind string

// The kinds of question.
const (
	AskConfirm AskKind = "confirm" // yes or no
	AskText    AskKind = "text"    // free text
	AskChoice  AskKind = "choice"  // one of Options
)

// Kinds lists every kind, for validation and prompts.
var Kinds = []Kind{Click, DoubleClick, TripleClick, Move, Drag, Scroll, TypeText, KeyPress, HoldKey, MouseDown, MouseUp, Wait, Zoom, AskUser}

// UsesPoint reports whether k acts at a position (At, or a Target a grounding
// model finds); the others (type, keys, wait, zoom) do not.
func (k Kind) UsesPoint() bool {
	switch k {
	case Click, DoubleClick, TripleClick, Move, Drag, Scroll, MouseDown, MouseUp:
		return true
	}
	return false
}

// ChangesScreen reports whether executing k is expected to change the screen
// (everything but wait, zoom and ask_user).
func (k Kind) ChangesScreen() bool { return k != Wait && k != Zoom && k != AskUser }

// Limits and defaults of the action set, the same for model actions and MCP tools.
const (
	// MaxClicks is the largest click count (a triple click).
	MaxClicks = 3
	// DefaultScrollNotches is the wheel notches of a scroll without an amount.
	DefaultScrollNotches = 3
	// MaxScrollNotches bounds one scroll (thousands of notches would spin the
	// wheel for minutes).
	MaxScrollNotches = 50
	// MaxKeyRepeat bounds the repeat count of one key action.
	MaxKeyRepeat = 100
	// DefaultWait is how long a wait without a duration waits.
	DefaultWait = time.Second
)

// Point is a position as someone gave it: named x and y in a coordinate space.
// It is resolved to a screen pixel against a frame by Point.Resolve.
type Point struct {
	Space geom.Space `json:"space"`
	X     float64    `json:"x"`
	Y     float64    `json:"y"`
}

// String formats p as "(x,y)", followed by its space unless it is image pixels.
func (p Point) String() string {
	s := fmt.Sprintf("(%g,%g)", round2(p.X), round2(p.Y))
	if p.Space != geom.SpaceImage && p.Space != "" {
		s += " " + string(p.Space)
	}
	return s
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Resolve maps p to a global pixel through the resolver, geom.ResolveIn: a
// screen point must lie on one of ds; any other is read over frame f, rejected
// when more than slack image pixels off its image (geom.AnyDistance: never)
// and clamped onto f's display otherwise.
func (p Point) Resolve(f geom.Frame, ds []geom.Display, slack float64) (geom.Resolved, error) {
	return geom.ResolveIn(p.Space, p.X, p.Y, f, ds, slack)
}

// Action is one parsed and valid action. The zero values of its optional
// fields mean the defaults of the kind (see Clicks, Notches, Repeats, WaitFor).
type Action struct {
	Kind Kind
	// At is where the action happens; nil means the current pointer position
	// (or, with Target, wherever a grounding model finds it).
	At *Point
	// To is the end of a drag or the far corner of a zoom region.
	To *Point
	// Path holds a drag's intermediate points.
	Path []Point
	// Target names the element in words, for a grounding model when At is nil.
	Target string
	// Ref names the element the action acts at by its ref in the latest
	// element snapshot ("e12"), in place of At or Target: the action acts at
	// the centre of the element's box, as the caller resolves it (the agent:
	// against the step's snapshot; an unknown ref is an error, never a guess).
	// ToRef is the same for To, a drag's end.
	Ref, ToRef string
	// Button is the mouse button (0 for actions without one: reads as left).
	Button desktop.Button
	// Count is a click's count as given (0: the kind's default).
	Count int
	// Text is what a type action types.
	Text string
	// Keys are the combination of a key or hold_key action, or the modifiers
	// held during a click or scroll, in press order.
	Keys []desktop.Key
	// Direction is a scroll's direction.
	Direction desktop.Direction
	// Amount is a scroll's notches or a key's repeats as given (0: default).
	Amount int
	// Duration is how long a hold_key holds or a wait waits.
	Duration time.Duration
	// CallID is the provider's id for this action (tool_use id, call_id; for
	// an ask_user that confirms a provider safety check, the check's id).
	CallID string

	// Question is what an ask_user asks the person; Ask the answer it wants
	// (AskText when unset), Options the choices of an AskChoice.
	Question string
	Ask      AskKind
	Options  []string
	// Secret marks an AskText whose answer (a password the user chooses to
	// type) is typed into the focused field and never shown to the model or
	// recorded; only its length is.
	Secret bool
}

// AskKind returns an ask_user's kind of question: Ask, or AskChoice when
// unset with options given, else AskText.
func (a Action) AskKind() AskKind {
	switch {
	case a.Ask != "":
		return a.Ask
	case len(a.Options) > 0:
		return AskChoice
	}
	return AskText
}

// Clicks returns how many times a click kind clicks (1-3).
func (a Action) Clicks() int {
	switch a.Kind {
	case DoubleClick:
		return 2
	case TripleClick:
		return 3
	}
	return min(max(a.Count, 1), MaxClicks)
}

// Notches returns a scroll's wheel notches: Amount, DefaultScrollNotches when
// unset, at most MaxScrollNotches.
func (a Action) Notches() int {
	if a.Amount <= 0 {
		return DefaultScrollNotches
	}
	return min(a.Amount, MaxScrollNotches)
}

// Repeats returns how many times a key action presses its combination (1 to MaxKeyRepeat).
func (a Action) Repeats() int { return min(max(a.Amount, 1), MaxKeyRepeat) }

// WaitFor returns how long a wait waits (DefaultWait when unset), at most limit.
func (a Action) WaitFor(limit time.Duration) time.Duration {
	d := a.Duration
	if d <= 0 {
		d = DefaultWait
	}
	return min(d, limit)
}

// ButtonOrLeft returns the button, reading an unset one as left.
func (a Action) ButtonOrLeft() desktop.Button {
	if a.Button == 0 {
		return desktop.Left
	}
	return a.Button
}

// Trace is one executed (or refused) action: the action as asked, where its
// points went, and what happened. The agent, the MCP server and the run
// records all keep this type.
type Trace struct {
	Action Action `json:"action"`
	// Image is At in the pixels of the image the action is shown on (the
	// step's screenshot, or the session's latest image); Global is where input went.
	Image  *geom.ImagePoint  `json:"image,omitempty"`
	Global *geom.GlobalPoint `json:"global,omitempty"`
	// ImageTo and GlobalTo are the same for To (a drag's end, a zoom's corner).
	ImageTo  *geom.ImagePoint  `json:"image_to,omitempty"`
	GlobalTo *geom.GlobalPoint `json:"global_to,omitempty"`
	// LocatedBy says how a point named by a target was found ("vision",
	// "grounding", "cache", "ref", "ocr"; later "accessibility"); empty for
	// coordinates the caller gave.
	LocatedBy string `json:"located_by,omitempty"`
	// Answer is a person's answer to an ask_user (for a secret, only its
	// length: "<typed N chars>"); AnsweredBy names the channel it came from
	// ("client" for MCP elicitation, "dashboard").
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answered_by,omitempty"`
	Outcome    string `json:"outcome"` // OutcomeOK, OutcomeFailed, OutcomeNotExecuted
	Error      string `json:"error,omitempty"`
	Warning    string `json:"warning,omitempty"`
	Millis     int64  `json:"ms"`
}

// Outcomes of a Trace.
const (
	OutcomeOK          = "ok"
	OutcomeFailed      = "failed"
	OutcomeNotExecuted = "not executed"
)

// OK reports whether the action ran without error.
func (t Trace) OK() bool { return t.Outcome == OutcomeOK }
