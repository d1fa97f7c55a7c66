package tesseract

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/ocr/regions"
)

// Options configures an Engine. The zero value reads English with the
// tesseract on PATH.
type Options struct {
	// Binary is the program, a path or a name on PATH; "" = DefaultBinary.
	Binary string
	// BinaryVar names the setting Binary came from (GUI_AGENT_OCR_TESSERACT),
	// for the error that says it does not name Tesseract.
	BinaryVar string
	// Langs are the languages to read (GUI_AGENT_OCR_LANGS); nil = ocr.DefaultLangs.
	Langs []string
	// Workers is how many tesseract processes read at once; 0 = the number
	// of CPUs, at most 2.
	Workers int
	// Raw sends the region as it is to Tesseract's own page layout analysis
	// (page segmentation mode 3) instead of finding and preparing its lines:
	// what Tesseract alone reads of a screenshot, kept for comparison.
	Raw bool
	// MinConf drops words read with a lower confidence (0-100); 0 = 30.
	MinConf float64
	// Regions tunes finding and preparing lines.
	Regions regions.Options
	// TempDir holds the images handed to tesseract; "" = the system's.
	TempDir string
	// LineCache is how many lines' readings the engine remembers by their
	// prepared pixels, so that a line a later read finds unchanged (the
	// next frame of a screen) is not read again; 0 = 4096, < 0 = none.
	LineCache int
}

// Engine reads text with tesseract processes it keeps running. It
// implements ocr.Engine; Close stops the processes.
type Engine struct {
	o        Options
	info     Info
	id, name string
	args     []string
	dir      string // its temporary folder
	sentinel string

	slots chan *server // Workers slots; a nil one has no process yet
	mu    sync.Mutex
	next  int // numbers the servers' image files
	done  bool
	lines lineCache
}

// New checks that tesseract and o's languages are installed (an error
// wrapping ocr.ErrUnavailable says how to install what is missing) and
// returns an engine; its processes start on the first Read.
func New(ctx context.Context, o Options) (*Engine, error) {
	if len(o.Langs) == 0 {
		o.Langs = ocr.DefaultLangs
	}
	if o.Workers <= 0 {
		o.Workers = min(runtime.NumCPU(), 2)
	}
	if o.MinConf == 0 {
		o.MinConf = 30
	}
	if o.LineCache == 0 {
		o.LineCache = 4096
	}
	info, err := ProbeNamed(ctx, o.Binary, o.BinaryVar)
	if err != nil {
		return nil, err
	}
	if err := CheckLangs(o.Langs, info.Langs); err != nil {
		return nil, err
	}
	langs := strings.Join(o.Langs, "+")
	e := &Engine{o: o, info: info, slots: make(chan *server, o.Workers), lines: lineCache{max: o.LineCache}}
	e.name = strings.TrimSpace(info.Version + " " + langs)
	e.id = "tesseract:" + langs
	// Each prepared image is one line of text, dark on white: a single
	// text line (psm 7), no inverted-text check.
	e.args = []string{"-", "-", "-l", langs, "--psm", "7", "-c", "tessedit_do_invert=0"}
	if o.Raw {
		e.id += ":raw"
		e.args = []string{"-", "-", "-l", langs, "--psm", "3"}
	}
	e.args = append(e.args, "--dpi", "300", "-c", "stream_filelist=1", "tsv")
	if e.dir, err = os.MkdirTemp(o.TempDir, "guiagent-ocr-"); err != nil {
		return nil, fmt.Errorf("create a folder for OCR images: %w", err)
	}
	e.sentinel = filepath.Join(e.dir, "end.pgm")
	blank := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range blank.Pix {
		blank.Pix[i] = 255
	}
	if err := writePNM(e.sentinel, blank, true); err != nil {
		os.RemoveAll(e.dir)
		return nil, err
	}
	for range o.Workers {
		e.slots <- nil
	}
	return e, nil
}

// Info is what Probe found about the program.
func (e *Engine) Info() Info { return e.info }

// ID identifies the engine and its languages ("tesseract:eng").
func (e *Engine) ID() string { return e.id }

// Name is the program's version and the languages ("tesseract 5.3.0 eng").
func (e *Engine) Name() string { return e.name }

// Close stops the engine's processes and removes its files; a Read after
// Close fails.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return nil
	}
	e.done = true
	e.mu.Unlock()
	for range e.o.Workers { // each slot, once its read is done
		if s := <-e.slots; s != nil {
			s.stop()
		}
	}
	for range e.o.Workers { // empty again, for reads that find the engine closed
		e.slots <- nil
	}
	return os.RemoveAll(e.dir)
}

// errClosed is returned by a Read after Close.
var errClosed = errors.New("the OCR engine is closed")

// recognize writes imgs to a server's files and returns the rows it read
// of each, starting the server when its slot has none. A server whose read
// failed or was abandoned is stopped; the next read starts a new one.
func (e *Engine) recognize(ctx context.Context, imgs []image.Image) ([][][]string, error) {
	var s *server
	select {
	case s = <-e.slots:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e.mu.Lock()
	closed := e.done
	e.next++
	n := e.next
	e.mu.Unlock()
	if closed {
		e.slots <- s
		return nil, errClosed
	}
	if s != nil && s.ended() { // it died while idle: start another
		s.stop()
		s = nil
	}
	if s == nil {
		var err error
		base := filepath.Join(e.dir, "page"+strconv.Itoa(n))
		if s, err = startServer(e.info.Path, e.args, base, e.sentinel); err != nil {
			e.slots <- nil
			return nil, fmt.Errorf("%w: %v", ocr.ErrUnavailable, err)
		}
	}
	for k, img := range imgs {
		if err := writePNM(s.file(k), img, !e.o.Raw); err != nil {
			e.slots <- s
			return nil, err
		}
	}
	pages, err := s.read(ctx, len(imgs))
	if err != nil {
		s.kill()
		e.slots <- nil
		return nil, err
	}
	e.slots <- s
	return pages, nil
}

// Read recognizes the text in region of img (see ocr.Engine).
func (e *Engine) Read(ctx context.Context, img image.Image, region geom.ImageRect) (ocr.Page, error) {
	region, err := ocr.ResolveRegion(ocr.SizeOf(img), region)
	if err != nil {
		return ocr.Page{}, err
	}
	e.mu.Lock()
	closed := e.done
	e.mu.Unlock()
	if closed { // even a read the line cache has all of
		return ocr.Page{}, errClosed
	}
	page := ocr.Page{Region: region, Engine: e.name}
	if e.o.Raw {
		page.Lines, err = e.readRaw(ctx, img, region)
	} else {
		page.Lines, err = e.readPrepared(ctx, img, region)
	}
	if err != nil {
		return ocr.Page{}, err
	}
	ocr.SortLines(page.Lines)
	return page, nil
}

// sheetLines turns the rows read from sheet sh into lines in the image's
// pixels: a line per placement and Tesseract line.
func (e *Engine) sheetLines(sh regions.Sheet, rows [][]string, region geom.ImageRect) []ocr.Line {
	type lineKey struct {
		place int
		line  string
	}
	groups := map[lineKey][]ocr.Word{}
	var order []lineKey
	for _, w := range parseWords(rows) {
		if w.conf < e.o.MinConf {
			continue
		}
		place, box, ok := sh.Map(w.box)
		if !ok {
			continue
		}
		box.X += region.X
		box.Y += region.Y
		k := lineKey{place, w.line}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ocr.Word{Text: w.text, Box: box, Conf: w.conf})
	}
	lines := make([]ocr.Line, 0, len(order))
	for _, k := range order {
		if l := ocr.NewLine(groups[k]); len(l.Words) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// readRaw reads the region as it is.
func (e *Engine) readRaw(ctx context.Context, img image.Image, region geom.ImageRect) ([]ocr.Line, error) {
	b := img.Bounds()
	sub := image.NewRGBA(image.Rect(0, 0, region.W, region.H))
	for y := range region.H {
		for x := range region.W {
			sub.Set(x, y, img.At(b.Min.X+region.X+x, b.Min.Y+region.Y+y))
		}
	}
	pages, err := e.recognize(ctx, []image.Image{sub})
	if err != nil {
		return nil, err
	}
	rows := pages[0]
	groups := map[string][]ocr.Word{}
	var order []string
	for _, w := range parseWords(rows) {
		if w.conf < e.o.MinConf {
			continue
		}
		box := geom.ImageRect{X: region.X + w.box.Min.X, Y: region.Y + w.box.Min.Y, W: w.box.Dx(), H: w.box.Dy()}
		if _, seen := groups[w.line]; !seen {
			order = append(order, w.line)
		}
		groups[w.line] = append(groups[w.line], ocr.Word{Text: w.text, Box: box.Intersect(region), Conf: w.conf})
	}
	lines := make([]ocr.Line, 0, len(order))
	for _, k := range order {
		if l := ocr.NewLine(groups[k]); len(l.Words) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
