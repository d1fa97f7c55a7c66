package geom

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// layout is one display plus the region a frame shows (a whole display or a zoom).
type layout struct {
	name   string
	d      Display
	region Rect // zero = whole display
	zoom   int  // zoom long edge; 0 = a screenshot at the caller cap
}

var layouts = []layout{
	{name: "1080p primary", d: Display{ID: "0", Bounds: Rect{0, 0, 1920, 1080}, Scale: 1, Primary: true}},
	{name: "left of primary scale1.25", d: Display{ID: "1", Bounds: Rect{-1920, 0, 1920, 1080}, Scale: 1.25}},
	{name: "above primary scale1.5", d: Display{ID: "2", Bounds: Rect{0, -1080, 1920, 1080}, Scale: 1.5}},
	{name: "retina scale2", d: Display{ID: "3", Bounds: Rect{1920, 0, 1440, 900}, Scale: 2}},
	{name: "portrait", d: Display{ID: "4", Bounds: Rect{-1080, -1920, 1080, 1920}, Scale: 1}},
	{name: "1366x768", d: Display{ID: "5", Bounds: Rect{0, 0, 1366, 768}}},
	{name: "4k scale1", d: Display{ID: "6", Bounds: Rect{3840, 0, 3840, 2160}, Scale: 1}},
	{name: "zoom on negative display", d: Display{ID: "1", Bounds: Rect{-1920, 0, 1920, 1080}, Scale: 1.25}, region: Rect{-1500, 300, 400, 250}, zoom: 1920},
	{name: "zoom above primary", d: Display{ID: "2", Bounds: Rect{0, -1080, 1920, 1080}, Scale: 1.5}, region: Rect{1700, -300, 220, 300}, zoom: 1280},
	{name: "zoom 4k corner", d: Display{ID: "6", Bounds: Rect{3840, 0, 3840, 2160}}, region: Rect{6800, 1800, 840, 360}, zoom: 1920},
}

func (l layout) frame(p Profile) Frame {
	region := l.region
	var content, prepared Size
	if region == (Rect{}) {
		region = l.d.Bounds
		content, prepared = p.PrepareSize(region.Size(), 1920)
	} else {
		content, prepared = p.PrepareZoomSize(region.Size(), l.zoom)
	}
	return Frame{ID: "f", Display: l.d, Region: region, Content: content, Prepared: prepared}
}

// profilesUnderTest is every table row plus padded/normalized combinations
// that only WithMode produces.
func profilesUnderTest(t *testing.T) []Profile {
	ps := append([]Profile(nil), Profiles...)
	q := ProfileFor("qwen2.5-vl-7b")
	for _, m := range []string{"normalized-1000", "yx-normalized-1000", "normalized-0-1"} {
		p, err := q.WithMode(m)
		if err != nil {
			t.Fatal(err)
		}
		p.Name = "pad28+" + m
		ps = append(ps, p)
	}
	return ps
}

// TestRoundTripGlobalModelGlobal: a screen pixel expressed as the model would
// (rounded to what the model can write) resolves back to the same pixel, within
// one pixel of the model's coordinate resolution.
func TestRoundTripGlobalModelGlobal(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	for _, p := range profilesUnderTest(t) {
		for _, l := range layouts {
			f := l.frame(p)
			img := f.ImageSize()
			// Global pixels per model unit: how finely the model can point.
			unitX, unitY := float64(f.Region.W)/float64(f.Content.W), float64(f.Region.H)/float64(f.Content.H)
			if p.Divisor != 0 {
				unitX *= float64(img.W) / p.Divisor
				unitY *= float64(img.H) / p.Divisor
			}
			tolX, tolY := math.Max(1, math.Ceil(unitX/2)), math.Max(1, math.Ceil(unitY/2))
			for range 500 {
				g := GlobalPoint{f.Region.X + r.IntN(f.Region.W), f.Region.Y + r.IntN(f.Region.H)}
				m := p.FromImage(f.GlobalToImage(g), f)
				// Exact floats round-trip exactly.
				ip, err := p.ToImage(m, f)
				if err != nil {
					t.Fatal(err)
				}
				res, err := f.Resolve(ip, true)
				if err != nil || res.Global != g || res.Clamped {
					t.Fatalf("%s/%s: %v -> model %v -> %v, %v", p.Name, l.name, g, m, res.Global, err)
				}
				// What a model writes: integers for pixel and 0-1000 modes, 3 decimals for 0-1.
				for i := range m {
					if p.Divisor == 1 {
						m[i] = math.Round(m[i]*1000) / 1000
					} else {
						m[i] = math.Round(m[i])
					}
				}
				ip, err = p.ToImage(m, f)
				if err != nil {
					t.Fatal(err)
				}
				res, err = f.Resolve(ip, false)
				if errors.Is(err, ErrInPadding) {
					continue // rounding can push the last content pixel into padding
				}
				if err != nil {
					t.Fatal(err)
				}
				if dx, dy := math.Abs(float64(res.Global.X-g.X)), math.Abs(float64(res.Global.Y-g.Y)); dx > tolX || dy > tolY {
					t.Fatalf("%s/%s: %v -> model %v -> %v, off by (%v,%v) > (%v,%v)", p.Name, l.name, g, m, res.Global, dx, dy, tolX, tolY)
				}
			}
		}
	}
}

// TestRoundTripModelImageGlobalModel: model -> image -> global -> image -> model
// stays within one pixel (measured in the coarser of image and global pixels).
func TestRoundTripModelImageGlobalModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, p := range profilesUnderTest(t) {
		for _, l := range layouts {
			f := l.frame(p)
			img := f.ImageSize()
			// Image px per global px, per axis.
			limX := math.Max(1, float64(f.Content.W)/float64(f.Region.W)/2+1e-9)
			limY := math.Max(1, float64(f.Content.H)/float64(f.Region.H)/2+1e-9)
			for range 500 {
				// A random point on the content, in the model's convention.
				ip0 := ImagePoint{r.Float64()*float64(f.Content.W-1) + 0.01, r.Float64()*float64(f.Content.H-1) + 0.01}
				m0 := p.FromImage(ip0, f)
				ip, err := p.ToImage(m0, f)
				if err != nil {
					t.Fatal(err)
				}
				res, err := f.Resolve(ip, true)
				if err != nil {
					t.Fatalf("%s/%s: model %v (image %v) rejected: %v", p.Name, l.name, m0, ip, err)
				}
				back := f.GlobalToImage(res.Global)
				m1 := p.FromImage(back, f)
				ipx, ipy := math.Abs(back.X-ip.X), math.Abs(back.Y-ip.Y)
				if ipx > limX || ipy > limY {
					t.Fatalf("%s/%s: image %v -> %v -> %v: off by (%.2f,%.2f) image px > (%.2f,%.2f)", p.Name, l.name, ip, res.Global, back, ipx, ipy, limX, limY)
				}
				// In model units the same bound, scaled by the normalization.
				sx, sy := 1.0, 1.0
				if p.Divisor != 0 {
					sx, sy = p.Divisor/float64(img.W), p.Divisor/float64(img.H)
				}
				l0, l1 := limX*sx+1e-9, limY*sy+1e-9
				if p.Order == YX {
					l0, l1 = l1, l0
				}
				if math.Abs(m1[0]-m0[0]) > l0 || math.Abs(m1[1]-m0[1]) > l1 {
					t.Fatalf("%s/%s: model %v came back as %v", p.Name, l.name, m0, m1)
				}
			}
		}
	}
}

func TestPaddingIsRejectedNeverClicked(t *testing.T) {
	p := ProfileFor("qwen2.5-vl-72b-instruct")
	r := rand.New(rand.NewPCG(9, 9))
	for _, l := range layouts {
		f := l.frame(p)
		if f.Prepared == f.Content {
			continue
		}
		for range 300 {
			var ip ImagePoint
			if r.IntN(2) == 0 && f.Prepared.W > f.Content.W { // right strip
				ip = ImagePoint{float64(f.Content.W) + r.Float64()*float64(f.Prepared.W-f.Content.W-1), r.Float64() * float64(f.Prepared.H-1)}
			} else if f.Prepared.H > f.Content.H { // bottom strip
				ip = ImagePoint{r.Float64() * float64(f.Prepared.W-1), float64(f.Content.H) + r.Float64()*float64(f.Prepared.H-f.Content.H-1)}
			} else {
				continue
			}
			for _, strict := range []bool{false, true} {
				res, err := f.Resolve(ip, strict)
				if !errors.Is(err, ErrInPadding) {
					t.Fatalf("%s: padding point %v (content %v, prepared %v) resolved to %v, err %v", l.name, ip, f.Content, f.Prepared, res, err)
				}
			}
		}
		// The last content pixel is still on screen.
		if _, err := f.Resolve(ImagePoint{float64(f.Content.W - 1), float64(f.Content.H - 1)}, true); err != nil {
			t.Errorf("%s: last content pixel rejected: %v", l.name, err)
		}
	}
	// Normalized coordinates refer to the padded image the model saw.
	f := Frame{Display: Display{Bounds: Rect{0, 0, 1920, 1080}}, Region: Rect{0, 0, 1920, 1080}, Content: Size{1920, 1080}, Prepared: Size{1932, 1092}}
	pn, _ := p.WithMode("normalized-1000")
	ip, _ := pn.ToImage([]float64{999, 500}, f)
	if _, err := f.Resolve(ip, false); !errors.Is(err, ErrInPadding) {
		t.Errorf("normalized x=999 of a padded image should be padding, got %v", err)
	}
}

func TestOutsidePointsClampOrFailInStrictMode(t *testing.T) {
	for _, l := range layouts {
		if l.region != (Rect{}) {
			continue
		}
		f := l.frame(ProfileFor("x"))
		img := f.ImageSize()
		b := f.Display.Bounds
		cases := []struct {
			ip   ImagePoint
			want GlobalPoint
		}{
			{ImagePoint{-40, 10}, GlobalPoint{b.X, -1}},
			{ImagePoint{float64(img.W) + 100, float64(img.H) + 100}, GlobalPoint{b.X + b.W - 1, b.Y + b.H - 1}},
			{ImagePoint{10, -5000}, GlobalPoint{-1, b.Y}},
		}
		for _, tc := range cases {
			res, err := f.Resolve(tc.ip, false)
			if err != nil {
				t.Fatalf("%s: %v: %v", l.name, tc.ip, err)
			}
			if !res.Clamped || res.Warning == "" || !b.Contains(res.Global) {
				t.Errorf("%s: %v -> %+v, want clamped onto %v with a warning", l.name, tc.ip, res, b)
			}
			if tc.want.X != -1 && res.Global.X != tc.want.X || tc.want.Y != -1 && res.Global.Y != tc.want.Y {
				t.Errorf("%s: %v clamped to %v, want %v", l.name, tc.ip, res.Global, tc.want)
			}
			if !strings.Contains(res.Warning, "clamped") {
				t.Errorf("warning %q does not say it clamped", res.Warning)
			}
			if _, err := f.Resolve(tc.ip, true); !errors.Is(err, ErrOutside) {
				t.Errorf("%s: strict %v: err %v, want ErrOutside", l.name, tc.ip, err)
			}
		}
		for _, bad := range []ImagePoint{{math.NaN(), 1}, {1, math.Inf(1)}} {
			if _, err := f.Resolve(bad, false); !errors.Is(err, ErrOutside) {
				t.Errorf("non-finite %v: err %v", bad, err)
			}
		}
	}
}

// geminiBoxCheck resolves a Gemini box [ymin,xmin,ymax,xmax] on a 1920x1080 frame
// and reports whether it lands on the box centre.
func geminiBoxCheck(p Profile) error {
	f := NewFrame("g", Display{ID: "0", Bounds: Rect{0, 0, 1920, 1080}}, Rect{0, 0, 1920, 1080}, Size{1920, 1080})
	// A box around x 20%..60%, y 10%..30% of the screen.
	ip, err := p.ToImage([]float64{100, 200, 300, 600}, f)
	if err != nil {
		return err
	}
	res, err := f.Resolve(ip, true)
	if err != nil {
		return err
	}
	want := GlobalPoint{768, 216} // x = 400/1000*1920, y = 200/1000*1080
	if d := math.Abs(float64(res.Global.X-want.X)) + math.Abs(float64(res.Global.Y-want.Y)); d > 1 {
		return fmt.Errorf("box centre resolved to %v, want %v", res.Global, want)
	}
	// A Gemini point is [y, x].
	ip, _ = p.ToImage([]float64{500, 250}, f)
	if res, _ := f.Resolve(ip, true); math.Abs(float64(res.Global.X-480))+math.Abs(float64(res.Global.Y-540)) > 1 {
		return fmt.Errorf("point [y=500,x=250] resolved to %v, want (480,540)", res.Global)
	}
	return nil
}

func TestGeminiYXBoxesMapToTheBoxCentre(t *testing.T) {
	p := ProfileFor("gemini-2.5-flash")
	if err := geminiBoxCheck(p); err != nil {
		t.Fatal(err)
	}
	// The classic bug, reading Gemini boxes as xy, must be caught by the check.
	swapped := p
	swapped.Order = XY
	if err := geminiBoxCheck(swapped); err == nil {
		t.Fatal("a profile that reads Gemini yx boxes as xy passed the box check")
	}
	// The computer-use model's click_at(x, y) is xy on a 0-999 grid.
	cu := ProfileFor("gemini-2.5-computer-use-preview-10-2025")
	f := NewFrame("g", Display{ID: "0", Bounds: Rect{0, 0, 1440, 900}}, Rect{0, 0, 1440, 900}, Size{1440, 900})
	ip, _ := cu.ToImage([]float64{500, 250}, f)
	if res, _ := f.Resolve(ip, true); res.Global != (GlobalPoint{720, 225}) {
		t.Errorf("click_at(x=500,y=250) resolved to %v, want (720,225)", res.Global)
	}
	ip, _ = cu.ToImage([]float64{999, 999}, f)
	if res, err := f.Resolve(ip, true); err != nil || res.Global != (GlobalPoint{1438, 899}) {
		t.Errorf("click_at(999,999) -> %v, %v, want (1438,899) on screen", res.Global, err)
	}
}

func TestToImageRejectsBadInput(t *testing.T) {
	f := NewFrame("f", Display{Bounds: Rect{0, 0, 100, 100}}, Rect{0, 0, 100, 100}, Size{100, 100})
	for _, nums := range [][]float64{{}, {1}, {1, 2, 3}, {math.NaN(), 2}, {1, 2, math.Inf(-1), 4}} {
		if _, err := ProfileFor("x").ToImage(nums, f); err == nil {
			t.Errorf("ToImage(%v) accepted", nums)
		}
	}
}

func TestScaleFromDeclared(t *testing.T) {
	d := Display{ID: "0", Bounds: Rect{-1920, 0, 1920, 1080}}
	// We sent 1280x720; the model says it worked on 1920x1080 pixels.
	f := NewFrame("f", d, d.Bounds, Size{1280, 720})
	g := ScaleFromDeclared(f, Size{1920, 1080})
	if g.ImageSize() != (Size{1920, 1080}) || g.Content != (Size{1920, 1080}) || g.Region != f.Region {
		t.Fatalf("scaled frame %+v", g)
	}
	res, err := g.Resolve(ImagePoint{960, 540}, true)
	if err != nil || res.Global != (GlobalPoint{-960, 540}) {
		t.Errorf("declared-size point (960,540) -> %v, %v, want (-960,540)", res.Global, err)
	}
	// The same screen spot in both frames resolves to the same pixel.
	r := rand.New(rand.NewPCG(5, 5))
	for range 500 {
		gp := GlobalPoint{d.Bounds.X + r.IntN(1920), r.IntN(1080)}
		a, _ := f.Resolve(f.GlobalToImage(gp), true)
		b, _ := g.Resolve(g.GlobalToImage(gp), true)
		if a.Global != gp || b.Global != gp {
			t.Fatalf("%v -> %v / %v", gp, a.Global, b.Global)
		}
	}
	// Padding scales with the image: a padded 1932x1092 frame declared at half size.
	pf := Frame{ID: "p", Display: d, Region: d.Bounds, Content: Size{1920, 1080}, Prepared: Size{1932, 1092}}
	ph := ScaleFromDeclared(pf, Size{966, 546})
	if ph.Content != (Size{960, 540}) || ph.Prepared != (Size{966, 546}) {
		t.Errorf("padded frame scaled to %v/%v, want 960x540/966x546", ph.Content, ph.Prepared)
	}
	if _, err := ph.Resolve(ImagePoint{963, 10}, true); !errors.Is(err, ErrInPadding) {
		t.Errorf("padding of the declared image not rejected: %v", err)
	}
	// Nonsense declarations leave the frame alone.
	for _, bad := range []Size{{}, {0, 100}, {-5, 10}, f.ImageSize()} {
		if got := ScaleFromDeclared(f, bad); got != f {
			t.Errorf("declared %v changed the frame to %+v", bad, got)
		}
	}
}

func TestDisplayHelpers(t *testing.T) {
	ds := []Display{layouts[0].d, layouts[1].d, layouts[2].d}
	if v := VirtualBounds(ds); v != (Rect{-1920, -1080, 3840, 2160}) {
		t.Errorf("VirtualBounds = %v", v)
	}
	if d, ok := DisplayAt(ds, GlobalPoint{-1, 5}); !ok || d.ID != "1" {
		t.Errorf("DisplayAt(-1,5) = %v %v", d.ID, ok)
	}
	// The gap at the bottom-left quadrant belongs to no display: clamp to the nearest.
	if p, ok := ClampToDisplays(ds, GlobalPoint{-10, -10}); ok || (p != GlobalPoint{-10, 0} && p != GlobalPoint{0, -10}) {
		t.Errorf("ClampToDisplays(-10,-10) = %v %v", p, ok)
	}
	if d, err := FindDisplay(ds, ""); err != nil || d.ID != "0" {
		t.Errorf("FindDisplay primary = %v %v", d.ID, err)
	}
	if _, err := FindDisplay(ds, "9"); !errors.Is(err, ErrNoDisplay) || !strings.Contains(err.Error(), "gui_list_displays") {
		t.Errorf("FindDisplay(9) err = %v", err)
	}
	if ps := layouts[1].d.PhysicalSize(); ps != (Size{2400, 1350}) {
		t.Errorf("PhysicalSize at 1.25 = %v", ps)
	}
}
