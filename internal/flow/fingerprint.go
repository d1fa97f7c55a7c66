package flow

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/draw"
	"image/png"

	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/vision"
)

// Fingerprint tuning.
const (
	// fingerprintMargin is how many image pixels around a located box the
	// fingerprint keeps, so that the element's edges and surroundings count.
	fingerprintMargin = 6
	// pixelTolerance is the largest per-channel difference of a pixel that
	// still counts as the same. Screenshots compared here are never lossy
	// (Shot.Pixels), and pastel widgets differ from a grey background by
	// little more than 16, so it is small.
	pixelTolerance = 10
	// maxDifferentShare is the largest share of different pixels with which a
	// place still matches a fingerprint. A changed label of a button (a few
	// characters of text) differs in more than 1% of its fingerprint.
	maxDifferentShare = 0.004
	// searchSide is the long side (pixels) the coarse template search shrinks
	// a fingerprint to.
	searchSide = 96
	// searchThreshold is the coarse normalized cross-correlation a candidate
	// place needs before it is compared pixel by pixel. It is low because the
	// shrunk template and screen are generally out of phase (a one-pixel
	// shift blurs text differently); the pixel check decides.
	searchThreshold = 0.6
	// searchCandidates is how many coarse candidates are checked.
	searchCandidates = 12
	// fieldSearchShrink is the largest factor a field fingerprint is shrunk
	// by for the coarse search, so that its ring (fieldRing wide) survives.
	fieldSearchShrink = fieldRing / 2
)

// Fingerprint kinds (CacheEntry.FingerprintKind).
const (
	// kindBox is the whole crop: the box and a margin, every pixel (the
	// only kind before field fingerprints; "" in the cache file).
	kindBox = ""
	// kindField is a text field's: its surroundings and the label beside
	// it, its inside left out, so that what it holds does not count.
	kindField = "field"
)

// fingerprint is a small crop of a screenshot around a located element.
type fingerprint struct {
	// Rect is where the crop was taken, in image pixels of its screenshot.
	Rect image.Rectangle
	// Pix is the crop.
	Pix *image.RGBA
	// Kind is kindBox or kindField.
	Kind string
	// Hole (kindField) is the part of Rect left out: the field's inside and
	// its edge (border and focus ring), image pixels like Rect.
	Hole image.Rectangle
	// Label (kindField; may be empty) is the part of Rect that is checked
	// on its own: the label found beside the field. A different label is a
	// few dozen pixels, too few to count among the surroundings.
	Label image.Rectangle

	// parts sorts the crop's pixels (kindField): partHole, partRing or
	// partLabel; ring and label count their pixels.
	parts       []uint8
	ring, label int
}

// Parts of a field fingerprint.
const (
	partHole uint8 = iota
	partRing
	partLabel
)

// takeFingerprint crops box (plus a margin) out of img.
func takeFingerprint(img *image.RGBA, box vision.Box) fingerprint {
	r := pixelRect(box).Inset(-fingerprintMargin).Intersect(img.Bounds())
	crop := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(crop, crop.Bounds(), img, r.Min, draw.Src)
	return fingerprint{Rect: r, Pix: crop}
}

// pixelRect is the pixels box covers.
func pixelRect(box vision.Box) image.Rectangle {
	return image.Rect(int(box.X1), int(box.Y1), int(box.X2+0.999), int(box.Y2+0.999))
}

// moved is f taken d further on.
func (f fingerprint) moved(d image.Point) fingerprint {
	f.Rect, f.Hole, f.Label = f.Rect.Add(d), f.Hole.Add(d), f.Label.Add(d)
	return f
}

// sortParts fills f.parts from Hole and Label (kindField).
func (f *fingerprint) sortParts() {
	w, h := f.Rect.Dx(), f.Rect.Dy()
	f.parts, f.ring, f.label = make([]uint8, w*h), 0, 0
	for y := range h {
		for x := range w {
			p := image.Pt(x, y).Add(f.Rect.Min)
			switch {
			case p.In(f.Hole):
				continue
			case p.In(f.Label):
				f.parts[y*w+x] = partLabel
				f.label++
			default:
				f.parts[y*w+x] = partRing
				f.ring++
			}
		}
	}
}

// mask is the crop's counted pixels as an alpha mask (nil: all count).
func (f fingerprint) mask() *image.Alpha {
	if f.parts == nil {
		return nil
	}
	m := image.NewAlpha(f.Pix.Rect)
	for i, p := range f.parts {
		if p != partHole {
			m.Pix[i] = 0xff
		}
	}
	return m
}

// encode returns the crop as base64 PNG.
func (f fingerprint) encode() string {
	var b bytes.Buffer
	_ = png.Encode(&b, f.Pix) // writing to a buffer does not fail
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func decodeFingerprint(s string, r image.Rectangle) (fingerprint, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fingerprint{}, fmt.Errorf("fingerprint is not base64: %w", err)
	}
	if r.Dx() <= 0 || r.Dy() <= 0 || r.Dx() > imaging.MaxDecodeSide || r.Dy() > imaging.MaxDecodeSide {
		return fingerprint{}, fmt.Errorf("fingerprint place %v is not a crop of a screenshot", r)
	}
	// The header is read first: a PNG announcing more pixels than its place
	// (a decompression bomb edited into the cache) is refused unallocated.
	img, err := imaging.DecodeLimited(b, r.Dx(), r.Dy())
	if err != nil {
		return fingerprint{}, fmt.Errorf("fingerprint is not a PNG of its place %v: %w", r, err)
	}
	m := imaging.ToRGBA(img)
	if m.Rect.Dx() != r.Dx() || m.Rect.Dy() != r.Dy() {
		return fingerprint{}, fmt.Errorf("fingerprint is %dx%d, its place %v", m.Rect.Dx(), m.Rect.Dy(), r)
	}
	return fingerprint{Rect: r, Pix: m}, nil
}

// differentShare is the share of fp's pixels that differ from img at top-left
// at (1 when fp does not fit there).
func (f fingerprint) differentShare(img *image.RGBA, at image.Point) float64 {
	return f.differentShareTol(img, at, pixelTolerance)
}

// differentShareTol is differentShare with a per-channel tolerance of its
// own. For a field, it is the larger of the shares of its surroundings and
// of its label, each among its own pixels; its inside does not count.
func (f fingerprint) differentShareTol(img *image.RGBA, at image.Point, tol uint8) float64 {
	w, h := f.Pix.Rect.Dx(), f.Pix.Rect.Dy()
	if !at.In(img.Rect) || at.X+w > img.Rect.Max.X || at.Y+h > img.Rect.Max.Y || w*h == 0 {
		return 1
	}
	if f.parts != nil {
		return f.partsDifferent(img, at, tol)
	}
	limit := int(0.05*float64(w*h)) + 1
	diff := 0
	for y := range h {
		a := f.Pix.Pix[y*f.Pix.Stride : y*f.Pix.Stride+w*4]
		o := img.PixOffset(at.X, at.Y+y)
		b := img.Pix[o : o+w*4]
		for i := 0; i < len(a); i += 4 {
			if absDiff(a[i], b[i]) > tol || absDiff(a[i+1], b[i+1]) > tol || absDiff(a[i+2], b[i+2]) > tol {
				diff++
			}
		}
		if diff > limit { // far off (over 5%): stop early
			break
		}
	}
	return float64(diff) / float64(w*h)
}

// partsDifferent is differentShareTol of a field fingerprint.
func (f fingerprint) partsDifferent(img *image.RGBA, at image.Point, tol uint8) float64 {
	w, h := f.Pix.Rect.Dx(), f.Pix.Rect.Dy()
	if f.ring == 0 {
		return 1
	}
	var diff [3]int
	ringLimit := int(0.05*float64(f.ring)) + 1
	for y := range h {
		a := f.Pix.Pix[y*f.Pix.Stride : y*f.Pix.Stride+w*4]
		o := img.PixOffset(at.X, at.Y+y)
		b := img.Pix[o : o+w*4]
		parts := f.parts[y*w : y*w+w]
		for x, p := range parts {
			if p == partHole {
				continue
			}
			i := x * 4
			if absDiff(a[i], b[i]) > tol || absDiff(a[i+1], b[i+1]) > tol || absDiff(a[i+2], b[i+2]) > tol {
				diff[p]++
			}
		}
		if diff[partRing] > ringLimit { // far off: stop early
			break
		}
	}
	share := float64(diff[partRing]) / float64(f.ring)
	if f.label > 0 {
		share = max(share, float64(diff[partLabel])/float64(f.label))
	}
	return share
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}

// matchesAt reports whether fp is found at top-left at in img.
func (f fingerprint) matchesAt(img *image.RGBA, at image.Point) bool {
	return f.differentShare(img, at) <= maxDifferentShare
}

// search finds fp anywhere in img: a coarse normalized cross-correlation
// (imaging.FindTemplate) on both shrunk so that fp's long side is about
// searchSide pixels, then a pixel-by-pixel check around each candidate at
// full size. It returns the top-left corner of the best place that matches.
func (f fingerprint) search(img *image.RGBA) (image.Point, bool) {
	return f.searchTol(img, pixelTolerance, maxDifferentShare)
}

// searchTol is search with a pixel tolerance and a share of different
// pixels of its own.
func (f fingerprint) searchTol(img *image.RGBA, tol uint8, share float64) (image.Point, bool) {
	w, h := f.Pix.Rect.Dx(), f.Pix.Rect.Dy()
	k := max(1, (max(w, h)+searchSide-1)/searchSide)
	if min(w, h)/k < 4 {
		k = max(1, min(w, h)/4)
	}
	mask := f.mask()
	if mask != nil {
		k = min(k, fieldSearchShrink) // the ring is thin: keep it at the coarse level
	}
	screen := shrink(img, k)
	// The template is shrunk at each phase of the k x k grid in turn (the
	// aligned one first): at the wrong phase, text blurs differently and a
	// long edge elsewhere can outscore the element.
	for py := range k {
		for px := range k {
			r := image.Rect(px, py, w, h)
			sub := f.Pix.SubImage(r).(*image.RGBA)
			var m *image.Alpha
			if mask != nil {
				m = shrinkMask(mask.SubImage(r).(*image.Alpha), k)
			}
			if at, ok := f.refine(img, screen, shrink(sub, k), m, k, image.Pt(px, py), tol, share); ok {
				return at, true
			}
		}
	}
	return image.Point{}, false
}

// refine checks the coarse candidates of tmpl (f shrunk by k from offset
// phase; mask: its counted pixels, nil = all) pixel by pixel around their
// full-size places.
func (f fingerprint) refine(img, screen, tmpl *image.RGBA, mask *image.Alpha, k int, phase image.Point, tol uint8, share float64) (image.Point, bool) {
	for _, m := range imaging.FindTemplateMasked(screen, tmpl, mask, searchThreshold, searchCandidates) {
		cx := (m.Rect.Min.X-screen.Rect.Min.X)*k + img.Rect.Min.X - phase.X
		cy := (m.Rect.Min.Y-screen.Rect.Min.Y)*k + img.Rect.Min.Y - phase.Y
		best, bestAt := 2.0, image.Point{}
		for y := cy - k; y <= cy+k; y++ {
			for x := cx - k; x <= cx+k; x++ {
				if s := f.differentShareTol(img, image.Pt(x, y), tol); s < best {
					best, bestAt = s, image.Pt(x, y)
				}
			}
		}
		if best <= share {
			return bestAt, true
		}
	}
	return image.Point{}, false
}

// shrinkMask shrinks a mask by an integer factor k as shrink does its
// image: a cell counts when all its pixels do.
func shrinkMask(m *image.Alpha, k int) *image.Alpha {
	w, h := m.Rect.Dx()/max(k, 1), m.Rect.Dy()/max(k, 1)
	out := image.NewAlpha(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			all := true
			for j := 0; j < k && all; j++ {
				o := m.PixOffset(m.Rect.Min.X+x*k, m.Rect.Min.Y+y*k+j)
				for i := range k {
					if m.Pix[o+i] == 0 {
						all = false
						break
					}
				}
			}
			if all {
				out.Pix[y*w+x] = 0xff
			}
		}
	}
	return out
}

// shrink box-averages m by an integer factor k.
func shrink(m *image.RGBA, k int) *image.RGBA {
	if k <= 1 {
		return m
	}
	w, h := m.Rect.Dx()/k, m.Rect.Dy()/k
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	n := uint32(k * k)
	for y := range h {
		for x := range w {
			var s [3]uint32
			for j := range k {
				o := m.PixOffset(m.Rect.Min.X+x*k, m.Rect.Min.Y+y*k+j)
				for i := range k {
					s[0] += uint32(m.Pix[o+i*4])
					s[1] += uint32(m.Pix[o+i*4+1])
					s[2] += uint32(m.Pix[o+i*4+2])
				}
			}
			d := out.PixOffset(x, y)
			out.Pix[d], out.Pix[d+1], out.Pix[d+2], out.Pix[d+3] = uint8(s[0]/n), uint8(s[1]/n), uint8(s[2]/n), 255
		}
	}
	return out
}
