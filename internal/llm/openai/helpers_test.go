package openai

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

var (
	red   = color.RGBA{220, 30, 30, 255}
	green = color.RGBA{30, 180, 60, 255}
	blue  = color.RGBA{40, 60, 220, 255}
)

// box is a coloured rectangle on a screen, in local logical pixels of the display.
type box struct {
	R image.Rectangle
	C color.RGBA
}

// shot renders a display of logical size d.Bounds with boxes, prepares it the
// way p wants (scaled to the profile's size, padded where p pads) with the
// long edge capped at maxEdge, and returns the PNG screenshot with its frame.
func shot(t testing.TB, p geom.Profile, d geom.Display, maxEdge, step int, boxes ...box) llm.Image {
	t.Helper()
	logical := d.Bounds.Size()
	content, prepared := p.PrepareSize(logical, maxEdge)
	img := image.NewRGBA(image.Rect(0, 0, prepared.W, prepared.H))
	for y := 0; y < prepared.H; y++ {
		for x := 0; x < prepared.W; x++ {
			if x >= content.W || y >= content.H {
				img.SetRGBA(x, y, color.RGBA{0, 0, 0, 255}) // padding
				continue
			}
			// nearest logical pixel (centre convention, as geom maps)
			lx := int(math.Floor((float64(x) + 0.5) * float64(logical.W) / float64(content.W)))
			ly := int(math.Floor((float64(y) + 0.5) * float64(logical.H) / float64(content.H)))
			c := color.RGBA{245, 245, 245, 255}
			for _, b := range boxes {
				if image.Pt(lx, ly).In(b.R) {
					c = b.C
				}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return llm.Image{
		MIME:  "image/png",
		Data:  buf.Bytes(),
		Frame: geom.Frame{ID: "f1", Display: d, Region: d.Bounds, Content: content, Prepared: prepared},
		Step:  step,
		Ref:   "images/step-" + itoa3(step) + ".png",
	}
}

func itoa3(n int) string {
	s := []byte{'0', '0', '0'}
	for i := 2; i >= 0 && n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}

// pointToGlobal maps a parsed action point over f to the screen, strictly.
func pointToGlobal(t testing.TB, f geom.Frame, pt *action.Point) geom.GlobalPoint {
	t.Helper()
	if pt == nil {
		t.Fatal("the action has no point")
	}
	r, err := f.Resolve(geom.SpaceToImage(pt.Space, pt.X, pt.Y, f), true)
	if err != nil {
		t.Fatalf("Resolve(%v): %v", pt, err)
	}
	return r.Global
}

// assertOnBox checks that g lies on b (local to d) and within tol pixels of its centre.
func assertOnBox(t testing.TB, g geom.GlobalPoint, d geom.Display, b box, tol int) {
	t.Helper()
	r := geom.Rect{X: d.Bounds.X + b.R.Min.X, Y: d.Bounds.Y + b.R.Min.Y, W: b.R.Dx(), H: b.R.Dy()}
	if !r.Contains(g) {
		t.Fatalf("point %v is not on the box %v", g, r)
	}
	cx, cy := r.X+r.W/2, r.Y+r.H/2
	if abs(g.X-cx) > tol || abs(g.Y-cy) > tol {
		t.Fatalf("point %v is more than %d px from the box centre (%d,%d)", g, tol, cx, cy)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
