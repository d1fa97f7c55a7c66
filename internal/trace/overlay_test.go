package trace

import (
	"image"
	"image/color"
	"image/draw"
	"testing"

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
