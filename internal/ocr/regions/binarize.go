package regions

import (
	"image"
	"math"

	"github.com/guiagent/guiagent/internal/geom"
)

// minContrast is the smallest difference between the mean luminance of a
// crop's text and of its ground that is read at all.
const minContrast = 24

// normalize returns crop c of g with the text of line lay.Lines[self] black
// on white. Only the line's box is kept (the rest of the crop, where the
// frame of a field or list may be, is white), and in it rules and frames
// (and a pixel around them) and the parts of other lines are whited out. Otsu's threshold
// splits the kept pixels into two classes; the class of most pixels on the
// kept box's border is the ground (inverted tells whether it was the darker
// one); each pixel is stretched linearly from the text's mean (black) to the
// ground's (white), which keeps the anti-aliasing a recognizer reads best.
// ok is false without contrast.
func normalize(g *image.Gray, c geom.ImageRect, lay Layout, self int) (out *image.Gray, inverted, ok bool) {
	own := lay.Lines[self]
	// The edges of a glyph's left and top sides are marked on the ground
	// beside it, of its right and bottom sides on the glyph: one more
	// pixel right and down holds all of it.
	keep := geom.ImageRect{X: own.X, Y: own.Y, W: own.W + 1, H: own.H + 1}.Intersect(c)
	mask := make([]bool, c.W*c.H) // true: not read (outside keep, a rule, or another line's)
	for y := range c.H {
		for x := range c.W {
			mask[y*c.W+x] = !inside(keep, c.X+x, c.Y+y) || lay.rule(c.X+x, c.Y+y)
		}
	}
	for j, l := range lay.Lines {
		if o := l.Intersect(keep); j != self && !o.Empty() {
			for y := o.Y; y < o.Y+o.H; y++ {
				for x := o.X; x < o.X+o.W; x++ {
					if !inside(own, x, y) {
						mask[(y-c.Y)*c.W+x-c.X] = true
					}
				}
			}
		}
	}
	var hist [256]int
	var light, dark int // pixels of keep's border above and at or below the threshold
	for y := range c.H {
		row := g.Pix[(c.Y+y)*g.Stride+c.X:]
		for x := range c.W {
			if !mask[y*c.W+x] {
				hist[row[x]]++
			}
		}
	}
	t := otsu(hist)
	for y := keep.Y; y < keep.Y+keep.H; y++ {
		for x := keep.X; x < keep.X+keep.W; x++ {
			border := y == keep.Y || y == keep.Y+keep.H-1 || x == keep.X || x == keep.X+keep.W-1
			if !border || mask[(y-c.Y)*c.W+x-c.X] {
				continue
			}
			if int(g.Pix[y*g.Stride+x]) > t {
				light++
			} else {
				dark++
			}
		}
	}
	lo, hi := classMeans(hist, t)
	text, ground := lo, hi
	if dark > light {
		text, ground, inverted = hi, lo, true
	}
	if math.Abs(ground-text) < minContrast {
		return nil, false, false
	}
	out = image.NewGray(image.Rect(0, 0, c.W, c.H))
	k := 255 / (ground - text)
	for y := range c.H {
		row := g.Pix[(c.Y+y)*g.Stride+c.X:]
		dst := out.Pix[y*out.Stride:]
		for x := range c.W {
			if mask[y*c.W+x] {
				dst[x] = 255
				continue
			}
			dst[x] = uint8(min(max((float64(row[x])-text)*k, 0), 255))
		}
	}
	return out, inverted, true
}

func inside(r geom.ImageRect, x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.W && y < r.Y+r.H
}

// otsu returns the threshold t maximizing the between-class variance of the
// classes <= t and > t.
func otsu(hist [256]int) int {
	total, sum := 0, 0.0
	for v, n := range hist {
		total += n
		sum += float64(v * n)
	}
	best, bestVar := 127, -1.0
	w0, sum0 := 0, 0.0
	for t := range 255 {
		w0 += hist[t]
		sum0 += float64(t * hist[t])
		w1 := total - w0
		if w0 == 0 || w1 == 0 {
			continue
		}
		m0, m1 := sum0/float64(w0), (sum-sum0)/float64(w1)
		if v := float64(w0) * float64(w1) * (m0 - m1) * (m0 - m1); v > bestVar {
			best, bestVar = t, v
		}
	}
	return best
}

// classMeans returns the mean value of the pixels <= t and of those > t
// (t itself or t+1 for an empty class).
func classMeans(hist [256]int, t int) (lo, hi float64) {
	var n0, n1 int
	var s0, s1 float64
	for v, n := range hist {
		if v <= t {
			n0 += n
			s0 += float64(v * n)
		} else {
			n1 += n
			s1 += float64(v * n)
		}
	}
	lo, hi = float64(t), float64(t+1)
	if n0 > 0 {
		lo = s0 / float64(n0)
	}
	if n1 > 0 {
		hi = s1 / float64(n1)
	}
	return lo, hi
}

// scale returns img scaled by s (>= 1) with bilinear interpolation; s == 1
// returns img.
func scale(img *image.Gray, s float64) *image.Gray {
	if s <= 1 {
		return img
	}
	sw, sh := img.Rect.Dx(), img.Rect.Dy()
	dw, dh := max(1, int(math.Round(float64(sw)*s))), max(1, int(math.Round(float64(sh)*s)))
	out := image.NewGray(image.Rect(0, 0, dw, dh))
	xs := make([]int, dw) // left source column of each destination column
	fx := make([]float64, dw)
	for x := range dw {
		f := (float64(x)+0.5)/s - 0.5
		f = min(max(f, 0), float64(sw-1))
		xs[x] = min(int(f), sw-2)
		fx[x] = f - float64(xs[x])
		if sw == 1 {
			xs[x], fx[x] = 0, 0
		}
	}
	for y := range dh {
		f := (float64(y)+0.5)/s - 0.5
		f = min(max(f, 0), float64(sh-1))
		y0 := min(int(f), max(sh-2, 0))
		fy := f - float64(y0)
		y1 := min(y0+1, sh-1)
		r0, r1 := img.Pix[y0*img.Stride:], img.Pix[y1*img.Stride:]
		dst := out.Pix[y*out.Stride:]
		for x := range dw {
			x0 := xs[x]
			x1 := min(x0+1, sw-1)
			top := float64(r0[x0])*(1-fx[x]) + float64(r0[x1])*fx[x]
			bot := float64(r1[x0])*(1-fx[x]) + float64(r1[x1])*fx[x]
			dst[x] = uint8(top*(1-fy) + bot*fy + 0.5)
		}
	}
	return out
}
