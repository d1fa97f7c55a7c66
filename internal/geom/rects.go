package geom

import "math"

// RectToImage maps r, a rectangle of global logical pixels, to the smallest
// rectangle of whole pixels of f's image that covers it. It is not clipped to
// the image: a rectangle partly outside Region maps partly outside the image
// (intersect it with the content to draw it). A frame without content maps
// everything to the zero ImageRect.
func (f Frame) RectToImage(r Rect) ImageRect {
	if f.Content.W <= 0 || f.Content.H <= 0 || f.Region.W <= 0 || f.Region.H <= 0 || r.Empty() {
		return ImageRect{}
	}
	rx, ry := f.ratio()
	x0 := math.Floor(float64(r.X-f.Region.X) / rx)
	y0 := math.Floor(float64(r.Y-f.Region.Y) / ry)
	x1 := math.Ceil(float64(r.X+r.W-f.Region.X) / rx)
	y1 := math.Ceil(float64(r.Y+r.H-f.Region.Y) / ry)
	return ImageRect{X: int(x0), Y: int(y0), W: max(int(x1-x0), 1), H: max(int(y1-y0), 1)}
}

// ContentRect is the part of f's image that shows Region (the padding left out).
func (f Frame) ContentRect() ImageRect { return ImageRect{W: f.Content.W, H: f.Content.H} }
