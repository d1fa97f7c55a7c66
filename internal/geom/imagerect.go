package geom

import "fmt"

// ImageRect is a rectangle in whole pixels of one image (a frame's image, or
// any image an analysis reads): X,Y is the top-left pixel, W,H the size. Text
// found by OCR and regions of a screenshot to read are given in it.
type ImageRect struct{ X, Y, W, H int }

// Empty reports whether r has no area.
func (r ImageRect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Center is the middle of r (a pixel centre for odd sizes).
func (r ImageRect) Center() ImagePoint {
	return ImagePoint{X: float64(r.X) + float64(r.W-1)/2, Y: float64(r.Y) + float64(r.H-1)/2}
}

// Max is the pixel just past r's bottom-right corner.
func (r ImageRect) Max() (x, y int) { return r.X + r.W, r.Y + r.H }

// Intersect returns the common part of r and o (the zero ImageRect when they
// do not overlap).
func (r ImageRect) Intersect(o ImageRect) ImageRect {
	x0, y0 := max(r.X, o.X), max(r.Y, o.Y)
	x1, y1 := min(r.X+r.W, o.X+o.W), min(r.Y+r.H, o.Y+o.H)
	if x1 <= x0 || y1 <= y0 {
		return ImageRect{}
	}
	return ImageRect{x0, y0, x1 - x0, y1 - y0}
}

// Union returns the smallest rectangle holding r and o; an empty one is ignored.
func (r ImageRect) Union(o ImageRect) ImageRect {
	if r.Empty() {
		return o
	}
	if o.Empty() {
		return r
	}
	x0, y0 := min(r.X, o.X), min(r.Y, o.Y)
	x1, y1 := max(r.X+r.W, o.X+o.W), max(r.Y+r.H, o.Y+o.H)
	return ImageRect{x0, y0, x1 - x0, y1 - y0}
}

// In reports whether r lies wholly inside o.
func (r ImageRect) In(o ImageRect) bool {
	return r.X >= o.X && r.Y >= o.Y && r.X+r.W <= o.X+o.W && r.Y+r.H <= o.Y+o.H
}

// ContainsPoint reports whether p lies inside r.
func (r ImageRect) ContainsPoint(p ImagePoint) bool {
	return p.X >= float64(r.X) && p.Y >= float64(r.Y) && p.X < float64(r.X+r.W) && p.Y < float64(r.Y+r.H)
}

// String formats r as "WxH+X+Y" like X11 geometry.
func (r ImageRect) String() string { return fmt.Sprintf("%dx%d%+d%+d", r.W, r.H, r.X, r.Y) }
