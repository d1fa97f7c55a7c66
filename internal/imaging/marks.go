package imaging

import (
	"image"

	"github.com/guiagent/guiagent/internal/geom"
)

// Mark is one numbered mark of a set-of-marks image: an element's box in
// pixels of the image it is drawn on, and its label (the element's number;
// only the digits 0-9 are drawn, other characters are left out).
type Mark struct {
	Label string
	Box   geom.ImageRect
}

// ScreenMark is a Mark whose box is in global logical pixels, for
// Options.Marks: Shoot maps it onto the image through the shot's frame.
type ScreenMark struct {
	Label string
	Box   geom.Rect
}

// Sizes of a mark.
const (
	// MarkLine is the width in pixels of a mark's outline, drawn inside its box.
	MarkLine = 2
	// markScale is how many pixels wide one dot of the 3x5 digit font is.
	markScale = 2
	markPad   = 2 // pixels around the digits inside a label
)

// digits is a 3x5 bitmap font of the digits: each glyph is 5 rows of 3 bits,
// the high bit leftmost.
var digits = [10][5]uint8{
	{7, 5, 5, 5, 7}, // 0
	{2, 6, 2, 2, 7}, // 1
	{7, 1, 7, 4, 7}, // 2
	{7, 1, 7, 1, 7}, // 3
	{5, 5, 7, 1, 1}, // 4
	{7, 4, 7, 1, 7}, // 5
	{7, 4, 7, 5, 7}, // 6
	{7, 1, 1, 1, 1}, // 7
	{7, 5, 7, 5, 7}, // 8
	{7, 5, 7, 1, 7}, // 9
}

// markColours are the colours a mark may take: saturated (so a mark does not
// pass for a border of the application's own), far apart, each readable with
// white or black digits.
var markColours = [][3]uint8{
	{230, 25, 75}, // red
	{0, 90, 230},  // blue
	{0, 160, 60},  // green
	{200, 0, 200}, // magenta
	{255, 140, 0}, // orange
	{0, 190, 210}, // cyan
	{255, 230, 0}, // yellow
}

// DrawMarks draws marks onto img, whose pixels are those of a prepared frame
// (the marks' boxes are in its pixels): for each mark a thin outline
// (MarkLine pixels, inside the box) and a small filled label with the
// mark's number. A box is clipped to the image; one wholly outside is not
// drawn. The label sits outside the box (above it, else below, left, right)
// where it fits inside the image and clear of the box's centre and of the
// labels drawn before it, and inside the box's top-left corner only when
// nothing else fits. Each mark's colour is the one of a fixed palette that
// differs most from the pixels it is drawn over, and its digits are white or
// black, whichever reads better on it. No marks leave img unchanged.
func DrawMarks(img *image.RGBA, marks []Mark) {
	bounds := geom.ImageRect{X: img.Rect.Min.X, Y: img.Rect.Min.Y, W: img.Rect.Dx(), H: img.Rect.Dy()}
	boxes := make([]geom.ImageRect, len(marks))
	for i, m := range marks {
		boxes[i] = m.Box.Intersect(bounds)
	}
	var placed []geom.ImageRect
	for i, m := range marks {
		box := boxes[i]
		if box.Empty() {
			continue
		}
		text := labelDigits(m.Label)
		lw, lh := labelSize(len(text))
		label := placeLabel(box, lw, lh, bounds, placed, others(boxes, i))
		c := contrastColour(img, box, label)
		outline(img, box, c)
		if len(text) > 0 {
			drawLabel(img, label, text, c)
			placed = append(placed, label)
		}
	}
}

// labelDigits returns the digits of s, the characters the font draws.
func labelDigits(s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i]-'0')
		}
	}
	return out
}

// labelSize is the size of a label of n digits.
func labelSize(n int) (w, h int) {
	if n == 0 {
		return 0, 0
	}
	return 2*markPad + n*3*markScale + (n-1)*markScale, 2*markPad + 5*markScale
}

// others returns the boxes a label of boxes[i] had better not cover: the
// other marks' boxes, except those that hold boxes[i] (a window around its
// buttons).
func others(boxes []geom.ImageRect, i int) []geom.ImageRect {
	var out []geom.ImageRect
	for j, b := range boxes {
		if j != i && !b.Empty() && !boxes[i].In(b) {
			out = append(out, b)
		}
	}
	return out
}

// placeLabel chooses where a label of lw x lh goes for box: the first of the
// places around the box that lies inside bounds, leaves the box's centre
// free and overlaps no earlier label and none of avoid (the other marks'
// boxes); failing that, the first such place that may overlap avoid; failing
// that the first one, moved inside bounds, that leaves the centre free;
// failing that the box's top-left corner inside it.
func placeLabel(box geom.ImageRect, lw, lh int, bounds geom.ImageRect, placed, avoid []geom.ImageRect) geom.ImageRect {
	cands := []geom.ImageRect{
		{X: box.X, Y: box.Y - lh, W: lw, H: lh},              // above, left-aligned
		{X: box.X, Y: box.Y + box.H, W: lw, H: lh},           // below
		{X: box.X - lw, Y: box.Y, W: lw, H: lh},              // left, top-aligned
		{X: box.X + box.W, Y: box.Y, W: lw, H: lh},           // right
		{X: box.X + box.W - lw, Y: box.Y - lh, W: lw, H: lh}, // above, right-aligned
	}
	centre := box.Center()
	clear := func(r geom.ImageRect, of []geom.ImageRect) bool {
		for _, p := range of {
			if !r.Intersect(p).Empty() {
				return false
			}
		}
		return true
	}
	for _, strict := range []bool{true, false} {
		for _, c := range cands {
			if c.In(bounds) && !c.ContainsPoint(centre) && clear(c, placed) && (!strict || clear(c, avoid)) {
				return c
			}
		}
	}
	for _, c := range cands {
		if c = shiftInto(c, bounds); !c.ContainsPoint(centre) {
			return c
		}
	}
	return shiftInto(geom.ImageRect{X: box.X, Y: box.Y, W: lw, H: lh}, bounds)
}

// shiftInto moves r inside bounds without resizing it (its top-left stays
// inside when r is larger than bounds).
func shiftInto(r, bounds geom.ImageRect) geom.ImageRect {
	bx, by := bounds.Max()
	r.X = max(min(r.X, bx-r.W), bounds.X)
	r.Y = max(min(r.Y, by-r.H), bounds.Y)
	return r
}

// contrastColour picks the palette colour that best stands out from what
// the mark is seen against: the mean colours of the box's edge (where the
// outline goes), of a ring just inside and one just outside it (an element's
// box is often a little larger or smaller than what it paints), and of the
// label's place. The colour whose least distance to those means is greatest
// wins.
func contrastColour(img *image.RGBA, box, label geom.ImageRect) [3]uint8 {
	var means [][3]int
	for _, inset := range []int{0, MarkLine + 2, -2} {
		r := geom.ImageRect{X: box.X + inset, Y: box.Y + inset, W: box.W - 2*inset, H: box.H - 2*inset}
		if m, ok := ringMean(img, r); ok {
			means = append(means, m)
		}
	}
	if m, ok := areaMean(img, label); ok {
		means = append(means, m)
	}
	best, bestD := markColours[0], -1
	for _, c := range markColours {
		least := -1
		for _, m := range means {
			d := 0
			for k := range 3 {
				v := int(c[k]) - m[k]
				d += v * v
			}
			if least < 0 || d < least {
				least = d
			}
		}
		if least > bestD {
			best, bestD = c, least
		}
	}
	return best
}

// meanOf accumulates pixels of img (those outside it are skipped).
type meanOf struct {
	img *image.RGBA
	sum [3]int
	n   int
}

func (m *meanOf) add(x, y int) {
	if !image.Pt(x, y).In(m.img.Rect) {
		return
	}
	i := m.img.PixOffset(x, y)
	m.sum[0], m.sum[1], m.sum[2] = m.sum[0]+int(m.img.Pix[i]), m.sum[1]+int(m.img.Pix[i+1]), m.sum[2]+int(m.img.Pix[i+2])
	m.n++
}

func (m *meanOf) mean() ([3]int, bool) {
	if m.n == 0 {
		return [3]int{}, false
	}
	return [3]int{m.sum[0] / m.n, m.sum[1] / m.n, m.sum[2] / m.n}, true
}

// ringMean is the mean colour of r's border (sampled, about 256 points).
func ringMean(img *image.RGBA, r geom.ImageRect) ([3]int, bool) {
	if r.Empty() {
		return [3]int{}, false
	}
	m := &meanOf{img: img}
	x1, y1 := r.Max()
	step := max(1, (r.W+r.H)/128)
	for x := r.X; x < x1; x += step {
		m.add(x, r.Y)
		m.add(x, y1-1)
	}
	for y := r.Y; y < y1; y += step {
		m.add(r.X, y)
		m.add(x1-1, y)
	}
	return m.mean()
}

// areaMean is the mean colour of r (every third pixel each way).
func areaMean(img *image.RGBA, r geom.ImageRect) ([3]int, bool) {
	m := &meanOf{img: img}
	x1, y1 := r.Max()
	for y := r.Y; y < y1; y += 3 {
		for x := r.X; x < x1; x += 3 {
			m.add(x, y)
		}
	}
	return m.mean()
}

// outline draws box's border MarkLine pixels wide (thinner for a box too
// small for it), inside the box.
func outline(img *image.RGBA, box geom.ImageRect, c [3]uint8) {
	w := min(MarkLine, (box.W+1)/2, (box.H+1)/2)
	x1, y1 := box.Max()
	fill(img, geom.ImageRect{X: box.X, Y: box.Y, W: box.W, H: w}, c)
	fill(img, geom.ImageRect{X: box.X, Y: y1 - w, W: box.W, H: w}, c)
	fill(img, geom.ImageRect{X: box.X, Y: box.Y, W: w, H: box.H}, c)
	fill(img, geom.ImageRect{X: x1 - w, Y: box.Y, W: w, H: box.H}, c)
}

// drawLabel fills label with c and draws the digits on it.
func drawLabel(img *image.RGBA, label geom.ImageRect, text []byte, c [3]uint8) {
	fill(img, label, c)
	ink := [3]uint8{255, 255, 255}
	if 299*int(c[0])+587*int(c[1])+114*int(c[2]) > 150_000 { // a light colour: black digits
		ink = [3]uint8{0, 0, 0}
	}
	x := label.X + markPad
	for _, d := range text {
		for row, bits := range digits[d] {
			for col := range 3 {
				if bits&(4>>col) != 0 {
					fill(img, geom.ImageRect{X: x + col*markScale, Y: label.Y + markPad + row*markScale, W: markScale, H: markScale}, ink)
				}
			}
		}
		x += 4 * markScale
	}
}

// fill paints r (clipped to img) with c, opaque.
func fill(img *image.RGBA, r geom.ImageRect, c [3]uint8) {
	x0, y0 := max(r.X, img.Rect.Min.X), max(r.Y, img.Rect.Min.Y)
	x1, y1 := min(r.X+r.W, img.Rect.Max.X), min(r.Y+r.H, img.Rect.Max.Y)
	for y := y0; y < y1; y++ {
		i := img.PixOffset(x0, y)
		for x := x0; x < x1; x++ {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c[0], c[1], c[2], 255
			i += 4
		}
	}
}
