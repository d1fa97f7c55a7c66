// Package geom holds guiagent's coordinate spaces as distinct types and the pure
// functions that map between them. It imports only the standard library.
//
// Spaces (see ARCHITECTURE.md):
//   - model:  numbers a model emitted, interpreted by a Profile
//   - image:  pixels of the encoded screenshot actually sent (may include padding)
//   - local:  logical pixels inside one display, origin at its top-left
//   - global: logical pixels of the virtual desktop, origin at the primary display's top-left
//   - physical: device pixels (local x scale factor), used by capture only
package geom

import (
	"errors"
	"fmt"
	"math"
)

// ImagePoint is a position in pixels of an encoded screenshot, origin at its top-left.
// Integer values name pixel centres: (0,0) is the first pixel.
type ImagePoint struct{ X, Y float64 }

// LocalPoint is a position in logical pixels inside one display, origin at its top-left.
type LocalPoint struct{ X, Y float64 }

// GlobalPoint is a position in logical pixels of the virtual desktop. It is what
// input injection takes. Coordinates can be negative.
type GlobalPoint struct{ X, Y int }

// PhysicalPoint is a position in device pixels of one display (local x scale).
type PhysicalPoint struct{ X, Y int }

// String formats p as "(x,y)".
func (p ImagePoint) String() string { return fmt.Sprintf("(%g,%g)", round2(p.X), round2(p.Y)) }

// String formats p as "(x,y)".
func (p GlobalPoint) String() string { return fmt.Sprintf("(%d,%d)", p.X, p.Y) }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Size is a width and height in pixels of some space.
type Size struct{ W, H int }

// LongEdge returns the larger side.
func (s Size) LongEdge() int { return max(s.W, s.H) }

// Rect is a rectangle in global logical pixels: X,Y is the top-left pixel, W,H the size.
type Rect struct{ X, Y, W, H int }

// Contains reports whether p lies inside r.
func (r Rect) Contains(p GlobalPoint) bool {
	return p.X >= r.X && p.Y >= r.Y && p.X < r.X+r.W && p.Y < r.Y+r.H
}

// Empty reports whether r has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Intersect returns the common part of r and o (empty when they do not overlap).
func (r Rect) Intersect(o Rect) Rect {
	x0, y0 := max(r.X, o.X), max(r.Y, o.Y)
	x1, y1 := min(r.X+r.W, o.X+o.W), min(r.Y+r.H, o.Y+o.H)
	if x1 <= x0 || y1 <= y0 {
		return Rect{}
	}
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

// Clamp returns the point of r nearest to p.
func (r Rect) Clamp(p GlobalPoint) GlobalPoint {
	return GlobalPoint{min(max(p.X, r.X), r.X+r.W-1), min(max(p.Y, r.Y), r.Y+r.H-1)}
}

// Size returns the width and height of r.
func (r Rect) Size() Size { return Size{r.W, r.H} }

// String formats r as "WxH+X+Y" like X11 geometry.
func (r Rect) String() string { return fmt.Sprintf("%dx%d%+d%+d", r.W, r.H, r.X, r.Y) }

// Display is one monitor of the virtual desktop.
type Display struct {
	// ID is a stable identifier callers pass back ("0", "1", ...).
	ID string `json:"id"`
	// Name is what the platform calls the monitor (e.g. "DUMMY0", "VGA-1").
	Name string `json:"name"`
	// Bounds is the display's rectangle in global logical pixels.
	Bounds Rect `json:"bounds"`
	// Scale is physical pixels per logical pixel (1, 1.25, 1.5, 2...). Zero means 1.
	Scale float64 `json:"scale_factor"`
	// Primary marks the display whose top-left is the global origin.
	Primary bool `json:"primary"`
}

// ScaleFactor returns d.Scale, or 1 when unset.
func (d Display) ScaleFactor() float64 {
	if d.Scale <= 0 {
		return 1
	}
	return d.Scale
}

// PhysicalSize returns the display's size in device pixels.
func (d Display) PhysicalSize() Size {
	s := d.ScaleFactor()
	return Size{int(math.Round(float64(d.Bounds.W) * s)), int(math.Round(float64(d.Bounds.H) * s))}
}

// LocalToGlobal maps a point inside d to the virtual desktop, rounding to the nearest pixel.
func (d Display) LocalToGlobal(p LocalPoint) GlobalPoint {
	return GlobalPoint{d.Bounds.X + int(math.Round(p.X)), d.Bounds.Y + int(math.Round(p.Y))}
}

// GlobalToLocal maps a global point to d's local space.
func (d Display) GlobalToLocal(p GlobalPoint) LocalPoint {
	return LocalPoint{float64(p.X - d.Bounds.X), float64(p.Y - d.Bounds.Y)}
}

// LocalToPhysical maps a local point to device pixels of d.
func (d Display) LocalToPhysical(p LocalPoint) PhysicalPoint {
	s := d.ScaleFactor()
	return PhysicalPoint{int(math.Floor(p.X * s)), int(math.Floor(p.Y * s))}
}

// Errors callers test for.
var (
	// ErrInPadding: the point lies in padding added to the image; it is not a UI position.
	ErrInPadding = errors.New("point lies in the image padding, not on the screen")
	// ErrOutside: the point lies outside the image or display and strict mode forbids clamping.
	ErrOutside = errors.New("point lies outside the display")
	// ErrNoDisplay: no display matches the request.
	ErrNoDisplay = errors.New("no such display")
)

// Frame describes one capture as it was sent: which part of which display it shows
// and how its image pixels relate to the screen. All mappings between image and
// screen go through a Frame.
type Frame struct {
	// ID identifies the frame (e.g. "f12"); callers may cite it to detect staleness.
	ID string `json:"frame_id"`
	// Display is the display as it was when captured.
	Display Display `json:"display"`
	// Region is the captured rectangle in global logical pixels: the display's
	// bounds for a screenshot, a part of it for a zoom.
	Region Rect `json:"region"`
	// Content is the size of the image area that holds Region, in image pixels.
	Content Size `json:"content"`
	// Prepared is the size of the image actually sent, Content plus padding at the
	// right and bottom. Zero means equal to Content.
	Prepared Size `json:"prepared"`
}

// NewFrame returns a frame of region on d encoded at content size without padding.
func NewFrame(id string, d Display, region Rect, content Size) Frame {
	return Frame{ID: id, Display: d, Region: region, Content: content, Prepared: content}
}

// ImageSize returns the size of the image sent (Prepared, or Content when unset).
func (f Frame) ImageSize() Size {
	if f.Prepared.W == 0 || f.Prepared.H == 0 {
		return f.Content
	}
	return f.Prepared
}

// ratio returns logical pixels per image pixel along x and y.
func (f Frame) ratio() (float64, float64) {
	return float64(f.Region.W) / float64(f.Content.W), float64(f.Region.H) / float64(f.Content.H)
}

// ImageToGlobalF maps an image point to global logical coordinates without rounding
// or bounds checks. Image pixel centres map to logical pixel centres.
func (f Frame) ImageToGlobalF(p ImagePoint) (x, y float64) {
	rx, ry := f.ratio()
	return float64(f.Region.X) + (p.X+0.5)*rx - 0.5, float64(f.Region.Y) + (p.Y+0.5)*ry - 0.5
}

// GlobalToImage maps a global point into this frame's image pixels (which may lie
// outside the image when the point is outside Region).
func (f Frame) GlobalToImage(p GlobalPoint) ImagePoint {
	rx, ry := f.ratio()
	return ImagePoint{(float64(p.X-f.Region.X)+0.5)/rx - 0.5, (float64(p.Y-f.Region.Y)+0.5)/ry - 0.5}
}

// ImageToLocal maps an image point to the display's local space (no bounds checks).
func (f Frame) ImageToLocal(p ImagePoint) LocalPoint {
	x, y := f.ImageToGlobalF(p)
	return LocalPoint{x - float64(f.Display.Bounds.X), y - float64(f.Display.Bounds.Y)}
}

// LocalToImage maps a local point of the frame's display into image pixels.
func (f Frame) LocalToImage(p LocalPoint) ImagePoint {
	rx, ry := f.ratio()
	gx, gy := p.X+float64(f.Display.Bounds.X), p.Y+float64(f.Display.Bounds.Y)
	return ImagePoint{(gx-float64(f.Region.X)+0.5)/rx - 0.5, (gy-float64(f.Region.Y)+0.5)/ry - 0.5}
}

// Resolved is the outcome of mapping an image point to the screen.
type Resolved struct {
	Image  ImagePoint  `json:"image"`
	Global GlobalPoint `json:"global"`
	// Clamped is set when the point was moved onto the display; Warning says why.
	Clamped bool   `json:"clamped,omitempty"`
	Warning string `json:"warning,omitempty"`
	// Display is the display the point lies on (set by ResolveIn).
	Display Display `json:"-"`
}

// Resolve maps an image point of f to a global pixel on f's display. A point in
// the padding (inside Prepared but outside Content) is rejected with ErrInPadding.
// A point off the display is clamped onto it with a warning, or rejected with
// ErrOutside when strict is set.
func (f Frame) Resolve(p ImagePoint, strict bool) (Resolved, error) {
	if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
		return Resolved{}, fmt.Errorf("%w: coordinate is not a finite number", ErrOutside)
	}
	img := f.ImageSize()
	inImage := p.X > -0.5 && p.Y > -0.5 && p.X < float64(img.W)-0.5 && p.Y < float64(img.H)-0.5
	inContent := p.X > -0.5 && p.Y > -0.5 && p.X < float64(f.Content.W)-0.5 && p.Y < float64(f.Content.H)-0.5
	if inImage && !inContent {
		return Resolved{}, fmt.Errorf("%w: %v is in the padding of a %dx%d image whose screen content is %dx%d",
			ErrInPadding, p, img.W, img.H, f.Content.W, f.Content.H)
	}
	x, y := f.ImageToGlobalF(p)
	g := GlobalPoint{int(math.Round(x)), int(math.Round(y))}
	r := Resolved{Image: p, Global: g}
	if !f.Display.Bounds.Contains(g) {
		if strict {
			return Resolved{}, fmt.Errorf("%w: image point %v maps to %v, outside display %s at %v",
				ErrOutside, p, g, f.Display.ID, f.Display.Bounds)
		}
		r.Global = f.Display.Bounds.Clamp(g)
		r.Clamped = true
		r.Warning = fmt.Sprintf("point %v was outside display %s (%v); clamped to %v", p, f.Display.ID, f.Display.Bounds, r.Global)
	}
	return r, nil
}

// DisplayAt returns the display containing p.
func DisplayAt(ds []Display, p GlobalPoint) (Display, bool) {
	for _, d := range ds {
		if d.Bounds.Contains(p) {
			return d, true
		}
	}
	return Display{}, false
}

// ClampToDisplays returns p unchanged when some display contains it; otherwise the
// nearest point on the nearest display, with ok=false.
func ClampToDisplays(ds []Display, p GlobalPoint) (GlobalPoint, bool) {
	if _, ok := DisplayAt(ds, p); ok || len(ds) == 0 {
		return p, ok || len(ds) == 0
	}
	best, bestD := p, math.MaxFloat64
	for _, d := range ds {
		c := d.Bounds.Clamp(p)
		dx, dy := float64(c.X-p.X), float64(c.Y-p.Y)
		if dist := dx*dx + dy*dy; dist < bestD {
			best, bestD = c, dist
		}
	}
	return best, false
}

// VirtualBounds returns the rectangle enclosing all displays.
func VirtualBounds(ds []Display) Rect {
	if len(ds) == 0 {
		return Rect{}
	}
	x0, y0, x1, y1 := math.MaxInt, math.MaxInt, math.MinInt, math.MinInt
	for _, d := range ds {
		b := d.Bounds
		x0, y0 = min(x0, b.X), min(y0, b.Y)
		x1, y1 = max(x1, b.X+b.W), max(y1, b.Y+b.H)
	}
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

// FindDisplay returns the display with the given id; "" selects the primary one
// (or the first, when none is marked primary).
func FindDisplay(ds []Display, id string) (Display, error) {
	if len(ds) == 0 {
		return Display{}, fmt.Errorf("%w: the desktop reports no displays", ErrNoDisplay)
	}
	if id == "" {
		for _, d := range ds {
			if d.Primary {
				return d, nil
			}
		}
		return ds[0], nil
	}
	ids := make([]string, 0, len(ds))
	for _, d := range ds {
		if d.ID == id || d.Name == id {
			return d, nil
		}
		ids = append(ids, d.ID)
	}
	return Display{}, fmt.Errorf("%w: %q (known: %v; see gui_list_displays)", ErrNoDisplay, id, ids)
}

// ScaleFromDeclared returns f as seen by a model that reports the size of the
// image it worked on (image_width/image_height): the whole image sent (Prepared)
// is taken to have been scaled to declared, and Content scales with it, so
// ImagePoints in the declared image resolve to the same screen pixels. A
// declared size that is not positive, or equals f.ImageSize(), returns f
// unchanged. With padding, Content is rounded to whole pixels.
func ScaleFromDeclared(f Frame, declared Size) Frame {
	img := f.ImageSize()
	if declared.W <= 0 || declared.H <= 0 || img.W <= 0 || img.H <= 0 || declared == img {
		return f
	}
	sx, sy := float64(declared.W)/float64(img.W), float64(declared.H)/float64(img.H)
	content := declared
	if f.Content != img {
		content = Size{
			min(declared.W, max(1, int(math.Round(float64(f.Content.W)*sx)))),
			min(declared.H, max(1, int(math.Round(float64(f.Content.H)*sy)))),
		}
	}
	f.Content, f.Prepared = content, declared
	return f
}
