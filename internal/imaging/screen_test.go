package imaging

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math/rand/v2"
	"sync/atomic"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// testScreen is a one-display desktop.Screen over a physical framebuffer.
type testScreen struct {
	d        geom.Display
	fb       *image.RGBA // physical pixels of d
	captures atomic.Int32
	fail     error
}

var _ desktop.Screen = (*testScreen)(nil)

func newTestScreen(d geom.Display, fb *image.RGBA) *testScreen {
	return &testScreen{d: d, fb: fb}
}

func (s *testScreen) Name() string        { return "test" }
func (s *testScreen) DisplayName() string { return "" }
func (s *testScreen) Close() error        { return nil }
func (s *testScreen) Displays(context.Context) ([]geom.Display, error) {
	return []geom.Display{s.d}, nil
}

func (s *testScreen) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if s.fail != nil {
		return nil, s.fail
	}
	if !s.d.Bounds.Contains(geom.GlobalPoint{X: region.X, Y: region.Y}) ||
		!s.d.Bounds.Contains(geom.GlobalPoint{X: region.X + region.W - 1, Y: region.Y + region.H - 1}) {
		return nil, errors.New("region outside the display")
	}
	s.captures.Add(1)
	sc := s.d.ScaleFactor()
	p0 := s.d.LocalToPhysical(s.d.GlobalToLocal(geom.GlobalPoint{X: region.X, Y: region.Y}))
	w, h := int(float64(region.W)*sc+0.5), int(float64(region.H)*sc+0.5)
	w, h = min(w, s.fb.Rect.Dx()-p0.X), min(h, s.fb.Rect.Dy()-p0.Y)
	var out *image.RGBA
	if dst != nil && cap(dst.Pix) >= w*h*4 {
		out = &image.RGBA{Pix: dst.Pix[:w*h*4], Stride: w * 4, Rect: image.Rect(0, 0, w, h)}
	} else {
		out = image.NewRGBA(image.Rect(0, 0, w, h))
	}
	for y := range h {
		copy(out.Pix[y*out.Stride:y*out.Stride+w*4], s.fb.Pix[(p0.Y+y)*s.fb.Stride+p0.X*4:])
	}
	return out, nil
}

// fill paints the physical pixels of the logical global rectangle r.
func fillLogical(fb *image.RGBA, d geom.Display, r geom.Rect, c color.RGBA) {
	sc := d.ScaleFactor()
	x0 := int(float64(r.X-d.Bounds.X) * sc)
	y0 := int(float64(r.Y-d.Bounds.Y) * sc)
	x1 := int(float64(r.X+r.W-d.Bounds.X) * sc)
	y1 := int(float64(r.Y+r.H-d.Bounds.Y) * sc)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			fb.SetRGBA(x, y, c)
		}
	}
}

// busyScreen paints a UI-like physical framebuffer: window chrome, dense lines
// of glyph-like strokes, icons, a gradient and a photo-like noisy area.
func busyScreen(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, 7))
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			o := y*m.Stride + x*4
			m.Pix[o], m.Pix[o+1], m.Pix[o+2], m.Pix[o+3] = uint8(236+x*12/w), 238, uint8(242-y*10/h), 255
		}
	}
	rect := func(x0, y0, x1, y1 int, c color.RGBA) {
		for y := max(0, y0); y < min(h, y1); y++ {
			for x := max(0, x0); x < min(w, x1); x++ {
				m.SetRGBA(x, y, c)
			}
		}
	}
	// Title bars and panels.
	for y := 0; y < h; y += max(1, h/4) {
		rect(0, y, w, y+h/36, color.RGBA{50, 60, 80, 255})
	}
	rect(0, 0, w/6, h, color.RGBA{245, 245, 250, 255})
	// Text: rows of random glyph strokes.
	lineH := max(12, h/60)
	for y := h / 30; y+lineH < h; y += lineH + lineH/2 {
		x := w/6 + 8
		if r.IntN(3) == 0 {
			x = 8
		}
		for x < w-20 {
			word := 2 + r.IntN(8)
			for range word {
				gw := lineH * 6 / 10
				for s := 0; s < 3; s++ {
					sx, sy := x+r.IntN(gw), y+r.IntN(lineH)
					if r.IntN(2) == 0 {
						rect(sx, y+2, sx+1+lineH/12, y+lineH-2, color.RGBA{30, 30, 30, 255})
					} else {
						rect(x, sy, x+gw, sy+1+lineH/12, color.RGBA{30, 30, 30, 255})
					}
				}
				x += gw + 1
			}
			x += lineH
		}
	}
	// Photo-like region: gradient plus noise (about a tenth of the screen).
	px0, py0 := w*6/10, h*6/10
	for y := py0; y < py0+h/4; y++ {
		for x := px0; x < px0+w/4; x++ {
			n := uint8(r.IntN(40))
			m.SetRGBA(x, y, color.RGBA{uint8(x*255/w) + n, uint8(y*255/h) + n, 128 + n, 255})
		}
	}
	// Icons.
	for i := range 24 {
		c := color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
		x, y := 10+i*(w/26), h-h/20
		rect(x, y, x+h/30, y+h/30, c)
	}
	return m
}
