package darwin

import (
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestScaleFactor(t *testing.T) {
	cases := []struct {
		pixels int
		points float64
		want   float64
	}{
		{2880, 1440, 2},   // MacBook Pro 15" default
		{3024, 1512, 2},   // MacBook Pro 14" default
		{3360, 1680, 2},   // "looks like 1680x1050" on a Retina panel
		{1920, 1920, 1},   // ordinary monitor
		{3840, 2560, 1.5}, // 4K "looks like 2560x1440"
		{2560, 2048, 1.25},
		{0, 1440, 1}, // mode unknown
		{2880, 0, 1},
	}
	for _, c := range cases {
		if got := scaleFactor(c.pixels, c.points); got != c.want {
			t.Errorf("scaleFactor(%d, %g) = %g, want %g", c.pixels, c.points, got, c.want)
		}
	}
}

// A Retina laptop with the menu bar, a monitor left of and above it, and a
// portrait monitor on its right.
func sampleRaws() []rawDisplay {
	return []rawDisplay{
		{id: 1, bounds: cgRect{0, 0, 1512, 982}, pixelWidth: 3024, pixelHeight: 1964, main: true, builtin: true},
		{id: 7, bounds: cgRect{1512, -300, 1080, 1920}, pixelWidth: 1080, pixelHeight: 1920},
		{id: 5, bounds: cgRect{-2560, -458, 2560, 1440}, pixelWidth: 3840, pixelHeight: 2160},
	}
}

func TestLayoutDisplaysKeepsQuartzCoordinates(t *testing.T) {
	ds, raws := layoutDisplays(sampleRaws())
	want := []geom.Display{
		{ID: "0", Bounds: geom.Rect{X: -2560, Y: -458, W: 2560, H: 1440}, Scale: 1.5},
		{ID: "1", Bounds: geom.Rect{X: 0, Y: 0, W: 1512, H: 982}, Scale: 2, Primary: true},
		{ID: "2", Bounds: geom.Rect{X: 1512, Y: -300, W: 1080, H: 1920}, Scale: 1},
	}
	if len(ds) != len(want) {
		t.Fatalf("got %d displays, want %d", len(ds), len(want))
	}
	for i := range want {
		got := ds[i]
		if got.ID != want[i].ID || got.Bounds != want[i].Bounds || got.Scale != want[i].Scale || got.Primary != want[i].Primary {
			t.Errorf("display %d = %+v, want %+v", i, got, want[i])
		}
	}
	if raws[0].id != 5 || raws[1].id != 1 || raws[2].id != 7 {
		t.Errorf("raw order %d %d %d does not follow the displays", raws[0].id, raws[1].id, raws[2].id)
	}
	if !strings.Contains(ds[1].Name, "built-in") || !strings.Contains(ds[0].Name, "external") {
		t.Errorf("names %q, %q do not say built-in/external", ds[1].Name, ds[0].Name)
	}
	// The physical size is what a capture of the whole display returns.
	if got := ds[1].PhysicalSize(); got != (geom.Size{W: 3024, H: 1964}) {
		t.Errorf("Retina physical size %v, want 3024x1964", got)
	}
	if got := ds[0].PhysicalSize(); got != (geom.Size{W: 3840, H: 2160}) {
		t.Errorf("4K physical size %v, want 3840x2160", got)
	}
}

func TestLayoutDisplaysPrimaryFallback(t *testing.T) {
	raws := sampleRaws()
	for i := range raws {
		raws[i].main = false
	}
	ds, _ := layoutDisplays(raws)
	for _, d := range ds {
		if d.Primary != (d.Bounds.X == 0 && d.Bounds.Y == 0) {
			t.Errorf("display %s at %v: primary=%v; want the display at the origin to be primary", d.ID, d.Bounds, d.Primary)
		}
	}
	ds, _ = layoutDisplays([]rawDisplay{{id: 3, bounds: cgRect{100.0000001, 0, 799.9999999, 600}}})
	if !ds[0].Primary || ds[0].Bounds != (geom.Rect{X: 100, Y: 0, W: 800, H: 600}) {
		t.Errorf("single display: %+v", ds[0])
	}
}

func TestLocateRegion(t *testing.T) {
	ds, _ := layoutDisplays(sampleRaws())
	i, local, err := locateRegion(ds, geom.Rect{X: -2500, Y: -400, W: 100, H: 50})
	if err != nil || i != 0 || local != (cgRect{60, 58, 100, 50}) {
		t.Fatalf("region on the left monitor: %d %+v %v; want display 0 local (60,58)", i, local, err)
	}
	i, local, err = locateRegion(ds, ds[2].Bounds)
	if err != nil || i != 2 || local != (cgRect{0, 0, 1080, 1920}) {
		t.Fatalf("whole portrait display: %d %+v %v", i, local, err)
	}
	if _, _, err := locateRegion(ds, geom.Rect{X: 1400, Y: 0, W: 200, H: 100}); err == nil || !strings.Contains(err.Error(), "not inside one display") {
		t.Fatalf("region across two displays: err %v", err)
	}
	if _, _, err := locateRegion(ds, geom.Rect{X: 0, Y: 0, W: 0, H: 10}); err == nil || !strings.Contains(err.Error(), "empty region") {
		t.Fatalf("empty region: err %v", err)
	}
}

// A screenshot of each display, downscaled as the pipeline does, maps image
// pixels back onto the right global points, including negative ones.
func TestFramesOfMacDisplaysResolveToGlobalPoints(t *testing.T) {
	ds, _ := layoutDisplays(sampleRaws())
	for _, d := range ds {
		phys := d.PhysicalSize()
		for _, content := range []geom.Size{phys, d.Bounds.Size(), {W: phys.W / 3, H: phys.H / 3}} {
			f := geom.NewFrame("f", d, d.Bounds, content)
			for _, lp := range []geom.LocalPoint{{X: 0, Y: 0}, {X: float64(d.Bounds.W - 1), Y: float64(d.Bounds.H - 1)}, {X: float64(d.Bounds.W / 2), Y: float64(d.Bounds.H / 3)}} {
				want := d.LocalToGlobal(lp)
				ip := f.GlobalToImage(want)
				r, err := f.Resolve(ip, true)
				if err != nil {
					t.Fatalf("display %s content %v: resolve %v: %v", d.ID, content, ip, err)
				}
				if dx, dy := r.Global.X-want.X, r.Global.Y-want.Y; dx < -1 || dx > 1 || dy < -1 || dy > 1 {
					t.Errorf("display %s content %v: %v -> image %v -> %v, want within 1 px", d.ID, content, want, ip, r.Global)
				}
			}
		}
	}
}

func TestRoundPoint(t *testing.T) {
	cases := map[cgPoint]geom.GlobalPoint{
		{10.4, 20.6}:    {X: 10, Y: 21},
		{-3.6, -0.4}:    {X: -4, Y: 0},
		{-2560, -458}:   {X: -2560, Y: -458},
		{1511.5, 981.2}: {X: 1512, Y: 981},
	}
	for in, want := range cases {
		if got := roundPoint(in); got != want {
			t.Errorf("roundPoint(%v) = %v, want %v", in, got, want)
		}
	}
}
