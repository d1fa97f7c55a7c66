package fakellm

import (
	"image"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

func visionFormImage() *image.RGBA {
	img := canvas(640, 400)
	fill(img, img.Bounds(), sampleapp.BackgroundColor.ToRGBA())
	fill(img, image.Rect(100, 50, 400, 80), sampleapp.NameFieldColor.ToRGBA())
	fill(img, image.Rect(300, 300, 380, 330), sampleapp.SubmitColor.ToRGBA())
	return img
}

func TestVisionBrainAnswersFromThePixels(t *testing.T) {
	b := VisionBrain(SampleAppWidgets)
	img := visionFormImage()
	rep := b(Turn{Image: img, Prompt: "Find this element on the screenshot: the Submit button\nThe box is ..."})
	if rep.Box == nil || *rep.Box != image.Rect(300, 300, 380, 330) || rep.Answer["found"] != true {
		t.Fatalf("locate: %+v %v", rep.Answer, rep.Box)
	}
	rep = b(Turn{Image: img, Prompt: "What element matches the following task: the OK button"})
	if rep.Box != nil || rep.Answer["found"] != false {
		t.Fatalf("locate of a missing button: %+v", rep.Answer)
	}
	for stmt, want := range map[string]bool{
		"the Name field is visible":     true,
		"the Name field is not visible": false,
		"the OK button is visible":      false,
		"the form was submitted":        false,
	} {
		if got := b(Turn{Image: img, Prompt: "Statement about the screenshot: " + stmt + "\nAnswer"}).Answer["pass"]; got != want {
			t.Errorf("%q: pass %v, want %v", stmt, got, want)
		}
	}
	q := func(schema string) any {
		return b(Turn{Image: img, Prompt: "Question about the screenshot: which?\nAnswer ..., where data matches this JSON Schema: " + schema}).Answer["data"]
	}
	if got := q(`{"type":"integer"}`); got != 2 {
		t.Errorf("count: %v", got)
	}
	if got := q(`{"type":"string"}`); got != "the Name field, the Submit button" {
		t.Errorf("names: %v", got)
	}
}

func TestBoxInEachConvention(t *testing.T) {
	r, size := image.Rect(100, 50, 200, 90), geom.Size{W: 800, H: 400}
	for _, c := range []struct {
		p    geom.Profile
		want []float64
	}{
		{geom.Profile{}, []float64{100, 50, 200, 90}},
		{geom.Profile{Divisor: 1000}, []float64{126, 126, 251, 226}},
		{geom.Profile{Divisor: 1000, Order: geom.YX}, []float64{126, 126, 226, 251}},
	} {
		got := BoxIn(c.p, r, size)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v: %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}
