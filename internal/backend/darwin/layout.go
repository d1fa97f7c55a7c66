package darwin

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/guiagent/guiagent/internal/geom"
)

// cgRect mirrors CGRect: origin and size in points (float64 on 64-bit macOS).
type cgRect struct {
	X, Y, W, H float64
}

// cgPoint mirrors CGPoint.
type cgPoint struct {
	X, Y float64
}

// rawDisplay is what CoreGraphics reports about one active display.
type rawDisplay struct {
	// id is the CGDirectDisplayID.
	id uint32
	// bounds is CGDisplayBounds: global points, origin at the main display's top-left.
	bounds cgRect
	// pixelWidth and pixelHeight are the backing size of the current mode in
	// device pixels (CGDisplayModeGetPixelWidth/Height); zero when unknown.
	pixelWidth, pixelHeight int
	// main marks CGMainDisplayID (the display with the menu bar).
	main bool
	// builtin marks the laptop panel (CGDisplayIsBuiltin).
	builtin bool
}

// pointsRect rounds a CGRect in points to a geom.Rect. Display bounds are
// whole points in practice; rounding guards against float noise.
func pointsRect(r cgRect) geom.Rect {
	x0, y0 := math.Round(r.X), math.Round(r.Y)
	x1, y1 := math.Round(r.X+r.W), math.Round(r.Y+r.H)
	return geom.Rect{X: int(x0), Y: int(y0), W: int(x1 - x0), H: int(y1 - y0)}
}

// scaleFactor returns device pixels per point for a display whose current
// mode is pixelWidth pixels wide over widthPoints points: 2 on Retina panels,
// 1 on ordinary monitors, other values for scaled modes. It is rounded to
// hundredths and is 1 when the pixel width is unknown.
func scaleFactor(pixelWidth int, widthPoints float64) float64 {
	if pixelWidth <= 0 || widthPoints <= 0 {
		return 1
	}
	s := math.Round(float64(pixelWidth)/widthPoints*100) / 100
	if s <= 0 {
		return 1
	}
	return s
}

// displayName describes a display for status output.
func displayName(r rawDisplay) string {
	kind := "external"
	if r.builtin {
		kind = "built-in"
	}
	return kind + " display " + strconv.FormatUint(uint64(r.id), 10)
}

// layoutDisplays turns raw displays into geom.Displays ordered left to right,
// then top to bottom, with ids "0", "1", ... The main display is primary; when
// none is marked, the display at the global origin is. The returned raw slice
// is in the same order, so raws[i] is the display of out[i].
func layoutDisplays(in []rawDisplay) (out []geom.Display, raws []rawDisplay) {
	raws = append([]rawDisplay(nil), in...)
	sort.SliceStable(raws, func(i, j int) bool {
		a, b := pointsRect(raws[i].bounds), pointsRect(raws[j].bounds)
		if a.X != b.X {
			return a.X < b.X
		}
		return a.Y < b.Y
	})
	primary := -1
	for i, r := range raws {
		if r.main {
			primary = i
			break
		}
	}
	if primary < 0 {
		for i, r := range raws {
			if pointsRect(r.bounds).Contains(geom.GlobalPoint{}) {
				primary = i
				break
			}
		}
	}
	if primary < 0 && len(raws) > 0 {
		primary = 0
	}
	out = make([]geom.Display, len(raws))
	for i, r := range raws {
		out[i] = geom.Display{
			ID:      strconv.Itoa(i),
			Name:    displayName(r),
			Bounds:  pointsRect(r.bounds),
			Scale:   scaleFactor(r.pixelWidth, r.bounds.W),
			Primary: i == primary,
		}
	}
	return out, raws
}

// locateRegion finds the display wholly containing region (global points) and
// returns its index in ds and the region in that display's own coordinates
// (origin at its top-left), which is what CGDisplayCreateImageForRect takes.
func locateRegion(ds []geom.Display, region geom.Rect) (int, cgRect, error) {
	if region.Empty() {
		return -1, cgRect{}, fmt.Errorf("macOS capture: empty region %v: give a width and height above zero", region)
	}
	for i, d := range ds {
		if region.Intersect(d.Bounds) == region {
			return i, cgRect{
				X: float64(region.X - d.Bounds.X), Y: float64(region.Y - d.Bounds.Y),
				W: float64(region.W), H: float64(region.H),
			}, nil
		}
	}
	return -1, cgRect{}, fmt.Errorf("macOS capture: region %v is not inside one display (displays: %s): capture one display at a time (see Displays)", region, boundsList(ds))
}

func boundsList(ds []geom.Display) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += ", "
		}
		s += d.ID + " " + d.Bounds.String()
	}
	if s == "" {
		return "none"
	}
	return s
}

// roundPoint rounds a Quartz location (global points) to a GlobalPoint.
func roundPoint(p cgPoint) geom.GlobalPoint {
	return geom.GlobalPoint{X: int(math.Floor(p.X + 0.5)), Y: int(math.Floor(p.Y + 0.5))}
}
