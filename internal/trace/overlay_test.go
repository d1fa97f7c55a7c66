package trace

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"testing"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func agentPoint(x, y float64) geom.ImagePoint { return geom.ImagePoint{X: x, Y: y} }

func isMarker(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	return uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B
}

func TestOverlayDrawsActionsWhereTheyLanded(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 400, 300))
	draw.Draw(src, src.Bounds(), image.NewUniform(color.RGBA{200, 200, 200, 255}), image.Point{}, draw.Src)
	click, from, to, sc := agentPoint(50, 60), agentPoint(100, 200), agentPoint(300, 200), agentPoint(350, 80)
	ov := DrawOverlay(src, []action.Trace{
		{Action: action.Action{Kind: action.Click}, Image: &click, Outcome: "ok"},
		{Action: action.Action{Kind: action.Drag}, Image: &from, ImageTo: &to, Outcome: "ok"},
		{Action: action.Action{Kind: action.Scroll, Direction: desktop.Up, Amount: 2}, Image: &sc, Outcome: "ok"},
		{Action: action.Action{Kind: action.KeyPress, Keys: []desktop.Key{desktop.Ctrl, "s"}}, Outcome: "refused", Error: "blocked"},
	})
	if ov.Bounds() != src.Bounds() {
		t.Fatalf("bounds %v", ov.Bounds())
	}
	if !isMarker(ov.At(50, 60), colorOK) {
		t.Errorf("no marker at the click point: %v", ov.At(50, 60))
	}
	if !isMarker(ov.At(200, 200), colorOK) {
		t.Errorf("no drag line midway: %v", ov.At(200, 200))
	}
	if !isMarker(ov.At(350, 50), colorOK) { // scroll arrow points up from the scroll point
		t.Errorf("no scroll arrow above the scroll point: %v", ov.At(350, 50))
	}
	if isMarker(ov.At(350, 110), colorOK) {
		t.Error("scroll arrow drawn downwards for direction up")
	}
	// The drag's arrow head sits at the end point, not at the start.
	if !isMarker(ov.At(292, 195), colorOK) && !isMarker(ov.At(292, 205), colorOK) {
		t.Error("no arrow head at the drag end")
	}
	// The refused key press is listed after the last pointer position in the failure colour.
	found := false
	for y := 80; y < 300 && !found; y++ {
		for x := 0; x < 400; x++ {
			if isMarker(ov.At(x, y), colorFailed) {
				found = true
				break
			}
		}
	}
	if !found {
		t.Error("refused action label not drawn in the failure colour")
	}
	// The source image is unchanged.
	if !isMarker(src.At(50, 60), color.RGBA{200, 200, 200, 255}) {
		t.Error("DrawOverlay modified its input")
	}
}

func TestOverlayLabelsSurviveNonASCIIAndEdges(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 120, 80))
	p := agentPoint(119, 79)
	ov := DrawOverlay(src, []action.Trace{{Action: action.Action{Kind: action.TypeText, Text: "日本語 text"}, Image: &p, Outcome: "ok"}})
	if ov.Bounds().Dx() != 120 {
		t.Fatal("size changed")
	}
	if got := overlayLabel(action.Action{Kind: action.TypeText, Text: "日本"}); got != `type "??"` {
		t.Errorf("label = %q", got)
	}
}

// A drag to x = 1e15 (or any point far off the image) is drawn as the part of
// its line that crosses the image, in a time bounded by the image size: such a
// drag once sent the drawing into a 1e15-step loop that hung the task.
func TestOverlayClipsPointsFarOffTheImage(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 400, 300))
	draw.Draw(src, src.Bounds(), image.NewUniform(color.RGBA{200, 200, 200, 255}), image.Point{}, draw.Src)
	from, far := agentPoint(100, 150), agentPoint(1e15, 150)
	farBoth, farBoth2 := agentPoint(-1e300, -1e300), agentPoint(1e300, 1e300)
	off1, off2 := agentPoint(-5e14, -5e14), agentPoint(-4e14, -6e14)
	done := make(chan *image.RGBA, 1)
	go func() {
		done <- DrawOverlay(src, []action.Trace{
			{Action: action.Action{Kind: action.Drag}, Image: &from, ImageTo: &far, Outcome: "ok"},
			{Action: action.Action{Kind: action.Zoom}, Image: &farBoth, ImageTo: &farBoth2, Outcome: "ok"},
			{Action: action.Action{Kind: action.Drag}, Image: &off1, ImageTo: &off2, Outcome: "ok"},
			{Action: action.Action{Kind: action.Click}, Image: &far, Outcome: "ok"},
		})
	}()
	var ov *image.RGBA
	select {
	case ov = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("drawing actions far off the image did not finish in 20 s (it must only draw what is on the image)")
	}
	// The drag's line runs from its start to the right edge of the image.
	for _, x := range []int{150, 250, 399} {
		if !isMarker(ov.At(x, 150), colorOK) {
			t.Errorf("no drag line at (%d,150): %v", x, ov.At(x, 150))
		}
	}
	// The zoom's diagonal edges cross the image; nothing is drawn for the drag wholly off it.
	if isMarker(ov.At(20, 290), colorOK) {
		t.Errorf("a mark where no action's line passes: %v", ov.At(20, 290))
	}
}

func TestClipSegment(t *testing.T) {
	box := [4]float64{0, 0, 100, 50}
	for _, c := range []struct {
		a, want [4]float64
		ok      bool
	}{
		{[4]float64{10, 10, 20, 20}, [4]float64{10, 10, 20, 20}, true},
		{[4]float64{-100, 25, 200, 25}, [4]float64{0, 25, 100, 25}, true},
		{[4]float64{50, 25, 1e15, 25}, [4]float64{50, 25, 100, 25}, true},
		{[4]float64{-10, -10, -20, 80}, [4]float64{}, false},
		{[4]float64{0, 0, math.NaN(), 1}, [4]float64{}, false},
	} {
		ax, ay, bx, by, ok := clipSegment(c.a[0], c.a[1], c.a[2], c.a[3], box)
		got := [4]float64{ax, ay, bx, by}
		if ok != c.ok || ok && got != c.want {
			t.Errorf("clipSegment(%v) = %v %v, want %v %v", c.a, got, ok, c.want, c.ok)
		}
	}
}

// textImage is a white screen with a black word centred at (cx, cy), as a
// button's label; it returns the image and the word's box.
func textImage(w, h, cx, cy int, word string) (*image.RGBA, image.Rectangle) {
	src := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(src, src.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	face := basicfont.Face7x13
	tw := font.MeasureString(face, word).Ceil()
	d := font.Drawer{Dst: src, Src: image.NewUniform(color.Black), Face: face, Dot: fixed.P(cx-tw/2, cy+4)}
	d.DrawString(word)
	return src, image.Rect(cx-tw/2, cy-9, cx+tw/2+1, cy+5)
}

// inkKept is the share of the dark pixels of src inside box that are still
// dark in ov.
func inkKept(src, ov *image.RGBA, box image.Rectangle) float64 {
	ink, kept := 0, 0
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if src.RGBAAt(x, y).R < 100 {
				ink++
				if c := ov.RGBAAt(x, y); c.R < 100 && c.G < 100 && c.B < 100 {
					kept++
				}
			}
		}
	}
	return float64(kept) / float64(ink)
}

// TestOverlayLeavesTheClickedLabelReadable: a click on a button's label
// marks the point without hiding the label, and the action's number stands
// beside the point: near it, but over neither the label nor the point.
func TestOverlayLeavesTheClickedLabelReadable(t *testing.T) {
	for _, size := range []image.Point{{640, 400}, {1920, 1080}} { // scale 1 and 2
		cx, cy := size.X/2, size.Y/2
		src, word := textImage(size.X, size.Y, cx, cy, "Submit order")
		click := agentPoint(float64(cx), float64(cy))
		ov := DrawOverlay(src, []action.Trace{
			{Action: action.Action{Kind: action.Click}, Image: &click, Outcome: "ok"},
			{Action: action.Action{Kind: action.TypeText, Text: "Ada"}, Outcome: "ok"},
		})
		kept := inkKept(src, ov, word)
		t.Logf("%v: %.0f%% of the label's ink left visible", size, kept*100)
		if kept < 0.9 {
			t.Errorf("%v: only %.0f%% of the clicked label's ink is left visible, want at least 90%%", size, kept*100)
		}
		if !isMarker(ov.At(cx, cy), colorOK) {
			t.Errorf("%v: the click point itself is not marked", size)
		}
		// The number tags (dark boxes) lie beside the point: near it, and
		// none darkens the background of the label.
		near := image.Rect(cx-120, cy-120, cx+120, cy+120)
		tagPixels, far, overWord := 0, 0, 0
		for y := 0; y < size.Y; y++ {
			for x := 0; x < size.X; x++ {
				c := ov.RGBAAt(x, y)
				if c.R >= 60 || c.G >= 60 || c.B >= 60 {
					continue
				}
				switch p := image.Pt(x, y); {
				case p.In(word) && src.RGBAAt(x, y).R > 100:
					overWord++
				case p.In(word):
				case !p.In(near):
					far++
				default:
					tagPixels++
				}
			}
		}
		if tagPixels == 0 || far > 0 {
			t.Errorf("%v: %d tag pixels beside the point, %d far from it: want the numbers beside the point", size, tagPixels, far)
		}
		if overWord > 0 {
			t.Errorf("%v: a number tag covers %d pixels of the clicked label's background", size, overWord)
		}
	}
}
