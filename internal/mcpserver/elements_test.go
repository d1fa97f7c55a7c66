package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

// A form window on the right display of twoDisplays (global origin
// 1920,-200, 2560x1440): its default screenshot is 1920x1080, so image
// pixels are 0.75 of the display's.
var (
	formOrigin = geom.GlobalPoint{X: 1920 + 400, Y: -200 + 200}
	okBox      = geom.Rect{X: formOrigin.X + 100, Y: formOrigin.Y + 300, W: 80, H: 40}
	nameBox    = geom.Rect{X: formOrigin.X + 100, Y: formOrigin.Y + 60, W: 400, H: 40}
)

func formElements() []desktop.Element {
	o := formOrigin
	return []desktop.Element{
		{Depth: 0, Role: desktop.RoleWindow, Name: "Form", App: "form", Box: geom.Rect{X: o.X, Y: o.Y, W: 800, H: 600}, States: desktop.States{Enabled: true}},
		{Depth: 1, Role: desktop.RoleText, Name: "Name", App: "form", Box: geom.Rect{X: o.X + 20, Y: o.Y + 60, W: 60, H: 40}, States: desktop.States{Enabled: true}},
		{Depth: 1, Role: desktop.RoleTextbox, App: "form", Value: "Ada", Box: nameBox, States: desktop.States{Enabled: true, Editable: true, Focused: true}},
		{Depth: 1, Role: desktop.RoleButton, Name: "OK", App: "form", Box: okBox, States: desktop.States{Enabled: true}},
		{Depth: 1, Role: desktop.RoleButton, Name: "Save", App: "form", Box: geom.Rect{X: o.X + 200, Y: o.Y + 300, W: 80, H: 40}, States: desktop.States{Enabled: true}},
		{Depth: 1, Role: desktop.RoleButton, Name: "Save", App: "form", Box: geom.Rect{X: o.X + 300, Y: o.Y + 300, W: 80, H: 40}, States: desktop.States{Enabled: true}},
	}
}

func newFormEnv(t *testing.T) *testEnv {
	t.Helper()
	return newEnvWith(t, twoDisplays, Options{DefaultDisplay: "1"}, func(b *fake.Backend) { b.SetElements(formElements()) })
}

func snapshotOf(t *testing.T, e *testEnv, args map[string]any) (SnapshotResult, string) {
	t.Helper()
	res := callTool(t, e.cs, "gui_snapshot", args)
	if res.IsError {
		t.Fatalf("gui_snapshot: %s", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out SnapshotResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, text(res)
}

func elementNamed(t *testing.T, r SnapshotResult, name string) SnapElement {
	t.Helper()
	for _, el := range r.Elements {
		if el.Name == name {
			return el
		}
	}
	t.Fatalf("no element %q in %+v", name, r.Elements)
	return SnapElement{}
}

// imageOfRight maps a global box on the right display to its 1920x1080 image.
func imageOfRight(r geom.Rect) ImageBox {
	return ImageBox{float64(r.X-1920) * 0.75, float64(r.Y+200) * 0.75, float64(r.X+r.W-1920) * 0.75, float64(r.Y+r.H+200) * 0.75}
}

func TestSnapshotBoxesAreImagePixelsOfItsFrame(t *testing.T) {
	e := newFormEnv(t)
	r, outline := snapshotOf(t, e, map[string]any{"display": "1"})
	if r.Display != "1" || r.Source != "fake" || r.Truncated || len(r.Elements) != 6 {
		t.Fatalf("snapshot %+v: want the form's 6 elements on display 1", r)
	}
	ok := elementNamed(t, r, "OK")
	if want := imageOfRight(okBox); ok.Box != want || ok.Role != "button" {
		t.Errorf("OK %+v: want a button at %v (image pixels of frame %s)", ok, want, r.FrameID)
	}
	name := elementNamed(t, r, "Name") // the label names the field; the field comes first in the outline
	if name.Role != "text" {
		t.Errorf("first element named Name is %+v", name)
	}
	box := fmt.Sprintf("[%g,%g,%g,%g]", ok.Box.X1, ok.Box.Y1, ok.Box.X2, ok.Box.Y2)
	for _, want := range []string{"frame " + r.FrameID, `  ` + ok.Ref + ` button "OK" ` + box, `textbox "Name" value="Ada" focused editable`} {
		if !strings.Contains(outline, want) {
			t.Errorf("outline lacks %q:\n%s", want, outline)
		}
	}
	// The frame is the display's latest: a click at the box centre in image
	// pixels lands where the ref does.
	n := len(e.desk.Events())
	ok2(t, e, "gui_click", map[string]any{"x": (ok.Box.X1 + ok.Box.X2) / 2, "y": (ok.Box.Y1 + ok.Box.Y2) / 2, "display": "1"})
	at := e.desk.Events()[n].At
	n = len(e.desk.Events())
	msg := ok2(t, e, "gui_click", map[string]any{"ref": ok.Ref})
	if got := e.desk.Events()[n].At; abs(got.X-at.X) > 1 || abs(got.Y-at.Y) > 1 || !okBox.Contains(got) {
		t.Errorf("click by ref went to %v, click at the box centre to %v; OK is %v", got, at, okBox)
	}
	if !strings.Contains(msg, "located_by ref: "+ok.Ref+` button "OK" box `+box+` of frame `+r.FrameID) {
		t.Errorf("result %q does not say the ref and box acted on", msg)
	}
}

func ok2(t *testing.T, e *testEnv, tool string, args map[string]any) string {
	t.Helper()
	return ok(t, e.cs, tool, args)
}

func TestRefsStaleAndUnknown(t *testing.T) {
	e := newFormEnv(t)
	fails(t, e.cs, "gui_click", map[string]any{"ref": "e2"}, "unknown ref", "no snapshot", "gui_snapshot")
	first, _ := snapshotOf(t, e, nil)
	okRef := elementNamed(t, first, "OK").Ref
	second, _ := snapshotOf(t, e, nil)
	if elementNamed(t, second, "OK").Ref == okRef {
		t.Fatalf("two snapshots gave OK the same ref %s: a stale ref could not be told", okRef)
	}
	n := len(e.desk.Events())
	fails(t, e.cs, "gui_click", map[string]any{"ref": okRef}, "stale ref", okRef, "earlier snapshot", "gui_snapshot again")
	fails(t, e.cs, "gui_double_click", map[string]any{"ref": "e999"}, "unknown ref", "e999", "gui_snapshot again")
	fails(t, e.cs, "gui_move", map[string]any{"ref": "OK"}, "unknown ref", "look like e12")
	fails(t, e.cs, "gui_click", map[string]any{"ref": elementNamed(t, second, "OK").Ref, "x": 1, "y": 2}, "not several")
	if got := e.desk.Events()[n:]; len(got) != 0 {
		t.Errorf("a bad ref acted: %v", ops(got))
	}
}

func TestRefOnEveryInputTool(t *testing.T) {
	e := newFormEnv(t)
	r, _ := snapshotOf(t, e, nil)
	okEl, nameEl := elementNamed(t, r, "OK"), r.Elements[2]
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // the first event's kind
	}{
		{"gui_move", map[string]any{"ref": okEl.Ref}, "move"},
		{"gui_double_click", map[string]any{"ref": okEl.Ref}, "move"},
		{"gui_scroll", map[string]any{"ref": okEl.Ref, "direction": "down"}, "move"},
		{"gui_mouse_down", map[string]any{"ref": okEl.Ref}, "move"},
	} {
		n := len(e.desk.Events())
		msg := ok(t, e.cs, c.tool, c.args)
		evs := e.desk.Events()[n:]
		if len(evs) == 0 || !okBox.Contains(evs[0].At) && !okBox.Contains(evs[len(evs)-1].At) || !strings.Contains(msg, "located_by ref") {
			t.Errorf("%s by ref: events %v, result %q", c.tool, ops(evs), msg)
		}
	}
	ok(t, e.cs, "gui_mouse_up", nil)
	n := len(e.desk.Events())
	msg := ok(t, e.cs, "gui_drag", map[string]any{"from_ref": nameEl.Ref, "to_ref": okEl.Ref})
	evs := e.desk.Events()[n:]
	var down, up geom.GlobalPoint
	for _, ev := range evs {
		switch ev.Op {
		case fake.OpButtonDown:
			down = ev.At
		case fake.OpButtonUp:
			up = ev.At
		}
	}
	if !nameBox.Contains(down) || !okBox.Contains(up) {
		t.Errorf("drag from_ref to_ref pressed at %v and released at %v; want %v to %v (%s)", down, up, nameBox, okBox, msg)
	}
	fails(t, e.cs, "gui_drag", map[string]any{"from_ref": "e1", "from_x": 1, "from_y": 1, "to_ref": okEl.Ref}, "drag start", "not several")
}

func TestTargetThroughTheTreeWithoutAModel(t *testing.T) {
	e := newFormEnv(t)
	n := len(e.desk.Events())
	msg := ok(t, e.cs, "gui_click", map[string]any{"target": "the OK button"})
	evs := e.desk.Events()[n:]
	if len(evs) == 0 || !okBox.Contains(evs[len(evs)-1].At) {
		t.Fatalf("click by target went to %v, not OK at %v", ops(evs), okBox)
	}
	if !strings.Contains(msg, `located_by accessibility:`) || !strings.Contains(msg, `button "OK"`) || !strings.Contains(msg, "exact match") {
		t.Errorf("result %q does not say it was located in the tree", msg)
	}
	// Ambiguous: the error lists the candidates with refs the session can use.
	n = len(e.desk.Events())
	amb := fails(t, e.cs, "gui_click", map[string]any{"target": "Save"}, "ambiguous", "2 elements", "nothing was done")
	if len(e.desk.Events()) != n {
		t.Fatalf("an ambiguous target acted: %v", ops(e.desk.Events()[n:]))
	}
	var ref string
	for _, f := range strings.Fields(amb) {
		if strings.HasPrefix(f, "e") && len(f) > 1 && f[1] >= '0' && f[1] <= '9' {
			ref = strings.TrimSuffix(f, ";")
		}
	}
	msg = ok(t, e.cs, "gui_click", map[string]any{"ref": ref})
	if !strings.Contains(msg, `button "Save"`) {
		t.Errorf("the ref %s the ambiguity error listed clicked %q", ref, msg)
	}
	// No match without OCR or a model: the error says what the tree has.
	fails(t, e.cs, "gui_click", map[string]any{"target": "Frobnicate"}, `no element matches target "Frobnicate"`)
}

func TestTypeReplaceThroughEditableText(t *testing.T) {
	e := newFormEnv(t)
	r, _ := snapshotOf(t, e, nil)
	field := r.Elements[2]
	n := len(e.desk.Events())
	msg := ok(t, e.cs, "gui_type", map[string]any{"ref": field.Ref, "text": "Grace", "mode": "replace"})
	if !strings.Contains(msg, "EditableText") || !strings.Contains(msg, "verified by reading it back") {
		t.Errorf("result %q", msg)
	}
	if typed := e.desk.Typed(); typed != "" {
		t.Errorf("typed %q: EditableText should have set the text", typed)
	}
	after, _ := snapshotOf(t, e, nil)
	if got := after.Elements[2].Value; got != "Grace" {
		t.Errorf("the field reads %q after replace, want Grace (events %v)", got, ops(e.desk.Events()[n:]))
	}
}

func TestTypeReplaceByKeysVerified(t *testing.T) {
	e := newEnvWith(t, twoDisplays, Options{DefaultDisplay: "1"}, func(b *fake.Backend) {
		els := formElements()
		els[2].States.Editable = false // offers no EditableText: the keys select, then the text is read back
		els[2].States.Focused = false
		b.SetElements(els)
	})
	msg := ok(t, e.cs, "gui_type", map[string]any{"text": "Grace", "mode": "replace"})
	if !strings.Contains(msg, "selected the field's text and typed 5 characters; not verified: no focused text field") {
		t.Errorf("result %q", msg)
	}
}

func TestSnapshotArgumentsAndScreenshot(t *testing.T) {
	e := newFormEnv(t)
	fails(t, e.cs, "gui_snapshot", map[string]any{"scope": "app"}, "needs the application's name", "set app")
	res := callTool(t, e.cs, "gui_snapshot", map[string]any{"include_screenshot": true, "max_elements": 3})
	if res.IsError {
		t.Fatal(text(res))
	}
	var imgs int
	var marked []byte
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			imgs++
			marked = ic.Data
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	var r SnapshotResult
	_ = json.Unmarshal(b, &r)
	// The marks are drawn: the marked image differs from a plain screenshot
	// on the first element's box outline (the fake screen does not change).
	if len(r.Elements) > 0 && marked != nil {
		var plain []byte
		for _, c := range callTool(t, e.cs, "gui_screenshot", map[string]any{"format": "png"}).Content {
			if ic, ok := c.(*mcp.ImageContent); ok {
				plain = ic.Data
			}
		}
		mi, err1 := decodeImage(marked)
		pi, err2 := decodeImage(plain)
		if err1 != nil || err2 != nil {
			t.Fatalf("decoding the screenshots: %v, %v", err1, err2)
		}
		bx := r.Elements[0].Box
		x, y := int(bx.X1)+1, int(bx.Y1)+1
		mr, mg, mb, _ := mi.At(x, y).RGBA()
		pr, pg, pb, _ := pi.At(x, y).RGBA()
		if d := absDiff(mr, pr) + absDiff(mg, pg) + absDiff(mb, pb); d < 3*0x2000 {
			t.Errorf("include_screenshot: pixel (%d,%d) on %s's box outline is the plain screenshot's (%v vs %v): no mark drawn", x, y, r.Elements[0].Ref, mi.At(x, y), pi.At(x, y))
		}
	}
	if imgs != 1 || len(r.Elements) != 3 || !r.Truncated || r.TruncatedBy != "max_elements" {
		t.Errorf("include_screenshot with max_elements 3: %d images, %d elements, truncated %v by %q", imgs, len(r.Elements), r.Truncated, r.TruncatedBy)
	}
	if plain := callTool(t, e.cs, "gui_snapshot", nil); len(plain.Content) != 1 {
		t.Errorf("without include_screenshot the result has %d contents, want the outline only", len(plain.Content))
	}
	if !strings.Contains(text(res), "truncated by max_elements") {
		t.Errorf("outline does not say it was truncated: %s", text(res))
	}
}

func decodeImage(b []byte) (image.Image, error) {
	img, _, err := image.Decode(bytes.NewReader(b))
	return img, err
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
