//go:build linux

package agent

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/openai"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/uitree"
)

// The GTK end-to-end tests run the loop on a real accessibility tree: a
// private Xvfb and D-Bus session bus, the X11 backend with the AT-SPI2
// client as its element source, the agent's GTK 3 form (testdata/signup.py),
// and the generic JSON adapter against a fake Chat Completions server whose
// brain reads the element outline of its prompt.

// gtkEnv is a display with the signup form and its accessibility tree.
type gtkEnv struct {
	be *x11.Backend
	in *desktop.Input
}

func startGTK(t *testing.T) *gtkEnv {
	t.Helper()
	vd := xvfbtest.Start(t, 1280, 800)
	bus := atspitest.Bus(t, vd.Display)
	be := x11.New(x11.Options{Display: vd.Display, Logger: slog.New(slog.DiscardHandler),
		Elements: atspi.New(atspi.Options{SessionBus: bus, Mode: atspi.ModeAuto})})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		t.Fatalf("start the X11 backend on %s: %v", vd.Display, err)
	}
	t.Cleanup(func() { be.Close() })
	atspitest.Start(t, vd.Display, bus, "ready", atspitest.Python, filepath.Join("testdata", "signup.py"))
	e := &gtkEnv{be: be, in: desktop.NewInput(be)}
	e.waitFor(t, `the "Save" button`, func(s *desktop.ElementSnapshot) bool { return has(s, desktop.RoleButton, "Save") })
	return e
}

func has(s *desktop.ElementSnapshot, role desktop.Role, name string) bool {
	for _, e := range s.Elements {
		if e.Role == role && e.Name == name {
			return true
		}
	}
	return false
}

// waitFor takes snapshots until ok accepts one (15 s at most).
func (e *gtkEnv) waitFor(t *testing.T, what string, ok func(*desktop.ElementSnapshot) bool) *desktop.ElementSnapshot {
	t.Helper()
	var snap *desktop.ElementSnapshot
	var err error
	if !atspitest.Wait(context.Background(), 15*time.Second, func() bool {
		snap, err = e.be.Elements(context.Background(), desktop.ElementQuery{})
		return err == nil && ok(snap)
	}) {
		out := ""
		if snap != nil {
			out = uitree.Outline(snap.Elements, nil)
		}
		t.Fatalf("no snapshot with %s within 15 s (last error %v):\n%s", what, err, out)
	}
	return snap
}

// run runs task with the generic adapter on a fake server around brain.
func (e *gtkEnv) run(t *testing.T, brain fakellm.Brain, mode ElementsMode, task string) (Result, []StepTrace, *fakellm.Core) {
	t.Helper()
	srv := fakellm.NewChatServer(brain, fakellm.ChatOptions{Profile: geom.ProfileFor("gpt-4o")})
	t.Cleanup(srv.Close)
	a, err := openai.NewGeneric(llm.Config{Provider: "openai", Model: "gpt-4o", APIKey: testKey, BaseURL: srv.URL, Refs: mode.on()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Input: e.in, Adapter: a, Shot: imaging.Options{MaxLongEdge: 1024}, MaxSteps: 6, Timeout: 60 * time.Second,
		Settle: Settle{Interval: 50 * time.Millisecond, MaxWait: 2 * time.Second}, Logger: slog.New(slog.DiscardHandler), Elements: mode})
	if err != nil {
		t.Fatal(err)
	}
	recorded := recordedSteps(r)
	res := r.Run(context.Background(), Task{Task: task}, nil)
	return res, recorded(), srv.Core
}

// outlineLine matches an element line of the prompt's outline: ref, role, name.
var outlineLine = regexp.MustCompile(`(?m)^\s*(e\d+) (\w+) "((?:[^"\\]|\\.)*)"`)

// refOf returns the ref of the element with role and name in the outline
// of the prompt, or "".
func refOf(prompt string, role desktop.Role, name string) string {
	for _, m := range outlineLine.FindAllStringSubmatch(prompt, -1) {
		if m[2] == string(role) && m[3] == name {
			return m[1]
		}
	}
	return ""
}

// TestGTKButtonClickedByRef: the model reads the Save button's ref in the
// outline and clicks it by ref; the click lands on the button (located_by
// ref) and the application reacts, as its accessibility tree then shows.
func TestGTKButtonClickedByRef(t *testing.T) {
	e := startGTK(t)
	brain := scripted.Script(
		func(tu scripted.Turn) scripted.Reply {
			ref := refOf(tu.Prompt, desktop.RoleButton, "Save")
			if ref == "" {
				return scripted.Reply{Status: llm.Failed, Result: "no Save button in the outline"}
			}
			return scripted.Reply{Actions: []scripted.BrainAction{scripted.ClickRef(ref)}}
		},
		func(tu scripted.Turn) scripted.Reply {
			if !strings.Contains(tu.Prompt, `"Saved:  <>"`) {
				return scripted.Reply{Status: llm.Failed, Result: "the status line does not say Saved"}
			}
			return scripted.Finish("saved")
		})
	res, steps, core := e.run(t, brain, ElementsText, "press Save")
	statusOf(t, res, Completed)
	a := res.Trace[0].Actions[0]
	if a.LocatedBy != operate.ByRef || a.Action.Ref == "" || a.Action.At != nil || !a.OK() {
		t.Fatalf("the click: %+v", a)
	}
	if core.Calls() != 2 {
		t.Errorf("%d model calls, want 2", core.Calls())
	}
	snap := e.waitFor(t, "the status line saying Saved", func(s *desktop.ElementSnapshot) bool { return has(s, desktop.RoleText, "Saved:  <>") })
	var save desktop.Element
	for _, el := range snap.Elements {
		if el.Name == "Save" {
			save = el
		}
	}
	if !save.Box.Contains(*a.Global) {
		t.Errorf("clicked at %v, outside the Save button %v", *a.Global, save.Box)
	}
	if st := steps[0].Elements; st == nil || st.Source != "atspi" || st.Window != "Sign up" || !strings.Contains(st.Outline, `button "Save"`) {
		t.Errorf("the step trace's elements: %+v", st)
	}
}

// Colours of signup.py's widgets (its CSS).
var (
	signupName   = color.RGBA{200, 230, 255, 255}
	signupEmail  = color.RGBA{255, 225, 190, 255}
	signupSave   = color.RGBA{40, 170, 80, 255}
	signupStatus = color.RGBA{250, 250, 200, 255}
)

const signupNameValue, signupEmailValue = "Grace Hopper", "grace@example.org"

// pixelSignupBrain fills the form the way a vision model would: it finds the
// fields and the button by their colours in the screenshot, and answers done
// once the status line holds more text than "Not saved".
func pixelSignupBrain() fakellm.Brain {
	return scripted.Script(
		func(tu scripted.Turn) scripted.Reply {
			var boxes []image.Rectangle
			for _, c := range []color.RGBA{signupName, signupEmail, signupSave} {
				b, ok := scripted.BlobBox(tu.Image, c, scripted.ColorTol)
				if !ok {
					return scripted.Reply{Status: llm.Blocked, Result: fmt.Sprintf("no widget of colour %v on the screen", c)}
				}
				boxes = append(boxes, b)
			}
			mid := func(r image.Rectangle) image.Point { return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2) }
			return scripted.Reply{Actions: []scripted.BrainAction{
				scripted.ClickAt(mid(boxes[0])), scripted.TypeText(signupNameValue),
				scripted.ClickAt(mid(boxes[1])), scripted.TypeText(signupEmailValue),
				scripted.ClickAt(mid(boxes[2]))}}
		},
		func(tu scripted.Turn) scripted.Reply {
			b, ok := scripted.BlobBox(tu.Image, signupStatus, scripted.ColorTol)
			if !ok || b.Dx() < 150 {
				return scripted.Reply{Status: llm.Failed, Result: "the status line is not showing a longer text"}
			}
			return scripted.Finish("saved")
		})
}

// refSignupBrain fills the form by refs read from the outline, and answers
// done once the outline shows the status line with the values.
func refSignupBrain() fakellm.Brain {
	return scripted.Script(
		func(tu scripted.Turn) scripted.Reply {
			name, email, save := refOf(tu.Prompt, desktop.RoleTextbox, "Name"), refOf(tu.Prompt, desktop.RoleTextbox, "Email"), refOf(tu.Prompt, desktop.RoleButton, "Save")
			if name == "" || email == "" || save == "" {
				return scripted.Reply{Status: llm.Blocked, Result: "the outline lacks the Name, Email or Save element"}
			}
			return scripted.Reply{Actions: []scripted.BrainAction{
				scripted.ClickRef(name), scripted.TypeText(signupNameValue),
				scripted.ClickRef(email), scripted.TypeText(signupEmailValue),
				scripted.ClickRef(save)}}
		},
		func(tu scripted.Turn) scripted.Reply {
			if !strings.Contains(tu.Prompt, fmt.Sprintf(`"Saved: %s <%s>"`, signupNameValue, signupEmailValue)) {
				return scripted.Reply{Status: llm.Failed, Result: "the outline does not show the saved status"}
			}
			return scripted.Finish("saved")
		})
}

// TestGTKFormCostWithAndWithoutElements runs the signup form task without
// elements (a brain that finds the widgets by colour in the screenshot) and
// with GUI_AGENT_ELEMENTS=text and marks (a brain that acts by refs from the
// outline), checks that each fills the form, and logs what each cost: model
// calls, the fake's input-token estimate (text characters / 4 + 800 per
// image), the prompt text and the outline's bytes.
func TestGTKFormCostWithAndWithoutElements(t *testing.T) {
	for _, tc := range []struct {
		mode  ElementsMode
		brain func() fakellm.Brain
	}{
		{ElementsOff, pixelSignupBrain},
		{ElementsText, refSignupBrain},
		{ElementsMarks, pixelSignupBrain},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			e := startGTK(t)
			var promptChars int
			inner := tc.brain()
			res, steps, core := e.run(t, func(tu scripted.Turn) scripted.Reply { promptChars += len(tu.Prompt); return inner(tu) }, tc.mode, "fill in the form and save it")
			statusOf(t, res, Completed)
			e.waitFor(t, "the saved status", func(s *desktop.ElementSnapshot) bool {
				return has(s, desktop.RoleText, fmt.Sprintf("Saved: %s <%s>", signupNameValue, signupEmailValue))
			})
			tokens, outline := 0, 0
			for _, r := range core.Requests() {
				tokens += r.InputTokens
			}
			for _, st := range steps {
				if st.Elements != nil && tc.mode.text() {
					outline += len(st.Elements.Outline)
				}
				for _, a := range st.Actions {
					if a.Action.Kind == action.Click && (a.LocatedBy == operate.ByRef) != (tc.mode == ElementsText) {
						t.Errorf("%s: click %s located_by %q", tc.mode, a.String(), a.LocatedBy)
					}
				}
			}
			if tc.mode.text() {
				t.Logf("step 1's outline:\n%s", steps[0].Elements.Outline)
			}
			t.Logf("GUI_AGENT_ELEMENTS=%s: %d model calls, %d input tokens (estimated), %d prompt characters, of which %d outline bytes; %d steps",
				tc.mode, core.Calls(), tokens, promptChars, outline, res.Steps)
		})
	}
}

// TestSampleFormWithElementsAndNoTree: the sample application (X11, no
// accessibility tree) with GUI_AGENT_ELEMENTS=text: every step says there
// are no elements and the task completes as without it; the cost of both is
// logged.
func TestSampleFormWithElementsAndNoTree(t *testing.T) {
	for _, mode := range []ElementsMode{ElementsOff, ElementsText} {
		t.Run(string(mode), func(t *testing.T) {
			env := startX11(t)
			env.app(t, sampleapp.SceneForm)
			srv := fakellm.NewChatServer(scripted.DemoFormBrain(scripted.DefaultDemoForm), fakellm.ChatOptions{Profile: geom.ProfileFor("gpt-4o")})
			t.Cleanup(srv.Close)
			a, err := openai.NewGeneric(llm.Config{Provider: "openai", Model: "gpt-4o", APIKey: testKey, BaseURL: srv.URL, Refs: mode.on()})
			if err != nil {
				t.Fatal(err)
			}
			r, err := New(Options{Input: env.in, Adapter: a, Shot: imaging.Options{MaxLongEdge: 1280}, MaxSteps: 6, Timeout: 60 * time.Second,
				Settle: Settle{Interval: 50 * time.Millisecond, MaxWait: 2 * time.Second}, Logger: slog.New(slog.DiscardHandler), Elements: mode})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Run(context.Background(), Task{Task: "fill the form"}, nil)
			statusOf(t, res, Completed)
			tokens := 0
			for i, q := range srv.Requests() {
				tokens += q.InputTokens
				if got := strings.Contains(string(q.Body), "UI elements: none at this step (the desktop has no element source"); got != (mode == ElementsText) {
					t.Errorf("request %d says there are no elements: %v", i+1, got)
				}
			}
			t.Logf("sample form, GUI_AGENT_ELEMENTS=%s: %d model calls, %d input tokens (estimated)", mode, srv.Calls(), tokens)
		})
	}
}
