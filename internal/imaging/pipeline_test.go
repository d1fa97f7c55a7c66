package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

var red = color.RGBA{230, 20, 20, 255}

// centroid returns the mean position (image pixels) of pixels near c.
func centroid(t *testing.T, img image.Image, c color.RGBA) geom.ImagePoint {
	t.Helper()
	var sx, sy, n float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(r>>8)-float64(c.R)) + math.Abs(float64(g>>8)-float64(c.G)) + math.Abs(float64(bb>>8)-float64(c.B))
			if d < 90 {
				sx, sy, n = sx+float64(x-b.Min.X), sy+float64(y-b.Min.Y), n+1
			}
		}
	}
	if n == 0 {
		t.Fatalf("no pixel of colour %v in the decoded screenshot", c)
	}
	return geom.ImagePoint{X: sx / n, Y: sy / n}
}

func flatScreen(d geom.Display) *image.RGBA {
	ps := d.PhysicalSize()
	fb := image.NewRGBA(image.Rect(0, 0, ps.W, ps.H))
	for i := 0; i < len(fb.Pix); i += 4 {
		fb.Pix[i], fb.Pix[i+1], fb.Pix[i+2], fb.Pix[i+3] = 200, 210, 220, 255
	}
	return fb
}

// TestShootMarkerResolvesToItsScreenPosition paints a red square at a known
// global position, shoots, finds the square in the decoded image and resolves
// its centre through the Frame: it must land on the square's centre.
func TestShootMarkerResolvesToItsScreenPosition(t *testing.T) {
	cases := []struct {
		name    string
		d       geom.Display
		profile string
		region  geom.Rect // zero = whole display
		marker  geom.Rect
		edge    int
	}{
		{"1080p scale1 default", geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}, Scale: 1}, "x", geom.Rect{}, geom.Rect{X: 1500, Y: 700, W: 40, H: 30}, 0},
		{"1080p to 1280 wide", geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}, "x", geom.Rect{}, geom.Rect{X: 300, Y: 900, W: 60, H: 40}, 1280},
		{"4k scale2", geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}, Scale: 2}, "x", geom.Rect{}, geom.Rect{X: 10, Y: 1000, W: 50, H: 50}, 0},
		{"negative origin scale1.25 anthropic", geom.Display{ID: "1", Bounds: geom.Rect{X: -1920, W: 1920, H: 1080}, Scale: 1.25}, "claude-sonnet-4-5", geom.Rect{}, geom.Rect{X: -400, Y: 100, W: 80, H: 40}, 0},
		{"above primary scale1.5 qwen pad", geom.Display{ID: "2", Bounds: geom.Rect{Y: -1080, W: 1920, H: 1080}, Scale: 1.5}, "qwen2.5-vl-72b-instruct", geom.Rect{}, geom.Rect{X: 1800, Y: -100, W: 60, H: 60}, 0},
		{"portrait ui-tars smart", geom.Display{ID: "0", Bounds: geom.Rect{W: 1080, H: 1920}}, "ui-tars-1.5-7b", geom.Rect{}, geom.Rect{X: 500, Y: 1700, W: 50, H: 50}, 0},
		{"1366x768 gemini", geom.Display{ID: "0", Bounds: geom.Rect{W: 1366, H: 768}}, "gemini-2.5-pro", geom.Rect{}, geom.Rect{X: 1300, Y: 20, W: 30, H: 30}, 0},
		{"zoom sub-region scaled up", geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}, "x", geom.Rect{X: 1000, Y: 500, W: 320, H: 200}, geom.Rect{X: 1100, Y: 560, W: 20, H: 10}, 0},
		{"zoom on negative display scale2", geom.Display{ID: "1", Bounds: geom.Rect{X: -1920, Y: -200, W: 1920, H: 1080}, Scale: 2}, "claude-opus-4", geom.Rect{X: -1000, Y: 0, W: 400, H: 300}, geom.Rect{X: -700, Y: 200, W: 16, H: 16}, 0},
	}
	p := NewPipeline()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fb := flatScreen(tc.d)
			fillLogical(fb, tc.d, tc.marker, red)
			s := newTestScreen(tc.d, fb)
			o := Options{Profile: geom.ProfileFor(tc.profile), MaxLongEdge: tc.edge}
			shot, err := p.Shoot(context.Background(), s, tc.d, tc.region, o, "f1")
			if err != nil {
				t.Fatal(err)
			}
			img, err := Decode(shot.Data)
			if err != nil {
				t.Fatal(err)
			}
			f := shot.Frame
			if got := (geom.Size{W: img.Bounds().Dx(), H: img.Bounds().Dy()}); got != f.ImageSize() {
				t.Fatalf("decoded image is %v but the frame says %v", got, f.ImageSize())
			}
			if f.ID != "f1" || f.Display.ID != tc.d.ID {
				t.Errorf("frame id/display = %q/%q", f.ID, f.Display.ID)
			}
			wantRegion := tc.region
			if wantRegion == (geom.Rect{}) {
				wantRegion = tc.d.Bounds
			}
			if f.Region != wantRegion {
				t.Errorf("frame region %v, want %v", f.Region, wantRegion)
			}
			if tc.region != (geom.Rect{}) {
				wc, wp := o.Profile.PrepareZoomSize(tc.region.Size(), o.WithDefaults().MaxLongEdge)
				if f.Content != wc || f.Prepared != wp || f.Content.LongEdge() <= tc.region.Size().LongEdge() {
					t.Errorf("zoom content/prepared %v/%v, want %v/%v scaled up from %v", f.Content, f.Prepared, wc, wp, tc.region.Size())
				}
			}
			ip := centroid(t, img, red)
			res, err := f.Resolve(ip, true)
			if err != nil {
				t.Fatalf("resolve %v: %v", ip, err)
			}
			// The centre of the marker's pixels [X, X+W) is X+(W-1)/2.
			wx, wy := float64(tc.marker.X)+float64(tc.marker.W-1)/2, float64(tc.marker.Y)+float64(tc.marker.H-1)/2
			tol := 1.0 + 0.5*float64(f.Region.W)/float64(f.Content.W)
			if math.Abs(float64(res.Global.X)-wx) > tol || math.Abs(float64(res.Global.Y)-wy) > tol {
				t.Errorf("marker centre resolved to %v, want (%.1f,%.1f) ±%.1f (image point %v, frame %+v)", res.Global, wx, wy, tol, ip, f)
			}
			if o.Profile.Resize == geom.ResizePad28 {
				if f.Prepared.W%28 != 0 || f.Prepared.H%28 != 0 {
					t.Errorf("padded frame %v is not a multiple of 28", f.Prepared)
				}
				if f.Prepared != f.Content {
					r, g, b, _ := img.At(f.Prepared.W-1, f.Prepared.H-1).RGBA()
					if r>>8 > 24 || g>>8 > 24 || b>>8 > 24 {
						t.Errorf("padding pixel is (%d,%d,%d), want black", r>>8, g>>8, b>>8)
					}
					if _, err := f.Resolve(geom.ImagePoint{X: float64(f.Prepared.W - 1), Y: 5}, false); !errors.Is(err, geom.ErrInPadding) {
						t.Errorf("a point in the padding resolved without ErrInPadding: %v", err)
					}
				}
			}
		})
	}
}

func TestShootPNGIsPixelExactWithoutScaling(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{X: 100, Y: 50, W: 1366, H: 768}}
	fb := busyScreen(1366, 768, 3)
	shot, err := NewPipeline().Shoot(context.Background(), newTestScreen(d, fb), d, geom.Rect{}, Options{Format: "png"}, "p")
	if err != nil {
		t.Fatal(err)
	}
	if shot.MIME != "image/png" || shot.Quality != 0 {
		t.Errorf("MIME %q quality %d, want image/png and 0", shot.MIME, shot.Quality)
	}
	img, err := Decode(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	got := ToRGBA(img)
	for y := 0; y < 768; y += 7 {
		for x := range 1366 {
			if got.RGBAAt(x, y) != fb.RGBAAt(x, y) {
				t.Fatalf("pixel (%d,%d) = %v, source %v", x, y, got.RGBAAt(x, y), fb.RGBAAt(x, y))
			}
		}
	}
}

func TestShootKeepsWithinByteBudget(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}
	fb := busyScreen(1920, 1080, 9)
	// Make it hard: noise over the whole screen.
	for i := range fb.Pix {
		if i%4 != 3 {
			fb.Pix[i] ^= uint8(i * 2654435761 >> 13)
		}
	}
	s := newTestScreen(d, fb)
	p := NewPipeline()
	full, err := p.Shoot(context.Background(), s, d, geom.Rect{}, Options{MaxBytes: 64 << 20}, "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{len(full.Data) * 3 / 4, len(full.Data) / 3, 60_000} {
		shot, err := p.Shoot(context.Background(), s, d, geom.Rect{}, Options{MaxBytes: budget}, "b")
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if len(shot.Data) > budget {
			t.Errorf("budget %d: got %d bytes", budget, len(shot.Data))
		}
		if shot.Quality >= DefaultQuality && shot.Frame.Content == full.Frame.Content {
			t.Errorf("budget %d: neither quality (%d) nor size (%v) was lowered", budget, shot.Quality, shot.Frame.Content)
		}
		if shot.Quality < MinQuality {
			t.Errorf("budget %d: quality %d below the floor %d", budget, shot.Quality, MinQuality)
		}
		img, err := Decode(shot.Data)
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds().Dx() != shot.Frame.ImageSize().W || img.Bounds().Dy() != shot.Frame.ImageSize().H {
			t.Errorf("budget %d: image %v does not match frame %v", budget, img.Bounds(), shot.Frame.ImageSize())
		}
	}
	if len(full.Data) > 150_000 {
		// The smallest budget must have shrunk the image, not only the quality.
		shot, _ := p.Shoot(context.Background(), s, d, geom.Rect{}, Options{MaxBytes: 60_000}, "c")
		if shot.Frame.Content.W >= 1920 {
			t.Errorf("60 kB budget kept the full width %v", shot.Frame.Content)
		}
	}
}

func TestShootErrors(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 640, H: 480}}
	s := newTestScreen(d, flatScreen(d))
	p := NewPipeline()
	ctx := context.Background()
	if _, err := p.Shoot(ctx, s, d, geom.Rect{X: 700, Y: 0, W: 10, H: 10}, Options{}, ""); !errors.Is(err, geom.ErrOutside) {
		t.Errorf("region off the display: err = %v, want ErrOutside", err)
	}
	if _, err := p.Shoot(ctx, s, d, geom.Rect{}, Options{Quality: 101}, ""); !errors.Is(err, ErrOptions) {
		t.Errorf("quality 101: err = %v, want ErrOptions", err)
	}
	s.fail = errors.New("X server went away")
	_, err := p.Shoot(ctx, s, d, geom.Rect{}, Options{}, "")
	if err == nil || !strings.Contains(err.Error(), "X server went away") || !strings.Contains(err.Error(), "test backend") {
		t.Errorf("capture failure: err = %v, want it wrapped with the backend name", err)
	}
	// A region partly off the display is clipped to it.
	s.fail = nil
	shot, err := p.Shoot(ctx, s, d, geom.Rect{X: 600, Y: 400, W: 100, H: 100}, Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if shot.Frame.Region != (geom.Rect{X: 600, Y: 400, W: 40, H: 80}) {
		t.Errorf("clipped region = %v", shot.Frame.Region)
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		o    Options
		want string // "" = valid
	}{
		{Options{}, ""},
		{Options{Format: "PNG"}, ""},
		{Options{Format: "jpg", Quality: 100, MaxLongEdge: 640, MaxBytes: 100_000}, ""},
		{Options{Format: "webp"}, "format"},
		{Options{Quality: -1}, "quality"},
		{Options{Quality: 101}, "quality"},
		{Options{MaxLongEdge: 8}, "long edge"},
		{Options{MaxLongEdge: -5}, "long edge"},
		{Options{MaxBytes: 100}, "max bytes"},
	}
	for _, tc := range cases {
		err := tc.o.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%+v: unexpected error %v", tc.o, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one about %q", tc.o, err, tc.want)
		}
	}
	if d := (Options{}).WithDefaults(); d.MaxLongEdge != 1920 || d.Quality != 75 || d.MaxBytes != 750_000 || d.Format != "jpeg" {
		t.Errorf("defaults = %+v", d)
	}
}

func TestShotDataIsAFreshSlice(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 320, H: 200}}
	fb := flatScreen(d)
	s := newTestScreen(d, fb)
	p := NewPipeline()
	a, err := p.Shoot(context.Background(), s, d, geom.Rect{}, Options{}, "a")
	if err != nil {
		t.Fatal(err)
	}
	keep := bytes.Clone(a.Data)
	fillLogical(fb, d, geom.Rect{W: 320, H: 200}, red)
	if _, err := p.Shoot(context.Background(), s, d, geom.Rect{}, Options{}, "b"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Data, keep) {
		t.Fatal("a later Shoot overwrote an earlier Shot's Data")
	}
}

func TestShootConcurrent(t *testing.T) {
	p := NewPipeline()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			d := geom.Display{ID: "0", Bounds: geom.Rect{W: 400 + 16*i, H: 300}}
			fb := flatScreen(d)
			m := geom.Rect{X: 20 * i, Y: 100, W: 30, H: 30}
			fillLogical(fb, d, m, red)
			for range 5 {
				shot, err := p.Shoot(context.Background(), newTestScreen(d, fb), d, geom.Rect{}, Options{}, "")
				if err != nil {
					errs <- err
					return
				}
				img, err := Decode(shot.Data)
				if err != nil {
					errs <- err
					return
				}
				if img.Bounds().Dx() != d.Bounds.W {
					errs <- fmt.Errorf("goroutine %d got a %d-wide image, want %d", i, img.Bounds().Dx(), d.Bounds.W)
					return
				}
				r, _, _, _ := img.At(m.X+15, m.Y+15).RGBA()
				if r>>8 < 180 {
					errs <- fmt.Errorf("goroutine %d: marker missing (r=%d): buffers shared between calls", i, r>>8)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestShootSteadyStateAllocatesOnlyTheResult checks buffer reuse: over 1000
// captures the heap does not grow and each call allocates about len(Data).
func TestShootSteadyStateAllocatesOnlyTheResult(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 480, H: 270}}
	s := newTestScreen(d, busyScreen(960, 540, 5))
	d.Scale = 2
	s.d = d
	p := NewPipeline()
	ctx := context.Background()
	shoot := func() *Shot {
		shot, err := p.Shoot(ctx, s, d, geom.Rect{}, Options{MaxLongEdge: 400}, "f")
		if err != nil {
			t.Fatal(err)
		}
		return shot
	}
	size := len(shoot().Data)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 1000 {
		shoot()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCall := float64(after.TotalAlloc-before.TotalAlloc) / 1000
	if limit := float64(size) + 8<<10; perCall > limit {
		t.Errorf("each Shoot allocated %.0f bytes, want at most %.0f (the %d-byte result plus small change)", perCall, limit, size)
	}
	if grow := int64(after.HeapInuse) - int64(before.HeapInuse); grow > 1<<20 {
		t.Errorf("heap grew by %d bytes over 1000 captures", grow)
	}
}

func TestJPEGEncoderMatchesStdlibQuality(t *testing.T) {
	for _, sz := range []image.Point{{1, 1}, {17, 9}, {333, 17}, {1283, 725}} {
		src := busyScreen(sz.X, sz.Y, 11)
		var e jpegEncoder
		mine, err := e.Encode(nil, src, 75)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := jpeg.Decode(bytes.NewReader(mine))
		if err != nil {
			t.Fatalf("%v: stdlib cannot decode our JPEG: %v", sz, err)
		}
		if dec.Bounds().Size() != sz {
			t.Fatalf("decoded size %v, want %v", dec.Bounds().Size(), sz)
		}
		var std bytes.Buffer
		if err := jpeg.Encode(&std, src, &jpeg.Options{Quality: 75}); err != nil {
			t.Fatal(err)
		}
		stdDec, _ := jpeg.Decode(bytes.NewReader(std.Bytes()))
		pm, ps := psnr(src, dec), psnr(src, stdDec)
		if pm < ps-0.5 {
			t.Errorf("%v: PSNR %.2f dB, stdlib %.2f dB", sz, pm, ps)
		}
		if sz.X > 100 && float64(len(mine)) > 1.1*float64(std.Len()) {
			t.Errorf("%v: %d bytes, stdlib %d", sz, len(mine), std.Len())
		}
		if sz.X > 1000 && pm < 28 {
			t.Errorf("%v: PSNR %.2f dB is too low for a UI screenshot at q75", sz, pm)
		}
	}
}

func psnr(a *image.RGBA, b image.Image) float64 {
	var se float64
	n := 0
	for y := 0; y < a.Rect.Dy(); y++ {
		for x := 0; x < a.Rect.Dx(); x++ {
			r, g, bb, _ := b.At(x, y).RGBA()
			o := a.PixOffset(x, y)
			for k, v := range []uint32{r >> 8, g >> 8, bb >> 8} {
				d := float64(a.Pix[o+k]) - float64(v)
				se += d * d
				n++
			}
		}
	}
	if se == 0 {
		return 99
	}
	return 10 * math.Log10(255*255/(se/float64(n)))
}

func TestScaleAveragesAndPreservesGeometry(t *testing.T) {
	// A 2x downscale of a checkerboard of 2x2 cells gives uniform grey.
	src := image.NewRGBA(image.Rect(0, 0, 64, 32))
	for y := range 32 {
		for x := range 64 {
			v := uint8(0)
			if (x+y)%2 == 0 {
				v = 200
			}
			src.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, 32, 16))
	var s scaler
	s.Scale(dst, src)
	for i := 0; i < len(dst.Pix); i += 4 {
		if d := int(dst.Pix[i]) - 100; d < -1 || d > 1 || dst.Pix[i+3] != 255 {
			t.Fatalf("pixel %d = %v, want grey 100 opaque", i/4, dst.Pix[i:i+4])
		}
	}
	// A 1.5x downscale and a 3x upscale keep a vertical edge at the mapped place.
	for _, dw := range []int{40, 180} {
		src := image.NewRGBA(image.Rect(0, 0, 60, 10))
		for y := range 10 {
			for x := range 60 {
				v := uint8(0)
				if x >= 30 {
					v = 255
				}
				src.SetRGBA(x, y, color.RGBA{v, v, v, 255})
			}
		}
		dst := image.NewRGBA(image.Rect(0, 0, dw, 10))
		s.Scale(dst, src)
		edge := dw / 2 // source x=30 maps to dw/2
		if dst.Pix[(edge-2)*4] > 10 || dst.Pix[(edge+1)*4] < 245 {
			t.Errorf("width %d: edge not at x=%d: %v %v", dw, edge, dst.Pix[(edge-2)*4], dst.Pix[(edge+1)*4])
		}
	}
}

func TestBenchReportsMedians(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 800, H: 600}}
	s := newTestScreen(d, busyScreen(800, 600, 1))
	r, err := Bench(context.Background(), s, d, Options{MaxLongEdge: 640}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 3 || r.Width != 640 || r.Height != 480 || r.Bytes <= 0 || r.TotalMS <= 0 || r.EncodeMS <= 0 {
		t.Errorf("report %+v", r)
	}
	if r.TotalMS+0.01 < r.EncodeMS {
		t.Errorf("total %.2f ms is less than encode %.2f ms", r.TotalMS, r.EncodeMS)
	}
	if got := s.captures.Load(); got != 4 {
		t.Errorf("%d captures, want 4 (one warm-up + n)", got)
	}
	if _, err := Bench(context.Background(), s, d, Options{}, 0); err == nil {
		t.Error("n=0 accepted")
	}
}

func TestScaleHalvesExactly(t *testing.T) {
	src := busyScreen(64, 32, 2)
	dst := image.NewRGBA(image.Rect(0, 0, 32, 16))
	var s scaler
	s.Scale(dst, src)
	for y := range 16 {
		for x := range 32 {
			for c := range 4 {
				sum := 0
				for _, p := range []image.Point{{2 * x, 2 * y}, {2*x + 1, 2 * y}, {2 * x, 2*y + 1}, {2*x + 1, 2*y + 1}} {
					sum += int(src.Pix[src.PixOffset(p.X, p.Y)+c])
				}
				if got, want := int(dst.Pix[dst.PixOffset(x, y)+c]), (sum+2)/4; got != want {
					t.Fatalf("(%d,%d) channel %d = %d, want %d", x, y, c, got, want)
				}
			}
		}
	}
}

// A profile whose size has a floor (UI-TARS 1.5 smart resize keeps at least
// 100*28*28 pixels) cannot shrink below it: an image over the byte budget at
// that floor fails with ErrTooLarge instead of re-encoding the same size forever.
func TestShootOverBudgetAtTheProfileSizeFloorFails(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 800, H: 600}}
	fb := busyScreen(800, 600, 3)
	for i := range fb.Pix { // noise: no format compresses it well
		if i%4 != 3 {
			fb.Pix[i] ^= uint8(i * 2654435761 >> 13)
		}
	}
	s := newTestScreen(d, fb)
	o := Options{Format: "png", MaxBytes: 32_768, Profile: geom.ProfileFor("ui-tars-1.5-7b")}
	done := make(chan error, 1)
	go func() {
		_, err := NewPipeline().Shoot(context.Background(), s, d, geom.Rect{}, o, "f")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "raise max_bytes") {
			t.Fatalf("Shoot = %v, want ErrTooLarge telling to raise max_bytes", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Shoot did not return within 20 s: it keeps re-encoding the same size")
	}
}

// The settle wait compares Pipeline.Thumb of bare captures with the Thumb of
// encoded shots: for the same screen they must be equal, whatever the sizing.
func TestThumbEqualsShotThumb(t *testing.T) {
	for _, d := range []geom.Display{
		{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}},
		{ID: "1", Bounds: geom.Rect{X: -1280, W: 1280, H: 800}, Scale: 2},
	} {
		ps := d.PhysicalSize()
		s := newTestScreen(d, busyScreen(ps.W, ps.H, 3))
		p := NewPipeline()
		for _, o := range []Options{{MaxLongEdge: 640}, {Profile: geom.ProfileFor("qwen2.5-vl-7b")}, {Format: "png", MaxLongEdge: 256}} {
			shot, err := p.Shoot(context.Background(), s, d, geom.Rect{}, o, "f")
			if err != nil {
				t.Fatal(err)
			}
			th, err := p.Thumb(context.Background(), s, d, geom.Rect{})
			if err != nil {
				t.Fatal(err)
			}
			if th != shot.Thumb {
				t.Errorf("display %s, options %+v: Thumb differs from the shot's (diff %g)", d.ID, o, Diff(th, shot.Thumb))
			}
		}
		other := newTestScreen(d, busyScreen(ps.W, ps.H, 4))
		th, _ := p.Thumb(context.Background(), other, d, geom.Rect{})
		shot, _ := p.Shoot(context.Background(), s, d, geom.Rect{}, Options{}, "f")
		if Diff(th, shot.Thumb) == 0 {
			t.Errorf("display %s: a different screen has the same thumbnail", d.ID)
		}
	}
}
