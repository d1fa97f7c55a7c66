package imaging

import (
	"image"
	"testing"
)

// refScale is the plain two-pass separable resampler the fused SWAR scaler must
// reproduce exactly: a horizontal pass rounded to 8 bits per channel, then a
// vertical pass, both with newAxisWeights kernels.
func refScale(dst, src *image.RGBA) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := dst.Rect.Dx(), dst.Rect.Dy()
	h, v := newAxisWeights(sw, dw), newAxisWeights(sh, dh)
	mid := make([]int, sh*dw*4)
	for y := range sh {
		for x := range dw {
			for c := range 4 {
				acc := 0
				for k := range h.taps {
					acc += int(src.Pix[y*src.Stride+(int(h.start[x])+k)*4+c]) * int(h.w[x*h.taps+k])
				}
				if sw == dw {
					acc = int(src.Pix[y*src.Stride+x*4+c]) << 8
				}
				mid[(y*dw+x)*4+c] = (acc + 128) >> 8
			}
		}
	}
	for y := range dh {
		for x := range dw {
			for c := range 4 {
				acc := 0
				for k := range v.taps {
					acc += mid[((int(v.start[y])+k)*dw+x)*4+c] * int(v.w[y*v.taps+k])
				}
				if sh == dh {
					acc = mid[(y*dw+x)*4+c] << 8
				}
				dst.Pix[y*dst.Stride+x*4+c] = uint8((acc + 128) >> 8)
			}
		}
	}
}

// TestScaleMatchesTwoPassReference checks the fused, banded scaler against the
// reference for downscales, upscales, one-axis scales and odd sizes, into a
// sub-image of a larger canvas (as the pipeline does when it pads).
func TestScaleMatchesTwoPassReference(t *testing.T) {
	cases := []struct{ sw, sh, dw, dh int }{
		{1920, 1080, 1280, 720}, // the default 1080p case, 2 taps
		{3840, 2160, 1280, 720}, // 3:1, 4 taps
		{2560, 1600, 1366, 854}, // irregular ratio, 3 taps
		{1366, 768, 1366, 500},  // vertical only
		{1366, 768, 1000, 768},  // horizontal only
		{300, 200, 1000, 700},   // bilinear upscale (zoom)
		{7, 5, 3, 2},
		{5000, 3, 17, 1}, // more taps than the row array holds
		{1, 300, 1, 257},
	}
	var s scaler
	for _, c := range cases {
		src := busyScreen(c.sw, c.sh, 4)
		for i := range src.Pix { // make alpha and every channel vary
			src.Pix[i] ^= uint8(i * 2654435761 >> 11)
		}
		canvas := image.NewRGBA(image.Rect(0, 0, c.dw+3, c.dh+2))
		dst := canvas.SubImage(image.Rect(0, 0, c.dw, c.dh)).(*image.RGBA)
		want := image.NewRGBA(image.Rect(0, 0, c.dw, c.dh))
		s.Scale(dst, src)
		refScale(want, src)
		for y := range c.dh {
			for x := range c.dw {
				g, w := dst.RGBAAt(x, y), want.RGBAAt(x, y)
				if g != w {
					t.Fatalf("%dx%d to %dx%d: pixel (%d,%d) = %v, reference %v", c.sw, c.sh, c.dw, c.dh, x, y, g, w)
				}
			}
		}
		if canvas.Pix[(c.dw)*4] != 0 || canvas.Pix[c.dh*canvas.Stride] != 0 {
			t.Fatalf("%dx%d to %dx%d: wrote outside the destination rectangle", c.sw, c.sh, c.dw, c.dh)
		}
	}
}

// TestConvertRowPairMatchesFormula checks the table-driven colour conversion of
// the JPEG encoder against the float formulas it replaces, bit for bit.
func TestConvertRowPairMatchesFormula(t *testing.T) {
	m := busyScreen(16, 2, 3)
	for i := range m.Pix {
		m.Pix[i] ^= uint8(i * 2654435761 >> 9)
	}
	var yb [2][64]float32
	var cb, cr [64]float32
	convertRowPair(m.Pix, m.Stride, &yb[0], &yb[1], 16, &cb, &cr, 8)
	f := func(x, y, c int) float32 { return float32(m.Pix[y*m.Stride+x*4+c]) }
	for y := range 2 {
		for x := range 16 {
			want := 0.299*f(x, y, 0) + 0.587*f(x, y, 1) + 0.114*f(x, y, 2) - 128
			if got := yb[x/8][16+y*8+x%8]; got != want {
				t.Fatalf("Y(%d,%d) = %v, formula %v", x, y, got, want)
			}
		}
	}
	for x := range 8 {
		var wb, wr float32
		for y := range 2 {
			sr, sg, sb := (f(2*x, y, 0)+f(2*x+1, y, 0))*0.25, (f(2*x, y, 1)+f(2*x+1, y, 1))*0.25, (f(2*x, y, 2)+f(2*x+1, y, 2))*0.25
			wb += -0.168736*sr - 0.331264*sg + 0.5*sb
			wr += 0.5*sr - 0.418688*sg - 0.081312*sb
		}
		if cb[8+x] != wb || cr[8+x] != wr {
			t.Fatalf("chroma %d = %v/%v, formula %v/%v", x, cb[8+x], cr[8+x], wb, wr)
		}
	}
}

// TestAxisWeightsSumTo256 checks every kernel row sums to exactly 256 (so flat
// colours stay exact) for mild and extreme ratios; at about 87:1 to 102:1 and
// 130:1 to 170:1, rounding each of the many small weights up used to make the
// correction weight negative (it wrapped around).
func TestAxisWeightsSumTo256(t *testing.T) {
	for _, c := range [][2]int{{1920, 1280}, {1080, 720}, {7680, 80}, {2560, 16}, {1920, 16}, {16384, 17}, {300, 1000}, {5, 5}} {
		a := newAxisWeights(c[0], c[1])
		for i := range a.dstN {
			sum := 0
			for _, w := range a.w[i*a.taps : (i+1)*a.taps] {
				if w > 256 {
					t.Fatalf("%d to %d: output %d has weight %d", c[0], c[1], i, w)
				}
				sum += int(w)
			}
			if sum != 256 {
				t.Fatalf("%d to %d: output %d weights sum to %d", c[0], c[1], i, sum)
			}
		}
	}
	// A flat grey survives a 96:1 reduction.
	src := image.NewRGBA(image.Rect(0, 0, 7680, 4))
	for i := range src.Pix {
		src.Pix[i] = 77
	}
	dst := image.NewRGBA(image.Rect(0, 0, 80, 2))
	var s scaler
	s.Scale(dst, src)
	for i, v := range dst.Pix {
		if v != 77 {
			t.Fatalf("byte %d = %d after a 96:1 reduction of flat 77", i, v)
		}
	}
}
