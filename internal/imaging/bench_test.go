package imaging

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// Targets (issue 2): capture + scale + encode of a busy 1920x1080 screen to a
// 1280-wide JPEG q75 under 20 ms median; 3840x2160 to 1920 wide under 80 ms.

func BenchmarkScale1080to1280(b *testing.B) {
	src := busyScreen(1920, 1080, 1)
	dst := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	var s scaler
	b.ReportAllocs()
	for b.Loop() {
		s.Scale(dst, src)
	}
}

func BenchmarkScale4Kto1920(b *testing.B) {
	src := busyScreen(3840, 2160, 1)
	dst := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	var s scaler
	b.ReportAllocs()
	for b.Loop() {
		s.Scale(dst, src)
	}
}

func BenchmarkEncodeJPEG1280(b *testing.B) {
	m := busyScreen(1280, 720, 1)
	var e jpegEncoder
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out, _ = e.Encode(out[:0], m, 75)
	}
	b.ReportMetric(float64(len(out)), "bytes")
}

// BenchmarkEncodeStdlibJPEG1280 is the baseline our encoder replaces.
func BenchmarkEncodeStdlibJPEG1280(b *testing.B) {
	m := busyScreen(1280, 720, 1)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		_ = jpeg.Encode(&buf, m, &jpeg.Options{Quality: 75})
	}
	b.ReportMetric(float64(buf.Len()), "bytes")
}

func benchShoot(b *testing.B, d geom.Display, o Options) {
	ps := d.PhysicalSize()
	s := newTestScreen(d, busyScreen(ps.W, ps.H, 1))
	p := NewPipeline()
	var shot *Shot
	var err error
	b.ReportAllocs()
	for b.Loop() {
		if shot, err = p.Shoot(context.Background(), s, d, geom.Rect{}, o, "b"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(shot.Data)), "bytes")
}

func BenchmarkShoot1080(b *testing.B) {
	benchShoot(b, geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}, Options{MaxLongEdge: 1280})
}

func BenchmarkShoot4K(b *testing.B) {
	benchShoot(b, geom.Display{ID: "0", Bounds: geom.Rect{W: 3840, H: 2160}}, Options{})
}

func BenchmarkShoot4KRetina(b *testing.B) {
	benchShoot(b, geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}, Scale: 2}, Options{})
}

// BenchmarkFindTemplate1080 searches a 1920x1080 screen for a 64x48 icon (a
// coarse pyramid level with 8x8 template phases, then refinement).
func BenchmarkFindTemplate1080(b *testing.B) {
	screen := busyScreen(1920, 1080, 5)
	icon := screen.SubImage(image.Rect(700, 400, 764, 448)).(*image.RGBA)
	b.ReportAllocs()
	for b.Loop() {
		if m := FindTemplate(screen, icon, 0.9, 5); len(m) == 0 {
			b.Fatal("icon not found")
		}
	}
}

// BenchmarkLiveFrameWithPointer is the dashboard's live frame: a busy
// 1920x1080 screen to a 1280-wide JPEG q60 with the pointer drawn, in one
// pass through the pipeline.
func BenchmarkLiveFrameWithPointer(b *testing.B) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}
	s := newTestScreen(d, busyScreen(1920, 1080, 1))
	p := NewPipeline()
	cur := geom.GlobalPoint{X: 700, Y: 400}
	o := Options{MaxLongEdge: 1280, Quality: 60, Pointer: &cur}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Shoot(context.Background(), s, d, geom.Rect{}, o, "live"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThumb1080 is one check of the agent's settle wait: capture and
// thumbnail, no scaling or encoding (compare BenchmarkShoot1080, what each
// check cost before).
func BenchmarkThumb1080(b *testing.B) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}
	s := newTestScreen(d, busyScreen(1920, 1080, 1))
	p := NewPipeline()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Thumb(context.Background(), s, d, geom.Rect{}); err != nil {
			b.Fatal(err)
		}
	}
}
