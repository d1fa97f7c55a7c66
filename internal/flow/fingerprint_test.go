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
