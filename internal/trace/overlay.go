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
// using the actions' image-space points (ActionTrace.Image and ImageTo): a ring
// and crosshair with a numbered label for clicks and moves, an arrow for drags,
// an arrow in the scroll direction for scrolls, a rectangle for zooms, and a
// label with the typed text or keys for keyboard actions (placed at the last
// pointer position, or in a list at the top-left when there is none). Refused
// or failed actions are drawn in orange instead of red. An ask_user is not
// drawn: a question to a person has no place on the screen (the report shows
// it as a question and answer); the others keep their numbers in the step.
func DrawOverlay(img image.Image, actions []action.Trace) *image.RGBA {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
	o := &overlay{dst: dst, scale: 1}
	if b.Dx() >= 1600 || b.Dy() >= 1600 {
		o.scale = 2
	}
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
		label := fmt.Sprintf("%d %s", i+1, overlayLabel(a.Action))
		switch {
		case a.Action.Kind == action.Drag && a.Image != nil && a.ImageTo != nil:
			o.arrow(*a.Image, *a.ImageTo, c)
			o.marker(*a.Image, c, false)
			o.label(*a.Image, label, c)
			last = a.ImageTo
		case a.Action.Kind == action.Zoom && a.Image != nil && a.ImageTo != nil:
			o.rect(*a.Image, *a.ImageTo, c)
			o.label(*a.Image, label, c)
		case a.Action.Kind == action.Scroll && a.Image != nil:
			dx, dy := scrollVector(string(a.Action.Direction))
			l := float64(36 * o.scale)
			o.marker(*a.Image, c, false)
			o.arrow(*a.Image, geom.ImagePoint{X: a.Image.X + dx*l, Y: a.Image.Y + dy*l}, c)
			o.label(*a.Image, label, c)
			last = a.Image
		case a.Image != nil:
			o.marker(*a.Image, c, a.Action.Kind != action.Move)
			o.label(*a.Image, label, c)
			last = a.Image
		case last != nil:
			o.label(*last, label, c)
		default:
			o.labelAt(6, legendY, label, c)
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

func (o *overlay) marker(p geom.ImagePoint, c color.RGBA, ring bool) {
	r := float64(10 * o.scale)
	if ring {
		steps := 64
		for _, pass := range []struct {
			rad float64
			th  int
			col color.RGBA
		}{{r, o.scale + 1, colorHalo}, {r, o.scale, c}} {
			for i := 0; i < steps; i++ {
				t := 2 * math.Pi * float64(i) / float64(steps)
				o.dot(p.X+pass.rad*math.Cos(t), p.Y+pass.rad*math.Sin(t), pass.th, pass.col)
			}
		}
	}
	h := r * 0.6
	o.line(p.X-h, p.Y, p.X+h, p.Y, c)
	o.line(p.X, p.Y-h, p.X, p.Y+h, c)
	o.dot(p.X, p.Y, 2*o.scale+1, c)
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

// label draws text just below-right of p, kept inside the image.
func (o *overlay) label(p geom.ImagePoint, text string, c color.RGBA) {
	off := 14 * o.scale
	b := o.dst.Bounds()
	// Clamped before the conversion: a float far beyond int's range has no int value.
	x := int(math.Round(min(max(p.X, 0), float64(b.Max.X))))
	y := int(math.Round(min(max(p.Y, 0), float64(b.Max.Y))))
	o.labelAt(x+off, y+off/2, text, c)
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

// labelAt draws text on a dark box whose top-left is near x,y, with a colour bar.
func (o *overlay) labelAt(x, y int, text string, c color.RGBA) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, text).Ceil() + 8
	h := 16
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(small, small.Bounds(), image.NewUniform(colorLabel), image.Point{}, draw.Src)
	draw.Draw(small, image.Rect(0, 0, 3, h), image.NewUniform(c), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(colorHalo), Face: face, Dot: fixed.P(5, 12)}
	d.DrawString(text)
	sw, sh := w*o.scale, h*o.scale
	b := o.dst.Bounds()
	x = min(max(x, 0), max(b.Dx()-sw, 0))
	y = min(max(y, 0), max(b.Dy()-sh, 0))
	r := o.free(image.Rect(x, y, x+sw, y+sh))
	o.placed = append(o.placed, r)
	if o.scale == 1 {
		draw.Draw(o.dst, r, small, image.Point{}, draw.Over)
		return
	}
	xdraw.NearestNeighbor.Scale(o.dst, r, small, small.Bounds(), draw.Over, nil)
}
