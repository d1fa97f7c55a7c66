// Package regions finds the lines of text on a screenshot and prepares each
// for a recognizer that wants dark text on a light ground at a comfortable
// size (Tesseract): a line's crop is binarized in its own polarity (white
// labels on a saturated button and light text of a dark mode come out black
// on white), scaled up to a common text height, and the crops are stacked
// into sheets whose placements map every box read on them back to the
// screenshot's pixels.
//
// Finding lines: a luminance map, edges where neighbouring pixels differ by
// at least Options.Contrast, connected components of the edges, without the
// frames of buttons and fields (hollow components wider than text or larger
// than a glyph) and lines, grouped left to right into lines of text by
// vertical overlap and horizontal gap. Pure: the standard library and geom.
package regions

import (
	"cmp"
	"image"
	"image/color"
	"slices"

	"github.com/guiagent/guiagent/internal/geom"
)

// Options tunes finding and preparing. Zero fields take the defaults.
type Options struct {
	// Contrast is the smallest luminance step (0-255) between two
	// neighbouring pixels that counts as an edge of a glyph; default 40.
	Contrast int
	// MinHeight and MaxHeight bound a line's height in image pixels;
	// defaults 6 and 120.
	MinHeight, MaxHeight int
	// TargetHeight is the height, in sheet pixels, each line of at most half
	// of it is scaled to (never down); a taller line is scaled to 5/6 of it.
	// Default 24 (so 20 for lines over 12 pixels). Tesseract scales each
	// line to its network's height (36) itself: more costs time in its
	// outline finding and gains nothing; less loses the case of capitals
	// and the colons of small labels.
	TargetHeight int
	// MaxScale bounds the scaling up; default 4.
	MaxScale float64
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.Contrast <= 0 {
		o.Contrast = 40
	}
	if o.MinHeight <= 0 {
		o.MinHeight = 6
	}
	if o.MaxHeight <= 0 {
		o.MaxHeight = 120
	}
	if o.TargetHeight <= 0 {
		o.TargetHeight = 24
	}
	if o.MaxScale <= 0 {
		o.MaxScale = 4
	}
	return o
}

// Luma returns the luminance (Rec. 601) of region r of img, pixels measured
// from img.Bounds().Min; the result's Rect is r's size at the origin.
func Luma(img image.Image, r geom.ImageRect) *image.Gray {
	g := image.NewGray(image.Rect(0, 0, r.W, r.H))
	b := img.Bounds()
	x0, y0 := b.Min.X+r.X, b.Min.Y+r.Y
	if rgba, ok := img.(*image.RGBA); ok {
		for y := range r.H {
			src := rgba.Pix[rgba.PixOffset(x0, y0+y):]
			dst := g.Pix[y*g.Stride : y*g.Stride+r.W]
			for x := range dst {
				p := src[4*x : 4*x+3 : 4*x+3]
				dst[x] = uint8((299*uint32(p[0]) + 587*uint32(p[1]) + 114*uint32(p[2]) + 500) / 1000)
			}
		}
		return g
	}
	for y := range r.H {
		for x := range r.W {
			g.Pix[y*g.Stride+x] = color.GrayModel.Convert(img.At(x0+x, y0+y)).(color.Gray).Y
		}
	}
	return g
}

// Layout is what Find found on a luminance map.
type Layout struct {
	// Lines are the boxes of the lines of text (pixels of the map), tight
	// around their glyphs, top to bottom.
	Lines []geom.ImageRect
	// rules marks the pixels of rules and frames (edge pixels), which
	// Prepare whites out of the crops; w is the map's width.
	rules []bool
	w     int
}

// rule reports whether pixel (x, y) or one of its 8 neighbours is part of a
// rule or frame.
func (l Layout) rule(x, y int) bool {
	if l.rules == nil {
		return false
	}
	h := len(l.rules) / l.w
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if xx, yy := x+dx, y+dy; xx >= 0 && yy >= 0 && xx < l.w && yy < h && l.rules[yy*l.w+xx] {
				return true
			}
		}
	}
	return false
}

// Find finds the lines of text of g.
func Find(g *image.Gray, o Options) Layout {
	o = o.WithDefaults()
	w, h := g.Rect.Dx(), g.Rect.Dy()
	if w < 2 || h < 2 {
		return Layout{}
	}
	e := edges(g, o.Contrast)
	rules := removeRules(e, w, h)
	removeThinLines(e, rules, w, h)
	comps, runs := components(e, w, h)
	keep := make([]bool, len(comps))
	var cands []comp
	for i, c := range comps {
		switch kind(c, o) {
		case glyph:
			keep[i] = true
			cands = append(cands, c)
		case rule:
			for _, r := range runs {
				if r.comp == i {
					for x := r.x0; x < r.x1; x++ {
						rules[r.y*w+x] = true
					}
				}
			}
		}
	}
	lines := group(cands)
	out := make([]geom.ImageRect, 0, len(lines))
	for _, l := range lines {
		r := geom.ImageRect{X: l.x0, Y: l.y0, W: l.x1 - l.x0, H: l.y1 - l.y0}
		if r.H >= o.MinHeight && r.H <= o.MaxHeight && r.W >= 4 {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b geom.ImageRect) int { return cmp.Or(cmp.Compare(a.Y, b.Y), cmp.Compare(a.X, b.X)) })
	return Layout{Lines: out, rules: rules, w: w}
}

// edges marks each pixel that differs by at least contrast from its right or
// lower neighbour: one pixel per step, so a glyph two pixels from a frame
// stays apart from it.
func edges(g *image.Gray, contrast int) []bool {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	e := make([]bool, w*h)
	for y := range h {
		row := g.Pix[y*g.Stride : y*g.Stride+w]
		var next []uint8
		if y+1 < h {
			next = g.Pix[(y+1)*g.Stride : (y+1)*g.Stride+w]
		}
		out := e[y*w : (y+1)*w]
		for x := range w {
			v := int(row[x])
			if x+1 < w && absDiff(v, int(row[x+1])) >= contrast {
				out[x] = true
			} else if next != nil && absDiff(v, int(next[x])) >= contrast {
				out[x] = true
			}
		}
	}
	return e
}

// The shortest horizontal and vertical runs of edge pixels taken for rules
// (the sides of fields, lists and panels) rather than parts of glyphs.
const (
	hRule = 40
	vRule = 48
)

// removeRules clears runs of edge pixels at least hRule long along a row or
// vRule down a column: the frame of a list or field that text touches then no
// longer joins the text into one component. It returns the cleared pixels.
func removeRules(e []bool, w, h int) []bool {
	rules := make([]bool, w*h)
	var vertical []int // pixels of vertical runs, cleared after the rows were scanned on the original map
	for x := range w {
		for y := 0; y < h; {
			if !e[y*w+x] {
				y++
				continue
			}
			y0 := y
			for y < h && e[y*w+x] {
				y++
			}
			if y-y0 >= vRule {
				for k := y0; k < y; k++ {
					vertical = append(vertical, k*w+x)
				}
			}
		}
	}
	for y := range h {
		row := e[y*w : (y+1)*w]
		for x := 0; x < w; {
			if !row[x] {
				x++
				continue
			}
			x0 := x
			for x < w && row[x] {
				x++
			}
			if x-x0 >= hRule {
				clear(row[x0:x])
				for k := x0; k < x; k++ {
					rules[y*w+k] = true
				}
			}
		}
	}
	for _, i := range vertical {
		e[i] = false
		rules[i] = true
	}
	return rules
}

// thinLine is the shortest one-pixel line removeThinLines takes for a rule.
const thinLine = 15

// removeThinLines clears the edges of one-pixel lines at least thinLine
// long that meet a rule at one end (the side of a field that text comes
// within a pixel of, whose top or bottom removeRules took), marking them in
// rules. Such a line leaves two adjacent columns (rows) of edge pixels, the
// ground beside it and the line, with no edge pixels next to them for at
// least half their length (text a pixel away touches the rest). The stem of
// a bold "l" looks the same, but meets no rule.
func removeThinLines(e, rules []bool, w, h int) {
	at := func(x, y int) bool { return x >= 0 && y >= 0 && x < w && y < h && e[y*w+x] }
	nearRule := func(x, y int) bool {
		for dy := -2; dy <= 2; dy++ {
			for dx := -2; dx <= 2; dx++ {
				if xx, yy := x+dx, y+dy; xx >= 0 && yy >= 0 && xx < w && yy < h && rules[yy*w+xx] {
					return true
				}
			}
		}
		return false
	}
	mark := func(idx int) { e[idx], rules[idx] = false, true }
	for x := 1; x < w; x++ { // a line in column x: edges in columns x-1 and x
		for y := 0; y < h; {
			if !(at(x-1, y) && at(x, y)) {
				y++
				continue
			}
			y0, crowded := y, 0
			for y < h && at(x-1, y) && at(x, y) {
				if at(x-2, y) || at(x+1, y) {
					crowded++
				}
				y++
			}
			if y-y0 >= thinLine && crowded*2 <= y-y0 && (nearRule(x, y0-1) || nearRule(x, y)) {
				for k := y0; k < y; k++ {
					mark(k*w + x - 1)
					mark(k*w + x)
				}
			}
		}
	}
	for y := 1; y < h; y++ { // a line in row y: edges in rows y-1 and y
		for x := 0; x < w; {
			if !(at(x, y-1) && at(x, y)) {
				x++
				continue
			}
			x0, crowded := x, 0
			for x < w && at(x, y-1) && at(x, y) {
				if at(x, y-2) || at(x, y+1) {
					crowded++
				}
				x++
			}
			if x-x0 >= thinLine && crowded*2 <= x-x0 && (nearRule(x0-1, y) || nearRule(x, y)) {
				for k := x0; k < x; k++ {
					mark((y-1)*w + k)
					mark(y*w + k)
				}
			}
		}
	}
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}
