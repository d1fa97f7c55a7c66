package imaging

import (
	"errors"
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/geom"
)

// Defaults applied to zero fields of Options.
const (
	DefaultMaxLongEdge = 1920
	DefaultQuality     = 75
	// DefaultMaxBytes is the byte budget of one encoded image: base64 inflates
	// it by 4/3, so an image stays under about 1 MB in an MCP tool result or a
	// model request, what hosts and providers accept.
	DefaultMaxBytes = 750_000
	// MinQuality is the lowest JPEG quality the byte budget lowers to before it
	// shrinks the image instead.
	MinQuality = 40
)

// Options controls one screenshot. The zero value is valid: JPEG at quality 75,
// long edge at most 1920 pixels, at most DefaultMaxBytes, the default (pixels) profile.
type Options struct {
	// MaxLongEdge caps the long edge of the content in image pixels; 0 = 1920.
	// For a zoom (a sub-region), the region is scaled up to this long edge.
	MaxLongEdge int `json:"max_long_edge,omitempty"`
	// Format is "jpeg" (default) or "png".
	Format string `json:"format,omitempty"`
	// Quality is the JPEG quality 1-100; 0 = 75.
	Quality int `json:"quality,omitempty"`
	// MaxBytes is the budget for the encoded image; 0 = DefaultMaxBytes.
	MaxBytes int `json:"max_bytes,omitempty"`
	// Profile is the model convention the image is prepared for (size caps,
	// padding, smart resize). The zero Profile sizes by MaxLongEdge only.
	Profile geom.Profile `json:"-"`
	// Pointer, when set and inside the captured region, draws a pointer arrow
	// with its tip at that global point into the image before it is encoded
	// (after the thumbnail, so settle detection does not see it). Nil draws none.
	Pointer *geom.GlobalPoint `json:"-"`
	// Marks, when set, are drawn as numbered marks (set-of-marks: DrawMarks)
	// into the image before it is encoded, each box mapped through the shot's
	// frame and clipped to its content (after the thumbnail, like Pointer).
	Marks []ScreenMark `json:"-"`
	// KeepPixels returns the prepared image (the pixels that were encoded) in
	// Shot.Pixels, so a caller that analyses the screenshot need not decode it.
	KeepPixels bool `json:"-"`
}

// ErrOptions is wrapped by every Validate error.
var ErrOptions = errors.New("invalid screenshot options")

// WithDefaults returns o with zero fields replaced by their defaults and the
// format lower-cased ("jpg" becomes "jpeg").
func (o Options) WithDefaults() Options {
	if o.MaxLongEdge == 0 {
		o.MaxLongEdge = DefaultMaxLongEdge
	}
	if o.Quality == 0 {
		o.Quality = DefaultQuality
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	o.Format = strings.ToLower(strings.TrimSpace(o.Format))
	switch o.Format {
	case "", "jpg":
		o.Format = "jpeg"
	}
	return o
}

// Validate reports the first problem with o (after defaults), naming the field
// and the accepted range.
func (o Options) Validate() error {
	o = o.WithDefaults()
	switch {
	case o.Format != "jpeg" && o.Format != "png":
		return fmt.Errorf("%w: format %q is not supported: use \"jpeg\" or \"png\"", ErrOptions, o.Format)
	case o.Quality < 1 || o.Quality > 100:
		return fmt.Errorf("%w: quality %d is out of range: use 1-100 (0 means %d)", ErrOptions, o.Quality, DefaultQuality)
	case o.MaxLongEdge < 16 || o.MaxLongEdge > 16384:
		return fmt.Errorf("%w: max long edge %d px is out of range: use 16-16384 (0 means %d)", ErrOptions, o.MaxLongEdge, DefaultMaxLongEdge)
	case o.MaxBytes < 4096:
		return fmt.Errorf("%w: max bytes %d is too small: use at least 4096 (0 means %d)", ErrOptions, o.MaxBytes, DefaultMaxBytes)
	}
	return nil
}

// MIME returns the media type of the format ("image/jpeg" or "image/png").
func (o Options) MIME() string {
	if o.WithDefaults().Format == "png" {
		return "image/png"
	}
	return "image/jpeg"
}
