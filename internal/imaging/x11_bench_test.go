package imaging

import (
	"context"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// startX11 starts a private Xvfb of w x h and an x11 backend on it.
func startX11(tb testing.TB, w, h int) (*x11.Backend, geom.Display) {
	tb.Helper()
	vd := xvfbtest.Start(tb, w, h)
	b := x11.New(x11.Options{Display: vd.Display})
	if err := b.Start(context.Background()); err != nil {
		tb.Fatalf("x11 backend on %s: %v", vd.Display, err)
	}
	tb.Cleanup(func() { _ = b.Close() })
	ds, err := b.Displays(context.Background())
	if err != nil || len(ds) == 0 {
		tb.Fatalf("displays of %s: %v %v", vd.Display, ds, err)
	}
	return b, ds[0]
}

// TestShootRealXvfb runs the pipeline against a real X server.
func TestShootRealXvfb(t *testing.T) {
	b, d := startX11(t, 1280, 800)
	shot, err := NewPipeline().Shoot(context.Background(), b, d, geom.Rect{}, Options{}, "x")
	if err != nil {
		t.Fatal(err)
	}
	img, err := Decode(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 800 || shot.Frame.Region != d.Bounds {
		t.Errorf("image %v frame %+v, want 1280x800 of %v", img.Bounds(), shot.Frame, d.Bounds)
	}
}

// BenchmarkShootXvfb1080 measures capture + scale to 1280 wide + JPEG q75 from a
// real 1920x1080 Xvfb through the x11 backend.
func BenchmarkShootXvfb1080(b *testing.B) {
	be, d := startX11(b, 1920, 1080)
	p := NewPipeline()
	o := Options{MaxLongEdge: 1280}
	for b.Loop() {
		if _, err := p.Shoot(context.Background(), be, d, geom.Rect{}, o, "b"); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Bench(context.Background(), be, d, o, 20)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.CaptureMS, "capture-ms")
	b.ReportMetric(r.ScaleMS, "scale-ms")
	b.ReportMetric(r.EncodeMS, "encode-ms")
	b.ReportMetric(r.TotalMS, "total-ms")
}
