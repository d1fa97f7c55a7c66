package phone

import (
	"fmt"
	"image"
	"image/draw"
	"math"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Crop cuts a Capture's region out of a whole-screen screenshot: region is
// in the screen's logical pixels, kx and ky are the image's pixels per
// logical pixel, and whole (the region is the screen) takes the whole
// image, in whatever shape it came (a phone that turned). full is the
// screen the error names.
func Crop(img image.Image, region, full geom.Rect, kx, ky float64, whole bool, dst *image.RGBA) (*image.RGBA, error) {
	ib := img.Bounds()
	r := ib
	if !whole {
		r = image.Rect(int(math.Round(float64(region.X)*kx)), int(math.Round(float64(region.Y)*ky)),
			int(math.Round(float64(region.X+region.W)*kx)), int(math.Round(float64(region.Y+region.H)*ky))).Add(ib.Min).Intersect(ib)
	}
	if r.Empty() {
		return nil, fmt.Errorf("capture region %v is outside the screen %v", region, full)
	}
	out := desktop.ReuseRGBA(dst, r.Dx(), r.Dy())
	draw.Draw(out, out.Rect, img, r.Min, draw.Src)
	return out, nil
}
