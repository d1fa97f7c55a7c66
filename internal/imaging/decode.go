package imaging

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // register decoders for Decode
	_ "image/png"
)

// ErrImageTooLarge is wrapped by the errors of DecodeLimited and Decode for an
// image whose header announces more pixels than allowed.
var ErrImageTooLarge = errors.New("image too large")

// MaxDecodeSide is the longest side, in pixels, Decode accepts: twice an 8K
// display. It keeps a corrupt or hostile file from allocating gigabytes.
const MaxDecodeSide = 16384

// DecodeConfig reads the header of a PNG or JPEG: its format ("png" or
// "jpeg") and size, without decoding pixels. Other formats are an error.
func DecodeConfig(data []byte) (image.Config, string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return image.Config{}, "", fmt.Errorf("not a PNG or JPEG image (%d bytes): %w", len(data), err)
	}
	if format != "png" && format != "jpeg" {
		return image.Config{}, "", fmt.Errorf("a %s image: only PNG and JPEG are accepted", format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return image.Config{}, "", fmt.Errorf("%dx%d pixels: an image without pixels", cfg.Width, cfg.Height)
	}
	return cfg, format, nil
}

// DecodeLimited decodes a PNG or JPEG no wider than maxW and no taller than
// maxH pixels. The size is read from the header first, so a larger image is
// refused (with an error wrapping ErrImageTooLarge) before any pixel memory
// is allocated: a 1 MB PNG may announce 31000x31000 pixels.
func DecodeLimited(data []byte, maxW, maxH int) (image.Image, error) {
	cfg, _, err := DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	if cfg.Width > maxW || cfg.Height > maxH {
		return nil, fmt.Errorf("%w: %dx%d pixels, more than the %dx%d allowed", ErrImageTooLarge, cfg.Width, cfg.Height, maxW, maxH)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the %dx%d image: %w", cfg.Width, cfg.Height, err)
	}
	if b := img.Bounds(); b.Dx() > maxW || b.Dy() > maxH {
		return nil, fmt.Errorf("%w: decoded to %dx%d pixels, more than the %dx%d allowed", ErrImageTooLarge, b.Dx(), b.Dy(), maxW, maxH)
	}
	return img, nil
}

// Decode decodes a JPEG or PNG screenshot (for tests and tools that inspect
// Shot.Data), of at most MaxDecodeSide pixels a side.
func Decode(data []byte) (image.Image, error) {
	img, err := DecodeLimited(data, MaxDecodeSide, MaxDecodeSide)
	if err != nil {
		return nil, fmt.Errorf("decode screenshot (%d bytes; expected JPEG or PNG): %w", len(data), err)
	}
	return img, nil
}

// ToRGBA returns img as an *image.RGBA with bounds at (0,0), converting when needed.
func ToRGBA(img image.Image) *image.RGBA {
	if m, ok := img.(*image.RGBA); ok && m.Rect.Min == (image.Point{}) {
		return m
	}
	b := img.Bounds()
	m := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(m, m.Rect, img, b.Min, draw.Src)
	return m
}
