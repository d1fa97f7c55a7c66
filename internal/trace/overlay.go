package trace

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

var (
	colorOK     = color.RGBA{230, 20, 60, 255}   // actions that ran
	colorFailed = color.RGBA{255, 150, 0, 255}   // refused or failed actions
	colorHalo   = color.RGBA{255, 255, 255, 255} // outline so marks show on dark and light screens
	colorLabel  = color.RGBA{0, 0, 0, 210}       // label background
)

// maxLabelRunes caps the typed text shown in a label.
const maxLabelRunes = 48

// DrawOverlay returns a copy of img with every action drawn where it landed,
// using the actions' image-space points (ActionTrace.Image and ImageTo):
// corner brackets around a small dot for clicks, the dot alone for moves, an
// arrow for drags, an arrow in the scroll direction for scrolls and a
// rectangle for zooms. What was clicked stays readable: nothing is drawn over
// the point but the dot, and each action's number (its row in the report's
// action table) is a small tag beside its point, outside the brackets, never
// over another marked point or tag. Keyboard actions are numbered beside the
// last pointer position, or listed with their text at the top-left when
// there is none. Refused or failed actions are drawn in orange instead of
// red. An ask_user is not drawn: a question to a person has no place on the
// screen (the report shows it as a question and answer); the others keep
// their numbers in the step.
func DrawOverlay(img image.Image, actions []action.Trace) *image.RGBA {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
	o := &overlay{dst: dst, scale: 1}
	if b.Dx() >= 1600 || b.Dy() >= 1600 {
		o.scale = 2
	}
	o.keepClear(actions)
	var last *geom.ImagePoint
	legendY := 6
	for i, a := range actions {
		if !drawn(a.Action.Kind) {
			continue
		}
		c := colorOK
		if a.Outcome != "" && !a.OK() || a.Error != "" {
			c = colorFailed
		}
		num := fmt.Sprint(i + 1)
		switch {
		case a.Action.Kind == action.Drag && a.Image != nil && a.ImageTo != nil:
			o.arrow(*a.Image, *a.ImageTo, c)
			o.marker(*a.Image, c, false)
			o.beside(*a.Image, num, c)
			last = a.ImageTo
		case a.Action.Kind == action.Zoom && a.Image != nil && a.ImageTo != nil:
			o.rect(*a.Image, *a.ImageTo, c)
			o.beside(*a.Image, num, c)
		case a.Action.Kind == action.Scroll && a.Image != nil:
			dx, dy := scrollVector(string(a.Action.Direction))
			l := float64(36 * o.scale)
			o.marker(*a.Image, c, false)
			o.arrow(*a.Image, geom.ImagePoint{X: a.Image.X + dx*l, Y: a.Image.Y + dy*l}, c)
			o.beside(*a.Image, num, c)
			last = a.Image
		case a.Image != nil:
			o.marker(*a.Image, c, a.Action.Kind != action.Move)
			o.beside(*a.Image, num, c)
			last = a.Image
		case last != nil:
			o.beside(*last, num, c)
		default:
			o.labelAt(6, legendY, num+" "+overlayLabel(a.Action), c)
			legendY += 16 * o.scale
		}
	}
	return dst
}

// drawn reports whether an overlay shows actions of kind k.
func drawn(k action.Kind) bool { return k != action.AskUser }

// anyDrawn reports whether an overlay of acts would show any of them.
func anyDrawn(acts []action.Trace) bool {
	for _, a := range acts {
		if drawn(a.Action.Kind) {
			return true
		}
	}
	return false
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// asciiOnly replaces what basicfont cannot draw with '?'.
func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 32 || r > 126 {
			return '?'
		}
		return r
	}, s)
}

// overlayLabel is the text drawn beside an action: its Label, cut short and
// in ASCII (the overlay's font has no other glyphs).
func overlayLabel(a action.Action) string { return asciiOnly(truncateRunes(a.Label(), maxLabelRunes)) }

func scrollVector(dir string) (dx, dy float64) {
	switch strings.ToLower(dir) {
	case "up":
		return 0, -1
	case "left":
		return -1, 0
	case "right":
		return 1, 0
	default:
		return 0, 1
	}
}

type overlay struct {
	dst    *image.RGBA
	scale  int
	placed []image.Rectangle // labels drawn so far, kept apart
	marks  []image.Rectangle // the marked points with their brackets, which no label covers
}

// markRadius is the half size, in pixels at scale 1, of the brackets around
// a clicked point; labels keep outside it.
const markRadius = 12

// keepClear records every point the actions mark, so that no label is drawn
// over one, whichever action's label comes first.
func (o *overlay) keepClear(actions []action.Trace) {
	r := (markRadius + 2) * o.scale
	for _, a := range actions {
		if !drawn(a.Action.Kind) {
			continue
		}
		for _, p := range []*geom.ImagePoint{a.Image, a.ImageTo} {
			if p != nil && !math.IsNaN(p.X) && !math.IsNaN(p.Y) && math.Abs(p.X) < 1e9 && math.Abs(p.Y) < 1e9 {
				x, y := int(math.Round(p.X)), int(math.Round(p.Y))
				o.marks = append(o.marks, image.Rect(x-r, y-r, x+r+1, y+r+1))
			}
		}
	}
}

// dot fills a disc of radius r (pixels) at x,y.
func (o *overlay) dot(x, y float64, r int, c color.RGBA) {
	cx, cy := int(math.Round(x)), int(math.Round(y))
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			if dx*dx+dy*dy <= r*r {
				o.dst.SetRGBA(cx+dx, cy+dy, c)
			}
		}
	}
}

// line draws a thick line from a to b with a halo. Only the part of the line
// near the image is drawn, so its cost is bounded by the image's size however
// far off the image a or b lies.
func (o *overlay) line(ax, ay, bx, by float64, c color.RGBA) {
	pad := float64(o.scale + 2)
	b := o.dst.Bounds()
	box := [4]float64{float64(b.Min.X) - pad, float64(b.Min.Y) - pad, float64(b.Max.X) + pad, float64(b.Max.Y) + pad}
	var ok bool
	if ax, ay, bx, by, ok = clipSegment(ax, ay, bx, by, box); !ok {
		return
	}
	n := int(math.Max(math.Abs(bx-ax), math.Abs(by-ay))) + 1
	for pass, r := range []int{o.scale + 1, o.scale} {
		col := colorHalo
		if pass == 1 {
			col = c
		}
		for i := 0; i <= n; i++ {
			t := float64(i) / float64(n)
			o.dot(ax+(bx-ax)*t, ay+(by-ay)*t, r, col)
		}
	}
}

// clipSegment cuts the segment a-b to box {minX, minY, maxX, maxY}
// (Liang-Barsky); ok is false when no part of it lies in the box or a
// coordinate is not finite.
func clipSegment(ax, ay, bx, by float64, box [4]float64) (float64, float64, float64, float64, bool) {
	for _, v := range []float64{ax, ay, bx, by} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, 0, 0, false
		}
	}
	dx, dy := bx-ax, by-ay
	t0, t1 := 0.0, 1.0
	for _, e := range [4][2]float64{{-dx, ax - box[0]}, {dx, box[2] - ax}, {-dy, ay - box[1]}, {dy, box[3] - ay}} {
		p, q := e[0], e[1]
		if p == 0 {
			if q < 0 {
				return 0, 0, 0, 0, false
			}
			continue
		}
		r := q / p
		if p < 0 {
			t0 = max(t0, r)
		} else {
			t1 = min(t1, r)
		}
		if t0 > t1 {
			return 0, 0, 0, 0, false
		}
	}
	return ax + t0*dx, ay + t0*dy, ax + t1*dx, ay + t1*dy, true
}

// marker marks p with a small dot, and for clicks (brackets) four corner
// brackets around it, which leave the clicked text readable: the brackets
// lie above and below a line of text through p, and only the dot is on it.
func (o *overlay) marker(p geom.ImagePoint, c color.RGBA, brackets bool) {
	if brackets {
		r, arm := float64(markRadius*o.scale), float64(5*o.scale)
		for _, sx := range []float64{-1, 1} {
			for _, sy := range []float64{-1, 1} {
				cx, cy := p.X+sx*r, p.Y+sy*r
				o.line(cx, cy, cx-sx*arm, cy, c)
				o.line(cx, cy, cx, cy-sy*arm, c)
			}
		}
	}
	r := 2 + o.scale // big enough to keep its colour through JPEG, small enough to hide little
	o.dot(p.X, p.Y, r+1, colorHalo)
	o.dot(p.X, p.Y, r, c)
}

func (o *overlay) arrow(a, b geom.ImagePoint, c color.RGBA) {
	o.line(a.X, a.Y, b.X, b.Y, c)
	ang := math.Atan2(b.Y-a.Y, b.X-a.X)
	l := float64(12 * o.scale)
	for _, d := range []float64{math.Pi * 0.85, -math.Pi * 0.85} {
		o.line(b.X, b.Y, b.X+l*math.Cos(ang+d), b.Y+l*math.Sin(ang+d), c)
	}
}

func (o *overlay) rect(a, b geom.ImagePoint, c color.RGBA) {
	o.line(a.X, a.Y, b.X, a.Y, c)
	o.line(b.X, a.Y, b.X, b.Y, c)
	o.line(b.X, b.Y, a.X, b.Y, c)
	o.line(a.X, b.Y, a.X, a.Y, c)
}

// beside draws text (an action's number) in a small tag next to p, outside
// its brackets: the first place around p, nearest first, that lies inside
// the image and covers no marked point and no other label; below-right of p
// as a last resort.
func (o *overlay) beside(p geom.ImagePoint, text string, c color.RGBA) {
	b := o.dst.Bounds()
	// Clamped before the conversion: a float far beyond int's range has no int value.
	x := int(math.Round(min(max(p.X, 0), float64(b.Max.X))))
	y := int(math.Round(min(max(p.Y, 0), float64(b.Max.Y))))
	small := o.tag(text, c)
	w, h := small.Bounds().Dx()*o.scale, small.Bounds().Dy()*o.scale
	gap, in := (markRadius+3)*o.scale, 4*o.scale
	for ring := 0; ring < 5; ring++ {
		// Above and below first: a tag level with p would cover the line
		// of text that p is on.
		d := gap + ring*(h+2*o.scale)
		for _, at := range []image.Point{
			{x + in, y - d - h}, {x + in, y + d}, {x - in - w, y - d - h}, {x - in - w, y + d},
			{x + d, y - h/2}, {x - d - w, y - h/2},
		} {
			r := image.Rect(at.X, at.Y, at.X+w, at.Y+h)
			if r.In(b) && !o.covers(r) {
				o.put(r, small)
				return
			}
		}
	}
	o.labelAt(x+gap, y+gap/2, text, c)
}

// covers reports whether r overlaps a label drawn before or a marked point.
func (o *overlay) covers(r image.Rectangle) bool {
	for _, q := range append(o.placed[:len(o.placed):len(o.placed)], o.marks...) {
		if q.Overlaps(r) {
			return true
		}
	}
	return false
}

// free moves r down (or, at the bottom edge, up) in label-height steps until
// it overlaps no label drawn before, keeping it inside the image.
func (o *overlay) free(r image.Rectangle) image.Rectangle {
	h := r.Dy() + o.scale
	b := o.dst.Bounds()
	for _, dir := range []int{1, -1} {
		c := r
		for i := 0; i < 40; i++ {
			if c.Min.Y < 0 || c.Max.Y > b.Max.Y {
				break
			}
			clash := false
			for _, p := range o.placed {
				if p.Overlaps(c) {
					clash = true
					break
				}
			}
			if !clash {
				return c
			}
			c = c.Add(image.Pt(0, dir*h))
		}
	}
	return r
}

// tag renders text on a dark box with a colour bar, at scale 1.
func (o *overlay) tag(text string, c color.RGBA) *image.RGBA {
	face := basicfont.Face7x13
	w := font.MeasureString(face, text).Ceil() + 8
	h := 16
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(small, small.Bounds(), image.NewUniform(colorLabel), image.Point{}, draw.Src)
	draw.Draw(small, image.Rect(0, 0, 3, h), image.NewUniform(c), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(colorHalo), Face: face, Dot: fixed.P(5, 12)}
	d.DrawString(text)
	return small
}

// put draws a tag into r (its size times the scale) and keeps r clear of
// later labels.
func (o *overlay) put(r image.Rectangle, small *image.RGBA) {
	o.placed = append(o.placed, r)
	if o.scale == 1 {
		draw.Draw(o.dst, r, small, image.Point{}, draw.Over)
		return
	}
	xdraw.NearestNeighbor.Scale(o.dst, r, small, small.Bounds(), draw.Over, nil)
}

// labelAt draws text in a tag whose top-left is near x,y, kept inside the
// image and below (or above) the labels drawn before.
func (o *overlay) labelAt(x, y int, text string, c color.RGBA) {
	small := o.tag(text, c)
	sw, sh := small.Bounds().Dx()*o.scale, small.Bounds().Dy()*o.scale
	b := o.dst.Bounds()
	x = min(max(x, 0), max(b.Dx()-sw, 0))
	y = min(max(y, 0), max(b.Dy()-sh, 0))
	o.put(o.free(image.Rect(x, y, x+sw, y+sh)), small)
}
