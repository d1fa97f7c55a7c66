//go:build linux

package swaytest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"testing"
	"time"
)

// Grim runs grim with args (writing binary PPM to stdout, the fastest of its
// formats) and decodes its image: the oracle of what the compositor shows.
// grim leaves the cursor out, as the backend's captures do.
func (s *Sway) Grim(t testing.TB, args ...string) *image.RGBA {
	t.Helper()
	out := s.Run(t, nil, "grim", append(append([]string{"-t", "ppm"}, args...), "-")...)
	img, err := DecodePPM(out)
	if err != nil {
		t.Fatalf("decode grim's PPM: %v", err)
	}
	return img
}

// DecodePPM decodes a binary (P6) PPM of 8-bit samples.
func DecodePPM(b []byte) (*image.RGBA, error) {
	var w, h, maxv int
	vals := [3]*int{&w, &h, &maxv}
	if !bytes.HasPrefix(b, []byte("P6")) {
		return nil, fmt.Errorf("not a P6 PPM")
	}
	i := 2
	for fields := 0; fields < 3; fields++ {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == i {
			return nil, fmt.Errorf("bad PPM header")
		}
		if _, err := fmt.Sscan(string(b[i:j]), vals[fields]); err != nil {
			return nil, fmt.Errorf("bad PPM header: %v", err)
		}
		i = j
	}
	if i >= len(b) {
		return nil, fmt.Errorf("PPM header without pixels")
	}
	rest := b[i+1:]
	if maxv != 255 || len(rest) < w*h*3 {
		return nil, fmt.Errorf("PPM %dx%d max %d with %d bytes of pixels", w, h, maxv, len(rest))
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for k := range w * h {
		copy(img.Pix[4*k:], rest[3*k:3*k+3])
		img.Pix[4*k+3] = 255
	}
	return img, nil
}

// RingMismatch checks grim's pixels around r (layout logical pixels),
// waiting up to 5 s for the compositor to show it: the ring of pixels one
// logical pixel inside r is c, the ring one outside is not. It returns
// what is wrong, or "".
func (s *Sway) RingMismatch(t testing.TB, r Rect, c color.RGBA) string {
	t.Helper()
	var inside, outside int
	deadline := time.Now().Add(5 * time.Second)
	for {
		img := s.Grim(t, "-g", fmt.Sprintf("%d,%d %dx%d", r.X-2, r.Y-2, r.W+4, r.H+4))
		sc := img.Rect.Dx() / (r.W + 4) // device pixels per logical pixel
		at := func(x, y int) color.RGBA { return img.RGBAAt(x*sc+sc/2, y*sc+sc/2) }
		inside, outside = 0, 0
		for x := 1; x < r.W+3; x++ {
			for _, y := range []int{1, r.H + 2} {
				if at(x, y) == c {
					outside++
				}
			}
		}
		for y := 1; y < r.H+3; y++ {
			for _, x := range []int{1, r.W + 2} {
				if at(x, y) == c {
					outside++
				}
			}
		}
		for x := 3; x < r.W+1; x++ {
			for _, y := range []int{3, r.H} {
				if at(x, y) != c {
					inside++
				}
			}
		}
		for y := 3; y < r.H+1; y++ {
			for _, x := range []int{3, r.W} {
				if at(x, y) != c {
					inside++
				}
			}
		}
		if inside == 0 && outside == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%d pixels of the ring inside are not %v, %d of the ring outside are", inside, c, outside)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
