package flow

import (
	"context"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

var (
	treeName   = geom.Rect{X: 300, Y: 200, W: 400, H: 40}
	treeSubmit = geom.Rect{X: 360, Y: 470, W: 200, H: 64}
)

// treeDesk is a fake desktop whose form has an accessibility tree: a window,
// the Name field (named by its label) and the Submit button, painted.
func treeDesk(t *testing.T) *fake.Backend {
	t.Helper()
	b := fake.New(fake.Options{Displays: []geom.Display{{Bounds: geom.Rect{W: 1280, H: 800}}}, Background: color.RGBA{220, 220, 220, 255}})
	b.Fill(treeName, sampleapp.NameFieldColor.ToRGBA())
	b.Fill(treeSubmit, sampleapp.SubmitColor.ToRGBA())
	b.SetElements([]desktop.Element{
		{Depth: 0, Role: desktop.RoleWindow, Name: "Form", App: "form", Box: geom.Rect{W: 1280, H: 800}, States: desktop.States{Enabled: true}},
		{Depth: 1, Role: desktop.RoleText, Name: "Name", App: "form", Box: geom.Rect{X: 200, Y: 200, W: 80, H: 40}, States: desktop.States{Enabled: true}},
		{Depth: 1, Role: desktop.RoleTextbox, App: "form", Value: "Ada", Box: treeName, States: desktop.States{Enabled: true, Editable: true}},
		{Depth: 1, Role: desktop.RoleButton, Name: "Submit", App: "form", Box: treeSubmit, States: desktop.States{Enabled: true}},
	})
	return b
}

func lastClick(b *fake.Backend) geom.GlobalPoint {
	var at geom.GlobalPoint
	for _, ev := range b.Events() {
		if ev.Op == fake.OpButtonDown {
			at = ev.At
		}
	}
	return at
}

// TestClickStepByTreeNoModel: a step whose words name an element is found in
// the accessibility tree: no model call, located_by accessibility, and the
// cache keeps the element's identity.
func TestClickStepByTreeNoModel(t *testing.T) {
	b := treeDesk(t)
	seer := &flowtest.ColorSeer{}
	f := mustParse(t, "name: tree\nsteps:\n  - click: the Submit button\n", nil)
	path := filepath.Join(t.TempDir(), "tree.cache.yaml")
	c, err := OpenCache(path, ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	res := fakeRunner(t, b, seer, nil, nil).Run(context.Background(), f, nil, c)
	if res.Status != Passed || res.ModelCalls != 0 || len(seer.Locates()) != 0 {
		t.Fatalf("%s: %s, %d model calls; want the tree, no model", res.Status, res.Summary, res.ModelCalls)
	}
	if at := lastClick(b); !treeSubmit.Contains(at) {
		t.Errorf("clicked %v, not Submit %v", at, treeSubmit)
	}
	if got := res.Steps[0].Actions[0].LocatedBy; got != "accessibility" {
		t.Errorf("located_by %q, want accessibility", got)
	}
	y, _ := os.ReadFile(path)
	for _, want := range []string{"element:", "role: button", "name: Submit", "window Form"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("cache lacks %q:\n%s", want, y)
		}
	}
}

// TestReplayByIdentityAfterTheFieldChanged: the model located the field
// (its words name no element); the cache kept the element's identity. Its
// content changes between runs, so its pixels no longer match: replay finds
// it by identity with 0 model calls and clicks it.
func TestReplayByIdentityAfterTheFieldChanged(t *testing.T) {
	b := treeDesk(t)
	seer := &flowtest.ColorSeer{}
	f := mustParse(t, "name: id\nsteps:\n  - click: the name field at the top of the form\n", nil)
	path := filepath.Join(t.TempDir(), "id.cache.yaml")
	run := func() Result {
		c, err := OpenCache(path, ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		return fakeRunner(t, b, seer, nil, nil).Run(context.Background(), f, nil, c)
	}
	if res := run(); res.Status != Passed || res.ModelCalls != 1 {
		t.Fatalf("first run: %s: %s, %d model calls; want the model to locate it once", res.Status, res.Summary, res.ModelCalls)
	}
	y, _ := os.ReadFile(path)
	if !strings.Contains(string(y), "role: textbox") || !strings.Contains(string(y), "name: Name") {
		t.Fatalf("the cache has no identity of the field:\n%s", y)
	}
	// New content: other pixels in the field (text typed since).
	b.Fill(geom.Rect{X: treeName.X + 4, Y: treeName.Y + 4, W: 300, H: 32}, color.RGBA{20, 20, 20, 255})
	res := run()
	if res.Status != Passed || res.ModelCalls != 0 || res.Steps[0].Cache != CacheHit {
		t.Fatalf("replay: %s: %s, %d model calls, cache %q; want a hit by identity, no model", res.Status, res.Summary, res.ModelCalls, res.Steps[0].Cache)
	}
	if at := lastClick(b); !treeName.Contains(at) {
		t.Errorf("replay clicked %v, not the field %v", at, treeName)
	}
	// The replay refreshed the fingerprint. Without the tree, another change
	// of content costs a model call: the pixels differ.
	b.SetElements(nil)
	b.Fill(geom.Rect{X: treeName.X + 4, Y: treeName.Y + 4, W: 300, H: 32}, color.RGBA{250, 250, 250, 255})
	if res := run(); res.ModelCalls != 1 {
		t.Errorf("without the tree: %d model calls, want 1 (the fingerprint no longer matches)", res.ModelCalls)
	}
}
