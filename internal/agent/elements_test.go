package agent

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/operate"
)

// formElements is a window with a name field and a Save button, in global
// pixels of the fake's 1920x1080 display (the agent's shots are 1280x720:
// image pixels are 2/3 of these).
func formElements() []desktop.Element {
	on := desktop.States{Enabled: true}
	return []desktop.Element{
		{Role: desktop.RoleWindow, Name: "Form", Box: geom.Rect{W: 1920, H: 1080}, Depth: 0, States: on, App: "form"},
		{Role: desktop.RoleTextbox, Name: "Name", Box: geom.Rect{X: 300, Y: 300, W: 600, H: 45}, Depth: 1, States: desktop.States{Enabled: true, Editable: true}},
		{Role: desktop.RoleButton, Name: "Save", Box: geom.Rect{X: 300, Y: 600, W: 150, H: 60}, Depth: 1, States: on},
	}
}

func clickRef(ref string) action.Raw { return action.Raw{Kind: action.Click, Ref: ref} }

// recordedSteps collects the step traces r's observers receive (what the
// run record writes).
func recordedSteps(r *Runner) func() []StepTrace {
	var mu sync.Mutex
	var steps []StepTrace
	r.AddObserver(ObserverFunc(func(ev Event) {
		if ev.Kind == EvStep {
			mu.Lock()
			steps = append(steps, *ev.StepDone)
			mu.Unlock()
		}
	}))
	return func() []StepTrace {
		mu.Lock()
		defer mu.Unlock()
		return append([]StepTrace(nil), steps...)
	}
}

// TestElementsTextOutlineAndRefClick: with ElementsText each observation
// carries the outline, boxes in the screenshot's pixels; a click by ref
// lands on the element's centre, located_by ref, and the step's trace
// records the snapshot.
func TestElementsTextOutlineAndRefClick(t *testing.T) {
	d := newDesk(t)
	d.fb.SetElements(formElements())
	sc := newScript(geom.ProfileFor("gpt-4o"), reply(act(clickRef("e3"))), done("saved"))
	o := d.opts(sc)
	o.Elements = ElementsText
	r := d.runner(o)
	recorded := recordedSteps(r)
	res := r.Run(context.Background(), Task{Task: "save the form"}, nil)
	statusOf(t, res, Completed)
	obs := sc.observations()
	want := "UI elements of the focused window \"Form\" (ref role \"name\" states [x1,y1,x2,y2] box in pixels of the current screenshot):\n" +
		"e1 window \"Form\" [0,0,1280,720]\n  e2 textbox \"Name\" editable [200,200,600,230]\n  e3 button \"Save\" [200,400,300,440]\n"
	if obs[0].Elements != want {
		t.Fatalf("observation's elements:\n%s\nwant\n%s", obs[0].Elements, want)
	}
	if obs[0].Marked {
		t.Error("text mode marked the screenshot")
	}
	if c := d.clicks(); len(c) != 1 || c[0] != (geom.GlobalPoint{X: 375, Y: 630}) {
		t.Fatalf("clicks %v, want one at the Save button's centre (375,630)", c)
	}
	st := res.Trace[0]
	if a := st.Actions[0]; a.LocatedBy != operate.ByRef || a.Action.Ref != "e3" || *a.Image != (geom.ImagePoint{X: 249.83333333333334, Y: 419.8333333333333}) {
		t.Fatalf("action trace %+v (image %v)", a, a.Image)
	}
	if e := st.Elements; e == nil || e.Source != "fake" || e.Count != 3 || e.Window != "Form" || e.Mode != ElementsText || e.Outline != "" {
		t.Fatalf("the result's step elements %+v: want the summary without the outline", st.Elements)
	}
	if e := recorded()[0].Elements; e == nil || e.Count != 3 || e.Outline != want {
		t.Fatalf("the recorded step's elements %+v: want the outline", e)
	}
}

// TestElementsMarksDrawn: with ElementsMarks the screenshot the model gets
// has the marks drawn (at the button's box in image pixels), the outline is
// not in the prompt, and the observation says the screenshot is marked.
func TestElementsMarksDrawn(t *testing.T) {
	shots := map[ElementsMode]image.Image{}
	for _, mode := range []ElementsMode{ElementsOff, ElementsMarks} {
		d := newDesk(t)
		d.fb.SetElements(formElements())
		sc := newScript(geom.ProfileFor("gpt-4o"), done("looked"))
		o := d.opts(sc)
		o.Shot.Format = "png"
		o.Elements = mode
		statusOf(t, d.runner(o).Run(context.Background(), Task{Task: "look"}, nil), Completed)
		obs := sc.observations()[0]
		if obs.Elements != "" || obs.Marked != (mode == ElementsMarks) {
			t.Fatalf("%s: elements %q, marked %v", mode, obs.Elements, obs.Marked)
		}
		shots[mode] = decode(t, obs.Screenshot)
	}
	plain, marked := shots[ElementsOff], shots[ElementsMarks]
	for _, p := range []image.Point{{200, 400}, {299, 439}, {200, 200}, {599, 229}} { // corners of Save and Name
		if plain.At(p.X, p.Y) == marked.At(p.X, p.Y) {
			t.Errorf("no mark outline at %v", p)
		}
	}
	for _, p := range []image.Point{{250, 420}, {5, 5}, {640, 700}} { // Save's centre; the window is not marked
		if plain.At(p.X, p.Y) != marked.At(p.X, p.Y) {
			t.Errorf("pixel %v changed: %v -> %v", p, plain.At(p.X, p.Y), marked.At(p.X, p.Y))
		}
	}
}

// TestUnknownRefIsTheStepsError: a ref the step's snapshot does not have is
// not executed, never guessed; the model is told why at the next step.
func TestUnknownRefIsTheStepsError(t *testing.T) {
	d := newDesk(t)
	d.fb.SetElements(formElements())
	sc := newScript(geom.ProfileFor("gpt-4o"), reply(act(clickRef("e99"))), done("gave up"))
	o := d.opts(sc)
	o.Elements = ElementsBoth
	res := d.runner(o).Run(context.Background(), Task{Task: "save"}, nil)
	statusOf(t, res, Completed)
	if c := d.clicks(); len(c) != 0 {
		t.Fatalf("an unknown ref clicked at %v", c)
	}
	a := res.Trace[0].Actions[0]
	if a.Outcome != action.OutcomeNotExecuted || !strings.Contains(a.Error, `unknown ref "e99"`) || !strings.Contains(a.Error, "e1 to e3") {
		t.Fatalf("trace %+v", a)
	}
	if fb := sc.observations()[1].Feedback; !strings.Contains(fb, `unknown ref "e99"`) {
		t.Fatalf("feedback %q does not tell the model", fb)
	}
}

// TestRefWithCoordinatesIsReAsked: a decision whose action gives a ref and
// coordinates is invalid: nothing runs and the model is asked again.
func TestRefWithCoordinatesIsReAsked(t *testing.T) {
	d := newDesk(t)
	d.fb.SetElements(formElements())
	bad := llm.Decision{Status: llm.Continue, Actions: []action.Action{{Kind: action.Click, Ref: "e3", At: &action.Point{Space: geom.SpaceImage, X: 5, Y: 5}}}}
	sc := newScript(geom.ProfileFor("gpt-4o"), reply(bad), done("ok"))
	o := d.opts(sc)
	o.Elements = ElementsText
	statusOf(t, d.runner(o).Run(context.Background(), Task{Task: "save"}, nil), Completed)
	obs := sc.observations()
	if len(d.clicks()) != 0 || len(obs) != 2 || !obs[1].ReAsk || !strings.Contains(obs[1].Feedback, "not both") {
		t.Fatalf("clicks %v; second observation re-ask %v feedback %q", d.clicks(), obs[len(obs)-1].ReAsk, obs[len(obs)-1].Feedback)
	}
}

// hidden is a Screen that hides the fake's element source.
type hidden struct{ desktop.Screen }

// TestNoElementSourceGoesOn: without an element source, or when the
// snapshot fails, the step goes on without elements (the prompt says so)
// and a ref is an error naming the reason.
func TestNoElementSourceGoesOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*testDesk, *Options)
		want string
	}{
		{"no source", func(d *testDesk, o *Options) { o.Screen = hidden{d.fb} }, "no element source"},
		{"walk fails", func(d *testDesk, o *Options) { d.fb.FailNext("elements", errors.New("bus gone")) }, "bus gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesk(t)
			d.fb.SetElements(formElements())
			sc := newScript(geom.ProfileFor("gpt-4o"), reply(act(clickRef("e3"))), done("ok"))
			o := d.opts(sc)
			o.Elements = ElementsBoth
			tc.set(d, &o)
			res := d.runner(o).Run(context.Background(), Task{Task: "save"}, nil)
			statusOf(t, res, Completed)
			obs := sc.observations()
			if !strings.Contains(obs[0].Elements, "none at this step") || !strings.Contains(obs[0].Elements, tc.want) || obs[0].Marked {
				t.Fatalf("elements %q marked %v", obs[0].Elements, obs[0].Marked)
			}
			if a := res.Trace[0].Actions[0]; a.Outcome != action.OutcomeNotExecuted || !strings.Contains(a.Error, tc.want) || len(d.clicks()) != 0 {
				t.Fatalf("ref without a snapshot: %+v, clicks %v", a, d.clicks())
			}
			if e := res.Trace[0].Elements; e == nil || !strings.Contains(e.Error, tc.want) {
				t.Fatalf("trace elements %+v", e)
			}
		})
	}
}

// TestElementsOffTakesNoSnapshot: with the mode off no snapshot is taken
// and a ref says the mode is off.
func TestElementsOffTakesNoSnapshot(t *testing.T) {
	d := newDesk(t)
	d.fb.SetElements(formElements())
	d.fb.FailAfter("elements", 0, errors.New("must not be called"))
	sc := newScript(geom.ProfileFor("gpt-4o"), reply(act(clickRef("e3"))), done("ok"))
	res := d.runner(d.opts(sc)).Run(context.Background(), Task{Task: "save"}, nil)
	statusOf(t, res, Completed)
	if res.Trace[0].Elements != nil || sc.observations()[0].Elements != "" {
		t.Fatalf("elements with the mode off: %+v", res.Trace[0].Elements)
	}
	if a := res.Trace[0].Actions[0]; !strings.Contains(a.Error, "shows the model no elements") {
		t.Fatalf("ref with the mode off: %+v", a)
	}
	if _, err := New(Options{Input: d.in, Adapter: sc, Elements: "outline"}); err == nil || !strings.Contains(err.Error(), "text, marks or both") {
		t.Fatalf("a bad mode: %v", err)
	}
}

// TestRefDragAndNormalizedOutline: a drag from ref to ref goes from centre
// to centre; a model on a 0-1000 grid reads the outline on its grid.
func TestRefDragAndNormalizedOutline(t *testing.T) {
	d := newDesk(t)
	d.fb.SetElements(formElements())
	sc := newScript(geom.ProfileFor("glm-4.5v"), reply(act(action.Raw{Kind: action.Drag, Ref: "e2", ToRef: "e3"})), done("ok"))
	o := d.opts(sc)
	o.Elements = ElementsText
	res := d.runner(o).Run(context.Background(), Task{Task: "drag"}, nil)
	statusOf(t, res, Completed)
	if e := sc.observations()[0].Elements; !strings.Contains(e, "0-1000 grid") || !strings.Contains(e, `e3 button "Save" [156,556,234,611]`) {
		t.Fatalf("outline on the grid:\n%s", e)
	}
	a := res.Trace[0].Actions[0]
	if a.Outcome != action.OutcomeOK || *a.Global != (geom.GlobalPoint{X: 600, Y: 322}) || *a.GlobalTo != (geom.GlobalPoint{X: 375, Y: 630}) || a.LocatedBy != operate.ByRef {
		t.Fatalf("drag trace %+v", a)
	}
}

// TestOutlineIsBounded: a huge tree's outline is cut at whole lines under
// MaxOutlineBytes, saying how many elements were left out.
func TestOutlineIsBounded(t *testing.T) {
	els := []desktop.Element{{Role: desktop.RoleWindow, Name: "Big", Box: geom.Rect{W: 1920, H: 1080}, States: desktop.States{Enabled: true}}}
	for i := range 2000 {
		els = append(els, desktop.Element{Role: desktop.RoleListItem, Name: fmt.Sprintf("Row number %d of the long list, with a description long enough to fill the line", i), Depth: 1,
			Box: geom.Rect{X: 10, Y: i % 1000, W: 500, H: 20}, States: desktop.States{Enabled: true}})
	}
	d := newDesk(t)
	d.fb.SetElements(els)
	sc := newScript(geom.ProfileFor("gpt-4o"), done("ok"))
	o := d.opts(sc)
	o.Elements = ElementsText
	statusOf(t, d.runner(o).Run(context.Background(), Task{Task: "look"}, nil), Completed)
	e := sc.observations()[0].Elements
	if len(e) > MaxOutlineBytes+200 || !strings.HasSuffix(e, " more elements not listed)\n") || !strings.Contains(e, "the list is cut short (max_elements)") {
		t.Fatalf("outline of %d bytes ends %q", len(e), e[max(0, len(e)-120):])
	}
}
