package imaging

import (
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"testing"
)

// labelledField paints, on a grey panel, a 40x12 "label" of bars (its
// pattern set by label) and, 10 px to its right, a 160x24 field with a dark frame whose inside
// holds text strokes drawn from content.
func labelledField(m *image.RGBA, at image.Point, label, content uint64) {
	fill := func(r image.Rectangle, c color.RGBA) {
		draw.Draw(m, r.Add(at), image.NewUniform(c), image.Point{}, draw.Src)
	}
	fill(image.Rect(-10, -10, 220, 34), color.RGBA{214, 214, 214, 255})
	lr := rand.New(rand.NewPCG(label, 3))
	for x := 0; x < 40; x += 2 + lr.IntN(3) {
		fill(image.Rect(x, 6+lr.IntN(4), x+2, 18), color.RGBA{20, 20, 20, 255})
	}
	fill(image.Rect(50, 0, 210, 24), color.RGBA{40, 40, 40, 255})
	fill(image.Rect(51, 1, 209, 23), color.RGBA{255, 255, 255, 255})
	cr := rand.New(rand.NewPCG(content, 5))
	for x := 54; x < 200; x += 3 + cr.IntN(4) {
		fill(image.Rect(x, 5+cr.IntN(5), x+2, 19), color.RGBA{0, 0, 0, 255})
	}
}

// fieldTemplate cuts the labelled field at at out of m (a 4 px margin) and
// its mask, which leaves out the field's inside.
func fieldTemplate(m *image.RGBA, at image.Point) (*image.RGBA, *image.Alpha) {
	r := image.Rect(-4, -4, 214, 28).Add(at)
	tmpl := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(tmpl, tmpl.Rect, m, r.Min, draw.Src)
	mask := image.NewAlpha(tmpl.Rect)
	draw.Draw(mask, mask.Rect, image.Opaque, image.Point{}, draw.Src)
	draw.Draw(mask, image.Rect(51, 1, 209, 23).Add(image.Pt(4, 4)), image.Transparent, image.Point{}, draw.Src)
	return tmpl, mask
}

func TestFindTemplateMaskedIgnoresWhatTheFieldHolds(t *testing.T) {
	orig := busyScreen(900, 560, 9)
	at := image.Pt(600, 300)
	labelledField(orig, at, 1, 1)
	tmpl, mask := fieldTemplate(orig, at)

	// The same field elsewhere, holding other text.
	moved := busyScreen(900, 560, 9)
	to := image.Pt(317, 455)
	labelledField(moved, to, 1, 2)
	want := image.Rectangle{to.Add(image.Pt(-4, -4)), to.Add(image.Pt(214, 28))}
	if m := FindTemplate(moved, tmpl, 0.95, 5); len(m) > 0 && m[0].Rect == want {
		t.Fatalf("the unmasked template matched a field with other text (score %.3f): the test shows nothing", m[0].Score)
	}
	got := FindTemplateMasked(moved, tmpl, mask, 0.95, 5)
	if len(got) == 0 || got[0].Rect != want || got[0].Score < 0.99 {
		t.Errorf("masked search found %v, want %v first with a score near 1", got, want)
	}

	// A field with another label is not the field.
	other := busyScreen(900, 560, 9)
	labelledField(other, to, 2, 1)
	for _, m := range FindTemplateMasked(other, tmpl, mask, 0.95, 5) {
		if m.Rect.Overlaps(want) {
			t.Errorf("a field with another label matched at %v (score %.3f)", m.Rect, m.Score)
		}
	}

	// A nil mask is FindTemplate; a mask of the wrong size finds nothing.
	if a, b := FindTemplateMasked(orig, tmpl, nil, 0.9, 3), FindTemplate(orig, tmpl, 0.9, 3); len(a) != len(b) || len(a) == 0 || a[0] != b[0] {
		t.Errorf("nil mask %v, FindTemplate %v", a, b)
	}
	if m := FindTemplateMasked(orig, tmpl, image.NewAlpha(image.Rect(0, 0, 5, 5)), 0.9, 3); m != nil {
		t.Errorf("a mask of another size matched %v", m)
	}
}

// TestFindTemplateMaskedThinRing: a mask that counts only a thin ring still
// finds its place (the coarse level keeps enough of it).
func TestFindTemplateMaskedThinRing(t *testing.T) {
	screen := busyScreen(900, 560, 4)
	at := image.Pt(150, 200)
	labelledField(screen, at, 5, 5)
	tmpl, mask := fieldTemplate(screen, at)
	// Only the field's frame and 3 px around it count.
	draw.Draw(mask, mask.Rect, image.Transparent, image.Point{}, draw.Src)
	draw.Draw(mask, image.Rect(47, 1, 217, 31), image.Opaque, image.Point{}, draw.Src)
	draw.Draw(mask, image.Rect(55, 5, 213, 27), image.Transparent, image.Point{}, draw.Src)
	got := FindTemplateMasked(screen, tmpl, mask, 0.9, 3)
	if want := at.Add(image.Pt(-4, -4)); len(got) == 0 || got[0].Rect.Min != want {
		t.Errorf("found %v, want the ring at %v", got, want)
	}
}
