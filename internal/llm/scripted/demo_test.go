package scripted

import (
	"image"
	"image/draw"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// formImage paints the sample form at w x h: every widget in its colour, typed
// text as dark strokes in the fields when filled, and the status line when submitted.
func formImage(t *testing.T, w, h int, filled, submitted bool) (image.Image, map[string]sampleapp.Widget) {
	t.Helper()
	ws, err := sampleapp.Layout(sampleapp.SceneForm, w, h)
	if err != nil {
		t.Fatal(err)
	}
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(m, m.Bounds(), image.NewUniform(sampleapp.BackgroundColor.ToRGBA()), image.Point{}, draw.Src)
	dark := image.NewUniform(sampleapp.TextColor.ToRGBA())
	byName := map[string]sampleapp.Widget{}
	for _, wd := range ws {
		byName[wd.Name] = wd
		draw.Draw(m, wd.Rect, image.NewUniform(wd.Color.ToRGBA()), image.Point{}, draw.Src)
		if filled && wd.Kind == sampleapp.KindField {
			for i := 0; i < 8; i++ { // eight letter strokes
				x := wd.Rect.Min.X + 10 + i*6
				draw.Draw(m, image.Rect(x, wd.Rect.Min.Y+15, x+2, wd.Rect.Max.Y-15), dark, image.Point{}, draw.Src)
			}
		}
	}
	if submitted {
		draw.Draw(m, image.Rect(30, h*640/800-10, 100, h*640/800), dark, image.Point{}, draw.Src)
	}
	return m, byName
}

func TestDemoFormBrain(t *testing.T) {
	brain := DemoFormBrain(DefaultDemoForm)
	img, ws := formImage(t, 1280, 800, false, false)
	r := brain(Turn{Image: img})
	if StatusOf(r) != llm.Continue || len(r.Actions) != 10 {
		t.Fatalf("empty form: status %s with %d actions, want one batch of 10", StatusOf(r), len(r.Actions))
	}
	for i, name := range []string{"name", "email", "city"} {
		click, sel, typ := r.Actions[3*i], r.Actions[3*i+1], r.Actions[3*i+2]
		if click.At == nil || !click.At.In(ws[name].Rect) {
			t.Errorf("click %d at %v, outside the %s field %v", i, click.At, name, ws[name].Rect)
		}
		if sel.Kind != action.KeyPress || typ.Kind != action.TypeText || typ.Text == "" {
			t.Errorf("field %s: %+v then %+v", name, sel, typ)
		}
	}
	if last := r.Actions[9]; last.At == nil || !last.At.In(ws["submit"].Rect) {
		t.Errorf("last action should click Submit %v, got %+v", ws["submit"].Rect, last)
	}

	img, ws = formImage(t, 1280, 800, true, false)
	if r := brain(Turn{Image: img}); len(r.Actions) != 1 || !r.Actions[0].At.In(ws["submit"].Rect) {
		t.Fatalf("filled but not submitted: %+v", r)
	}
	img, _ = formImage(t, 1280, 800, true, true)
	if r := brain(Turn{Image: img}); StatusOf(r) != llm.Done || r.Result == "" {
		t.Fatalf("submitted form: %+v", r)
	}
	blank := image.NewRGBA(image.Rect(0, 0, 640, 400))
	if r := brain(Turn{Image: blank}); StatusOf(r) != llm.Blocked {
		t.Fatalf("no form on screen: %+v", r)
	}
}
