package imaging

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// sharedScreen returns its own framebuffer from Capture (as a backend with a
// mapped buffer may), so a pipeline that draws on the capture would change it.
type sharedScreen struct{ *testScreen }

func (s sharedScreen) Capture(context.Context, geom.Rect, *image.RGBA) (*image.RGBA, error) {
	return s.fb, nil
}

// TestShootDrawsThePointerOnceEncoded: with Options.Pointer the encoded image
// shows the arrow with its tip at the pointer's image position (black outline
// at the tip, white inside below it), the desktop's own pixels are untouched,
// and the thumbnail (settle detection) does not see the arrow.
func TestShootDrawsThePointerOnceEncoded(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    geom.Display
		edge int
	}{
		{"scaled, negative origin", geom.Display{ID: "1", Bounds: geom.Rect{X: -1920, W: 1920, H: 1080}}, 1280},
		{"unscaled: the capture itself is encoded", geom.Display{ID: "0", Bounds: geom.Rect{W: 800, H: 600}}, 800},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := flatScreen(tc.d)
			before := bytes.Clone(fb.Pix)
			s := sharedScreen{newTestScreen(tc.d, fb)}
			cur := geom.GlobalPoint{X: tc.d.Bounds.X + 300, Y: 200}
			plain, err := NewPipeline().Shoot(context.Background(), s, tc.d, geom.Rect{}, Options{Format: "png", MaxLongEdge: tc.edge}, "a")
			if err != nil {
				t.Fatal(err)
			}
			shot, err := NewPipeline().Shoot(context.Background(), s, tc.d, geom.Rect{}, Options{Format: "png", MaxLongEdge: tc.edge, Pointer: &cur}, "b")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fb.Pix, before) {
				t.Fatal("drawing the pointer changed the desktop's framebuffer")
			}
			if shot.Thumb != plain.Thumb {
				t.Error("the thumbnail changed with the pointer drawn; settle detection would see the arrow")
			}
			img, err := Decode(shot.Data)
			if err != nil {
				t.Fatal(err)
			}
			m := ToRGBA(img)
			tip := shot.Frame.GlobalToImage(cur)
			x, y := int(tip.X+0.5), int(tip.Y+0.5)
			black, white := color.RGBA{0, 0, 0, 255}, color.RGBA{255, 255, 255, 255}
			if got := m.RGBAAt(x, y); got != black {
				t.Errorf("pixel at the pointer tip (%d,%d) = %v, want the black outline", x, y, got)
			}
			if got := m.RGBAAt(x+3, y+8); got != white {
				t.Errorf("pixel inside the arrow (%d,%d) = %v, want white", x+3, y+8, got)
			}
			if got := m.RGBAAt(x+40, y+40); got != (color.RGBA{200, 210, 220, 255}) {
				t.Errorf("pixel away from the arrow = %v, want the screen's colour", got)
			}
		})
	}
}

// TestShootPointerOutsideTheRegionDrawsNothing: a pointer on another display
// leaves the image as it is.
func TestShootPointerOutsideTheRegionDrawsNothing(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 640, H: 480}}
	s := newTestScreen(d, flatScreen(d))
	off := geom.GlobalPoint{X: 700, Y: 10}
	a, err := NewPipeline().Shoot(context.Background(), s, d, geom.Rect{}, Options{Format: "png"}, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewPipeline().Shoot(context.Background(), s, d, geom.Rect{}, Options{Format: "png", Pointer: &off}, "b")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Data, b.Data) {
		t.Error("a pointer outside the display changed the image")
	}
}

// TestShootKeepPixelsEqualsTheDecodedImage: Shot.Pixels are exactly the
// pixels a decoder gets back from the PNG, padding included, and stay valid
// after the pipeline's buffers are reused.
func TestShootKeepPixelsEqualsTheDecodedImage(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 1366, H: 768}, Scale: 1.25}
	p := NewPipeline()
	o := Options{Format: "png", MaxLongEdge: 1000, KeepPixels: true, Profile: geom.ProfileFor("qwen2.5-vl-72b-instruct")}
	shot, err := p.Shoot(context.Background(), newTestScreen(d, busyScreen(1708, 960, 5)), d, geom.Rect{}, o, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Shoot(context.Background(), newTestScreen(d, busyScreen(1708, 960, 9)), d, geom.Rect{}, o, "k2"); err != nil {
		t.Fatal(err)
	}
	img, err := Decode(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	want := ToRGBA(img)
	if shot.Pixels == nil || shot.Pixels.Rect != want.Rect {
		t.Fatalf("Pixels = %v, want an image of %v", shot.Pixels, want.Rect)
	}
	if sz := shot.Frame.ImageSize(); want.Rect.Dx() != sz.W || want.Rect.Dy() != sz.H {
		t.Fatalf("image %v, frame says %v", want.Rect, sz)
	}
	if !bytes.Equal(shot.Pixels.Pix, want.Pix) {
		t.Error("Pixels differ from the decoded screenshot")
	}
	if none, _ := p.Shoot(context.Background(), newTestScreen(d, busyScreen(1708, 960, 5)), d, geom.Rect{}, Options{}, "n"); none.Pixels != nil {
		t.Error("Pixels set without KeepPixels")
	}
}
