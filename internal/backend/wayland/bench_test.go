//go:build linux

package wayland_test

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// BenchmarkShoot1080 measures capture + scale to 1280 wide + JPEG q75 (the
// imaging pipeline, as BenchmarkShootXvfb1080 does for X11) of sway's
// 1920x1080 output (HEADLESS-2: 1920x1080 device pixels at scale 2) through
// screencopy, and beside it, in the same run, the same pipeline on a
// 1920x1080 Xvfb through the x11 backend and `grim -o HEADLESS-2` writing the
// whole output (grim has no JPEG here: raw PPM, and PNG at level 1). Metrics are medians of 20 shots; ratio-x11 is
// the Wayland total over the X11 total.
func BenchmarkShoot1080(b *testing.B) {
	s := swaytest.Start(b)
	be := s.Open(b)
	ctx := context.Background()
	ds, err := be.Displays(ctx)
	if err != nil {
		b.Fatal(err)
	}
	d := ds[1]
	if ps := d.PhysicalSize(); ps.W != 1920 || ps.H != 1080 {
		b.Fatalf("%s is %v device pixels, want 1920x1080", d.Name, ps)
	}
	o := imaging.Options{MaxLongEdge: 1280}
	p := imaging.NewPipeline()
	for b.Loop() {
		if _, err := p.Shoot(ctx, be, d, d.Bounds, o, "b"); err != nil {
			b.Fatal(err)
		}
	}
	wl, err := imaging.Bench(ctx, be, d, o, 20)
	if err != nil {
		b.Fatal(err)
	}

	vd := xvfbtest.Start(b, 1920, 1080)
	xb := x11.New(x11.Options{Display: vd.Display})
	if err := xb.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer xb.Close()
	xds, err := xb.Displays(ctx)
	if err != nil {
		b.Fatal(err)
	}
	xr, err := imaging.Bench(ctx, xb, xds[0], o, 20)
	if err != nil {
		b.Fatal(err)
	}

	grimPPM := timeGrim(b, s, "-t", "ppm")
	grimPNG := timeGrim(b, s, "-t", "png", "-l", "1")

	b.ReportMetric(wl.CaptureMS, "wl-capture-ms")
	b.ReportMetric(wl.ScaleMS+wl.EncodeMS, "wl-scale+encode-ms")
	b.ReportMetric(wl.TotalMS, "wl-total-ms")
	b.ReportMetric(xr.CaptureMS, "x11-capture-ms")
	b.ReportMetric(xr.ScaleMS+xr.EncodeMS, "x11-scale+encode-ms")
	b.ReportMetric(xr.TotalMS, "x11-total-ms")
	b.ReportMetric(grimPPM, "grim-ppm-ms")
	b.ReportMetric(grimPNG, "grim-png1-ms")
	b.ReportMetric(wl.TotalMS/xr.TotalMS, "ratio-x11")
}

// timeGrim returns the median time of 10 runs of grim -o HEADLESS-2 with args.
func timeGrim(b *testing.B, s *swaytest.Sway, args ...string) float64 {
	var ts []float64
	for range 10 {
		cmd := s.Command("grim", append(append([]string{"-o", swaytest.Output2}, args...), "-"))
		t0 := time.Now()
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("grim %v: %v", args, errText(err))
		}
		ts = append(ts, float64(time.Since(t0).Microseconds())/1000)
	}
	sort.Float64s(ts)
	return ts[len(ts)/2]
}

func errText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Error() + ": " + string(ee.Stderr)
	}
	if err == nil {
		return "no output"
	}
	return err.Error()
}
