package imaging

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // register decoders for Decode
	_ "image/png"
)

// Decode decodes a JPEG or PNG screenshot (for tests and tools that inspect Shot.Data).
func Decode(data []byte) (image.Image, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
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
