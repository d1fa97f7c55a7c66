package fake_test

import (
	"context"
	"errors"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

var red = color.RGBA{R: 255, A: 255}

func TestZeroOptionsGiveOneFullHDDisplay(t *testing.T) {
	ds, err := fake.New(fake.Options{}).Displays(context.Background())
	if err != nil || len(ds) != 1 || ds[0].Bounds != (geom.Rect{W: 1920, H: 1080}) || !ds[0].Primary || ds[0].ScaleFactor() != 1 {
		t.Fatalf("zero options: %+v, %v", ds, err)
	}
}

func TestCaptureIsPhysicalPixelsOfScaledDisplay(t *testing.T) {
	b := fake.New(fake.Options{Displays: []geom.Display{
		{Bounds: geom.Rect{W: 800, H: 600}, Primary: true},
		{Bounds: geom.Rect{X: -400, Y: -300, W: 400, H: 300}, Scale: 2},
	}})
	// A fill spanning both displays: the part on the 2x display covers twice the pixels.
	b.Fill(geom.Rect{X: -10, Y: 10, W: 20, H: 5}, red)
	ctx := context.Background()
	img, err := b.Capture(ctx, geom.Rect{X: -400, Y: -300, W: 400, H: 300}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 800, 600) {
		t.Fatalf("capture of a 400x300 display at scale 2 has bounds %v, want 800x600", img.Bounds())
	}
	// The fill touches the 2x display only below y=0, which is outside it: nothing red there.
	for _, p := range []image.Point{{799, 599}, {780, 590}} {
		if img.RGBAAt(p.X, p.Y) == red {
			t.Errorf("pixel %v on the second display is red, but the fill does not reach it", p)
		}
	}
	b.Fill(geom.Rect{X: -10, Y: -20, W: 20, H: 5}, red) // local (390,280)-(400,285) on the 2x display
	img, err = b.Capture(ctx, geom.Rect{X: -20, Y: -30, W: 20, H: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 40, 60) {
		t.Fatalf("bounds %v, want 40x60", img.Bounds())
	}
	// Local (390,280) of the display = (10,10) logical in the region = (20,20) physical.
	if img.RGBAAt(20, 20) != red || img.RGBAAt(39, 29) != red || img.RGBAAt(19, 20) == red || img.RGBAAt(20, 30) == red {
		t.Errorf("the fill is not at physical (20,20)-(40,30) of the capture")
	}
	primary, _ := b.Capture(ctx, geom.Rect{W: 20, H: 20}, nil)
	if primary.RGBAAt(5, 10) != red || primary.RGBAAt(10, 10) == red {
		t.Errorf("the primary display's part of the fill is wrong")
	}
	if _, err := b.Capture(ctx, geom.Rect{X: -10, Y: 0, W: 20, H: 20}, nil); err == nil || !strings.Contains(err.Error(), "not inside one display") {
		t.Errorf("capture spanning two displays: %v, want an error", err)
	}
}

func TestSetImageAndImage(t *testing.T) {
	b := fake.New(fake.Options{Displays: []geom.Display{{ID: "a", Bounds: geom.Rect{W: 4, H: 4}}}})
	src := image.NewRGBA(image.Rect(0, 0, 2, 2))
	src.SetRGBA(1, 1, red)
	if err := b.SetImage("a", src); err != nil {
		t.Fatal(err)
	}
	if got := b.Image("a"); got.RGBAAt(1, 1) != red || got.RGBAAt(3, 3) == red {
		t.Errorf("SetImage did not land at the display's top-left")
	}
	if err := b.SetImage("zz", src); err == nil || !strings.Contains(err.Error(), "a=") {
		t.Errorf("SetImage on an unknown display: %v, want an error listing displays", err)
	}
}

func TestInjectedFailuresAndState(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	boom := errors.New("boom")
	b.FailAfter(fake.OpMove, 1, boom)
	if err := b.MoveTo(ctx, geom.GlobalPoint{X: 1, Y: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.MoveTo(ctx, geom.GlobalPoint{X: 2, Y: 2}); !errors.Is(err, boom) {
		t.Fatalf("second move: %v, want the injected failure", err)
	}
	if p, _ := b.CursorPosition(ctx); p != (geom.GlobalPoint{X: 1, Y: 1}) {
		t.Errorf("a failed move changed the cursor to %v", p)
	}
	if n := len(b.Events()); n != 1 {
		t.Errorf("a failed primitive was recorded: %d events", n)
	}
	if err := b.MoveTo(ctx, geom.GlobalPoint{X: 5000, Y: 1}); err == nil {
		t.Error("moving off every display succeeded")
	}
	b.SetCursor(geom.GlobalPoint{X: 300, Y: 400})
	if p, _ := b.CursorPosition(ctx); p != (geom.GlobalPoint{X: 300, Y: 400}) || len(b.Events()) != 1 {
		t.Errorf("SetCursor: position %v, %d events; want the new position and no event", p, len(b.Events()))
	}
	b.SetActiveWindow("Editor")
	if title, _ := b.ActiveWindowTitle(ctx); title != "Editor" {
		t.Errorf("title %q", title)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("FailNext with an unknown op did not panic")
			}
		}()
		b.FailNext("teleport", boom)
	}()
	_ = b.Close()
	if _, err := b.Displays(ctx); !errors.Is(err, fake.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}
