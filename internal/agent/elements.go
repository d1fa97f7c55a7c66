// The UI's elements at each step (GUI_AGENT_ELEMENTS): the snapshot taken
// beside the screenshot, its outline for the model, the marks drawn on the
// screenshot, and the refs of the model's actions resolved against it.

package agent

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/uitree"
)

// ElementsMode says what each step shows the model of the UI's elements
// (GUI_AGENT_ELEMENTS).
type ElementsMode string

// The modes.
const (
	ElementsOff   ElementsMode = "off"   // nothing (the zero value too)
	ElementsText  ElementsMode = "text"  // the outline in the prompt
	ElementsMarks ElementsMode = "marks" // numbered marks on the screenshot
	ElementsBoth  ElementsMode = "both"  // both
)

func (m ElementsMode) on() bool    { return m == ElementsText || m == ElementsMarks || m == ElementsBoth }
func (m ElementsMode) text() bool  { return m == ElementsText || m == ElementsBoth }
func (m ElementsMode) marks() bool { return m == ElementsMarks || m == ElementsBoth }

func (m ElementsMode) check() error {
	switch m {
	case "", ElementsOff, ElementsText, ElementsMarks, ElementsBoth:
		return nil
	}
	return fmt.Errorf("agent: Elements %q is not valid: use off, text, marks or both (%s)", m, config.Var("Elements"))
}

// MaxMarks bounds the marks drawn on one screenshot: past it the marks
// cover the screen.
const MaxMarks = 300

// maxRecordedOutline bounds the outline a step's trace keeps.
const maxRecordedOutline = 16 << 10

// ElementsTrace is a step's element snapshot as the run record keeps it.
type ElementsTrace struct {
	// Mode is what the model was shown (text, marks, both).
	Mode ElementsMode `json:"mode"`
	// Source names the element source; Window the focused window.
	Source string `json:"source,omitempty"`
	Window string `json:"window,omitempty"`
	// Count is the number of elements; Marked how many got a mark.
	Count  int `json:"count"`
	Marked int `json:"marked,omitempty"`
	// Truncated says the walk stopped early, and why.
	Truncated   bool   `json:"truncated,omitempty"`
	TruncatedBy string `json:"truncated_by,omitempty"`
	Millis      int64  `json:"ms"`
	// Outline is the elements' outline with boxes in the screenshot's
	// coordinates (cut at 16 KB), as the model got it in text mode. The run
	// record's step events carry it; a Result's trace leaves it out.
	Outline string `json:"outline,omitempty"`
	// Error is why the step has no snapshot.
	Error string `json:"error,omitempty"`
}

// stepElements is the snapshot of the current step, which the model's refs
// name; nil snap with err says why there is none.
type stepElements struct {
	snap   *desktop.ElementSnapshot
	err    error
	took   time.Duration
	marked int // marks drawn on the step's screenshot
}

// snapshotElements takes the step's element snapshot when the mode asks for
// one: the focused window with the default bounds. A desktop without an
// element source, or a failed walk, leaves the step without it (one log line).
func (ru *run) snapshotElements(step int) *stepElements {
	if !ru.o.Elements.on() {
		return nil
	}
	src, ok := desktop.ElementsOf(ru.o.Screen)
	if !ok {
		if !ru.noElements {
			ru.noElements = true
			ru.o.Logger.Warn("the desktop has no element source (accessibility tree): steps go on without elements",
				"run", ru.id, "setting", config.Var("Elements"), "mode", string(ru.o.Elements))
		}
		return &stepElements{err: fmt.Errorf("the desktop has no element source (accessibility tree)")}
	}
	t0 := time.Now()
	snap, err := src.Elements(ru.ctx, desktop.ElementQuery{})
	se := &stepElements{snap: snap, err: err, took: time.Since(t0)}
	if err != nil || snap == nil {
		se.snap = nil
		if se.err == nil {
			se.err = fmt.Errorf("the element source returned nothing")
		}
		ru.o.Logger.Warn("no element snapshot for this step: it goes on without elements", "run", ru.id, "step", step, "err", se.err)
	}
	return se
}

// marks are the numbered marks of the snapshot's operable elements, for the
// screenshot (label N for ref eN).
func (se *stepElements) marks() []imaging.ScreenMark {
	if se == nil || se.snap == nil {
		return nil
	}
	var out []imaging.ScreenMark
	for _, e := range se.snap.Elements {
		if !uitree.Interactive(e.Role) || e.Box.Empty() {
			continue
		}
		out = append(out, imaging.ScreenMark{Label: strings.TrimPrefix(e.Ref, "e"), Box: e.Box})
		if len(out) == MaxMarks {
			break
		}
	}
	return out
}

// outline is the snapshot as text for the model: a heading and one line per
// element on the screenshot, boxes in the screenshot's pixels (or, for a
// model on a normalized grid, on its grid).
func (se *stepElements) outline(f geom.Frame, p geom.Profile) string {
	if se == nil {
		return ""
	}
	if se.snap == nil {
		return fmt.Sprintf("UI elements: none at this step (%v); give coordinates.", se.err)
	}
	var els []desktop.Element
	for _, e := range se.snap.Elements {
		if !e.Box.Intersect(f.Region).Empty() {
			els = append(els, e)
		}
	}
	if len(els) == 0 {
		return "UI elements: the accessibility tree lists none on this screenshot; give coordinates."
	}
	unit := "pixels of the current screenshot"
	if p.Divisor >= 100 {
		unit = fmt.Sprintf("the 0-%g grid of your coordinates, x first", p.Divisor)
	}
	where := "the focused window"
	if se.snap.Window != "" {
		where += fmt.Sprintf(" %q", se.snap.Window)
	}
	more := ""
	if se.snap.Truncated {
		more = fmt.Sprintf("; the list is cut short (%s)", se.snap.TruncatedBy)
	}
	head := fmt.Sprintf("UI elements of %s (ref role \"name\" states [x1,y1,x2,y2] box in %s%s):\n", where, unit, more)
	return head + cutLines(uitree.Outline(els, func(r geom.Rect) (int, int, int, int) { return boxIn(r, f, p) }), MaxOutlineBytes)
}

// MaxOutlineBytes bounds the outline one step shows the model (about 8000
// tokens): past it the remaining elements are counted, not listed.
const MaxOutlineBytes = 32 << 10

// cutLines cuts s, whole lines, to at most n bytes, saying how many lines
// were left out.
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := strings.LastIndexByte(s[:n], '\n') + 1
	return s[:i] + fmt.Sprintf("(%d more elements not listed)\n", strings.Count(s[i:], "\n"))
}

// boxIn maps a global box onto frame f's image (clipped to its content) and
// writes it in pixels, or on profile p's grid when it has one of 100 or more.
func boxIn(r geom.Rect, f geom.Frame, p geom.Profile) (x1, y1, x2, y2 int) {
	ir := f.RectToImage(r).Intersect(f.ContentRect())
	mx, my := ir.Max()
	x1, y1, x2, y2 = ir.X, ir.Y, mx, my
	if p.Divisor < 100 {
		return x1, y1, x2, y2
	}
	img := f.ImageSize()
	gx := func(v int) int { return int(math.Round(float64(v) / float64(img.W) * p.Divisor)) }
	gy := func(v int) int { return int(math.Round(float64(v) / float64(img.H) * p.Divisor)) }
	return gx(x1), gy(y1), gx(x2), gy(y2)
}

// record is the step's trace of the snapshot.
func (se *stepElements) record(mode ElementsMode, f geom.Frame, p geom.Profile) *ElementsTrace {
	if se == nil {
		return nil
	}
	t := &ElementsTrace{Mode: mode, Millis: se.took.Milliseconds(), Marked: se.marked}
	if se.snap == nil {
		t.Error = se.err.Error()
		return t
	}
	t.Source, t.Window, t.Count = se.snap.Source, se.snap.Window, len(se.snap.Elements)
	t.Truncated, t.TruncatedBy = se.snap.Truncated, se.snap.TruncatedBy
	t.Outline = se.outline(f, p)
	if len(t.Outline) > maxRecordedOutline {
		t.Outline = t.Outline[:maxRecordedOutline] + "\n..."
	}
	return t
}

// element finds ref in the step's snapshot. A bare number is the ref of the
// mark with that number. An unknown ref is an error: never a guess.
func (se *stepElements) element(ref string) (desktop.Element, error) {
	if se == nil {
		return desktop.Element{}, fmt.Errorf("ref %q names no element: this run shows the model no elements (%s is off); give coordinates", ref, config.Var("Elements"))
	}
	if se.snap == nil {
		return desktop.Element{}, fmt.Errorf("ref %q names no element: this step has no element list (%v); give coordinates", ref, se.err)
	}
	if e, ok := se.snap.Lookup(ref); ok {
		return e, nil
	}
	if strings.Trim(ref, "0123456789") == "" {
		if e, ok := se.snap.Lookup("e" + ref); ok {
			return e, nil
		}
	}
	n := len(se.snap.Elements)
	if n == 0 {
		return desktop.Element{}, fmt.Errorf("unknown ref %q: this step's element list is empty; give coordinates", ref)
	}
	return desktop.Element{}, fmt.Errorf("unknown ref %q: this step's elements are e1 to e%d (refs are renumbered at every step); use one of the current list, or coordinates", ref, n)
}

// placeRefs places the action's refs at the centres of their elements'
// boxes (located_by ref), with their points in the sent image's pixels.
func (ru *run) placeRefs(p *planned, a action.Action, sent geom.Frame) error {
	at := func(ref string) (*geom.GlobalPoint, *geom.ImagePoint, error) {
		e, err := ru.elements.element(ref)
		if err != nil {
			return nil, nil, err
		}
		if e.Box.Empty() {
			return nil, nil, fmt.Errorf("element %s (%s %q) has no box on the screen; give coordinates", e.Ref, e.Role, e.Name)
		}
		g := geom.GlobalPoint{X: e.Box.X + e.Box.W/2, Y: e.Box.Y + e.Box.H/2}
		ip := sent.GlobalToImage(g)
		return &g, &ip, nil
	}
	if a.Ref != "" {
		g, ip, err := at(a.Ref)
		if err != nil {
			return err
		}
		p.at, p.trace.Global, p.trace.Image, p.trace.LocatedBy = g, g, ip, operate.ByRef
	}
	if a.ToRef != "" {
		g, ip, err := at(a.ToRef)
		if err != nil {
			return fmt.Errorf("end: %w", err)
		}
		p.to, p.trace.GlobalTo, p.trace.ImageTo, p.toBy = g, g, ip, operate.ByRef
		if p.trace.LocatedBy == "" {
			p.trace.LocatedBy = operate.ByRef
		}
	}
	return nil
}
