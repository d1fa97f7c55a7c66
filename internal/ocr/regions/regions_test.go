package regions

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// canvas is a test screen: a light grey ground with widgets drawn on it.
type canvas struct{ img *image.RGBA }

func newCanvas(w, h int) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{0xec, 0xec, 0xec, 255}), image.Point{}, draw.Src)
	return &canvas{img}
}

func (c *canvas) fill(r geom.ImageRect, col color.RGBA) {
	draw.Draw(c.img, image.Rect(r.X, r.Y, r.X+r.W, r.Y+r.H), image.NewUniform(col), image.Point{}, draw.Src)
}

// outline draws a one-pixel frame along r's inside.
func (c *canvas) outline(r geom.ImageRect, col color.RGBA) {
	c.fill(geom.ImageRect{X: r.X, Y: r.Y, W: r.W, H: 1}, col)
	c.fill(geom.ImageRect{X: r.X, Y: r.Y + r.H - 1, W: r.W, H: 1}, col)
	c.fill(geom.ImageRect{X: r.X, Y: r.Y, W: 1, H: r.H}, col)
	c.fill(geom.ImageRect{X: r.X + r.W - 1, Y: r.Y, W: 1, H: r.H}, col)
}

// text draws s with the 7x13 bitmap font, its box's top-left at (x, y), and
// returns the box of its ink.
func (c *canvas) text(x, y int, s string, col color.RGBA) geom.ImageRect {
	face := basicfont.Face7x13
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face, Dot: fixed.P(x, y+face.Ascent)}
	b, _ := d.BoundString(s)
	d.DrawString(s)
	return geom.ImageRect{X: b.Min.X.Floor(), Y: b.Min.Y.Floor(), W: b.Max.X.Ceil() - b.Min.X.Floor(), H: b.Max.Y.Ceil() - b.Min.Y.Floor()}
}

var (
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
)

// overlaps reports whether a and b share pixels.
func overlaps(a, b geom.ImageRect) bool { return !a.Intersect(b).Empty() }

// lineFor returns the one line of lines overlapping ink, failing otherwise.
func lineFor(t *testing.T, lines []geom.ImageRect, what string, ink geom.ImageRect) geom.ImageRect {
	t.Helper()
	var found []geom.ImageRect
	for _, l := range lines {
		if overlaps(l, ink) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s (ink %v): lines %v overlap it, want exactly one (all lines %v)", what, ink, found, lines)
	}
	return found[0]
}

func TestFindLinesOnColouredAndDarkGrounds(t *testing.T) {
	c := newCanvas(640, 240)
	type label struct {
		text     string
		widget   geom.ImageRect
		ground   color.RGBA
		fg       color.RGBA
		inverted bool
	}
	labels := []label{
		{"RED", geom.ImageRect{X: 20, Y: 20, W: 120, H: 36}, color.RGBA{0xd3, 0x2f, 0x2f, 255}, white, true},
		{"GREEN", geom.ImageRect{X: 160, Y: 20, W: 120, H: 36}, color.RGBA{0x2e, 0x7d, 0x32, 255}, white, true},
		{"BLUE", geom.ImageRect{X: 300, Y: 20, W: 120, H: 36}, color.RGBA{0x15, 0x65, 0xc0, 255}, white, true},
		{"Dark mode", geom.ImageRect{X: 20, Y: 90, W: 200, H: 30}, color.RGBA{0x1e, 0x1e, 0x1e, 255}, color.RGBA{0xe0, 0xe0, 0xe0, 255}, true},
		{"Submit", geom.ImageRect{X: 300, Y: 90, W: 100, H: 30}, color.RGBA{0xd9, 0xd9, 0xd9, 255}, black, false},
	}
	inks := make([]geom.ImageRect, len(labels))
	for i, l := range labels {
		c.fill(l.widget, l.ground)
		inks[i] = c.text(l.widget.X+20, l.widget.Y+(l.widget.H-13)/2, l.text, l.fg)
	}
	c.outline(labels[4].widget, color.RGBA{0x70, 0x70, 0x70, 255}) // the ordinary button has a frame
	g := Luma(c.img, geom.ImageRect{W: 640, H: 240})
	lay := Find(g, Options{})
	if len(lay.Lines) != len(labels) {
		t.Errorf("found %d lines %v, want %d, one per label and no frame", len(lay.Lines), lay.Lines, len(labels))
	}
	sheets := Prepare(g, lay, Options{}, 1)
	if len(sheets) != 1 {
		t.Fatalf("%d sheets, want 1", len(sheets))
	}
	sh := sheets[0]
	for i, l := range labels {
		line := lineFor(t, lay.Lines, l.text, inks[i])
		// The drawn string's box is the font's cells: the line is inside it
		// (a pixel of ground to the left aside) and as wide.
		cells := geom.ImageRect{X: inks[i].X - 1, Y: inks[i].Y, W: inks[i].W + 1, H: inks[i].H}
		if !line.In(cells) || line.W < inks[i].W-2 || !line.In(l.widget) {
			t.Errorf("%s: line %v is not its text %v inside its widget %v", l.text, line, inks[i], l.widget)
		}
		var pl *Placement
		for k := range sh.Places {
			if sh.Places[k].Line == line {
				pl = &sh.Places[k]
			}
		}
		if pl == nil {
			t.Fatalf("%s: line %v has no placement on the sheet", l.text, line)
		}
		if pl.Inverted != l.inverted {
			t.Errorf("%s: inverted %v, want %v (light text on a dark ground is inverted)", l.text, pl.Inverted, l.inverted)
		}
		th := 24 // small text, up to 12 pixels high
		if line.H > 12 {
			th = 20
		}
		if math.Abs(float64(line.H)*pl.Scale-float64(th)) > 0.5 {
			t.Errorf("%s: a line %d pixels high scaled by %.2f, want it scaled up to %d pixels", l.text, line.H, pl.Scale, th)
		}
		dark, light := 0, 0
		for y := pl.Dst.Min.Y; y < pl.Dst.Max.Y; y++ {
			for x := pl.Dst.Min.X; x < pl.Dst.Max.X; x++ {
				switch v := sh.Image.GrayAt(x, y).Y; {
				case v < 64:
					dark++
				case v > 230:
					light++
				}
			}
		}
		if dark == 0 || light < 2*dark {
			t.Errorf("%s on the sheet: %d dark and %d light pixels, want dark text on a mostly white ground", l.text, dark, light)
		}
		// The placement's own box on the sheet maps back to its crop.
		if _, back, ok := sh.Map(pl.Dst); !ok || back != pl.Crop {
			t.Errorf("%s: Map(%v) = %v, %v; want its crop %v", l.text, pl.Dst, back, ok, pl.Crop)
		}
		// Alone on a sheet of its own the line is prepared the same, and a
		// word's box on that sheet maps back inside the line's crop.
		k := slices.Index(lay.Lines, line)
		one, ok := PrepareLine(g, lay, k, Options{})
		if !ok || len(one.Places) != 1 {
			t.Fatalf("%s: PrepareLine gave %+v, %v; want a sheet of one placement", l.text, one.Places, ok)
		}
		p1 := one.Places[0]
		if p1.Line != pl.Line || p1.Crop != pl.Crop || p1.Scale != pl.Scale || p1.Inverted != pl.Inverted || p1.Dst.Size() != pl.Dst.Size() {
			t.Errorf("%s: alone %+v, on the shared sheet %+v", l.text, p1, *pl)
		}
		for y := range p1.Dst.Dy() {
			for x := range p1.Dst.Dx() {
				if a, b := one.Image.GrayAt(p1.Dst.Min.X+x, p1.Dst.Min.Y+y), sh.Image.GrayAt(pl.Dst.Min.X+x, pl.Dst.Min.Y+y); a != b {
					t.Fatalf("%s: pixel (%d,%d) alone %d, on the shared sheet %d", l.text, x, y, a.Y, b.Y)
				}
			}
		}
		word := image.Rect(p1.Dst.Min.X+2, p1.Dst.Min.Y+1, p1.Dst.Max.X-2, p1.Dst.Max.Y-1)
		if _, back, ok := one.Map(word); !ok || !back.In(p1.Crop) || back.W < p1.Crop.W-4 {
			t.Errorf("%s: Map(%v) alone = %v, %v; want inside its crop %v", l.text, word, back, ok, p1.Crop)
		}
	}
}

func TestFrameTouchingTextStaysOutOfTheLine(t *testing.T) {
	c := newCanvas(400, 160)
	field := geom.ImageRect{X: 40, Y: 20, W: 240, H: 23}
	list := geom.ImageRect{X: 40, Y: 60, W: 150, H: 90}
	c.fill(field, white)
	c.outline(field, black)
	c.fill(list, white)
	c.outline(list, black)
	ink := c.text(field.X+2, field.Y+5, "Ada Lovelace", black) // a pixel of ground between frame and text
	var rows []geom.ImageRect
	for i, s := range []string{"Item 1", "Item 2", "Item 3", "Item 4", "Item 5"} {
		rows = append(rows, c.text(list.X+1, list.Y+3+16*i, s, black)) // touching the list's frame
	}
	g := Luma(c.img, geom.ImageRect{W: 400, H: 160})
	lay := Find(g, Options{})
	if len(lay.Lines) != 6 {
		t.Errorf("%d lines %v, want 6: the field's text and five rows", len(lay.Lines), lay.Lines)
	}
	if l := lineFor(t, lay.Lines, "field text", ink); l.X <= field.X || l.Y <= field.Y || l.X+l.W >= field.X+field.W {
		t.Errorf("field text line %v reaches the field's frame %v", l, field)
	}
	for i, r := range rows {
		l := lineFor(t, lay.Lines, "row", r)
		if l.H > 16 || l.Y < r.Y-2 {
			t.Errorf("row %d: line %v (ink %v) takes in the list's frame or another row", i+1, l, r)
		}
	}
	sheets := Prepare(g, lay, Options{}, 3)
	if len(sheets) != 3 {
		t.Fatalf("%d sheets for 6 lines and 3 workers, want 3", len(sheets))
	}
	n := 0
	for _, sh := range sheets {
		n += len(sh.Places)
	}
	if n != 6 {
		t.Errorf("sheets hold %d placements, want 6", n)
	}
}

func TestFlatAndEmptyImagesHaveNoLines(t *testing.T) {
	c := newCanvas(200, 100)
	c.fill(geom.ImageRect{X: 20, Y: 20, W: 100, H: 50}, color.RGBA{0x20, 0x40, 0xa0, 255}) // a panel
	g := Luma(c.img, geom.ImageRect{W: 200, H: 100})
	if lay := Find(g, Options{}); len(lay.Lines) != 0 {
		t.Errorf("a plain panel gave lines %v", lay.Lines)
	}
	if lay := Find(Luma(c.img, geom.ImageRect{W: 1, H: 1}), Options{}); len(lay.Lines) != 0 || Prepare(g, lay, Options{}, 2) != nil {
		t.Errorf("a 1x1 image gave lines")
	}
}

func TestLumaOfASubRegion(t *testing.T) {
	c := newCanvas(50, 50)
	c.fill(geom.ImageRect{X: 10, Y: 10, W: 5, H: 5}, color.RGBA{255, 0, 0, 255})
	g := Luma(c.img, geom.ImageRect{X: 8, Y: 8, W: 10, H: 10})
	if g.Rect.Dx() != 10 || g.GrayAt(0, 0).Y != 0xec || g.GrayAt(2, 2).Y != 76 {
		t.Errorf("luma %v: (0,0)=%d (2,2)=%d, want 236 and red's 76", g.Rect, g.GrayAt(0, 0).Y, g.GrayAt(2, 2).Y)
	}
	// Any image type is read, not only RGBA.
	nrgba := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	draw.Draw(nrgba, nrgba.Bounds(), image.NewUniform(color.NRGBA{0, 0, 255, 255}), image.Point{}, draw.Src)
	if v := Luma(nrgba, geom.ImageRect{W: 4, H: 4}).GrayAt(1, 1).Y; v < 28 || v > 30 {
		t.Errorf("blue NRGBA luma %d, want 29", v)
	}
}

// TestTargetHeight: small text (up to 12 pixels with the defaults) is
// scaled to 24 pixels, taller text to 20, and a line never down.
func TestTargetHeight(t *testing.T) {
	o := Options{}.WithDefaults()
	for h, want := range map[int]float64{8: 3, 10: 2.4, 12: 2, 13: 20.0 / 13, 15: 20.0 / 15, 20: 1, 30: 1} {
		c := newCanvas(200, 60)
		c.fill(geom.ImageRect{X: 20, Y: 10, W: 100, H: h}, black) // a bar h pixels high stands for a line
		g := Luma(c.img, geom.ImageRect{W: 200, H: 60})
		lay := Layout{Lines: []geom.ImageRect{{X: 20, Y: 10, W: 100, H: h}}}
		sh, ok := PrepareLine(g, lay, 0, o)
		if !ok || math.Abs(sh.Places[0].Scale-want) > 1e-9 {
			t.Errorf("a line %d pixels high: scale %v (%v), want %.3f", h, sh.Places, ok, want)
		}
	}
}
