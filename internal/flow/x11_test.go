package flow

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// The end-to-end targets of the flow cache run for real: a private Xvfb
// larger than the sample app's window (so the window can move), the X11
// backend injecting input, the sample app reporting every click with the
// widget under it, and colorSeer finding widgets in the screenshots it is sent.

// formFlow fills and submits the sample app's form in six steps, five of
// which locate an element.
const formFlow = `name: fill the form
steps:
  - type: {target: the Name field, text: "${name}"}
  - type: {target: the Email field, text: "${email}", mode: replace}
  - type: {target: the City field, text: Berlin}
  - sleep: 20
  - locate: {target: the City field, save_as: city_at}
  - click: the Submit button
`

var formVars = map[string]string{"name": "Ada", "email": "ada@example.com"}

// wantTargets are the widgets the form flow clicks, in order.
var wantTargets = []string{"name", "email", "city", "submit"}

type x11Env struct {
	display string
	in      *desktop.Input
}

func startX11(t testing.TB) *x11Env {
	t.Helper()
	vd := xvfbtest.Start(t, 1600, 1000)
	be := x11.New(x11.Options{Display: vd.Display, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		t.Fatalf("start the X11 backend on %s: %v", vd.Display, err)
	}
	t.Cleanup(func() { be.Close() })
	return &x11Env{display: vd.Display, in: desktop.NewInput(be)}
}

// app starts the form at (x, y) with the given labels; Close it before the next.
func (e *x11Env) app(t testing.TB, x, y int, labels map[string]string) *sampleapp.App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: e.display, Width: 1280, Height: 800, X: x, Y: y, Labels: labels})
	if err != nil {
		t.Fatalf("start the sample app: %v", err)
	}
	return app
}

func (e *x11Env) runner(t testing.TB, seer *flowtest.ColorSeer) *Runner {
	t.Helper()
	r, err := NewRunner(Options{Input: e.in, Seer: seer, Model: "color-seer",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runForm runs the form flow once on a fresh app and checks, from the app's
// own output, that every click landed on its widget and the form was
// submitted with the right values.
func (e *x11Env) runForm(t testing.TB, seer *flowtest.ColorSeer, cachePath string, strategy Strategy, x, y int, labels map[string]string) Result {
	t.Helper()
	app := e.app(t, x, y, labels)
	defer app.Close()
	f, err := Parse([]byte(formFlow), formVars)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := OpenCache(cachePath, strategy)
	if err != nil {
		t.Fatal(err)
	}
	res := e.runner(t, seer).Run(context.Background(), f, formVars, cache)
	if res.Status != Passed {
		t.Fatalf("flow %s: %s; steps %+v", res.Status, res.Summary, res.Steps)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "submit" })
	if err != nil {
		t.Fatalf("no submit: %v", err)
	}
	if sub.Fields["name"] != "Ada" || sub.Fields["email"] != "ada@example.com" || sub.Fields["city"] != "Berlin" {
		t.Errorf("submitted %v, want name Ada, email ada@example.com, city Berlin", sub.Fields)
	}
	var clicked []string
	for _, ev := range app.History() {
		if ev.Event == "click" {
			clicked = append(clicked, ev.Target)
		}
	}
	if !slices.Equal(clicked, wantTargets) {
		t.Errorf("clicks landed on %q, want %q (a click on a wrong element or a missed one)", clicked, wantTargets)
	}
	return res
}

func cacheUses(res Result) []string {
	var out []string
	for _, s := range res.Steps {
		out = append(out, s.Cache)
	}
	return out
}

func TestFlowSecondRunUsesNoModel(t *testing.T) {
	e := startX11(t)
	path := filepath.Join(t.TempDir(), "form.cache.yaml")
	seer := &flowtest.ColorSeer{}
	first := e.runForm(t, seer, path, ReadWrite, 0, 0, nil)
	if first.ModelCalls != 5 || len(seer.Locates()) != 5 {
		t.Fatalf("first run: %d model calls (seer saw %q), want 5 (one per locating step)", first.ModelCalls, seer.Locates())
	}
	if first.Vars["city_at"] != "640,388" {
		t.Errorf("locate saved city_at=%q, want the City field's centre 640,388", first.Vars["city_at"])
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the first run wrote no cache: %v", err)
	}
	for _, want := range []string{"description: the Name field", "display_size: 1600x1000", "model: color-seer", "fingerprint:"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("cache file lacks %q:\n%.1500s", want, b)
		}
	}
	seer2 := &flowtest.ColorSeer{}
	second := e.runForm(t, seer2, path, ReadWrite, 0, 0, nil)
	if second.ModelCalls != 0 || len(seer2.Locates()) != 0 {
		t.Errorf("second run: %d model calls (%q), want 0", second.ModelCalls, seer2.Locates())
	}
	if want := []string{"hit", "hit", "hit", "", "hit", "hit"}; !slices.Equal(cacheUses(second), want) {
		t.Errorf("second run cache uses %q, want %q", cacheUses(second), want)
	}
}

func TestFlowWindowMovedReplaysWithoutModel(t *testing.T) {
	e := startX11(t)
	path := filepath.Join(t.TempDir(), "form.cache.yaml")
	e.runForm(t, &flowtest.ColorSeer{}, path, ReadWrite, 0, 0, nil)
	seer := &flowtest.ColorSeer{}
	moved := e.runForm(t, seer, path, ReadWrite, 150, 90, nil)
	if moved.ModelCalls != 0 || len(seer.Locates()) != 0 {
		t.Errorf("after moving the window by (+150,+90): %d model calls (%q), want 0", moved.ModelCalls, seer.Locates())
	}
	if want := []string{"moved", "moved", "moved", "", "moved", "moved"}; !slices.Equal(cacheUses(moved), want) {
		t.Errorf("cache uses %q, want %q", cacheUses(moved), want)
	}
	if moved.Vars["city_at"] != "790,478" {
		t.Errorf("locate saved city_at=%q, want the moved City field's centre 790,478", moved.Vars["city_at"])
	}
}

func TestFlowChangedLabelAsksModelForThatStepOnly(t *testing.T) {
	e := startX11(t)
	path := filepath.Join(t.TempDir(), "form.cache.yaml")
	e.runForm(t, &flowtest.ColorSeer{}, path, ReadWrite, 0, 0, nil)
	before := readCache(t, path)
	seer := &flowtest.ColorSeer{}
	relabelled := map[string]string{"submit": "Send now"}
	res := e.runForm(t, seer, path, ReadWrite, 0, 0, relabelled)
	if got := seer.Locates(); !slices.Equal(got, []string{"the Submit button"}) {
		t.Errorf("model asked for %q, want only the Submit button (step 6)", got)
	}
	if want := []string{"hit", "hit", "hit", "", "hit", "miss"}; !slices.Equal(cacheUses(res), want) {
		t.Errorf("cache uses %q, want %q", cacheUses(res), want)
	}
	after := readCache(t, path)
	for i := range before.Entries {
		changed := before.Entries[i].Fingerprint != after.Entries[i].Fingerprint
		if changed != (before.Entries[i].Step == 6) {
			t.Errorf("entry of step %d: fingerprint changed=%v", before.Entries[i].Step, changed)
		}
	}
	seer3 := &flowtest.ColorSeer{}
	if again := e.runForm(t, seer3, path, ReadWrite, 0, 0, relabelled); again.ModelCalls != 0 {
		t.Errorf("the run after the update: %d model calls (%q), want 0", again.ModelCalls, seer3.Locates())
	}
}

func readCache(t *testing.T, path string) CacheFile {
	t.Helper()
	c, err := OpenCache(path, ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	return c.file
}
