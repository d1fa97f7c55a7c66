package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/operate"
)

// The text tools (observe group, no model): the screen's text read by OCR
// (Options.OCR) on the captured pixels of a new screenshot, which becomes
// the display's latest frame, so the boxes are clickable as image points.

// errNoOCR is what the text tools say when no OCR engine was given at all.
var errNoOCR = fmt.Errorf("%w: install Tesseract (Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng; macOS: brew install tesseract) and restart guiagent; `guiagent doctor` checks it", ocr.ErrUnavailable)

// ocrOrErr is the OCR reader, or why there is none (with how to install it).
func (s *Server) ocrOrErr() (*ocr.Reader, error) {
	if s.opts.OCR != nil {
		return s.opts.OCR, nil
	}
	if s.opts.OCRMissing != nil {
		return nil, s.opts.OCRMissing
	}
	return nil, errNoOCR
}

// TextRegion is a rectangle in image pixels of the display's latest frame.
type TextRegion struct {
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
	X2 float64 `json:"x2"`
	Y2 float64 `json:"y2"`
}

// FindTextArgs are gui_find_text's arguments.
type FindTextArgs struct {
	Text    string      `json:"text"`
	Match   string      `json:"match,omitempty"`
	Display string      `json:"display,omitempty"`
	Region  *TextRegion `json:"region,omitempty"`
}

// ReadTextArgs are gui_read_text's arguments.
type ReadTextArgs struct {
	Display string      `json:"display,omitempty"`
	Region  *TextRegion `json:"region,omitempty"`
}

// TextWord is one word read, its box in image pixels of the result's frame.
type TextWord struct {
	Text       string   `json:"text"`
	Box        ImageBox `json:"box"`
	Confidence float64  `json:"confidence"`
}

// TextMatch is one place gui_find_text found its text.
type TextMatch struct {
	Text       string     `json:"text"`
	Box        ImageBox   `json:"box"`
	Center     ImageXY    `json:"center"`
	Words      []TextWord `json:"words"`
	Confidence float64    `json:"confidence"`
}

// TextLine is one line gui_read_text read.
type TextLine struct {
	Text       string   `json:"text"`
	Box        ImageBox `json:"box"`
	Confidence float64  `json:"confidence"`
}

// TextResult is the frame the text tools read.
type TextResult struct {
	FrameID     string `json:"frame_id"`
	Display     string `json:"display"`
	ImageWidth  int    `json:"image_width"`
	ImageHeight int    `json:"image_height"`
	Engine      string `json:"engine"`
}

func boxOf(r geom.ImageRect) ImageBox {
	return ImageBox{float64(r.X), float64(r.Y), float64(r.X + r.W), float64(r.Y + r.H)}
}

func conf(v float64) float64 { return math.Round(v*10) / 10 }

func (s *Server) findTextTool() toolDef {
	return newTool(s, GroupObserve, "gui_find_text", "Find text",
		"Find text by OCR on a new screenshot (region: in the latest's pixels): frame_id, matches with box, center, confidence.",
		readOnly, func(sc *jsonschema.Schema) {
			prop(sc, "text").MinLength = new(1)
			enum(sc, "match", "exact", "contains", "regex")
			single(prop(sc, "region"), "object")
		},
		func(ctx context.Context, c *call, in FindTextArgs) (*mcp.CallToolResult, error) {
			q := ocr.Query{Text: in.Text, Match: ocr.Mode(in.Match)}
			if err := q.Validate(); err != nil {
				return nil, err
			}
			r, err := s.ocrOrErr()
			if err != nil {
				return nil, err
			}
			shot, head, region, err := s.textShot(ctx, c, in.Display, in.Region)
			if err != nil {
				return nil, err
			}
			q.Region = region
			ms, p, err := r.Find(ctx, shot.Frame.ID, shot.Pixels, q)
			if err != nil {
				return nil, err
			}
			head.Engine = p.Engine
			out := make([]TextMatch, len(ms))
			for i, m := range ms {
				ctr := m.Box.Center()
				out[i] = TextMatch{Text: m.Text, Box: boxOf(m.Box), Center: ImageXY{round2(ctr.X), round2(ctr.Y)}, Confidence: conf(m.Conf)}
				for _, w := range m.Words {
					out[i].Words = append(out[i].Words, TextWord{w.Text, boxOf(w.Box), conf(w.Conf)})
				}
			}
			return jsonResult(struct {
				TextResult
				Matches []TextMatch `json:"matches"`
			}{head, out})
		})
}

func (s *Server) readTextTool() toolDef {
	return newTool(s, GroupObserve, "gui_read_text", "Read text",
		"Read text by OCR as gui_find_text does: lines in reading order.",
		readOnly, func(sc *jsonschema.Schema) { single(prop(sc, "region"), "object") },
		func(ctx context.Context, c *call, in ReadTextArgs) (*mcp.CallToolResult, error) {
			r, err := s.ocrOrErr()
			if err != nil {
				return nil, err
			}
			shot, head, region, err := s.textShot(ctx, c, in.Display, in.Region)
			if err != nil {
				return nil, err
			}
			p, err := r.Read(ctx, shot.Frame.ID, shot.Pixels, region)
			if err != nil {
				return nil, err
			}
			head.Engine = p.Engine
			lines := make([]TextLine, len(p.Lines))
			for i, l := range p.Lines {
				lines[i] = TextLine{l.Text, boxOf(l.Box), conf(l.Conf)}
			}
			return jsonResult(struct {
				TextResult
				Lines []TextLine `json:"lines"`
			}{head, lines})
		})
}

// textShot checks the region against the display's latest image, captures
// the display with its pixels kept (it becomes the latest frame) and returns
// the region as pixels of the new frame (zero: all of it).
func (s *Server) textShot(ctx context.Context, c *call, display string, reg *TextRegion) (*imaging.Shot, TextResult, geom.ImageRect, error) {
	d, _, err := s.display(ctx, display)
	if err != nil {
		return nil, TextResult{}, geom.ImageRect{}, err
	}
	var before geom.Frame
	if reg != nil {
		if before, _, err = s.frameFor(c.ss, d, ""); err != nil {
			return nil, TextResult{}, geom.ImageRect{}, err
		}
		if err := checkTextRegion(*reg, before); err != nil {
			return nil, TextResult{}, geom.ImageRect{}, err
		}
	}
	shot, err := s.ocrShot(ctx, c, d)
	if err != nil {
		return nil, TextResult{}, geom.ImageRect{}, err
	}
	f := shot.Frame
	size := f.ImageSize()
	head := TextResult{FrameID: f.ID, Display: d.ID, ImageWidth: size.W, ImageHeight: size.H}
	if reg == nil {
		return shot, head, geom.ImageRect{}, nil
	}
	a := geom.MapImagePoint(geom.ImagePoint{X: reg.X1, Y: reg.Y1}, before, f)
	b := geom.MapImagePoint(geom.ImagePoint{X: reg.X2, Y: reg.Y2}, before, f)
	x0, y0 := max(0, int(math.Floor(a.X))), max(0, int(math.Floor(a.Y)))
	x1, y1 := min(size.W, int(math.Ceil(b.X))), min(size.H, int(math.Ceil(b.Y)))
	region, err := ocr.ResolveRegion(size, geom.ImageRect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0})
	return shot, head, region, err
}

// checkTextRegion refuses a region that is not a rectangle on the image f.
func checkTextRegion(r TextRegion, f geom.Frame) error {
	size := f.ImageSize()
	switch {
	case r.X2 <= r.X1 || r.Y2 <= r.Y1:
		return fmt.Errorf("region (%g,%g)-(%g,%g) has no area: give x1 < x2 and y1 < y2, image pixels of the latest screenshot", r.X1, r.Y1, r.X2, r.Y2)
	case r.X1 < 0 || r.Y1 < 0 || r.X2 > float64(size.W) || r.Y2 > float64(size.H):
		return fmt.Errorf("%w: region (%g,%g)-(%g,%g) is not inside the %dx%d latest image of display %s (frame %s): give corners with 0 <= x <= %d and 0 <= y <= %d",
			ocr.ErrRegion, r.X1, r.Y1, r.X2, r.Y2, size.W, size.H, f.Display.ID, f.ID, size.W, size.H)
	}
	return nil
}

// ocrShot captures d at the default screenshot size with its prepared
// pixels kept, so OCR reads exactly the frame's pixels (never a decoded
// JPEG); it becomes the session's latest frame of d.
func (s *Server) ocrShot(ctx context.Context, c *call, d geom.Display) (*imaging.Shot, error) {
	o := s.shotOptions(0, "", 0)
	o.KeepPixels = true
	return s.capture(ctx, c, d, geom.Rect{}, o)
}

// ocrLocator is the locate chain's OCR tier for one call: a target that
// names its element by text (ocr.ParseTarget) is read on a new screenshot.
type ocrLocator struct {
	s *Server
	c *call
	r *ocr.Reader
}

func (o ocrLocator) By() string { return operate.ByOCR }

func (o ocrLocator) Locate(ctx context.Context, t operate.Target) (operate.Place, error) {
	tg, ok := ocr.ParseTarget(t.Words)
	if !ok {
		return operate.Place{}, notFound{fmt.Sprintf("OCR: %q does not name its element by text (quote the label, e.g. \"Save as\")", t.Words)}
	}
	d, ds, err := o.s.display(ctx, t.Display)
	if err != nil {
		return operate.Place{}, err
	}
	shot, err := o.s.ocrShot(ctx, o.c, d)
	if err != nil {
		return operate.Place{}, err
	}
	ms, _, err := o.r.Find(ctx, shot.Frame.ID, shot.Pixels, tg.Query())
	if err != nil {
		return operate.Place{}, fmt.Errorf("reading the screen for %q: %w", t.Words, err)
	}
	m, err := ocr.Pick(ms, tg)
	switch {
	case errors.Is(err, ocr.ErrNotFound):
		return operate.Place{}, notFound{fmt.Sprintf("OCR on display %s (frame %s): %v", d.ID, shot.Frame.ID, err)}
	case errors.Is(err, ocr.ErrAmbiguous):
		return operate.Place{}, ambiguous{fmt.Errorf("%w; nothing was done", err)}
	case err != nil:
		return operate.Place{}, fmt.Errorf("%w; nothing was done", err)
	}
	ctr := m.Box.Center()
	r, err := action.Point{Space: geom.SpaceImage, X: ctr.X, Y: ctr.Y}.Resolve(shot.Frame, ds, imageTolerancePx)
	if err != nil {
		return operate.Place{}, fmt.Errorf("the text read for %q: %w", t.Words, err)
	}
	tt := target{Image: r.Image, Global: r.Global, Display: d, FrameID: shot.Frame.ID, Warning: r.Warning}
	p := tt.place()
	p.LocatedBy, p.Box = operate.ByOCR, &m.Box
	p.Note = fmt.Sprintf("located_by ocr: read %q at box (%d,%d)-(%d,%d) of frame %s (confidence %.0f), centre %s", m.Text,
		m.Box.X, m.Box.Y, m.Box.X+m.Box.W, m.Box.Y+m.Box.H, shot.Frame.ID, m.Conf, tt)
	return *p, nil
}

// noted adds a note to the place its locator finds, for a target OCR could
// have read had it been installed.
type noted struct {
	operate.Locator
	note string
}

func (n noted) Locate(ctx context.Context, t operate.Target) (operate.Place, error) {
	p, err := n.Locator.Locate(ctx, t)
	if _, text := ocr.ParseTarget(t.Words); err == nil && text {
		p.Note = strings.TrimPrefix(p.Note+"; "+n.note, "; ")
	}
	return p, err
}

// locator is the locate chain of the call's input (operate.Op.Locate): the
// accessibility tree when there is an element source, OCR for a text
// target, then the vision model. Without OCR its tier is skipped with a
// note; without a model the vision step says what a model needs.
func (s *Server) locator(c *call) operate.Locator {
	var chain operate.Chain
	if s.elements != nil {
		chain = append(chain, treeLocator{s, c})
	}
	var vis operate.Locator = visionLocator{s, c}
	if r, err := s.ocrOrErr(); err == nil {
		chain = append(chain, ocrLocator{s, c, r})
	} else {
		vis = noted{vis, "OCR tier skipped: " + err.Error()}
	}
	return append(chain, vis)
}
