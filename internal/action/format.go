package action

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// String renders a for humans (progress, history, the model's feedback, the
// report and the overlay), points in the space they were given:
// `click right at (640,200)`, `type "hello"`, `key ctrl+s x3`, `click on "OK"`.
func (a Action) String() string { return a.describe(pointText(a.At), pointText(a.To)) }

// Label renders a without its points, for a label drawn beside them.
func (a Action) Label() string { return a.describe("", "") }

// String renders the executed action like Action.String, with its points as
// the global pixels input went to where they were resolved.
func (t Trace) String() string {
	at, to := pointText(t.Action.At), pointText(t.Action.To)
	if t.Global != nil {
		at = t.Global.String()
	}
	if t.GlobalTo != nil {
		to = t.GlobalTo.String()
	}
	return t.Action.describe(at, to)
}

func pointText(p *Point) string {
	if p == nil {
		return ""
	}
	return p.String()
}

// maxQuoted is how many characters of a text or target String shows.
const maxQuoted = 40

func (a Action) describe(at, to string) string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	if a.Button != 0 && a.Button != desktop.Left {
		b.WriteString(" " + a.Button.String())
	}
	if a.Ref != "" {
		b.WriteString(" " + a.Ref)
	}
	if at != "" {
		b.WriteString(" at " + at)
	} else if a.Target != "" {
		b.WriteString(" on " + strconv.Quote(shorten(a.Target, maxQuoted)))
	}
	switch {
	case a.ToRef != "" && to != "":
		b.WriteString(" to " + a.ToRef + " at " + to)
	case a.ToRef != "":
		b.WriteString(" to " + a.ToRef)
	case to != "":
		b.WriteString(" to " + to)
	}
	if a.Text != "" {
		b.WriteString(" " + strconv.Quote(shorten(a.Text, maxQuoted)))
	}
	if len(a.Keys) > 0 {
		b.WriteString(" " + desktop.ComboString(a.Keys))
	}
	if a.Direction != "" {
		b.WriteString(" " + string(a.Direction))
	}
	if a.Count > 1 && a.Kind == Click {
		b.WriteString(" " + strconv.Itoa(a.Count) + " clicks")
	}
	if a.Amount > 1 {
		b.WriteString(" x" + strconv.Itoa(a.Amount))
	}
	if a.Duration > 0 {
		b.WriteString(" " + strconv.FormatInt(a.Duration.Milliseconds(), 10) + "ms")
	}
	if a.Kind == AskUser {
		b.WriteString(" " + string(a.AskKind()) + " " + strconv.Quote(shorten(a.Question, 2*maxQuoted)))
		if len(a.Options) > 0 {
			b.WriteString(" [" + strings.Join(a.Options, " | ") + "]")
		}
		if a.Secret {
			b.WriteString(" (secret)")
		}
	}
	return b.String()
}

// shorten cuts s to at most n characters, marking a cut with "...".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-3, 0)]) + "..."
}

// actionJSON is an Action on disk and in tool results: Raw's field names, with
// the points' space named once and keys by their canonical names.
type actionJSON struct {
	Raw
	Space geom.Space `json:"space,omitempty"`
}

// MarshalJSON writes a in the Raw layout plus "space" (the space of its points).
func (a Action) MarshalJSON() ([]byte, error) { return json.Marshal(a.toJSON()) }

// toJSON returns a in the Raw layout (arrays in x, y order) with its points' space.
func (a Action) toJSON() actionJSON {
	j := actionJSON{Raw: Raw{Kind: a.Kind, Target: a.Target, Ref: a.Ref, ToRef: a.ToRef, Clicks: a.Count, Text: a.Text,
		Direction: string(a.Direction), Amount: a.Amount, DurationMS: int(a.Duration.Milliseconds()), CallID: a.CallID,
		Question: a.Question, Ask: string(a.Ask), Options: a.Options, Secret: a.Secret}}
	if a.Button != 0 {
		j.Button = a.Button.String()
	}
	for _, k := range a.Keys {
		j.Keys = append(j.Keys, string(k))
	}
	if a.At != nil {
		j.At, j.Space = []float64{a.At.X, a.At.Y}, a.At.Space
	}
	if a.To != nil {
		j.To, j.Space = []float64{a.To.X, a.To.Y}, a.To.Space
	}
	for _, p := range a.Path {
		j.Path = append(j.Path, []float64{p.X, p.Y})
	}
	return j
}

// UnmarshalJSON reads what MarshalJSON wrote (and records written before
// points carried a space, whose numbers were image pixels or a model's).
func (a *Action) UnmarshalJSON(b []byte) error {
	var j actionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	sp := j.Space
	if sp == "" {
		sp = geom.SpaceImage
	}
	p, err := Parse(j.Raw, sp)
	if err != nil {
		return fmt.Errorf("action %s: %w", j.Kind, err)
	}
	*a = p
	return nil
}
