package geom

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpaceAliasesAndModes(t *testing.T) {
	for in, want := range map[string]Space{
		"": SpaceImage, "image": SpaceImage, "Pixels": SpaceImage, "image-absolute": SpaceImage, "absolute": SpaceImage,
		"screen": SpaceScreen, "global": SpaceScreen, "norm1000": SpaceNorm1000, "normalized-999": SpaceNorm999,
		"normalized-1": SpaceNorm1, "norm1": SpaceNorm1, "gemini": SpaceYXNorm1000, " YX-normalized-1000 ": SpaceYXNorm1000,
	} {
		if got, err := ParseSpace(in, SpaceImage); err != nil || got != want {
			t.Errorf("ParseSpace(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseSpace("model", SpaceImage); err == nil || !strings.Contains(err.Error(), "use one of image, screen, image-absolute") {
		t.Fatalf("unknown space: %v", err)
	}
	if _, err := (Profile{}).WithMode("screen"); err == nil {
		t.Fatal("screen accepted as a model coordinate mode")
	}
	p, err := (Profile{}).WithMode("gemini")
	if err != nil || p.Divisor != 1000 || p.Order != YX || p.Space() != SpaceYXNorm1000 {
		t.Fatalf("gemini mode: %+v %v", p, err)
	}
	for _, prof := range Profiles {
		back, err := (Profile{}).WithMode(string(prof.Space()))
		if err != nil || back.Divisor != prof.Divisor || back.Order != prof.Order {
			t.Errorf("profile %s: Space %s does not round-trip (%+v, %v)", prof.Name, prof.Space(), back, err)
		}
	}
}

func TestResolveInEverySpace(t *testing.T) {
	d := Display{ID: "1", Bounds: Rect{X: -1280, Y: 0, W: 1280, H: 800}}
	f := NewFrame("f1", d, d.Bounds, Size{W: 640, H: 400})
	ds := []Display{d, {ID: "0", Bounds: Rect{W: 1920, H: 1080}, Primary: true}}
	for _, tc := range []struct {
		sp   Space
		x, y float64
		want GlobalPoint
	}{
		{SpaceImage, 320, 200, GlobalPoint{-640, 401}},
		{SpaceNorm1000, 500, 500, GlobalPoint{-640, 400}},
		{SpaceNorm999, 500, 500, GlobalPoint{-640, 400}},
		{SpaceNorm1, 0.5, 0.5, GlobalPoint{-640, 400}},
		{SpaceYXNorm1000, 500, 500, GlobalPoint{-640, 400}}, // named x and y are never swapped
		{SpaceScreen, 100, 100, GlobalPoint{100, 100}},
	} {
		r, err := ResolveIn(tc.sp, tc.x, tc.y, f, ds, 2)
		if err != nil {
			t.Errorf("%s (%v,%v): %v", tc.sp, tc.x, tc.y, err)
			continue
		}
		if dx, dy := r.Global.X-tc.want.X, r.Global.Y-tc.want.Y; dx*dx+dy*dy > 2 {
			t.Errorf("%s (%v,%v) -> %v, want %v", tc.sp, tc.x, tc.y, r.Global, tc.want)
		}
	}
	r, err := ResolveIn(SpaceScreen, 100, 100, f, ds, 2)
	if err != nil || r.Display.ID != "0" {
		t.Fatalf("screen point's display: %+v %v", r.Display, err)
	}
}

func TestResolveInRejectsAndClamps(t *testing.T) {
	d := Display{ID: "0", Bounds: Rect{W: 1000, H: 500}}
	f := NewFrame("f1", d, d.Bounds, Size{W: 1000, H: 500})
	f.Prepared = Size{W: 1008, H: 504}
	if _, err := ResolveIn(SpaceScreen, 5000, 5000, f, []Display{d}, 2); !errors.Is(err, ErrOffDisplay) || !strings.Contains(err.Error(), "on no display") {
		t.Fatalf("screen point off the desktop: %v", err)
	}
	if _, err := ResolveIn(SpaceImage, 1020, 10, f, nil, 2); !errors.Is(err, ErrOffDisplay) || !strings.Contains(err.Error(), "outside the 1008x504 image of frame f1") {
		t.Fatalf("point beyond the slack: %v", err)
	}
	if _, err := ResolveIn(SpaceImage, 1004, 10, f, nil, 2); !errors.Is(err, ErrInPadding) {
		t.Fatalf("point in the padding: %v", err)
	}
	r, err := ResolveIn(SpaceImage, 5000, 10, f, nil, AnyDistance)
	if err != nil || !r.Clamped || r.Global.X != 999 || r.Warning == "" {
		t.Fatalf("AnyDistance clamps: %+v %v", r, err)
	}
}

func TestZoomRegion(t *testing.T) {
	d := Display{Bounds: Rect{W: 100, H: 100}}
	r, err := ZoomRegion(GlobalPoint{50, 60}, GlobalPoint{10, 20}, d)
	if err != nil || r != (Rect{X: 10, Y: 20, W: 41, H: 41}) {
		t.Fatalf("region %v %v", r, err)
	}
	if r, err := ZoomRegion(GlobalPoint{90, 90}, GlobalPoint{300, 300}, d); err != nil || r != (Rect{X: 90, Y: 90, W: 10, H: 10}) {
		t.Fatalf("cut to the display: %v %v", r, err)
	}
	if _, err := ZoomRegion(GlobalPoint{10, 10}, GlobalPoint{12, 40}, d); err == nil || !strings.Contains(err.Error(), "at least 4 screen pixels") {
		t.Fatalf("too small: %v", err)
	}
}

// A huge coordinate is refused naming the numbers given, in every space
// (1e308 in screen space used to print as -9223372036854775808).
func TestResolveInRefusesHugeCoordinates(t *testing.T) {
	f := Frame{ID: "f1", Display: Display{ID: "0", Bounds: Rect{W: 640, H: 480}, Scale: 1}, Region: Rect{W: 640, H: 480}, Content: Size{W: 640, H: 480}}
	for _, sp := range []Space{SpaceScreen, SpaceImage, "normalized-1000"} {
		_, err := ResolveIn(sp, 1e308, 5, f, []Display{f.Display}, 0)
		if err == nil || !strings.Contains(err.Error(), "(1e+308,5) are far off any screen") || strings.Contains(err.Error(), "922337") {
			t.Errorf("space %s: %v", sp, err)
		}
	}
}

// TestRectToImage: a global box maps onto the pixels of the frame's image that
// show it, at any scale and origin, and is not clipped to the image.
func TestRectToImage(t *testing.T) {
	d := Display{ID: "1", Bounds: Rect{X: -1920, W: 1920, H: 1080}}
	half := Frame{Display: d, Region: d.Bounds, Content: Size{960, 540}, Prepared: Size{1000, 560}}
	for _, tc := range []struct {
		f    Frame
		r    Rect
		want ImageRect
	}{
		{half, Rect{X: -1920 + 100, Y: 50, W: 200, H: 40}, ImageRect{50, 25, 100, 20}},
		{half, Rect{X: -1920 + 101, Y: 51, W: 3, H: 3}, ImageRect{50, 25, 2, 2}}, // covers, never shrinks to nothing
		{half, Rect{X: -1920 - 40, Y: 0, W: 80, H: 10}, ImageRect{-20, 0, 40, 5}},
		{NewFrame("x", d, d.Bounds, Size{1920, 1080}), Rect{X: -1000, Y: 7, W: 9, H: 11}, ImageRect{920, 7, 9, 11}},
		{Frame{}, Rect{W: 5, H: 5}, ImageRect{}},
	} {
		if got := tc.f.RectToImage(tc.r); got != tc.want {
			t.Errorf("RectToImage(%v) over %v = %v, want %v", tc.r, tc.f.Content, got, tc.want)
		}
	}
	if got := half.ContentRect(); got != (ImageRect{W: 960, H: 540}) {
		t.Errorf("ContentRect = %v", got)
	}
}
