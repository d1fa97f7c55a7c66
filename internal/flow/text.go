package flow

import (
	"errors"
	"fmt"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/vision"
)

// byOCR marks, for resolve, a box found by reading the screen.
const byOCR = "ocr"

// errNoOCR is returned by a text step when no OCR engine was given.
var errNoOCR = fmt.Errorf("%w: this step names its element by text, which is read by OCR: install Tesseract (Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng; macOS: brew install tesseract); `guiagent doctor` checks it", ocr.ErrUnavailable)

// cacheMargin is how far around its cached box a text step's words are
// looked for when the cache is verified.
const cacheMargin = 12

// locateText finds the words of a text step (`click: {text: Submit}`) on a
// fresh screenshot by OCR, with no model. A cached place is verified by
// reading the text there first (hit); else the whole screen is read (miss),
// and the place found is cached.
func (ru *run) locateText(st Step, text string, sr *StepResult) (*imaging.Shot, vision.Box, error) {
	r := ru.r.o.OCR
	if r == nil {
		return nil, vision.Box{}, errNoOCR
	}
	ru.settle()
	shot, err := ru.shoot()
	if err != nil {
		return nil, vision.Box{}, err
	}
	t := ocr.Target{Text: text, Match: ocr.Exact}
	if parsed, ok := ocr.ParseTarget(text); ok && parsed.Quoted {
		t = parsed // `text: the second "OK"` picks one of several
	}
	sz := shot.Frame.ImageSize()
	if e := ru.cache.lookup(st.Index, st.Kind, "", text); e != nil && e.DisplaySize == sizeString(sz.W, sz.H) {
		around := near(e.Box, sz)
		ms, _, err := r.Find(ru.ctx, shot.Frame.ID, shot.Pixels, ocr.Query{Text: t.Text, Match: t.Match, Region: around})
		if err == nil && len(ms) == 1 {
			sr.Cache = CacheHit
			return shot, boxOf(ms[0].Box), nil
		}
	}
	sr.Cache = CacheMiss
	ms, _, err := r.Find(ru.ctx, shot.Frame.ID, shot.Pixels, t.Query())
	if err != nil {
		return shot, vision.Box{}, fmt.Errorf("reading the screen for %q: %w", text, err)
	}
	m, err := ocr.Pick(ms, t)
	if errors.Is(err, ocr.ErrNotFound) {
		return shot, vision.Box{}, fmt.Errorf("%w (read by OCR on display %s)", err, ru.display.ID)
	} else if err != nil {
		return shot, vision.Box{}, err
	}
	box := boxOf(m.Box)
	ru.rememberBy(byOCR, st, "", text, shot, box, takeFingerprint(shot.Pixels, box), nil)
	return shot, box, nil
}

// near is box grown by cacheMargin on every side, kept on an image of size.
func near(b vision.Box, size geom.Size) geom.ImageRect {
	x0, y0 := max(0, int(b.X1)-cacheMargin), max(0, int(b.Y1)-cacheMargin)
	x1, y1 := min(size.W, int(b.X2)+cacheMargin), min(size.H, int(b.Y2)+cacheMargin)
	if x1 <= x0 || y1 <= y0 {
		return geom.ImageRect{W: size.W, H: size.H}
	}
	return geom.ImageRect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

func boxOf(r geom.ImageRect) vision.Box {
	return vision.Box{X1: float64(r.X), Y1: float64(r.Y), X2: float64(r.X + r.W), Y2: float64(r.Y + r.H)}
}
