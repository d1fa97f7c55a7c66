package windows

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/guiagent/guiagent/internal/geom"
)

// defaultDPI is the DPI at which one logical pixel is one physical pixel.
const defaultDPI = 96

// physRect is a rectangle in physical pixels of the Windows virtual screen
// (the coordinates per-monitor-aware Win32 calls use): X,Y is the top-left
// pixel, W,H the size. The primary monitor's top-left is (0,0).
type physRect struct{ X, Y, W, H int }

func (r physRect) contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.W && y < r.Y+r.H
}

// physMonitor is one monitor as Win32 reports it.
type physMonitor struct {
	// Name is the GDI device name, such as `\\.\DISPLAY1`.
	Name string
	// Rect is the monitor rectangle (MONITORINFO.rcMonitor) in physical pixels.
	Rect physRect
	// DPI is the effective DPI (GetDpiForMonitor MDT_EFFECTIVE_DPI); 0 means 96.
	DPI int
	// Primary is set for the monitor with MONITORINFOF_PRIMARY.
	Primary bool
}

// scale returns physical pixels per logical pixel.
func (m physMonitor) scale() float64 {
	if m.DPI <= 0 {
		return 1
	}
	return float64(m.DPI) / defaultDPI
}

// layout is the mapping between the physical virtual screen and guiagent's
// logical global space: Displays[i] is the logical view of Phys[i].
type layout struct {
	Displays []geom.Display
	Phys     []physRect
}

// errNoMonitors is returned when Windows reports no monitor.
var errNoMonitors = errors.New("windows: no monitor is attached to this desktop session (is guiagent running as a service or in session 0? run it in the user's interactive session)")

// buildLayout turns monitors in physical pixels into displays in logical
// global pixels (see the package documentation for the placement rules).
// Displays are ordered left to right, then top to bottom (in physical
// coordinates), with ids "0", "1", ...
func buildLayout(mons []physMonitor) (layout, error) {
	var ms []physMonitor
	for _, m := range mons {
		if m.Rect.W > 0 && m.Rect.H > 0 {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return layout{}, errNoMonitors
	}
	slices.SortStableFunc(ms, func(a, b physMonitor) int {
		return cmp.Or(cmp.Compare(a.Rect.X, b.Rect.X), cmp.Compare(a.Rect.Y, b.Rect.Y))
	})
	pi := slices.IndexFunc(ms, func(m physMonitor) bool { return m.Primary })
	if pi < 0 {
		pi = slices.IndexFunc(ms, func(m physMonitor) bool { return m.Rect.contains(0, 0) })
		if pi < 0 {
			pi = 0
		}
	}
	n := len(ms)
	logical := make([]geom.Rect, n)
	placed := make([]bool, n)
	size := func(i int) (int, int) {
		s := ms[i].scale()
		return max(1, int(math.Round(float64(ms[i].Rect.W)/s))), max(1, int(math.Round(float64(ms[i].Rect.H)/s)))
	}
	w, h := size(pi)
	logical[pi] = geom.Rect{W: w, H: h}
	placed[pi] = true
	order := []int{pi}

	// Attach monitors to placed neighbours, breadth first from the primary.
	for q := 0; q < len(order); q++ {
		nb := order[q]
		np, nl, ns := ms[nb].Rect, logical[nb], ms[nb].scale()
		for i := range ms {
			if placed[i] {
				continue
			}
			r := ms[i].Rect
			w, h := size(i)
			var l geom.Rect
			var push geom.GlobalPoint // direction away from the neighbour
			vOverlap := r.Y < np.Y+np.H && np.Y < r.Y+r.H
			hOverlap := r.X < np.X+np.W && np.X < r.X+r.W
			alongY := nl.Y + int(math.Round(float64(r.Y-np.Y)/ns))
			alongX := nl.X + int(math.Round(float64(r.X-np.X)/ns))
			switch {
			case vOverlap && r.X == np.X+np.W: // right of the neighbour
				l, push = geom.Rect{X: nl.X + nl.W, Y: alongY, W: w, H: h}, geom.GlobalPoint{X: 1}
			case vOverlap && r.X+r.W == np.X: // left
				l, push = geom.Rect{X: nl.X - w, Y: alongY, W: w, H: h}, geom.GlobalPoint{X: -1}
			case hOverlap && r.Y == np.Y+np.H: // below
				l, push = geom.Rect{X: alongX, Y: nl.Y + nl.H, W: w, H: h}, geom.GlobalPoint{Y: 1}
			case hOverlap && r.Y+r.H == np.Y: // above
				l, push = geom.Rect{X: alongX, Y: nl.Y - h, W: w, H: h}, geom.GlobalPoint{Y: -1}
			default:
				continue
			}
			logical[i] = separate(l, push, logical, placed)
			placed[i] = true
			order = append(order, i)
		}
	}
	// Monitors that touch none: offset from the primary in the primary's scale.
	ps, pp := ms[pi].scale(), ms[pi].Rect
	for i := range ms {
		if placed[i] {
			continue
		}
		w, h := size(i)
		dx, dy := ms[i].Rect.X-pp.X, ms[i].Rect.Y-pp.Y
		l := geom.Rect{X: int(math.Round(float64(dx) / ps)), Y: int(math.Round(float64(dy) / ps)), W: w, H: h}
		push := geom.GlobalPoint{X: sign(dx)}
		if abs(dy) > abs(dx) {
			push = geom.GlobalPoint{Y: sign(dy)}
		}
		if push == (geom.GlobalPoint{}) {
			push.X = 1
		}
		logical[i] = separate(l, push, logical, placed)
		placed[i] = true
	}

	out := layout{Displays: make([]geom.Display, n), Phys: make([]physRect, n)}
	for i, m := range ms {
		out.Displays[i] = geom.Display{ID: strconv.Itoa(i), Name: m.Name, Bounds: logical[i], Scale: m.scale(), Primary: i == pi}
		out.Phys[i] = m.Rect
	}
	return out, nil
}

// separate moves l in direction push until it overlaps no placed rectangle.
func separate(l geom.Rect, push geom.GlobalPoint, logical []geom.Rect, placed []bool) geom.Rect {
	for range len(logical) * 2 {
		moved := false
		for j, o := range logical {
			if !placed[j] || l.Intersect(o).Empty() {
				continue
			}
			switch {
			case push.X > 0:
				l.X = o.X + o.W
			case push.X < 0:
				l.X = o.X - l.W
			case push.Y > 0:
				l.Y = o.Y + o.H
			default:
				l.Y = o.Y - l.H
			}
			moved = true
		}
		if !moved {
			break
		}
	}
	return l
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func abs(v int) int { return max(v, -v) }

// index returns the display containing the global point p, else the nearest
// one (ok=false).
func (l layout) index(p geom.GlobalPoint) (int, bool) {
	for i, d := range l.Displays {
		if d.Bounds.Contains(p) {
			return i, true
		}
	}
	best, bestD := 0, math.MaxFloat64
	for i, d := range l.Displays {
		c := d.Bounds.Clamp(p)
		dx, dy := float64(c.X-p.X), float64(c.Y-p.Y)
		if dist := dx*dx + dy*dy; dist < bestD {
			best, bestD = i, dist
		}
	}
	return best, false
}

// toPhysical maps a global logical point to the physical pixel of the virtual
// screen under that logical pixel's centre. A point on no display is first
// clamped onto the nearest one (clamped=true).
func (l layout) toPhysical(p geom.GlobalPoint) (x, y int, clamped bool) {
	i, ok := l.index(p)
	d, ph := l.Displays[i], l.Phys[i]
	if !ok {
		p = d.Bounds.Clamp(p)
	}
	s := d.ScaleFactor()
	ox := int(math.Floor((float64(p.X-d.Bounds.X) + 0.5) * s))
	oy := int(math.Floor((float64(p.Y-d.Bounds.Y) + 0.5) * s))
	return ph.X + min(ox, ph.W-1), ph.Y + min(oy, ph.H-1), !ok
}

// toLogical maps a physical pixel of the virtual screen to the global logical
// pixel containing its centre, through the monitor that contains it (or the
// nearest monitor when it lies on none).
func (l layout) toLogical(x, y int) geom.GlobalPoint {
	i := -1
	for j, ph := range l.Phys {
		if ph.contains(x, y) {
			i = j
			break
		}
	}
	if i < 0 {
		best := math.MaxFloat64
		for j, ph := range l.Phys {
			cx, cy := min(max(x, ph.X), ph.X+ph.W-1), min(max(y, ph.Y), ph.Y+ph.H-1)
			dx, dy := float64(cx-x), float64(cy-y)
			if dist := dx*dx + dy*dy; dist < best {
				i, best = j, dist
			}
		}
		ph := l.Phys[i]
		x, y = min(max(x, ph.X), ph.X+ph.W-1), min(max(y, ph.Y), ph.Y+ph.H-1)
	}
	d, ph := l.Displays[i], l.Phys[i]
	s := d.ScaleFactor()
	lx := int(math.Floor((float64(x-ph.X) + 0.5) / s))
	ly := int(math.Floor((float64(y-ph.Y) + 0.5) / s))
	return geom.GlobalPoint{X: d.Bounds.X + min(lx, d.Bounds.W-1), Y: d.Bounds.Y + min(ly, d.Bounds.H-1)}
}

// physicalRegion maps region (global logical pixels, inside one display) to
// the physical rectangle of the virtual screen that shows it.
func (l layout) physicalRegion(region geom.Rect) (physRect, error) {
	if region.Empty() {
		return physRect{}, fmt.Errorf("windows capture: empty region %v: give a width and height above zero", region)
	}
	for i, d := range l.Displays {
		if region.Intersect(d.Bounds) != region {
			continue
		}
		ph, s := l.Phys[i], d.ScaleFactor()
		x0 := int(math.Round(float64(region.X-d.Bounds.X) * s))
		y0 := int(math.Round(float64(region.Y-d.Bounds.Y) * s))
		x1 := min(ph.W, int(math.Round(float64(region.X+region.W-d.Bounds.X)*s)))
		y1 := min(ph.H, int(math.Round(float64(region.Y+region.H-d.Bounds.Y)*s)))
		return physRect{X: ph.X + x0, Y: ph.Y + y0, W: max(1, x1-x0), H: max(1, y1-y0)}, nil
	}
	return physRect{}, fmt.Errorf("windows capture: region %v is not inside one display (displays: %s): capture inside one display (see Displays)", region, l.describe())
}

// describe lists the displays as "id:WxH+X+Y@scale".
func (l layout) describe() string {
	s := ""
	for i, d := range l.Displays {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s:%v@%g", d.ID, d.Bounds, d.ScaleFactor())
	}
	return s
}

// absoluteMax is the largest normalized coordinate of an absolute mouse move.
const absoluteMax = 65535

// normalizeAbsolute returns the MOUSEEVENTF_ABSOLUTE|MOUSEEVENTF_VIRTUALDESK
// coordinates (0..65535 over the virtual screen virt, physical pixels) that
// aim at the centre of physical pixel (x, y). Windows maps them back to
// virt.X + dx*virt.W/65536 (rounded down; some versions scale by
// (virt.W-1)/65535 and round): aiming at the centre lands on (x, y) under
// either rule. Points outside virt are clamped onto its edge.
func normalizeAbsolute(x, y int, virt physRect) (dx, dy int32) {
	return normalizeAxis(x-virt.X, virt.W), normalizeAxis(y-virt.Y, virt.H)
}

func normalizeAxis(off, size int) int32 {
	if size <= 0 {
		return 0
	}
	off = min(max(off, 0), size-1)
	v := ((2*int64(off) + 1) * (absoluteMax + 1)) / (2 * int64(size))
	return int32(min(v, absoluteMax))
}
