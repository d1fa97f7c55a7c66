//go:build linux

package wayland_test

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// BenchmarkShoot1080 measures capture + scale + JPEG q75 (the imaging
// pipeline, max long edge 1280) of sway's 1920x1080 output (HEADLESS-2:
// 1920x1080 device pixels at scale 2, so the screenshot is its logical
// 960x540, the capture halved) through screencopy, and beside it, in the
// same run, the same work on a 1920x1080 Xvfb through the x11 backend (a
// 1920x1080 capture halved to 960x540) and `grim -o HEADLESS-2` writing the
// whole output (grim has no JPEG here: raw PPM, and PNG at level 1).
//
// The Wayland capture is split in three: the compositor's answer with the
// buffer format (offer), its frame (the wait for its next repaint and its
// copy into our shared memory: frame), and our conversion to RGBA (convert).
// Headless sway repaints on a 60 Hz timer: a capture asked for while a frame
// is pending (the one right after another) waits for the next tick, one
// asked for when the output is idle gets a repaint at once. So the Wayland
// figures come twice: shots 100 ms apart (wl-*: an agent's pace, a
// screenshot between actions) and back to back (wl-b2b-*: the compositor's
// refresh bounds them). Metrics are medians of 20 shots; ratio-x11 is the
// Wayland total (shots apart) over the X11 total.
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
	apart := shootSplit(b, be, d, o, 100*time.Millisecond)
	b2b := shootSplit(b, be, d, o, 0)

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
	// The same work on X11: a 1920x1080 capture halved to the Wayland
	// shot's image size (the logical 960x540 of the scale-2 output, which a
	// screenshot never exceeds).
	ox := o
	ox.MaxLongEdge = apart.size.W
	xr, err := imaging.Bench(ctx, xb, xds[0], ox, 20)
	if err != nil {
		b.Fatal(err)
	}
	if xr.Width != apart.size.W || xr.Height != apart.size.H {
		b.Fatalf("the X11 shot is %dx%d, the Wayland one %v", xr.Width, xr.Height, apart.size)
	}

	grimPPM := timeGrim(b, s, "-t", "ppm")
	grimPNG := timeGrim(b, s, "-t", "png", "-l", "1")

	apart.report(b, "wl-")
	b2b.report(b, "wl-b2b-")
	b.ReportMetric(xr.CaptureMS, "x11-capture-ms")
	b.ReportMetric(xr.ScaleMS+xr.EncodeMS, "x11-scale+encode-ms")
	b.ReportMetric(xr.TotalMS, "x11-total-ms")
	b.ReportMetric(grimPPM, "grim-ppm-ms")
	b.ReportMetric(grimPNG, "grim-png1-ms")
	b.ReportMetric(apart.total/xr.TotalMS, "ratio-x11")
}

// split is the medians of shots' parts, in ms, and their image size.
type split struct {
	offer, frame, convert, scaleEncode, total float64
	size                                      geom.Size
}

func (sp split) report(b *testing.B, prefix string) {
	b.ReportMetric(sp.offer, prefix+"offer-ms")
	b.ReportMetric(sp.frame, prefix+"frame-ms")
	b.ReportMetric(sp.convert, prefix+"convert-ms")
	b.ReportMetric(sp.scaleEncode, prefix+"scale+encode-ms")
	b.ReportMetric(sp.total, prefix+"total-ms")
}

// shootSplit takes 20 shots of d, gap apart, and returns the medians of
// their parts.
func shootSplit(b *testing.B, be *wayland.Backend, d geom.Display, o imaging.Options, gap time.Duration) split {
	b.Helper()
	p := imaging.NewPipeline()
	var parts [5][]float64
	var size geom.Size
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for range 20 {
		time.Sleep(gap)
		t0 := time.Now()
		shot, err := p.Shoot(context.Background(), be, d, d.Bounds, o, "b")
		if err != nil {
			b.Fatal(err)
		}
		total := time.Since(t0)
		size = shot.Frame.ImageSize()
		offer, frame, convert := be.LastCaptureTiming()
		for i, v := range []time.Duration{offer, frame, convert, shot.Timing.Scale + shot.Timing.Encode, total} {
			parts[i] = append(parts[i], ms(v))
		}
	}
	med := func(v []float64) float64 { sort.Float64s(v); return v[len(v)/2] }
	return split{med(parts[0]), med(parts[1]), med(parts[2]), med(parts[3]), med(parts[4]), size}
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

// BenchmarkClick measures one click through the backend alone (move, press,
// release: each waits for the compositor's answer to a sync) on sway and, in
// the same run, through the x11 backend on Xvfb: the backend's share of a
// gui_click round trip over MCP (e2e's BenchmarkClickRoundTrip). Metrics are
// medians of 200 clicks, alternating between two points, with the GTK
// fixture receiving them on sway (nothing on Xvfb: its server answers a
// sync without any client's help).
func BenchmarkClick(b *testing.B) {
	s := swaytest.Start(b)
	be := s.Open(b)
	app := s.StartApp(b)
	ctx := context.Background()
	click := func(sc desktop.Pointer, p geom.GlobalPoint) {
		if err := sc.MoveTo(ctx, p); err != nil {
			b.Fatal(err)
		}
		if err := sc.ButtonDown(ctx, desktop.Left); err != nil {
			b.Fatal(err)
		}
		if err := sc.ButtonUp(ctx, desktop.Left); err != nil {
			b.Fatal(err)
		}
	}
	median := func(sc desktop.Pointer) float64 {
		var ts []float64
		for i := range 200 {
			t0 := time.Now()
			click(sc, geom.GlobalPoint{X: 300 + 40*(i%2), Y: 300})
			ts = append(ts, float64(time.Since(t0).Microseconds())/1000)
		}
		sort.Float64s(ts)
		return ts[len(ts)/2]
	}
	for b.Loop() {
		click(be, geom.GlobalPoint{X: 300, Y: 300})
	}
	wl := median(be)
	app.Take()
	vd := xvfbtest.Start(b, 1280, 800)
	xb := x11.New(x11.Options{Display: vd.Display})
	if err := xb.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer xb.Close()
	b.ReportMetric(wl, "wl-click-ms")
	b.ReportMetric(median(xb), "x11-click-ms")
}
