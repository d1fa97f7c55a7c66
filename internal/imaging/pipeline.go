package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Shot is one encoded screenshot and how it maps to the screen.
type Shot struct {
	// Data is the encoded image, a fresh slice the caller may keep.
	Data []byte
	// MIME is "image/jpeg" or "image/png".
	MIME string
	// Frame maps the image's pixels to the screen (geom.Frame.Resolve).
	Frame geom.Frame
	// Quality is the JPEG quality finally used (0 for PNG).
	Quality int
	// Pixels is the prepared image that was encoded (padding included), a fresh
	// copy the caller may keep; nil unless Options.KeepPixels was set.
	Pixels *image.RGBA
	// Thumb is a 32x32 grayscale summary of the content, for settle and stuck detection.
	Thumb Thumb
	// Timing is how long each stage took.
	Timing Timing
}

// Timing is the duration of each pipeline stage of one Shot.
type Timing struct {
	// Capture is the time spent in desktop.Screen.Capture.
	Capture time.Duration
	// Scale covers resampling, padding and the thumbnail (all attempts).
	Scale time.Duration
	// Encode covers encoding, including re-encodes to meet the byte budget.
	Encode time.Duration
}

// ErrTooLarge is returned when no size and quality fit the byte budget.
var ErrTooLarge = errors.New("screenshot does not fit the byte budget")

// Pipeline captures, scales and encodes screenshots. It is safe for concurrent
// use; each call borrows a set of capture, scale and encode buffers that later
// calls reuse, so steady-state captures allocate only the returned Data.
type Pipeline struct {
	mu   sync.Mutex
	free []*shotState
}

// shotState holds the reusable buffers of one in-flight Shoot.
type shotState struct {
	capture *image.RGBA
	canvas  []byte
	sc      scaler
	jpeg    jpegEncoder
	out     []byte
	png     bytes.Buffer
	pngEnc  png.Encoder
	pngPool pngPool
}

type pngPool struct{ b *png.EncoderBuffer }

func (p *pngPool) Get() *png.EncoderBuffer  { return p.b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.b = b }

// NewPipeline returns an empty pipeline; buffers are allocated on first use.
func NewPipeline() *Pipeline { return &Pipeline{} }

func (p *Pipeline) get() *shotState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return s
	}
	s := &shotState{}
	s.pngEnc = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &s.pngPool}
	return s
}

func (p *Pipeline) put(s *shotState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < 4 { // keep a few sets for concurrent callers
		p.free = append(p.free, s)
	}
}

// Shoot captures region of display d (global logical pixels; the zero Rect means
// the whole display) from s and returns it encoded per o. The capture (physical
// pixels) is resampled in one step to the profile's content size, padded to the
// prepared size when the profile pads, and encoded; over o.MaxBytes the JPEG
// quality is lowered (down to MinQuality) and then the size. A sub-region is a
// zoom: it is scaled up to o.MaxLongEdge when smaller. The Shot's Frame, with ID
// frameID, is what geom.Frame.Resolve needs to map image points back.
func (p *Pipeline) Shoot(ctx context.Context, s desktop.Screen, d geom.Display, region geom.Rect, o Options, frameID string) (*Shot, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	st := p.get()
	defer p.put(st)
	shot := &Shot{MIME: o.MIME()}
	t0 := time.Now()
	img, region, zoom, err := st.captureRegion(ctx, s, d, region)
	shot.Timing.Capture = time.Since(t0)
	if err != nil {
		return nil, err
	}
	if !zoom {
		// A screen that turned since its size was read (a phone) comes
		// back in its new shape: the frame describes the pixels captured.
		d, region = turned(d, img)
	}
	// The thumbnail summarizes the capture itself, so a Thumb of the same
	// screen (Pipeline.Thumb, no scaling or encoding) equals it.
	t1 := time.Now()
	shot.Thumb = ThumbOf(img)
	shot.Timing.Scale = time.Since(t1)

	edge := o.MaxLongEdge
	quality := o.Quality
	var tried geom.Size    // the content size of the previous attempt
	var canvas *image.RGBA // the prepared image of the current attempt
	for {
		var content, prepared geom.Size
		if zoom {
			content, prepared = o.Profile.PrepareZoomSize(region.Size(), edge)
		} else {
			content, prepared = o.Profile.PrepareSize(region.Size(), edge)
		}
		if tried != (geom.Size{}) && content.W*content.H >= tried.W*tried.H {
			// The profile has a size floor (smart resize keeps a minimum pixel count).
			return nil, fmt.Errorf("%w: %d bytes at %dx%d (quality %d) exceed max_bytes %d and the %q profile allows no smaller image; raise max_bytes",
				ErrTooLarge, len(st.out), tried.W, tried.H, quality, o.MaxBytes, o.Profile.Name)
		}
		tried = content
		t1 = time.Now()
		canvas = img // no resampling or padding: encode the capture itself
		if prepared != content || content != (geom.Size{W: img.Rect.Dx(), H: img.Rect.Dy()}) || img.Rect.Min != (image.Point{}) {
			canvas = st.canvasFor(prepared)
			st.sc.Scale(canvas.SubImage(image.Rect(0, 0, content.W, content.H)).(*image.RGBA), img)
			padBlack(canvas, content)
		}
		if o.Pointer != nil && region.Contains(*o.Pointer) {
			canvas = st.drawPointer(canvas, img, geom.Frame{Display: d, Region: region, Content: content, Prepared: prepared}, *o.Pointer)
		}
		if len(o.Marks) > 0 {
			canvas = st.drawMarks(canvas, img, geom.Frame{Display: d, Region: region, Content: content, Prepared: prepared}, o.Marks)
		}
		t2 := time.Now()
		shot.Timing.Scale += t2.Sub(t1)

		if quality, err = st.encode(canvas, o, quality); err != nil {
			return nil, err
		}
		shot.Timing.Encode += time.Since(t2)
		if len(st.out) <= o.MaxBytes {
			shot.Frame = geom.Frame{ID: frameID, Display: d, Region: region, Content: content, Prepared: prepared}
			break
		}
		next := content.LongEdge() * 3 / 4
		if next < 64 {
			return nil, fmt.Errorf("%w: %d bytes at %dx%d (quality %d) exceed max_bytes %d; raise max_bytes",
				ErrTooLarge, len(st.out), content.W, content.H, quality, o.MaxBytes)
		}
		edge = next
	}
	if o.Format == "jpeg" {
		shot.Quality = quality
	}
	shot.Data = append([]byte(nil), st.out...)
	if o.KeepPixels {
		shot.Pixels = copyInto(&image.RGBA{Pix: make([]byte, len(canvas.Pix)), Stride: canvas.Rect.Dx() * 4,
			Rect: image.Rect(0, 0, canvas.Rect.Dx(), canvas.Rect.Dy())}, canvas)
	}
	return shot, nil
}

// encode encodes canvas into st.out per o, lowering the JPEG quality (down to
// MinQuality) until it fits o.MaxBytes; it returns the quality used. The
// caller checks the size: a PNG, or a JPEG at MinQuality, may still be over.
func (st *shotState) encode(canvas *image.RGBA, o Options, quality int) (int, error) {
	for {
		st.out = st.out[:0]
		if o.Format == "png" {
			st.png.Reset()
			if err := st.pngEnc.Encode(&st.png, canvas); err != nil {
				return quality, fmt.Errorf("png encoding of a %dx%d screenshot failed: %w", canvas.Rect.Dx(), canvas.Rect.Dy(), err)
			}
			st.out = append(st.out, st.png.Bytes()...)
		} else {
			var err error
			if st.out, err = st.jpeg.Encode(st.out, canvas, quality); err != nil {
				return quality, err
			}
		}
		if len(st.out) <= o.MaxBytes || o.Format == "png" || quality <= MinQuality {
			return quality, nil
		}
		quality = max(MinQuality, quality-10)
	}
}

// drawPointer draws the pointer at global point at into canvas, the prepared
// image of frame f, and returns the image drawn on: a copy in the state's
// buffer when canvas is the capture itself, which may be the backend's buffer.
func (st *shotState) drawPointer(canvas, capture *image.RGBA, f geom.Frame, at geom.GlobalPoint) *image.RGBA {
	if canvas == capture {
		canvas = copyInto(st.canvasFor(f.Prepared), capture)
	}
	p := f.GlobalToImage(at)
	DrawPointer(canvas, int(p.X+0.5), int(p.Y+0.5))
	return canvas
}

// drawMarks draws marks (global boxes mapped through f) into canvas, clipped
// to its content, copying the capture first when canvas is the capture.
func (st *shotState) drawMarks(canvas, capture *image.RGBA, f geom.Frame, marks []ScreenMark) *image.RGBA {
	if canvas == capture {
		canvas = copyInto(st.canvasFor(f.Prepared), capture)
	}
	content := f.ContentRect()
	ms := make([]Mark, 0, len(marks))
	for _, m := range marks {
		if b := f.RectToImage(m.Box).Intersect(content); !b.Empty() {
			ms = append(ms, Mark{Label: m.Label, Box: b})
		}
	}
	DrawMarks(canvas.SubImage(image.Rect(0, 0, content.W, content.H)).(*image.RGBA), ms)
	return canvas
}

// Thumb captures region of display d (the zero Rect: the whole display) and
// returns only its thumbnail: no scaling, no encoding. It equals the Thumb of
// a Shoot of the same screen, so the agent's settle wait can compare frames
// without encoding each one.
func (p *Pipeline) Thumb(ctx context.Context, s desktop.Screen, d geom.Display, region geom.Rect) (Thumb, error) {
	st := p.get()
	defer p.put(st)
	img, _, _, err := st.captureRegion(ctx, s, d, region)
	if err != nil {
		return Thumb{}, err
	}
	return ThumbOf(img), nil
}

// captureRegion captures region of d into the state's reused buffer; the zero
// Rect means the whole display, any other region is cut to the display and is
// a zoom when it is not the whole display.
func (st *shotState) captureRegion(ctx context.Context, s desktop.Screen, d geom.Display, region geom.Rect) (*image.RGBA, geom.Rect, bool, error) {
	if d.Bounds.Empty() {
		return nil, region, false, fmt.Errorf("display %q has empty bounds %v: list displays again (gui_list_displays)", d.ID, d.Bounds)
	}
	zoom := false
	if region == (geom.Rect{}) {
		region = d.Bounds
	} else {
		r := region.Intersect(d.Bounds)
		if r.Empty() {
			return nil, region, false, fmt.Errorf("%w: region %v does not overlap display %q at %v; give a region inside the display",
				geom.ErrOutside, region, d.ID, d.Bounds)
		}
		region, zoom = r, r != d.Bounds
	}
	img, err := s.Capture(ctx, region, st.capture)
	if err != nil {
		return nil, region, zoom, fmt.Errorf("capture of display %q region %v with the %s backend failed: %w", d.ID, region, s.Name(), err)
	}
	if img == nil || img.Rect.Empty() {
		return nil, region, zoom, fmt.Errorf("capture of display %q region %v with the %s backend returned no pixels", d.ID, region, s.Name())
	}
	if st.capture == nil || cap(img.Pix) >= cap(st.capture.Pix) {
		st.capture = img
	}
	return img, region, zoom, nil
}

// canvasFor returns an RGBA image of size sz backed by the state's reused buffer.
func (st *shotState) canvasFor(sz geom.Size) *image.RGBA {
	n := sz.W * sz.H * 4
	if cap(st.canvas) < n {
		st.canvas = make([]byte, n)
	}
	return &image.RGBA{Pix: st.canvas[:n], Stride: sz.W * 4, Rect: image.Rect(0, 0, sz.W, sz.H)}
}

// copyInto copies src, row by row, into dst (same size, origin 0,0) and returns dst.
func copyInto(dst, src *image.RGBA) *image.RGBA {
	w := src.Rect.Dx() * 4
	for y := range src.Rect.Dy() {
		o := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+y)
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+w], src.Pix[o:o+w])
	}
	return dst
}

// padBlack paints the canvas outside the content rectangle opaque black.
func padBlack(m *image.RGBA, content geom.Size) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	fill := func(row []byte) {
		for i := 0; i+3 < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = 0, 0, 0, 255
		}
	}
	for y := range h {
		row := m.Pix[y*m.Stride : y*m.Stride+w*4]
		if y >= content.H {
			fill(row)
		} else if content.W < w {
			fill(row[content.W*4:])
		}
	}
}

// BenchReport is the outcome of Bench: medians over N captures, in milliseconds.
type BenchReport struct {
	CaptureMS float64 `json:"capture_ms"`
	ScaleMS   float64 `json:"scale_ms"`
	EncodeMS  float64 `json:"encode_ms"`
	TotalMS   float64 `json:"total_ms"`
	// Bytes is the median encoded size.
	Bytes int `json:"bytes"`
	// Width and Height are the size of the image sent, in image pixels.
	Width  int `json:"width"`
	Height int `json:"height"`
	// N is the number of captures measured.
	N int `json:"n"`
}

// Bench shoots display d n times (after one warm-up) with options o and reports
// the median time of each stage and of the whole call.
func Bench(ctx context.Context, s desktop.Screen, d geom.Display, o Options, n int) (BenchReport, error) {
	if n <= 0 {
		return BenchReport{}, fmt.Errorf("bench needs at least 1 capture, got n=%d", n)
	}
	p := NewPipeline()
	if _, err := p.Shoot(ctx, s, d, geom.Rect{}, o, "bench"); err != nil {
		return BenchReport{}, err
	}
	var capT, scaT, encT, tot []float64
	var sizes []int
	var last *Shot
	for range n {
		if err := ctx.Err(); err != nil {
			return BenchReport{}, err
		}
		t0 := time.Now()
		shot, err := p.Shoot(ctx, s, d, geom.Rect{}, o, "bench")
		if err != nil {
			return BenchReport{}, err
		}
		tot = append(tot, ms(time.Since(t0)))
		capT = append(capT, ms(shot.Timing.Capture))
		scaT = append(scaT, ms(shot.Timing.Scale))
		encT = append(encT, ms(shot.Timing.Encode))
		sizes = append(sizes, len(shot.Data))
		last = shot
	}
	sort.Ints(sizes)
	img := last.Frame.ImageSize()
	return BenchReport{
		CaptureMS: median(capT), ScaleMS: median(scaT), EncodeMS: median(encT), TotalMS: median(tot),
		Bytes: sizes[len(sizes)/2], Width: img.W, Height: img.H, N: n,
	}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// turned returns d and its region as img, a capture of the whole display,
// shows them: when img's size is not d's size at its scale (more than a
// rounding apart), the display has turned or been resized since d was
// listed, and its logical size is taken from the pixels.
func turned(d geom.Display, img *image.RGBA) (geom.Display, geom.Rect) {
	sc := d.ScaleFactor()
	w, h := img.Rect.Dx(), img.Rect.Dy()
	ew, eh := float64(d.Bounds.W)*sc, float64(d.Bounds.H)*sc
	if math.Abs(float64(w)-ew) <= sc+1 && math.Abs(float64(h)-eh) <= sc+1 {
		return d, d.Bounds
	}
	d.Bounds.W, d.Bounds.H = int(math.Round(float64(w)/sc)), int(math.Round(float64(h)/sc))
	return d, d.Bounds
}
