package geom

import (
	"fmt"
	"math"
	"path"
	"strings"
)

// Order is the order in which a model writes the two axes of a point.
type Order int

// Axis orders.
const (
	XY Order = iota
	YX
)

// Resize is how a model family wants the screenshot sized before it sees it.
type Resize int

// Resize rules.
const (
	// ResizeFit scales to fit the long-edge and pixel caps, keeping the aspect ratio.
	ResizeFit Resize = iota
	// ResizeSmart28 is Qwen2-VL/UI-TARS "smart resize": both sides rounded to
	// multiples of 28 with the pixel count kept inside [MinPixels, MaxPixels].
	// The image is stretched to that size (no padding).
	ResizeSmart28
	// ResizePad28 fits the caps, then pads right and bottom up to multiples of 28.
	ResizePad28
)

// Profile is one row of the model convention table: how a model family's
// coordinates relate to the image it was sent. Adding a family is adding a row.
type Profile struct {
	// Name identifies the row (also accepted by GUI_AGENT_ADAPTER-style overrides).
	Name string
	// Match holds glob patterns (path.Match syntax) tried against the lower-cased
	// model name, without any "vendor/" prefix.
	Match []string
	// Divisor is 0 when the model emits pixels of the image it saw; otherwise
	// coordinates are normalized: value / Divisor * image side.
	Divisor float64
	// Order of the axes in points and boxes ([ymin,xmin,ymax,xmax] for YX).
	Order Order
	// Resize is how the image is sized for this family.
	Resize Resize
	// MaxLongEdge caps the long edge of images sent; 0 uses the caller's cap.
	MaxLongEdge int
	// MaxPixels caps width*height of images sent; 0 means no cap.
	MaxPixels int
	// MinPixels is the lower bound used by ResizeSmart28.
	MinPixels int
}

// Profiles is the model convention table, first match wins; the last row is the
// conservative fallback (pixels of the image sent, xy). See shared MODELS.md.
//
// Sources, checked against the providers' public documentation:
//   - anthropic: Anthropic vision docs downscale an image whose long edge exceeds
//     1568 px or which exceeds about 1.15 megapixels; sending at most that keeps
//     the model's pixels equal to ours (computer tool: display_width_px/height_px).
//     Models whose documented limit is larger get their own row:
//   - anthropic-2576: Anthropic vision docs, "maximal native image resolution":
//     Claude Opus 4.7 reads up to 4784 visual tokens (28x28 px patches) and at
//     most 2576 px on the long edge; other models (the 5.x families included,
//     for which no larger limit is documented) 1568.
//   - openai-computer: OpenAI Responses computer tool; coordinates are pixels of
//     the declared display size, which guiagent declares equal to the image sent.
//   - gemini-computer-use: Gemini API "Computer Use" docs; click_at(x, y) etc. take
//     named x and y on a 0-999 grid, denormalized as x/1000*width (xy order).
//   - gemini: Gemini object detection and pointing; box_2d is [ymin,xmin,ymax,xmax]
//     and points are [y, x], normalized to 0-1000 (yx order).
//   - ui-tars-1.5: UI-TARS README_coordinates; absolute pixels of the image after
//     smart_resize (factor 28, MIN_PIXELS 100*28*28, MAX_PIXELS 16384*28*28).
//     guiagent sends an image that is already a fixed point of smart_resize.
//   - ui-tars (1.0, e.g. UI-TARS-72B-DPO) and doubao UI-TARS: relative 0-1000
//     (the UI-TARS action parser's factor 1000).
//   - qwen2.5-vl: absolute pixels of the image the processor saw; the image is
//     padded to multiples of 28 (Midscene's padBlockSize) so that the processor's
//     own resize leaves it unchanged.
//   - qwen3-vl, glm-4.xv, cogagent: relative 0-1000. seeclick, showui: 0-1.
var Profiles = []Profile{
	{Name: "anthropic-2576", Match: []string{"claude-opus-4-7*"}, MaxLongEdge: 2576, MaxPixels: 4784 * 28 * 28},
	{Name: "anthropic", Match: []string{"claude-*", "claude*"}, MaxLongEdge: 1568, MaxPixels: 1_150_000},
	{Name: "openai-computer", Match: []string{"computer-use-preview*"}},
	{Name: "openai", Match: []string{"gpt-4o*", "gpt-4.1*", "gpt-5*", "o3*", "o4*"}},
	{Name: "gemini-computer-use", Match: []string{"gemini*computer-use*"}, Divisor: 1000, Order: XY},
	{Name: "gemini", Match: []string{"gemini*"}, Divisor: 1000, Order: YX},
	{Name: "ui-tars-1.5", Match: []string{"ui-tars-1.5*", "ui-tars-2*", "uitars-1.5*"}, Resize: ResizeSmart28,
		MinPixels: 100 * 28 * 28, MaxPixels: 16384 * 28 * 28},
	{Name: "ui-tars", Match: []string{"ui-tars*", "uitars*", "doubao-vision*", "doubao-1.5-ui-tars*", "doubao*"}, Divisor: 1000},
	{Name: "qwen2.5-vl", Match: []string{"qwen2.5-vl*", "qwen2_5-vl*", "qwen-vl*"}, Resize: ResizePad28},
	{Name: "normalized-1000", Match: []string{"qwen3-vl*", "qwen3*vl*", "glm-4*v*", "glm-4.*", "cogagent*"}, Divisor: 1000},
	{Name: "normalized-1", Match: []string{"seeclick*", "showui*"}, Divisor: 1},
	{Name: "default", Match: []string{"*"}},
}

// ProfileFor returns the first profile whose pattern matches model.
func ProfileFor(model string) Profile {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range Profiles {
		for _, pat := range p.Match {
			if ok, _ := path.Match(pat, m); ok {
				return p
			}
		}
	}
	return Profiles[len(Profiles)-1]
}

// PrepareSize returns the content and prepared image sizes for a capture of the
// given logical size. maxLongEdge is the caller's cap (0 = none); the profile's
// own caps apply on top.
func (p Profile) PrepareSize(logical Size, maxLongEdge int) (content, prepared Size) {
	edge := maxLongEdge
	if p.MaxLongEdge > 0 && (edge == 0 || p.MaxLongEdge < edge) {
		edge = p.MaxLongEdge
	}
	if p.Resize == ResizeSmart28 {
		// Fit the caps first, then smart-resize: the result is a fixed point of the
		// model's own smart_resize, so its pixels are the model's pixels.
		s := SmartResize(FitSize(logical, edge, 0), 28, p.MinPixels, p.MaxPixels)
		for edge > 0 && s.LongEdge() > edge && s.W*s.H-28*min(s.W, s.H) >= p.MinPixels {
			// Rounding to 28 went past the cap: drop one block from the long side.
			if s.W >= s.H {
				s.W -= 28
			} else {
				s.H -= 28
			}
		}
		return s, s
	}
	content = FitSize(logical, edge, p.MaxPixels)
	prepared = content
	if p.Resize == ResizePad28 {
		prepared = Size{ceilTo(content.W, 28), ceilTo(content.H, 28)}
	}
	return content, prepared
}

func ceilTo(v, m int) int { return (v + m - 1) / m * m }

// FitSize scales s down (never up) so its long edge is at most maxLongEdge and its
// area at most maxPixels (zero disables either cap), keeping the aspect ratio.
func FitSize(s Size, maxLongEdge, maxPixels int) Size {
	f := 1.0
	if maxLongEdge > 0 && s.LongEdge() > maxLongEdge {
		f = float64(maxLongEdge) / float64(s.LongEdge())
	}
	if maxPixels > 0 && float64(s.W)*float64(s.H)*f*f > float64(maxPixels) {
		f = math.Sqrt(float64(maxPixels) / (float64(s.W) * float64(s.H)))
	}
	if f >= 1 {
		return s
	}
	// The tolerance absorbs float error in f, so a side that should land exactly
	// on the cap (3000 * 1568/3000) is not floored one pixel below it.
	const tol = 1e-9
	w, h := int(math.Floor(float64(s.W)*f+tol)), int(math.Floor(float64(s.H)*f+tol))
	return Size{max(w, 1), max(h, 1)}
}

// SmartResize implements the Qwen2-VL resize rule (qwen_vl_utils smart_resize, also
// used by UI-TARS 1.5): sides rounded to multiples of factor, area kept within
// [minPixels, maxPixels] (zero = unbounded). Rounding is half-to-even like
// Python's round, so sizes match the model's processor exactly.
func SmartResize(s Size, factor, minPixels, maxPixels int) Size {
	fh, fw := float64(s.H), float64(s.W)
	ff := float64(factor)
	h := max(factor, int(math.RoundToEven(fh/ff))*factor)
	w := max(factor, int(math.RoundToEven(fw/ff))*factor)
	switch {
	case maxPixels > 0 && h*w > maxPixels:
		beta := math.Sqrt(fh * fw / float64(maxPixels))
		h = max(factor, int(math.Floor(fh/beta/ff))*factor)
		w = max(factor, int(math.Floor(fw/beta/ff))*factor)
	case minPixels > 0 && h*w < minPixels:
		beta := math.Sqrt(float64(minPixels) / (fh * fw))
		h = int(math.Ceil(fh*beta/ff)) * factor
		w = int(math.Ceil(fw*beta/ff)) * factor
	}
	return Size{w, h}
}

// ToImage interprets numbers a model emitted for frame f: two numbers are a
// point, four a box (its centre is used). Order and normalization follow p's
// space (see ArrayPoint and SpaceToImage).
func (p Profile) ToImage(nums []float64, f Frame) (ImagePoint, error) {
	x, y, err := ArrayPoint(nums, p.Order)
	if err != nil {
		return ImagePoint{}, err
	}
	return SpaceToImage(p.Space(), x, y, f), nil
}

// ArrayPoint reads a point written as an array in axis order o: 2 numbers a
// point, 4 a box ([xmin, ymin, xmax, ymax], or [ymin, xmin, ymax, xmax] for YX)
// whose centre is meant. It returns named x and y.
func ArrayPoint(nums []float64, o Order) (x, y float64, err error) {
	switch len(nums) {
	case 2:
		x, y = nums[0], nums[1]
	case 4:
		x, y = (nums[0]+nums[2])/2, (nums[1]+nums[3])/2
	default:
		return 0, 0, fmt.Errorf("coordinates need 2 numbers (a point) or 4 (a box), got %d", len(nums))
	}
	if o == YX {
		x, y = y, x
	}
	if !finite(x) || !finite(y) {
		return 0, 0, fmt.Errorf("coordinate %v is not a finite number", nums)
	}
	return x, y, nil
}

// FromImage expresses an image point in p's convention (a point, in p's order).
func (p Profile) FromImage(ip ImagePoint, f Frame) []float64 {
	x, y := ip.X, ip.Y
	if p.Divisor != 0 {
		img := f.ImageSize()
		x = (x + 0.5) / float64(img.W) * p.Divisor
		y = (y + 0.5) / float64(img.H) * p.Divisor
	}
	if p.Order == YX {
		return []float64{y, x}
	}
	return []float64{x, y}
}

// PrepareZoomSize returns the content and prepared image sizes for a zoom: the
// region (logical pixels) is scaled, up or down, so that its long edge is
// longEdge, then the profile's caps, smart resize and padding apply as in
// PrepareSize.
func (p Profile) PrepareZoomSize(region Size, longEdge int) (content, prepared Size) {
	if longEdge <= 0 || region.W <= 0 || region.H <= 0 {
		return p.PrepareSize(region, longEdge)
	}
	f := float64(longEdge) / float64(region.LongEdge())
	target := Size{max(1, int(math.Round(float64(region.W)*f))), max(1, int(math.Round(float64(region.H)*f)))}
	return p.PrepareSize(target, longEdge)
}
