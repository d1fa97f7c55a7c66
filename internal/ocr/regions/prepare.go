package regions

import (
	"image"
	"math"

	"github.com/guiagent/guiagent/internal/geom"
)

// Placement is where one line's crop went on a sheet.
type Placement struct {
	// Line is the line's tight box and Crop the padded part of the source
	// that was placed, in the source's pixels (those Lines was given).
	Line, Crop geom.ImageRect
	// Dst is where the scaled crop lies on the sheet.
	Dst image.Rectangle
	// Scale is sheet pixels per source pixel.
	Scale float64
	// Inverted is set when the text was lighter than its ground.
	Inverted bool
}

// Sheet is one image for the recognizer: crops stacked top to bottom, dark
// text on white, with white space between them.
type Sheet struct {
	Image  *image.Gray
	Places []Placement
}

// sheetMargin is the white border of a sheet around its crops, in sheet pixels.
const sheetMargin = 12

// crop is one line's prepared crop and where it came from.
type crop struct {
	img *image.Gray
	pl  Placement
}

// prepareCrop crops line i of lay with some padding, binarizes it in its
// own polarity and scales it up to o.TargetHeight (o has its defaults).
func prepareCrop(g *image.Gray, lay Layout, i int, o Options) (crop, bool) {
	l := lay.Lines[i]
	bounds := geom.ImageRect{W: g.Rect.Dx(), H: g.Rect.Dy()}
	pad := min(max(2, l.H/3), 12)
	c := geom.ImageRect{X: l.X - pad, Y: l.Y - pad, W: l.W + 2*pad, H: l.H + 2*pad}.Intersect(bounds)
	norm, inverted, ok := normalize(g, c, lay, i)
	if !ok {
		return crop{}, false
	}
	s := min(o.MaxScale, max(1, float64(targetHeight(l.H, o))/float64(l.H)))
	return crop{scale(norm, s), Placement{Line: l, Crop: c, Scale: s, Inverted: inverted}}, true
}

// targetHeight is the height a line h pixels high is scaled to: o's
// TargetHeight for small text, of at most half of it, whose colons and
// capitals need the room; 5/6 of it for taller text, which reads as well
// and costs Tesseract less.
func targetHeight(h int, o Options) int {
	if h <= o.TargetHeight/2 {
		return o.TargetHeight
	}
	return o.TargetHeight * 5 / 6
}

// PrepareLine prepares line i of lay (from Find on g) alone: its crop with
// some padding, binarized in its own polarity (a line lighter than its
// ground is inverted) and scaled up to o.TargetHeight, on a sheet of its
// own with a white margin. ok is false for a line without contrast to its
// ground.
func PrepareLine(g *image.Gray, lay Layout, i int, o Options) (sh Sheet, ok bool) {
	c, ok := prepareCrop(g, lay, i, o.WithDefaults())
	if !ok {
		return Sheet{}, false
	}
	return stack([]crop{c}, 0), true
}

// Prepare prepares each line of g (lay, from Find) as PrepareLine does and
// stacks the crops into at most n sheets of about equal area, in the order
// given. A line without contrast to its ground is left out.
func Prepare(g *image.Gray, lay Layout, o Options, n int) []Sheet {
	o = o.WithDefaults()
	var crops []crop
	total := 0
	for i := range lay.Lines {
		c, ok := prepareCrop(g, lay, i, o)
		if !ok {
			continue
		}
		crops = append(crops, c)
		total += c.img.Rect.Dx() * c.img.Rect.Dy()
	}
	if len(crops) == 0 {
		return nil
	}
	gap := max(12, o.TargetHeight/2)
	n = max(1, min(n, len(crops)))
	per := total / n
	var sheets []Sheet
	for start := 0; start < len(crops); { // sheets of about equal area: recognition costs by the text's length
		end, area := start, 0
		for end < len(crops) && (end == start || area < per || len(sheets) == n-1) {
			area += crops[end].img.Rect.Dx() * crops[end].img.Rect.Dy()
			end++
		}
		sheets = append(sheets, stack(crops[start:end], gap))
		start = end
	}
	return sheets
}

// stack places crops top to bottom on one white sheet, gap sheet pixels apart.
func stack(crops []crop, gap int) Sheet {
	width, h := 0, 0
	for _, c := range crops {
		width = max(width, c.img.Rect.Dx())
		h += c.img.Rect.Dy()
	}
	sh := image.NewGray(image.Rect(0, 0, width+2*sheetMargin, h+(len(crops)-1)*gap+2*sheetMargin))
	for i := range sh.Pix {
		sh.Pix[i] = 255
	}
	sheet := Sheet{Image: sh}
	y := sheetMargin
	for _, c := range crops {
		dst := image.Rect(sheetMargin, y, sheetMargin+c.img.Rect.Dx(), y+c.img.Rect.Dy())
		for row := range c.img.Rect.Dy() {
			copy(sh.Pix[(dst.Min.Y+row)*sh.Stride+dst.Min.X:], c.img.Pix[row*c.img.Stride:row*c.img.Stride+c.img.Rect.Dx()])
		}
		c.pl.Dst = dst
		sheet.Places = append(sheet.Places, c.pl)
		y = dst.Max.Y + gap
	}
	return sheet
}

// Map maps box r of the sheet (a word the recognizer read) back to the
// source's pixels: the placement whose band (its crop and half the space
// around it) holds r's vertical centre, and r scaled into its crop. ok is
// false for a box on no placement.
func (s Sheet) Map(r image.Rectangle) (place int, box geom.ImageRect, ok bool) {
	cy := (r.Min.Y + r.Max.Y) / 2
	for i, p := range s.Places {
		top, bottom := 0, s.Image.Rect.Dy()
		if i > 0 {
			top = (s.Places[i-1].Dst.Max.Y + p.Dst.Min.Y) / 2
		}
		if i+1 < len(s.Places) {
			bottom = (p.Dst.Max.Y + s.Places[i+1].Dst.Min.Y) / 2
		}
		if cy < top || cy >= bottom {
			continue
		}
		c := p.Crop
		back := func(v, origin int, floor bool) float64 {
			f := float64(v-origin) / p.Scale
			if floor {
				return math.Floor(f)
			}
			return math.Ceil(f)
		}
		x0 := clamp(c.X+int(back(r.Min.X, p.Dst.Min.X, true)), c.X, c.X+c.W)
		y0 := clamp(c.Y+int(back(r.Min.Y, p.Dst.Min.Y, true)), c.Y, c.Y+c.H)
		x1 := clamp(c.X+int(back(r.Max.X, p.Dst.Min.X, false)), c.X, c.X+c.W)
		y1 := clamp(c.Y+int(back(r.Max.Y, p.Dst.Min.Y, false)), c.Y, c.Y+c.H)
		if x1 <= x0 || y1 <= y0 {
			return i, geom.ImageRect{}, false
		}
		return i, geom.ImageRect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}, true
	}
	return -1, geom.ImageRect{}, false
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }
