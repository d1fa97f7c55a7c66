package imaging

import (
	"image"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// TestTurnedScreen: a capture of the whole display in another shape than
// the display was listed in (a phone turned to landscape) gives the frame
// the captured shape; a capture of the listed shape, within rounding,
// keeps the display as it was.
func TestTurnedScreen(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 411, H: 914}, Scale: 2.625, Primary: true}
	same := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	if got, region := turned(d, same); got != d || region != d.Bounds {
		t.Errorf("the listed shape changed the display to %+v (region %v)", got, region)
	}
	landscape := image.NewRGBA(image.Rect(0, 0, 2400, 1080))
	got, region := turned(d, landscape)
	if got.Bounds != (geom.Rect{W: 914, H: 411}) || region != got.Bounds || got.Scale != d.Scale {
		t.Errorf("a landscape capture gives %+v, region %v; want 914x411 at the same scale", got, region)
	}
}
