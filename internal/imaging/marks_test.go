package imaging

import (
	"bytes"
	"context"
	"image"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func solid(w, h int, c [3]uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, geom.ImageRect{W: w, H: h}, c)
	return img
}

func px(img *image.RGBA, x, y int) [3]uint8 {
	i := img.PixOffset(x, y)
	return [3]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2]}
}

// changed returns the bounding rectangle of the pixels of b that differ from a.
func changed(a, b *image.RGBA) image.Rectangle {
	var r image.Rectangle
	for y := b.Rect.Min.Y; y < b.Rect.Max.Y; y++ {
		for x := b.Rect.Min.X; x < b.Rect.Max.X; x++ {
			if px(a, x, y) != px(b, x, y) {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}

func TestDrawMarksNoMarksLeavesTheImage(t *testing.T) {
	img := solid(64, 48, [3]uint8{10, 200, 30})
	before := bytes.Clone(img.Pix)
	DrawMarks(img, nil)
	DrawMarks(img, []Mark{{Label: "1", Box: geom.ImageRect{X: 100, Y: 100, W: 5, H: 5}}}) // wholly outside
	if !bytes.Equal(before, img.Pix) {
		t.Fatal("no marks (or only marks outside the image) changed the image")
	}
}

// TestDrawMarksOutlineAndLabel: the outline lies on the box's edges in a
// colour that contrasts with the background, the centre is untouched, and
// the label (above the box, where there is room) holds the number's digits.
func TestDrawMarksOutlineAndLabel(t *testing.T) {
	white := [3]uint8{255, 255, 255}
	img := solid(200, 120, white)
	orig := solid(200, 120, white)
	box := geom.ImageRect{X: 60, Y: 50, W: 80, H: 30}
	DrawMarks(img, []Mark{{Label: "12", Box: box}})
	c := px(img, box.X, box.Y)
	if c == white || lum(c) > 200 {
		t.Fatalf("outline colour %v does not contrast with white", c)
	}
	for _, p := range [][2]int{{60, 50}, {139, 50}, {60, 79}, {139, 79}, {100, 50}, {100, 51}, {61, 65}, {138, 65}} {
		if got := px(img, p[0], p[1]); got != c {
			t.Errorf("outline pixel (%d,%d) = %v, want %v", p[0], p[1], got, c)
		}
	}
	for _, p := range [][2]int{{100, 65}, {62, 52}, {137, 77}, {59, 65}, {140, 65}} {
		if got := px(img, p[0], p[1]); got != white {
			t.Errorf("pixel (%d,%d) off the outline and label = %v, want white", p[0], p[1], got)
		}
	}
	lw, lh := labelSize(2)
	label := image.Rect(box.X, box.Y-lh, box.X+lw, box.Y)
	// The label's digits: dots of another colour than its fill inside it.
	ink := 0
	for y := label.Min.Y; y < label.Max.Y; y++ {
		for x := label.Min.X; x < label.Max.X; x++ {
			if p := px(img, x, y); p != c {
				ink++
				if p == white && lum(c) > 150 {
					t.Fatalf("white digits on a light label %v", c)
				}
			}
		}
	}
	// "12": 1 has 8 dots, 2 has 11, each markScale x markScale pixels.
	if want := 19 * markScale * markScale; ink != want {
		t.Errorf("label has %d digit pixels, want %d (the digits 1 and 2)", ink, want)
	}
	if got, want := changed(orig, img), image.Rect(box.X, box.Y-lh, box.X+box.W, box.Y+box.H); got != want {
		t.Errorf("pixels changed in %v, want only the box and its label %v", got, want)
	}
}

func lum(c [3]uint8) int { return (299*int(c[0]) + 587*int(c[1]) + 114*int(c[2])) / 1000 }

// TestDrawMarksColourContrasts: on a red background the mark is not red, on
// a black one it is light.
func TestDrawMarksColourContrasts(t *testing.T) {
	for _, bg := range [][3]uint8{{230, 25, 75}, {0, 0, 0}, {0, 90, 230}} {
		img := solid(100, 100, bg)
		DrawMarks(img, []Mark{{Label: "3", Box: geom.ImageRect{X: 20, Y: 30, W: 40, H: 20}}})
		c := px(img, 20, 30)
		d := 0
		for k := range 3 {
			v := int(c[k]) - int(bg[k])
			d += v * v
		}
		if d < 200*200 {
			t.Errorf("on %v the mark is %v: too close", bg, c)
		}
	}
}

// TestDrawMarksClipsAndKeepsLabelsInside: a box over the image's corner is
// drawn clipped (its outline on the image's edge), and every label lies
// inside the image and off its box's centre; a box filling the image gets
// its label in its corner.
func TestDrawMarksClipsAndKeepsLabelsInside(t *testing.T) {
	bounds := geom.ImageRect{W: 120, H: 80}
	img := solid(120, 80, [3]uint8{255, 255, 255})
	DrawMarks(img, []Mark{{Label: "7", Box: geom.ImageRect{X: -30, Y: -20, W: 60, H: 40}}})
	c := px(img, 29, 10)
	if c == ([3]uint8{255, 255, 255}) {
		t.Fatal("the clipped box's right edge is not drawn")
	}
	if px(img, 0, 19) != c || px(img, 15, 0) != c {
		t.Error("the clipped box is not outlined along the image's edges")
	}
	for _, tc := range []struct {
		box    geom.ImageRect
		placed []geom.ImageRect
	}{
		{geom.ImageRect{X: 0, Y: 0, W: 30, H: 12}, nil},
		{geom.ImageRect{X: 100, Y: 70, W: 20, H: 10}, nil},
		{geom.ImageRect{X: 0, Y: 0, W: 120, H: 80}, nil},
		{geom.ImageRect{X: 40, Y: 30, W: 30, H: 12}, []geom.ImageRect{{X: 40, Y: 16, W: 30, H: 14}}},
	} {
		lw, lh := labelSize(3)
		l := placeLabel(tc.box, lw, lh, bounds, tc.placed, nil)
		if !l.In(bounds) {
			t.Errorf("label %v of box %v is not inside the image %v", l, tc.box, bounds)
		}
		if l.W != lw || l.H != lh {
			t.Errorf("label %v resized", l)
		}
		if tc.box != bounds && l.ContainsPoint(tc.box.Center()) {
			t.Errorf("label %v covers the centre of box %v", l, tc.box)
		}
		for _, p := range tc.placed {
			if !l.Intersect(p).Empty() {
				t.Errorf("label %v overlaps the earlier label %v", l, p)
			}
		}
	}
}

// TestShootDrawsMarksOnceEncoded: Options.Marks boxes in global pixels are
// drawn where the frame maps them, on the encoded image only (the thumbnail
// and the desktop's pixels stay as they were).
func TestShootDrawsMarksOnceEncoded(t *testing.T) {
	d := geom.Display{ID: "1", Bounds: geom.Rect{X: -1920, W: 1920, H: 1080}}
	fb := flatScreen(d)
	before := bytes.Clone(fb.Pix)
	s := sharedScreen{newTestScreen(d, fb)}
	box := geom.Rect{X: -1920 + 400, Y: 300, W: 200, H: 100}
	o := Options{Format: "png", MaxLongEdge: 960, KeepPixels: true}
	plain, err := NewPipeline().Shoot(context.Background(), s, d, geom.Rect{}, o, "a")
	if err != nil {
		t.Fatal(err)
	}
	o.Marks = []ScreenMark{{Label: "4", Box: box}}
	shot, err := NewPipeline().Shoot(context.Background(), s, d, geom.Rect{}, o, "b")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fb.Pix, before) || shot.Thumb != plain.Thumb {
		t.Fatal("the marks reached the desktop's pixels or the thumbnail")
	}
	ib := shot.Frame.RectToImage(box) // 200,150 100x50 at half scale
	if ib != (geom.ImageRect{X: 200, Y: 150, W: 100, H: 50}) {
		t.Fatalf("box maps to %v", ib)
	}
	im, err := Decode(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	dec := ToRGBA(im)
	if px(dec, 200, 150) == px(plain.Pixels, 200, 150) || px(dec, 299, 199) == px(plain.Pixels, 299, 199) {
		t.Error("the mark's outline is not at the box's corners in the encoded image")
	}
	if px(dec, 250, 175) != px(plain.Pixels, 250, 175) {
		t.Error("the box's centre changed")
	}
}

// TestDrawMarksContrastsInsideAndOut: an element's box is often a pixel or
// two larger than what it paints (a green button on a white window): the
// outline must stand out from both the button and the window.
func TestDrawMarksContrastsInsideAndOut(t *testing.T) {
	white, green := [3]uint8{245, 245, 245}, [3]uint8{40, 170, 80}
	img := solid(300, 120, white)
	box := geom.ImageRect{X: 40, Y: 40, W: 200, H: 28}
	fill(img, geom.ImageRect{X: box.X + 1, Y: box.Y + 1, W: box.W - 2, H: box.H - 2}, green)
	DrawMarks(img, []Mark{{Label: "3", Box: box}})
	c := px(img, box.X+1, box.Y+1)
	for _, bg := range [][3]uint8{white, green} {
		d := 0
		for k := range 3 {
			v := int(c[k]) - int(bg[k])
			d += v * v
		}
		if d < 150*150 {
			t.Errorf("the outline %v is too close to %v", c, bg)
		}
	}
}
