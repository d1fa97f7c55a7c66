package flow

import (
	"image"
	"image/color"
	"image/draw"
	"testing"

	"github.com/guiagent/guiagent/internal/vision"
)

// button paints a 200x64 button with a "label": a pattern of thin bars
// whose positions depend on label.
func button(img *image.RGBA, at image.Point, label int) {
	r := image.Rect(0, 0, 200, 64).Add(at)
	draw.Draw(img, r, image.NewUniform(color.RGBA{0x3c, 0x78, 0xd8, 255}), image.Point{}, draw.Src)
	for i := range 6 {
		x := at.X + 70 + i*10 + (label*(i+1))%4
		draw.Draw(img, image.Rect(x, at.Y+26, x+3, at.Y+39), image.NewUniform(color.White), image.Point{}, draw.Src)
	}
}

func screen() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 1600, 1000))
	draw.Draw(img, img.Rect, image.NewUniform(color.RGBA{220, 220, 220, 255}), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(0, 890, 1600, 1000), image.NewUniform(color.Black), image.Point{}, draw.Src) // a long edge
	return img
}

func TestFingerprintFoundWhereverItMoved(t *testing.T) {
	orig := screen()
	button(orig, image.Pt(360, 470), 1)
	fp := takeFingerprint(orig, vision.Box{X1: 361, Y1: 470, X2: 560, Y2: 528}) // a model's box need not be exact
	if !fp.matchesAt(orig, fp.Rect.Min) {
		t.Fatal("the fingerprint does not match where it was taken")
	}
	for dx := range 4 {
		for _, d := range []image.Point{{150 + dx, 90}, {-200 - dx, 301 + dx}, {700, -400 + dx}} {
			moved := screen()
			button(moved, image.Pt(360, 470).Add(d), 1)
			if fp.matchesAt(moved, fp.Rect.Min) {
				t.Errorf("moved by %v: still matches at the old place", d)
			}
			at, ok := fp.search(moved)
			if !ok || at != fp.Rect.Min.Add(d) {
				t.Errorf("moved by %v: found %v %v, want %v", d, at, ok, fp.Rect.Min.Add(d))
			}
		}
	}
}

func TestFingerprintRejectsAChangedLabel(t *testing.T) {
	orig := screen()
	button(orig, image.Pt(360, 470), 1)
	fp := takeFingerprint(orig, vision.Box{X1: 360, Y1: 470, X2: 560, Y2: 534})
	relabelled := screen()
	button(relabelled, image.Pt(360, 470), 2)
	if fp.matchesAt(relabelled, fp.Rect.Min) {
		t.Error("a changed label still matches at the cached place")
	}
	if at, ok := fp.search(relabelled); ok {
		t.Errorf("a changed label was found at %v", at)
	}
	if s := fp.differentShare(relabelled, fp.Rect.Min); s < maxDifferentShare {
		t.Errorf("share of different pixels %.4f", s)
	}
}

// labelledField paints a label (bars whose pattern depends on label) and,
// gap pixels right of it, a 300x28 white field with a grey border holding
// text (bars from text; 0: empty); focused draws a dark 2 px focus ring.
func labelledField(img *image.RGBA, at image.Point, label, text int, focused bool) {
	fill := func(r image.Rectangle, c color.Color) {
		draw.Draw(img, r.Add(at), image.NewUniform(c), image.Point{}, draw.Src)
	}
	for i := range 7 {
		x := i*6 + (label*(i+3))%3
		fill(image.Rect(x, 8+(label*i)%4, x+2, 20), color.Black)
	}
	const gap = 20
	if focused {
		fill(image.Rect(50+gap-3, -3, 50+gap+303, 31), color.RGBA{0x20, 0x20, 0x20, 255})
	} else {
		fill(image.Rect(50+gap-3, -3, 50+gap+303, 31), color.RGBA{220, 220, 220, 255})
	}
	fill(image.Rect(50+gap-1, -1, 50+gap+301, 29), color.RGBA{0x80, 0x80, 0x80, 255})
	fill(image.Rect(50+gap, 0, 50+gap+300, 28), color.White)
	for i := range text {
		x := 50 + gap + 4 + i*7
		fill(image.Rect(x, 7+i%3, x+3, 21), color.Black)
	}
}

// fieldBox is the inside of the field labelledField paints at at, as a
// model's box: a few pixels short of it on each side.
func fieldBox(at image.Point) vision.Box {
	return vision.Box{X1: float64(at.X + 73), Y1: float64(at.Y + 3), X2: float64(at.X + 366), Y2: float64(at.Y + 25)}
}

func TestFieldFingerprintIgnoresWhatTheFieldHolds(t *testing.T) {
	at := image.Pt(400, 300)
	orig := screen()
	labelledField(orig, at, 1, 0, false)
	fp := takeFieldFingerprint(orig, fieldBox(at))
	if fp.Label.Empty() || fp.Label.Max.X > at.X+60 || fp.Label.Min.X > at.X {
		t.Errorf("label part %v, want the label left of the field at %v", fp.Label, at)
	}
	if want := image.Rect(at.X+70, at.Y, at.X+370, at.Y+28).Inset(-fieldFocusBand); fp.Hole != want {
		t.Errorf("hole %v, want the field's inside %v grown by %d", fp.Hole, want, fieldFocusBand)
	}
	typed := screen()
	labelledField(typed, at, 1, 12, true) // holds text, has the focus
	if !fp.matchesAt(typed, fp.Rect.Min) {
		t.Errorf("a field holding text does not match at its place (%.4f different)", fp.differentShare(typed, fp.Rect.Min))
	}
	if box := takeFingerprint(orig, fieldBox(at)); box.matchesAt(typed, box.Rect.Min) {
		t.Fatal("the whole crop matches too: the test shows nothing")
	}
	for _, d := range []image.Point{{150, 90}, {-233, 401}, {3, -7}} {
		moved := screen()
		labelledField(moved, at.Add(d), 1, 5, d.X > 0)
		got, ok := fp.search(moved)
		if !ok || got != fp.Rect.Min.Add(d) {
			t.Errorf("moved by %v: found %v %v, want %v", d, got, ok, fp.Rect.Min.Add(d))
		}
	}
}

func TestFieldFingerprintRejectsAnotherField(t *testing.T) {
	at := image.Pt(400, 300)
	orig := screen()
	labelledField(orig, at, 1, 0, false)
	fp := takeFieldFingerprint(orig, fieldBox(at))
	other := screen()
	labelledField(other, at, 2, 4, false) // another label beside the same field
	if fp.matchesAt(other, fp.Rect.Min) {
		t.Errorf("a field with another label matches at the place (%.4f different)", fp.differentShare(other, fp.Rect.Min))
	}
	if got, ok := fp.search(other); ok {
		t.Errorf("a field with another label was found at %v", got)
	}
	// No label: the ring alone still refuses a button at the place.
	bare := screen()
	draw.Draw(bare, image.Rect(at.X+70, at.Y, at.X+370, at.Y+28), image.NewUniform(color.White), image.Point{}, draw.Src)
	fb := takeFieldFingerprint(bare, fieldBox(at))
	if !fb.Label.Empty() {
		t.Errorf("label %v found where there is none", fb.Label)
	}
	btn := screen()
	button(btn, image.Pt(at.X+70, at.Y-18), 1)
	if fb.matchesAt(btn, fb.Rect.Min) {
		t.Error("a button at the field's place matches the field's ring")
	}
}

func TestFieldLabelAbove(t *testing.T) {
	img := screen()
	at := image.Pt(300, 200)
	for i := range 6 { // a label 8 px above the field
		draw.Draw(img, image.Rect(at.X+i*6, at.Y-20, at.X+i*6+3, at.Y-10), image.NewUniform(color.Black), image.Point{}, draw.Src)
	}
	draw.Draw(img, image.Rect(at.X, at.Y, at.X+300, at.Y+28), image.NewUniform(color.White), image.Point{}, draw.Src)
	fp := takeFieldFingerprint(img, vision.Box{X1: float64(at.X), Y1: float64(at.Y), X2: float64(at.X + 300), Y2: float64(at.Y + 28)})
	if want := image.Rect(at.X, at.Y-20, at.X+33, at.Y-10).Inset(-labelMargin); fp.Label != want {
		t.Errorf("label %v, want %v", fp.Label, want)
	}
}
