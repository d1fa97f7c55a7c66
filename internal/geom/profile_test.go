package geom

import (
	"math/rand/v2"
	"path"
	"testing"
)

func TestProfileForRealisticModelNames(t *testing.T) {
	cases := []struct {
		model   string
		name    string
		divisor float64
		order   Order
		resize  Resize
	}{
		{"claude-sonnet-4-5", "anthropic", 0, XY, ResizeFit},
		{"anthropic/claude-opus-4", "anthropic", 0, XY, ResizeFit},
		{"  Claude-3-7-Sonnet-20250219 ", "anthropic", 0, XY, ResizeFit},
		{"gpt-4o-mini", "openai", 0, XY, ResizeFit},
		{"openai/gpt-5", "openai", 0, XY, ResizeFit},
		{"computer-use-preview", "openai-computer", 0, XY, ResizeFit},
		{"computer-use-preview-2025-03-11", "openai-computer", 0, XY, ResizeFit},
		{"gemini-2.5-computer-use-preview-10-2025", "gemini-computer-use", 1000, XY, ResizeFit},
		{"gemini-2.5-pro", "gemini", 1000, YX, ResizeFit},
		{"google/gemini-2.0-flash", "gemini", 1000, YX, ResizeFit},
		{"ui-tars-1.5-7b", "ui-tars-1.5", 0, XY, ResizeSmart28},
		{"ByteDance-Seed/UI-TARS-1.5-7B", "ui-tars-1.5", 0, XY, ResizeSmart28},
		{"UI-TARS-72B-DPO", "ui-tars", 1000, XY, ResizeFit},
		{"doubao-1.5-ui-tars", "ui-tars", 1000, XY, ResizeFit},
		{"doubao-1-5-ui-tars-250428", "ui-tars", 1000, XY, ResizeFit},
		{"qwen2.5-vl-72b-instruct", "qwen2.5-vl", 0, XY, ResizePad28},
		{"Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl", 0, XY, ResizePad28},
		{"qwen3-vl-235b", "normalized-1000", 1000, XY, ResizeFit},
		{"qwen3-vl-235b-a22b-instruct", "normalized-1000", 1000, XY, ResizeFit},
		{"glm-4.5v", "normalized-1000", 1000, XY, ResizeFit},
		{"zai-org/GLM-4.1V-9B-Thinking", "normalized-1000", 1000, XY, ResizeFit},
		{"cogagent", "normalized-1000", 1000, XY, ResizeFit},
		{"THUDM/cogagent-9b-20241220", "normalized-1000", 1000, XY, ResizeFit},
		{"seeclick", "normalized-1", 1, XY, ResizeFit},
		{"showui-2b", "normalized-1", 1, XY, ResizeFit},
		{"unknown-model", "default", 0, XY, ResizeFit},
		{"", "default", 0, XY, ResizeFit},
		{"llava-v1.6", "default", 0, XY, ResizeFit},
	}
	for _, tc := range cases {
		p := ProfileFor(tc.model)
		if p.Name != tc.name || p.Divisor != tc.divisor || p.Order != tc.order || p.Resize != tc.resize {
			t.Errorf("ProfileFor(%q) = %s{div %v, order %v, resize %v}, want %s{div %v, order %v, resize %v}",
				tc.model, p.Name, p.Divisor, p.Order, p.Resize, tc.name, tc.divisor, tc.order, tc.resize)
		}
	}
}

func TestProfilesTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for i, p := range Profiles {
		if p.Name == "" || seen[p.Name] {
			t.Errorf("row %d: empty or duplicate name %q", i, p.Name)
		}
		seen[p.Name] = true
		if len(p.Match) == 0 {
			t.Errorf("%s: no match patterns", p.Name)
		}
		for _, pat := range p.Match {
			if _, err := path.Match(pat, "x"); err != nil {
				t.Errorf("%s: bad pattern %q: %v", p.Name, pat, err)
			}
		}
		switch p.Divisor {
		case 0, 1, 1000:
		default:
			t.Errorf("%s: unexpected divisor %v", p.Name, p.Divisor)
		}
		if p.Resize == ResizeSmart28 && (p.MinPixels <= 0 || p.MaxPixels <= p.MinPixels) {
			t.Errorf("%s: smart resize needs 0 < MinPixels < MaxPixels", p.Name)
		}
	}
	if last := Profiles[len(Profiles)-1]; last.Name != "default" || last.Divisor != 0 || last.Order != XY {
		t.Errorf("the last row must be the pixel/xy fallback, got %+v", last)
	}
	// The UI-TARS 1.5 bounds are the ones of its README (factor 28).
	if p := ProfileFor("ui-tars-1.5-7b"); p.MinPixels != 100*28*28 || p.MaxPixels != 16384*28*28 {
		t.Errorf("ui-tars-1.5 pixel bounds %d..%d", p.MinPixels, p.MaxPixels)
	}
	if p := ProfileFor("claude-sonnet-4-5"); p.MaxLongEdge != 1568 || p.MaxPixels > 1_150_000 {
		t.Errorf("anthropic caps %d px / %d pixels", p.MaxLongEdge, p.MaxPixels)
	}
}

func TestWithMode(t *testing.T) {
	base := ProfileFor("unknown")
	for mode, want := range map[string]struct {
		div   float64
		order Order
	}{
		"image-absolute": {0, XY}, "normalized-1000": {1000, XY}, "normalized-999": {1000, XY},
		"normalized-0-1": {1, XY}, "yx-normalized-1000": {1000, YX}, " Gemini ": {1000, YX},
	} {
		p, err := base.WithMode(mode)
		if err != nil || p.Divisor != want.div || p.Order != want.order {
			t.Errorf("WithMode(%q) = div %v order %v err %v", mode, p.Divisor, p.Order, err)
		}
	}
	if _, err := base.WithMode("polar"); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestSmartResizeMatchesReference checks values computed with the reference
// smart_resize of qwen_vl_utils / UI-TARS (Python, round half to even).
func TestSmartResizeMatchesReference(t *testing.T) {
	const mn, mx = 100 * 28 * 28, 16384 * 28 * 28
	cases := []struct{ in, want Size }{
		{Size{1920, 1080}, Size{1932, 1092}},
		{Size{3840, 2160}, Size{3836, 2156}},
		{Size{1366, 768}, Size{1372, 756}},
		{Size{1080, 1920}, Size{1092, 1932}},
		{Size{1000, 70}, Size{1064, 84}},
		{Size{100, 100}, Size{280, 280}},
		{Size{8000, 8000}, Size{3584, 3584}},
		{Size{2560, 1440}, Size{2548, 1428}},
		{Size{742, 742}, Size{728, 728}}, // 742/28 = 26.5 rounds to even 26
	}
	for _, tc := range cases {
		if got := SmartResize(tc.in, 28, mn, mx); got != tc.want {
			t.Errorf("SmartResize(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := SmartResize(Size{1000, 70}, 28, 0, 0); got != (Size{1008, 56}) {
		t.Errorf("unbounded SmartResize(1000x70) = %v, want 1008x56 (70/28 = 2.5 rounds to even)", got)
	}
	// The image guiagent sends must be a fixed point: the model's processor
	// leaves it unchanged, so the model's pixels are our pixels.
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := Size{16 + r.IntN(5000), 16 + r.IntN(5000)}
		once := SmartResize(s, 28, mn, mx)
		if twice := SmartResize(once, 28, mn, mx); twice != once {
			t.Fatalf("SmartResize not idempotent: %v -> %v -> %v", s, once, twice)
		}
		if once.W%28 != 0 || once.H%28 != 0 || once.W*once.H > mx || once.W*once.H < mn {
			t.Fatalf("SmartResize(%v) = %v breaks the rule", s, once)
		}
	}
}

func TestPrepareSizePerProfile(t *testing.T) {
	sizes := []Size{{1920, 1080}, {3840, 2160}, {1366, 768}, {1080, 1920}, {2560, 1600}, {800, 600}, {5120, 1440}}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		sizes = append(sizes, Size{200 + r.IntN(6000), 200 + r.IntN(4000)})
	}
	for _, p := range Profiles {
		for _, edge := range []int{1920, 1280, 0} {
			for _, s := range sizes {
				content, prepared := p.PrepareSize(s, edge)
				capEdge := edge
				if p.MaxLongEdge > 0 && (capEdge == 0 || p.MaxLongEdge < capEdge) {
					capEdge = p.MaxLongEdge
				}
				if prepared.W < content.W || prepared.H < content.H || content.W < 1 || content.H < 1 {
					t.Fatalf("%s %v edge %d: content %v prepared %v", p.Name, s, edge, content, prepared)
				}
				switch p.Resize {
				case ResizeSmart28:
					if content != prepared || content.W%28 != 0 || content.H%28 != 0 {
						t.Fatalf("%s %v: smart size %v/%v", p.Name, s, content, prepared)
					}
					if SmartResize(content, 28, p.MinPixels, p.MaxPixels) != content {
						t.Fatalf("%s %v: %v is not a smart_resize fixed point", p.Name, s, content)
					}
					if capEdge > 0 && content.LongEdge() > capEdge {
						t.Fatalf("%s %v edge %d: long edge %d over the cap", p.Name, s, edge, content.LongEdge())
					}
				case ResizePad28:
					if prepared.W%28 != 0 || prepared.H%28 != 0 || prepared.W-content.W >= 28 || prepared.H-content.H >= 28 {
						t.Fatalf("%s %v: pad %v -> %v", p.Name, s, content, prepared)
					}
				default:
					if prepared != content {
						t.Fatalf("%s %v: padded %v -> %v without ResizePad28", p.Name, s, content, prepared)
					}
				}
				if p.Resize != ResizeSmart28 {
					if capEdge > 0 && content.LongEdge() > capEdge {
						t.Fatalf("%s %v edge %d: long edge %d over the cap", p.Name, s, edge, content.LongEdge())
					}
					if p.MaxPixels > 0 && content.W*content.H > p.MaxPixels {
						t.Fatalf("%s %v: %d pixels over %d", p.Name, s, content.W*content.H, p.MaxPixels)
					}
					if content.W > s.W || content.H > s.H {
						t.Fatalf("%s %v: upscaled to %v", p.Name, s, content)
					}
					// Aspect ratio kept within one pixel.
					f := max(float64(content.W)/float64(s.W), float64(content.H)/float64(s.H))
					if dw, dh := f*float64(s.W)-float64(content.W), f*float64(s.H)-float64(content.H); dw > 1 || dh > 1 || dw < -1 || dh < -1 {
						t.Fatalf("%s %v: aspect changed, content %v", p.Name, s, content)
					}
				}
			}
		}
	}
	if c, _ := ProfileFor("claude-opus-4").PrepareSize(Size{1920, 1080}, 1920); c != (Size{1429, 804}) {
		t.Errorf("anthropic 1080p content = %v, want 1429x804 (1.15 MP cap)", c)
	}
}

func TestPrepareZoomSizeScalesUp(t *testing.T) {
	c, p := ProfileFor("x").PrepareZoomSize(Size{320, 200}, 1920)
	if c != (Size{1920, 1200}) || p != c {
		t.Errorf("zoom 320x200 -> %v/%v, want 1920x1200", c, p)
	}
	c, p = ProfileFor("qwen2.5-vl-7b").PrepareZoomSize(Size{300, 200}, 1000)
	if c != (Size{1000, 667}) || p != (Size{1008, 672}) {
		t.Errorf("qwen zoom -> %v/%v, want 1000x667 padded to 1008x672", c, p)
	}
	c, _ = ProfileFor("claude-sonnet-4-5").PrepareZoomSize(Size{400, 300}, 1920)
	if c.LongEdge() > 1568 || c.W*c.H > 1_150_000 || c.W <= 400 {
		t.Errorf("anthropic zoom -> %v breaks its caps or did not scale up", c)
	}
}

// A long-edge cap is met exactly: floating-point error in the scale factor must
// not cost the image a pixel row (3000 * (1568/3000) is 1567.999... in float64).
func TestFitSizeLongEdgeMeetsTheCapExactly(t *testing.T) {
	for _, tc := range []struct {
		in   Size
		edge int
		want Size
	}{
		{Size{3000, 2000}, 1568, Size{1568, 1045}},
		{Size{2880, 1800}, 1568, Size{1568, 980}},
		{Size{1800, 2880}, 1568, Size{980, 1568}},
		{Size{3840, 2160}, 1920, Size{1920, 1080}},
	} {
		if got := FitSize(tc.in, tc.edge, 0); got != tc.want {
			t.Errorf("FitSize(%v, %d) = %v, want %v", tc.in, tc.edge, got, tc.want)
		}
	}
	for long := 65; long <= 8000; long++ {
		for _, edge := range []int{64, 1024, 1280, 1568, 1920} {
			if long <= edge {
				continue
			}
			if got := FitSize(Size{long, long/2 + 1}, edge, 0); got.W != edge {
				t.Fatalf("FitSize(%dx%d, %d) = %v: long edge is not the cap", long, long/2+1, edge, got)
			}
		}
	}
}
