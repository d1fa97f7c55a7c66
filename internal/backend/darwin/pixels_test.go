package darwin

import (
	"encoding/binary"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

// testColors is a 3x2 picture with distinct channel values.
var testColors = [][]color.RGBA{
	{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}},
	{{12, 34, 56, 255}, {200, 100, 50, 255}, {1, 128, 254, 255}},
}

// encode lays the test picture out as CoreGraphics would in layout l, with
// rows padded to stride bytes. put writes one pixel at b.
func encode(stride, bpp int, put func(b []byte, c color.RGBA)) []byte {
	h, w := len(testColors), len(testColors[0])
	buf := make([]byte, stride*h)
	for i := range buf {
		buf[i] = 0xEE // padding garbage that must not leak into the result
	}
	for y := range h {
		for x := range w {
			put(buf[y*stride+x*bpp:], testColors[y][x])
		}
	}
	return buf
}

func checkPicture(t *testing.T, name string, img *image.RGBA) {
	t.Helper()
	for y, row := range testColors {
		for x, want := range row {
			if got := img.RGBAAt(x, y); got != want {
				t.Errorf("%s: pixel (%d,%d) = %v, want %v", name, x, y, got, want)
			}
		}
	}
}

func TestConvertPixelsFormats(t *testing.T) {
	w, h := 3, 2
	ten := func(v uint8) uint32 { return uint32(v)<<2 | uint32(v)>>6 }
	cases := []struct {
		name   string
		layout pixelLayout
		stride int
		bpp    int
		put    func(b []byte, c color.RGBA)
	}{
		{"BGRA little-endian, skip first (usual display capture)", pixelLayout{32, 8, alphaSkipFirst | byteOrder32Little}, 16, 4,
			func(b []byte, c color.RGBA) { b[0], b[1], b[2], b[3] = c.B, c.G, c.R, 0 }},
		{"BGRA little-endian, premultiplied first", pixelLayout{32, 8, alphaPremFirst | byteOrder32Little}, 12, 4,
			func(b []byte, c color.RGBA) { b[0], b[1], b[2], b[3] = c.B, c.G, c.R, 255 }},
		{"RGBA big-endian, premultiplied last", pixelLayout{32, 8, alphaPremLast}, 12, 4,
			func(b []byte, c color.RGBA) { b[0], b[1], b[2], b[3] = c.R, c.G, c.B, 255 }},
		{"ARGB big-endian", pixelLayout{32, 8, alphaFirst | byteOrder32Big}, 20, 4,
			func(b []byte, c color.RGBA) { b[0], b[1], b[2], b[3] = 255, c.R, c.G, c.B }},
		{"XBGR little-endian, skip last", pixelLayout{32, 8, alphaSkipLast | byteOrder32Little}, 12, 4,
			func(b []byte, c color.RGBA) { b[0], b[1], b[2], b[3] = 0, c.B, c.G, c.R }},
		{"RGB 24-bit", pixelLayout{24, 8, alphaNone}, 12, 3,
			func(b []byte, c color.RGBA) { b[0], b[1], b[2] = c.R, c.G, c.B }},
		{"10-bit packed little-endian", pixelLayout{32, 10, alphaSkipFirst | byteOrder32Little | pixelFormatRGB101010}, 12, 4,
			func(b []byte, c color.RGBA) {
				binary.LittleEndian.PutUint32(b, 3<<30|ten(c.R)<<20|ten(c.G)<<10|ten(c.B))
			}},
		{"10-bit packed big-endian, skip last", pixelLayout{32, 10, alphaSkipLast | pixelFormatRGB101010}, 12, 4,
			func(b []byte, c color.RGBA) {
				binary.BigEndian.PutUint32(b, (ten(c.R)<<20|ten(c.G)<<10|ten(c.B))<<2|3)
			}},
	}
	for _, tc := range cases {
		src := encode(tc.stride, tc.bpp, tc.put)
		img := desktop.ReuseRGBA(nil, w, h)
		if err := convertPixels(img, src, w, h, tc.stride, tc.layout); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		checkPicture(t, tc.name, img)
	}
}

func TestConvertPixelsRejectsWhatItCannotRead(t *testing.T) {
	img := desktop.ReuseRGBA(nil, 3, 2)
	src := make([]byte, 64)
	cases := []struct {
		name   string
		layout pixelLayout
		src    []byte
		stride int
		want   string
	}{
		{"short buffer", pixelLayout{32, 8, alphaSkipFirst | byteOrder32Little}, src[:20], 12, "too few"},
		{"stride below width", pixelLayout{32, 8, alphaSkipFirst | byteOrder32Little}, src, 8, "too few"},
		{"half floats", pixelLayout{64, 16, alphaPremLast | floatComponents | byteOrder16Little}, make([]byte, 128), 24, "floating-point"},
		{"16-bit integers", pixelLayout{64, 16, alphaPremLast}, make([]byte, 128), 24, "unsupported pixel format"},
		{"alpha only", pixelLayout{32, 8, 7}, src, 12, "alpha"},
		{"16-bit byte order on 32-bit pixels", pixelLayout{32, 8, alphaSkipFirst | byteOrder16Little}, src, 12, "byte order"},
	}
	for _, tc := range cases {
		err := convertPixels(img, tc.src, 3, 2, tc.stride, tc.layout)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if err := convertPixels(desktop.ReuseRGBA(nil, 2, 2), src, 3, 2, 12, pixelLayout{32, 8, alphaSkipFirst}); err == nil {
		t.Error("a destination of the wrong size must be refused")
	}
}

func TestPrepareRGBAReusesBuffers(t *testing.T) {
	big := image.NewRGBA(image.Rect(0, 0, 100, 100))
	got := desktop.ReuseRGBA(big, 30, 20)
	if got != big || &got.Pix[0] != &big.Pix[0] || got.Bounds() != image.Rect(0, 0, 30, 20) || got.Stride != 120 || len(got.Pix) != 30*20*4 {
		t.Fatalf("reuse: bounds %v stride %d len %d", got.Bounds(), got.Stride, len(got.Pix))
	}
	if got := desktop.ReuseRGBA(image.NewRGBA(image.Rect(0, 0, 2, 2)), 30, 20); got.Bounds() != image.Rect(0, 0, 30, 20) {
		t.Fatalf("new image bounds %v", got.Bounds())
	}
}

// BenchmarkConvertRetina converts one full capture of a 1512x982-point Retina
// display (3024x1964 device pixels, BGRA little-endian).
func BenchmarkConvertRetina(b *testing.B) {
	w, h := 3024, 1964
	stride := w*4 + 64
	src := make([]byte, stride*h)
	for i := range src {
		src[i] = byte(i)
	}
	dst := desktop.ReuseRGBA(nil, w, h)
	l := pixelLayout{32, 8, alphaSkipFirst | byteOrder32Little}
	b.SetBytes(int64(w * h * 4))
	for b.Loop() {
		if err := convertPixels(dst, src, w, h, stride, l); err != nil {
			b.Fatal(err)
		}
	}
}
