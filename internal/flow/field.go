package flow

import (
	"image"
	"image/draw"
	"slices"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
	"github.com/guiagent/guiagent/internal/vision"
)

// Field fingerprints. A step that types into a text field finds the field
// holding what the last run typed, so a crop of the field itself would not
// match on the next run. Its fingerprint leaves the field's inside out (the
// hole: the inside as its fill colour shows it, grown by fieldFocusBand for
// the border and a focus ring) and keeps a ring of surroundings around it
// and the label beside it (left, else above), each part checked on its own:
// a different field at the place (its label differs) is still refused, and
// the cache file no longer holds what was typed.

// Field fingerprint tuning, in image pixels.
const (
	// fieldFocusBand is how far around the field's inside the hole reaches:
	// its border and a focus ring, which come and go with the focus (Tk's
	// highlight and border are 2 px, the sample app's focus frame 3 px).
	fieldFocusBand = 4
	// fieldRing is how wide the ring of surroundings kept around the hole is.
	fieldRing = 8
	// fieldGrow is how far past the located box the field's inside may
	// reach (fieldInside).
	fieldGrow = 8
	// labelReach is how far left of the field a label is looked for;
	// labelReachUp how far above it, when there is none on the left.
	labelReach   = 200
	labelReachUp = 40
	// labelGap is the widest gap (columns) inside a label on the left, as
	// between its words; labelGapUp the widest (rows) in one above.
	labelGap   = 12
	labelGapUp = 3
	// labelMargin is how far around its ink a label's part reaches.
	labelMargin = 2
	// inkTolerance is the per-channel difference from the background that
	// makes a pixel part of a label.
	inkTolerance = 48
	// fillTolerance is the per-channel difference within which a pixel has
	// the field's fill colour.
	fillTolerance = 12
)

// typesInto reports whether the element a step locates (role "" is its
// target) is a text field typed into: a type step's target, or a click or
// locate whose role word names a text field ("the Name field", "the search
// box", "the email input"), or a click with no role word right before a
// type step without a target.
func (ru *run) typesInto(st Step, role, desc string) bool {
	if role != "" || st.ByText {
		return false
	}
	switch st.Kind {
	case Type:
		return true
	case Click, Locate:
		if roles := uitree.ParseTarget(desc).Roles; len(roles) > 0 || st.Kind == Locate {
			return slices.Contains(roles, desktop.RoleTextbox) && !slices.Contains(roles, desktop.RoleButton)
		}
		i := slices.IndexFunc(ru.f.Steps, func(s Step) bool { return s.Index == st.Index })
		return i >= 0 && i+1 < len(ru.f.Steps) && ru.f.Steps[i+1].Kind == Type && ru.f.Steps[i+1].Target == ""
	}
	return false
}

// fingerprintFor takes the fingerprint of box in img for a step: a field's
// when the step types into it, else the box's.
func (ru *run) fingerprintFor(st Step, role, desc string, img *image.RGBA, box vision.Box) fingerprint {
	if ru.typesInto(st, role, desc) {
		return takeFieldFingerprint(img, box)
	}
	return takeFingerprint(img, box)
}

// takeFieldFingerprint is the fingerprint of the text field at box in img:
// its ring of surroundings and its label, its inside (the hole) left out
// and cleared in the crop.
func takeFieldFingerprint(img *image.RGBA, box vision.Box) fingerprint {
	b := pixelRect(box).Intersect(img.Bounds())
	hole := fieldInside(img, b).Inset(-fieldFocusBand).Intersect(img.Bounds())
	outer := hole.Inset(-fieldRing).Intersect(img.Bounds())
	bg, _ := dominantColor(img, outer, hole)
	label := findLabel(img, hole, bg)
	r := outer.Union(label)
	crop := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(crop, crop.Bounds(), img, r.Min, draw.Src)
	draw.Draw(crop, hole.Sub(r.Min), image.Transparent, image.Point{}, draw.Src)
	f := fingerprint{Rect: r, Pix: crop, Kind: kindField, Hole: hole, Label: label}
	f.sortParts()
	return f
}

// fieldInside is b grown to the field's inside: the rows and columns next
// to b (up to fieldGrow, and a quarter of b's size) that mostly show the
// fill colour that most of b shows. A model's box is rarely exact; a box
// that is too small would leave part of what the field holds in the ring.
// The growth is small so that a box too large, whose most common colour is
// the window's, does not swallow the label beside the field.
func fieldInside(img *image.RGBA, b image.Rectangle) image.Rectangle {
	if b.Empty() {
		return b
	}
	fill, share := dominantColor(img, b, image.Rectangle{})
	if share < 0.5 {
		return b
	}
	mostly := func(r image.Rectangle) bool {
		r = r.Intersect(img.Bounds())
		if r.Empty() {
			return false
		}
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if nearColor(img, x, y, fill, fillTolerance) {
					n++
				}
			}
		}
		return 2*n >= r.Dx()*r.Dy()
	}
	out := b
	capX, capY := min(fieldGrow, b.Dx()/4+1), min(fieldGrow, b.Dy()/4+1)
	for i := 0; i < capX && mostly(image.Rect(out.Min.X-1, b.Min.Y, out.Min.X, b.Max.Y)); i++ {
		out.Min.X--
	}
	for i := 0; i < capX && mostly(image.Rect(out.Max.X, b.Min.Y, out.Max.X+1, b.Max.Y)); i++ {
		out.Max.X++
	}
	for i := 0; i < capY && mostly(image.Rect(b.Min.X, out.Min.Y-1, b.Max.X, out.Min.Y)); i++ {
		out.Min.Y--
	}
	for i := 0; i < capY && mostly(image.Rect(b.Min.X, out.Max.Y, b.Max.X, out.Max.Y+1)); i++ {
		out.Max.Y++
	}
	return out
}

// findLabel is the label beside the field whose hole is hole: the nearest
// run of ink (pixels unlike the background bg) left of it in its rows, else
// the nearest line of ink above it in its columns; empty when there is none.
func findLabel(img *image.RGBA, hole image.Rectangle, bg [3]uint8) image.Rectangle {
	bounds := img.Bounds()
	ink := func(r image.Rectangle) bool {
		r = r.Intersect(bounds)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if !nearColor(img, x, y, bg, inkTolerance) {
					return true
				}
			}
		}
		return false
	}
	// Left: columns from the hole outwards.
	first, last, gap := -1, -1, 0
	for x := hole.Min.X - 1; x >= max(bounds.Min.X, hole.Min.X-labelReach); x-- {
		if ink(image.Rect(x, hole.Min.Y, x+1, hole.Max.Y)) {
			if first < 0 {
				first = x
			}
			last, gap = x, 0
		} else if first >= 0 {
			if gap++; gap > labelGap {
				break
			}
		}
	}
	if first >= 0 {
		r := image.Rect(last, hole.Min.Y, first+1, hole.Max.Y)
		top, bottom := -1, -1
		for y := r.Min.Y; y < r.Max.Y; y++ {
			if ink(image.Rect(r.Min.X, y, r.Max.X, y+1)) {
				if top < 0 {
					top = y
				}
				bottom = y + 1
			}
		}
		r.Min.Y, r.Max.Y = top, bottom
		return r.Inset(-labelMargin).Intersect(bounds)
	}
	// Above: rows from the hole upwards, one line of ink.
	first, last, gap = -1, -1, 0
	for y := hole.Min.Y - 1; y >= max(bounds.Min.Y, hole.Min.Y-labelReachUp); y-- {
		if ink(image.Rect(hole.Min.X, y, hole.Max.X, y+1)) {
			if first < 0 {
				first = y
			}
			last, gap = y, 0
		} else if first >= 0 {
			if gap++; gap > labelGapUp {
				break
			}
		}
	}
	if first < 0 {
		return image.Rectangle{}
	}
	r := image.Rect(hole.Min.X, last, hole.Max.X, first+1)
	left, right := -1, -1
	for x := r.Min.X; x < r.Max.X; x++ {
		if ink(image.Rect(x, r.Min.Y, x+1, r.Max.Y)) {
			if left < 0 {
				left = x
			}
			right = x + 1
		}
	}
	r.Min.X, r.Max.X = left, right
	return r.Inset(-labelMargin).Intersect(bounds)
}

// dominantColor is the colour most pixels of r outside except show, and
// the share of them that show it.
func dominantColor(img *image.RGBA, r, except image.Rectangle) ([3]uint8, float64) {
	counts := map[[3]uint8]int{}
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if (image.Point{x, y}).In(except) {
				continue
			}
			o := img.PixOffset(x, y)
			counts[[3]uint8{img.Pix[o], img.Pix[o+1], img.Pix[o+2]}]++
			n++
		}
	}
	var best [3]uint8
	top := 0
	for c, k := range counts {
		if k > top || (k == top && less(c, best)) {
			best, top = c, k
		}
	}
	if n == 0 {
		return best, 0
	}
	return best, float64(top) / float64(n)
}

// less orders colours, so that a tie is broken the same way every time.
func less(a, b [3]uint8) bool {
	return a[0] < b[0] || (a[0] == b[0] && (a[1] < b[1] || (a[1] == b[1] && a[2] < b[2])))
}

// nearColor reports whether img's pixel at (x, y) is within tol of c in each channel.
func nearColor(img *image.RGBA, x, y int, c [3]uint8, tol uint8) bool {
	o := img.PixOffset(x, y)
	return absDiff(img.Pix[o], c[0]) <= tol && absDiff(img.Pix[o+1], c[1]) <= tol && absDiff(img.Pix[o+2], c[2]) <= tol
}
