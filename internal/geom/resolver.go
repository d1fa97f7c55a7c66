package geom

import (
	"errors"
	"fmt"
	"math"
)

// ErrOffDisplay: a point lies on no display, or too far outside the image it
// refers to for clamping to make sense.
var ErrOffDisplay = errors.New("point is off every display")

// AnyDistance is a ResolveIn slack that clamps every point outside the image
// onto the display instead of rejecting it.
const AnyDistance = -1.0

// MaxCoordinate bounds every coordinate ResolveIn reads, in any space: far
// beyond any desktop, and small enough that rounding to a pixel cannot
// overflow.
const MaxCoordinate = 1_000_000

// ResolveIn is the resolver: it maps a point given as named x and y in space sp
// to a global pixel. It is the one function through which every caller (the MCP
// tools, the agent's actions) turns a point into a place for input.
//
//   - SpaceScreen: (x, y) rounded is the global pixel; it must lie on one of ds
//     (ErrOffDisplay otherwise). Resolved.Display is the display it lies on.
//   - every other space is read over frame f: image pixels as they are,
//     normalized grids scaled to f's whole image. A point more than slack image
//     pixels outside the image is rejected with ErrOffDisplay (a negative slack,
//     AnyDistance, never rejects); then f.Resolve applies: a point in the padding
//     is rejected with ErrInPadding, a point off the display is clamped onto it
//     with a warning. Resolved.Display is f.Display.
func ResolveIn(sp Space, x, y float64, f Frame, ds []Display, slack float64) (Resolved, error) {
	if !finite(x) || !finite(y) {
		return Resolved{}, fmt.Errorf("%w: coordinates (%v,%v) are not finite numbers", ErrOutside, x, y)
	}
	if math.Abs(x) > MaxCoordinate || math.Abs(y) > MaxCoordinate {
		return Resolved{}, fmt.Errorf("%w: coordinates (%g,%g) are far off any screen (at most %g either way in any space)", ErrOffDisplay, x, y, float64(MaxCoordinate))
	}
	if !sp.Valid() {
		return Resolved{}, fmt.Errorf("unknown coordinate space %q", sp)
	}
	if sp == SpaceScreen {
		g := GlobalPoint{X: int(math.Round(x)), Y: int(math.Round(y))}
		on, ok := DisplayAt(ds, g)
		if !ok {
			return Resolved{}, fmt.Errorf("%w: global point %v (space \"screen\") is on no display; the desktop spans %v",
				ErrOffDisplay, g, VirtualBounds(ds))
		}
		return Resolved{Image: f.GlobalToImage(g), Global: g, Display: on}, nil
	}
	ip := SpaceToImage(sp, x, y, f)
	img := f.ImageSize()
	if slack >= 0 && (ip.X < -0.5-slack || ip.Y < -0.5-slack || ip.X > float64(img.W)-0.5+slack || ip.Y > float64(img.H)-0.5+slack) {
		return Resolved{}, fmt.Errorf("%w: %v is outside the %dx%d image of frame %s (display %s)",
			ErrOffDisplay, ip, img.W, img.H, f.ID, f.Display.ID)
	}
	r, err := f.Resolve(ip, false)
	r.Display = f.Display
	return r, err
}

// SpaceToImage maps named (x, y) of an image-based space to pixels of f's
// image: pixels as they are, a normalized grid over the whole image (a
// continuous position mapped to a pixel index, centre convention).
func SpaceToImage(sp Space, x, y float64, f Frame) ImagePoint {
	div := sp.Divisor()
	if div == 0 {
		return ImagePoint{x, y}
	}
	img := f.ImageSize()
	return ImagePoint{x/div*float64(img.W) - 0.5, y/div*float64(img.H) - 0.5}
}

// MapImagePoint maps a point of frame from's image to the same place in frame
// to's image, where the two frames show the same region at different image
// sizes (a model that declared the size of the image it worked on).
func MapImagePoint(p ImagePoint, from, to Frame) ImagePoint {
	a, b := from.ImageSize(), to.ImageSize()
	if a == b || a.W == 0 || a.H == 0 {
		return p
	}
	return ImagePoint{X: (p.X+0.5)*float64(b.W)/float64(a.W) - 0.5, Y: (p.Y+0.5)*float64(b.H)/float64(a.H) - 0.5}
}

// MinZoomPx is the smallest side, in screen pixels, of a region to zoom into.
const MinZoomPx = 4

// ZoomRegion returns the region with corners a and b (both included) cut to
// display d, or an error when a side is shorter than MinZoomPx.
func ZoomRegion(a, b GlobalPoint, d Display) (Rect, error) {
	x0, x1 := min(a.X, b.X), max(a.X, b.X)
	y0, y1 := min(a.Y, b.Y), max(a.Y, b.Y)
	r := Rect{X: x0, Y: y0, W: x1 - x0 + 1, H: y1 - y0 + 1}.Intersect(d.Bounds)
	if r.W < MinZoomPx || r.H < MinZoomPx {
		return Rect{}, fmt.Errorf("the zoom region %v is too small: give corners at least %d screen pixels apart", r, MinZoomPx)
	}
	return r, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
