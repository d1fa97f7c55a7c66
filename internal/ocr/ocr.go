// Package ocr finds and reads text on a screenshot without a model: the
// engine seam (Engine: an image region in, words and lines with boxes and
// confidences out), a per-frame cache of what was read (Reader), and the pure
// matching on top of it (Find: exact, contains or regex; ParseTarget and Pick:
// which words a described target means, and which of several matches). Boxes
// are in pixels of the image that was read (geom.ImageRect), so for a frame's
// prepared pixels (imaging.Shot.Pixels) they are image pixels of that frame.
//
// Engines live in subpackages (ocr/tesseract); finding text regions and
// preparing them for a binarizing recognizer is ocr/regions. This package
// imports only geom and the standard library.
package ocr

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/guiagent/guiagent/internal/geom"
)

// DefaultLangs are the languages read when none are configured
// (GUI_AGENT_OCR_LANGS).
var DefaultLangs = []string{"eng"}

// ErrUnavailable is wrapped by an engine's error when it cannot run at all
// here (its program or a language is not installed): callers that can do
// without OCR (the locate chain) skip it with a note; the error's text says
// how to install what is missing.
var ErrUnavailable = errors.New("OCR is not available")

// ErrRegion is wrapped by the error for a region that does not lie on the image.
var ErrRegion = errors.New("region is not on the image")

// Word is one recognized word.
type Word struct {
	Text string         `json:"text"`
	Box  geom.ImageRect `json:"box"`
	// Conf is the engine's confidence, 0-100.
	Conf float64 `json:"conf"`
}

// Line is one line of text: words left to right on one baseline.
type Line struct {
	// Text is the words joined by single spaces.
	Text  string         `json:"text"`
	Box   geom.ImageRect `json:"box"`
	Words []Word         `json:"words"`
	// Conf is the mean confidence of the words, 0-100.
	Conf float64 `json:"conf"`
}

// Page is what one read found.
type Page struct {
	// Lines are in reading order (SortLines).
	Lines []Line `json:"lines"`
	// Region is the part of the image that was read.
	Region geom.ImageRect `json:"region"`
	// Engine names the engine and its languages ("tesseract 5.3.0 eng").
	Engine string `json:"engine"`
}

// Text is the page's lines, one per line of text.
func (p Page) Text() string {
	var b strings.Builder
	for i, l := range p.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Text)
	}
	return b.String()
}

// Engine recognizes text. Implementations are safe for concurrent use.
type Engine interface {
	// Read recognizes the text inside region of img (the zero ImageRect: all of
	// img), whose pixels are measured from img.Bounds().Min. The page's boxes
	// are in the same pixels, each inside region; its lines are in reading order.
	Read(ctx context.Context, img image.Image, region geom.ImageRect) (Page, error)
	// ID identifies the engine and what changes its answers (languages,
	// settings), for caching: "tesseract:eng+jpn".
	ID() string
}

// ResolveRegion returns region as a rectangle of an image of size: the zero
// ImageRect means the whole image; anything else must lie wholly on it,
// else the error (wrapping ErrRegion) names the image's size.
func ResolveRegion(size geom.Size, region geom.ImageRect) (geom.ImageRect, error) {
	whole := geom.ImageRect{W: size.W, H: size.H}
	if region == (geom.ImageRect{}) {
		return whole, nil
	}
	if region.Empty() {
		return geom.ImageRect{}, fmt.Errorf("%w: region %s has no area: give a width and height of at least 1 pixel", ErrRegion, region)
	}
	if !region.In(whole) {
		return geom.ImageRect{}, fmt.Errorf("%w: region %s is not inside the %dx%d image: give x, y, width and height with x+width <= %d and y+height <= %d",
			ErrRegion, region, size.W, size.H, size.W, size.H)
	}
	return region, nil
}

// SizeOf is the size of img.
func SizeOf(img image.Image) geom.Size {
	b := img.Bounds()
	return geom.Size{W: b.Dx(), H: b.Dy()}
}
