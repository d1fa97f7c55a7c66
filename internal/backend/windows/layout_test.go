package windows

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func mon(name string, x, y, w, h, dpi int, primary bool) physMonitor {
	return physMonitor{Name: name, Rect: physRect{x, y, w, h}, DPI: dpi, Primary: primary}
}

func rect(x, y, w, h int) geom.Rect { return geom.Rect{X: x, Y: y, W: w, H: h} }

func mustLayout(t *testing.T, ms ...physMonitor) layout {
	t.Helper()
	l, err := buildLayout(ms)
	if err != nil {
		t.Fatalf("buildLayout: %v", err)
	}
	return l
}

func byName(t *testing.T, l layout, name string) geom.Display {
	t.Helper()
	for _, d := range l.Displays {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no display %q in %s", name, l.describe())
	return geom.Display{}
}

// checkRoundTrip maps every logical pixel of every display to physical and
// back, and every physical pixel to a logical one on the same display.
func checkRoundTrip(t *testing.T, l layout) {
	t.Helper()
	for i, d := range l.Displays {
		b, ph := d.Bounds, l.Phys[i]
		for y := b.Y; y < b.Y+b.H; y += max(1, b.H/97) {
			for x := b.X; x < b.X+b.W; x++ {
				p := geom.GlobalPoint{X: x, Y: y}
				px, py, clamped := l.toPhysical(p)
				if clamped || !ph.contains(px, py) {
					t.Fatalf("display %s: %v -> physical (%d,%d) clamped=%v, outside monitor %+v", d.ID, p, px, py, clamped, ph)
				}
				if back := l.toLogical(px, py); back != p {
					t.Fatalf("display %s @%g: %v -> physical (%d,%d) -> %v", d.ID, d.Scale, p, px, py, back)
				}
			}
		}
		for py := ph.Y; py < ph.Y+ph.H; py += max(1, ph.H/89) {
			for px := ph.X; px < ph.X+ph.W; px++ {
				if g := l.toLogical(px, py); !b.Contains(g) {
					t.Fatalf("display %s: physical (%d,%d) -> %v, outside %v", d.ID, px, py, g, b)
				}
			}
		}
	}
}

func checkNoOverlap(t *testing.T, l layout) {
	t.Helper()
	for i, a := range l.Displays {
		for _, b := range l.Displays[i+1:] {
			if !a.Bounds.Intersect(b.Bounds).Empty() {
				t.Fatalf("displays %s %v and %s %v overlap in logical space (%s)", a.ID, a.Bounds, b.ID, b.Bounds, l.describe())
			}
		}
	}
}

func TestSingleMonitorScales(t *testing.T) {
	for _, tc := range []struct {
		w, h, dpi int
		want      geom.Rect
	}{
		{1920, 1080, 96, geom.Rect{W: 1920, H: 1080}},
		{1920, 1080, 120, geom.Rect{W: 1536, H: 864}}, // 125%
		{1366, 768, 120, geom.Rect{W: 1093, H: 614}},  // 125%, not a whole number of logical pixels
		{2880, 1800, 144, geom.Rect{W: 1920, H: 1200}},
		{3840, 2160, 192, geom.Rect{W: 1920, H: 1080}},
		{2160, 3840, 168, geom.Rect{W: 1234, H: 2194}}, // portrait at 175%
		{3000, 2000, 240, geom.Rect{W: 1200, H: 800}},  // 250%
	} {
		t.Run(fmt.Sprintf("%dx%d@%d", tc.w, tc.h, tc.dpi), func(t *testing.T) {
			l := mustLayout(t, mon(`\\.\DISPLAY1`, 0, 0, tc.w, tc.h, tc.dpi, true))
			d := l.Displays[0]
			if d.Bounds != tc.want || !d.Primary || d.ID != "0" || d.Name != `\\.\DISPLAY1` {
				t.Fatalf("display = %+v, want bounds %v, primary, id 0", d, tc.want)
			}
			if want := float64(tc.dpi) / 96; d.Scale != want {
				t.Fatalf("scale = %g, want %g", d.Scale, want)
			}
			pr, err := l.physicalRegion(d.Bounds)
			if err != nil || pr != (physRect{0, 0, tc.w, tc.h}) {
				t.Fatalf("physicalRegion(whole display) = %+v, %v; want the whole monitor %dx%d", pr, err, tc.w, tc.h)
			}
			checkRoundTrip(t, l)
		})
	}
}

func TestZeroDPIMeansScaleOne(t *testing.T) {
	l := mustLayout(t, mon("a", 0, 0, 800, 600, 0, true))
	if d := l.Displays[0]; d.Scale != 1 || d.Bounds != (geom.Rect{W: 800, H: 600}) {
		t.Fatalf("display = %+v, want 800x600 at scale 1", d)
	}
}

func TestMixedDPIRightOfPrimary(t *testing.T) {
	// A 4K primary at 150% and a 1080p monitor at 100% to its right, 540
	// physical pixels lower.
	l := mustLayout(t,
		mon("right", 3840, 540, 1920, 1080, 96, false),
		mon("primary", 0, 0, 3840, 2160, 144, true),
	)
	p, r := byName(t, l, "primary"), byName(t, l, "right")
	if p.Bounds != (rect(0, 0, 2560, 1440)) || !p.Primary || p.ID != "0" {
		t.Fatalf("primary = %+v, want 2560x1440 at the origin with id 0", p)
	}
	// It starts at the primary's logical right edge, not at 3840, and its
	// offset is measured in the primary's scale (540/1.5).
	if r.Bounds != (rect(2560, 360, 1920, 1080)) || r.Primary || r.ID != "1" {
		t.Fatalf("right = %+v, want 1920x1080+2560+360 with id 1", r)
	}
	checkRoundTrip(t, l)
	checkNoOverlap(t, l)
	// The pointer crosses the shared edge: the primary's last physical column
	// and the right monitor's first one are logical neighbours.
	if g := l.toLogical(3839, 1000); g.X != 2559 {
		t.Fatalf("last physical column of the primary -> %v, want x 2559", g)
	}
	if g := l.toLogical(3840, 1000); g.X != 2560 {
		t.Fatalf("first physical column of the right monitor -> %v, want x 2560", g)
	}
}

func TestNegativeOrigins(t *testing.T) {
	// Left of the primary at 100%, above it at 200%, primary at 125%.
	l := mustLayout(t,
		mon("primary", 0, 0, 2560, 1600, 120, true),
		mon("left", -1920, 200, 1920, 1080, 96, false),
		mon("top", 0, -2160, 3840, 2160, 192, false),
	)
	p, left, top := byName(t, l, "primary"), byName(t, l, "left"), byName(t, l, "top")
	if p.Bounds != (rect(0, 0, 2048, 1280)) {
		t.Fatalf("primary = %v, want 2048x1280+0+0", p.Bounds)
	}
	if left.Bounds != (rect(-1920, 160, 1920, 1080)) {
		t.Fatalf("left = %v, want 1920x1080-1920+160 (200 physical / 1.25)", left.Bounds)
	}
	if top.Bounds != (rect(0, -1080, 1920, 1080)) {
		t.Fatalf("top = %v, want 1920x1080+0-1080", top.Bounds)
	}
	if left.ID != "0" || top.ID != "1" || p.ID != "2" {
		t.Fatalf("ids: left %s top %s primary %s; want 0 1 2 (left to right, then top to bottom)", left.ID, top.ID, p.ID)
	}
	checkRoundTrip(t, l)
	checkNoOverlap(t, l)
	// A physical point in the gap left of the top monitor maps onto the
	// nearest monitor's edge (physical (0,-5) on the top monitor at 200%).
	if g := l.toLogical(-5, -5); g != (geom.GlobalPoint{X: 0, Y: -3}) {
		t.Fatalf("gap point (-5,-5) -> %v, want (0,-3) on the top monitor", g)
	}
}

func TestChainedMonitorsAttachToTheirNeighbour(t *testing.T) {
	// primary@100% | middle@200% | far@100%: far touches only middle.
	l := mustLayout(t,
		mon("primary", 0, 0, 1920, 1080, 96, true),
		mon("middle", 1920, 0, 3840, 2160, 192, false),
		mon("far", 5760, 0, 1920, 1080, 96, false),
	)
	if m := byName(t, l, "middle"); m.Bounds != (rect(1920, 0, 1920, 1080)) {
		t.Fatalf("middle = %v", m.Bounds)
	}
	if f := byName(t, l, "far"); f.Bounds != (rect(3840, 0, 1920, 1080)) {
		t.Fatalf("far = %v, want 1920x1080+3840+0 (attached to middle's logical right edge)", f.Bounds)
	}
	checkRoundTrip(t, l)
}

func TestMixedGridDoesNotOverlap(t *testing.T) {
	// 2x2 grid: the bottom-right monitor is attached to the top-right one,
	// whose logical size differs from the bottom-left one's.
	l := mustLayout(t,
		mon("tl", 0, 0, 1920, 1080, 96, true),
		mon("tr", 1920, 0, 1920, 1080, 192, false),
		mon("bl", 0, 1080, 3840, 2160, 96, false),
		mon("br", 3840, 1080, 1920, 1080, 96, false),
	)
	checkNoOverlap(t, l)
	checkRoundTrip(t, l)
	if bl := byName(t, l, "bl"); bl.Bounds != (rect(0, 1080, 3840, 2160)) {
		t.Fatalf("bl = %v, want 3840x2160+0+1080", bl.Bounds)
	}
}

func TestMirroredAndDetachedMonitors(t *testing.T) {
	// A monitor cloning the primary's area and one far away touch nothing.
	l := mustLayout(t,
		mon("primary", 0, 0, 1920, 1080, 96, true),
		mon("clone", 0, 0, 1920, 1080, 96, false),
		mon("far", 10000, 0, 1280, 1024, 96, false),
	)
	checkNoOverlap(t, l)
	if f := byName(t, l, "far"); f.Bounds != (rect(10000, 0, 1280, 1024)) {
		t.Fatalf("far = %v, want its physical offset from the primary", f.Bounds)
	}
	if c := byName(t, l, "clone"); c.Bounds.W != 1920 || c.Bounds.H != 1080 {
		t.Fatalf("clone = %v, want 1920x1080 somewhere that does not overlap", c.Bounds)
	}
}

func TestPrimaryFallback(t *testing.T) {
	// No monitor flagged primary: the one containing (0,0) is.
	l := mustLayout(t, mon("left", -1280, 0, 1280, 1024, 96, false), mon("origin", 0, 0, 1920, 1080, 96, false))
	if d := byName(t, l, "origin"); !d.Primary || d.Bounds.X != 0 || d.Bounds.Y != 0 {
		t.Fatalf("origin = %+v, want the primary at (0,0)", d)
	}
	if _, err := buildLayout(nil); !errors.Is(err, errNoMonitors) {
		t.Fatalf("buildLayout(nil) err = %v, want errNoMonitors", err)
	}
	if _, err := buildLayout([]physMonitor{mon("empty", 0, 0, 0, 0, 96, true)}); !errors.Is(err, errNoMonitors) {
		t.Fatalf("buildLayout(empty monitor) err = %v, want errNoMonitors", err)
	}
}

func TestToPhysicalClampsOffDisplayPoints(t *testing.T) {
	l := mustLayout(t, mon("p", 0, 0, 2880, 1800, 144, true))
	x, y, clamped := l.toPhysical(geom.GlobalPoint{X: 5000, Y: -20})
	if !clamped || x != 2879 || y != 0 {
		t.Fatalf("toPhysical((5000,-20)) = (%d,%d) clamped=%v, want (2879,0) clamped", x, y, clamped)
	}
	// Logical pixel 10 at 150% covers physical 15..16; its centre is 15.75.
	if x, y, _ := l.toPhysical(geom.GlobalPoint{X: 10, Y: 10}); x != 15 || y != 15 {
		t.Fatalf("toPhysical((10,10)) = (%d,%d), want (15,15)", x, y)
	}
}

func TestPhysicalRegion(t *testing.T) {
	l := mustLayout(t,
		mon("primary", 0, 0, 3840, 2160, 144, true),
		mon("left", -1920, 0, 1920, 1080, 96, false),
	)
	pr, err := l.physicalRegion(geom.Rect{X: 100, Y: 50, W: 200, H: 100})
	if err != nil || pr != (physRect{150, 75, 300, 150}) {
		t.Fatalf("region at 150%% = %+v, %v; want 300x150 at (150,75)", pr, err)
	}
	pr, err = l.physicalRegion(geom.Rect{X: -1920, Y: 0, W: 1920, H: 1080})
	if err != nil || pr != (physRect{-1920, 0, 1920, 1080}) {
		t.Fatalf("left display = %+v, %v; want its monitor rectangle", pr, err)
	}
	if _, err := l.physicalRegion(geom.Rect{X: -10, Y: 0, W: 20, H: 20}); err == nil {
		t.Fatal("a region spanning two displays was accepted")
	}
	if _, err := l.physicalRegion(geom.Rect{X: 0, Y: 0, W: 0, H: 20}); err == nil {
		t.Fatal("an empty region was accepted")
	}
}

func TestNormalizeAbsoluteLandsOnTarget(t *testing.T) {
	for _, virt := range []physRect{
		{0, 0, 1920, 1080},
		{-1920, -300, 5760, 2460},
		{-3840, 0, 7680, 2160},
		{0, -1440, 1366, 2208},
		{-2, -2, 3, 3},
	} {
		for x := virt.X; x < virt.X+virt.W; x++ {
			dx, _ := normalizeAbsolute(x, virt.Y, virt)
			if dx < 0 || dx > absoluteMax {
				t.Fatalf("virt %+v: x %d -> %d, outside 0..65535", virt, x, dx)
			}
			// Windows' mapping (ReactOS and Windows 10): floor(dx*W/65536).
			if got := virt.X + int(int64(dx)*int64(virt.W)>>16); got != x {
				t.Fatalf("virt %+v: x %d -> dx %d -> %d with floor(dx*W/65536)", virt, x, dx, got)
			}
			// The other documented rule: round(dx*(W-1)/65535).
			if got := virt.X + int(math.Round(float64(dx)*float64(virt.W-1)/absoluteMax)); got != x {
				t.Fatalf("virt %+v: x %d -> dx %d -> %d with round(dx*(W-1)/65535)", virt, x, dx, got)
			}
		}
		for y := virt.Y; y < virt.Y+virt.H; y++ {
			_, dy := normalizeAbsolute(virt.X, y, virt)
			if got := virt.Y + int(int64(dy)*int64(virt.H)>>16); got != y {
				t.Fatalf("virt %+v: y %d -> dy %d -> %d", virt, y, dy, got)
			}
		}
	}
	virt := physRect{-1920, 0, 3840, 1080}
	if dx, dy := normalizeAbsolute(-5000, 5000, virt); dx != 8 || dy != absoluteMax-30 {
		t.Fatalf("outside point -> (%d,%d), want the first column's and last row's centres (8,%d)", dx, dy, absoluteMax-30)
	}
}
