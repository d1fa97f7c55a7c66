package android

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/geom"
)

func ioReadFull(r io.Reader, b []byte) (int, error) { return io.ReadFull(r, b) }

// Screenshot captures the whole screen in device pixels.
func (b *Backend) Screenshot(ctx context.Context) (image.Image, error) {
	if b.opts.RawCapture {
		return b.rawShot(ctx)
	}
	data, err := b.dev.Exec(ctx, "screencap -p")
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		msg := data
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return nil, fmt.Errorf("android device %s: screencap gave no PNG (%v): %q", b.dev.Serial(), err, msg)
	}
	b.noteSize(img.Bounds().Size())
	return img, nil
}

// rawShot reads screencap's raw output: width, height, pixel format (and
// on Android 9+ a dataspace), then RGBA pixels.
func (b *Backend) rawShot(ctx context.Context) (image.Image, error) {
	data, err := b.dev.Exec(ctx, "screencap")
	if err != nil {
		return nil, err
	}
	if len(data) < 12 {
		return nil, fmt.Errorf("android device %s: screencap gave %d bytes", b.dev.Serial(), len(data))
	}
	w, h, f := int(le32(data[0:])), int(le32(data[4:])), le32(data[8:])
	n := w * h * 4
	var pix []byte
	switch {
	case f != 1 && f != 2:
		return nil, fmt.Errorf("android device %s: screencap pixel format %d, want RGBA_8888 or RGBX_8888", b.dev.Serial(), f)
	case len(data) == 16+n:
		pix = data[16:]
	case len(data) == 12+n:
		pix = data[12:]
	default:
		return nil, fmt.Errorf("android device %s: screencap gave %d bytes for %dx%d", b.dev.Serial(), len(data), w, h)
	}
	img := &image.RGBA{Pix: pix, Stride: w * 4, Rect: image.Rect(0, 0, w, h)}
	if f == 2 {
		for i := 3; i < len(pix); i += 4 {
			pix[i] = 255
		}
	}
	b.noteSize(image.Pt(w, h))
	return img, nil
}

// Capture grabs region (logical pixels) at the device's resolution.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if region.Empty() {
		return nil, fmt.Errorf("empty capture region %v", region)
	}
	b.mu.Lock()
	known := b.size // the size the caller's region was taken from
	b.mu.Unlock()
	img, err := b.Screenshot(ctx)
	if err != nil {
		return nil, err
	}
	full := b.logical(img.Bounds().Size())
	// The whole screen, as it is now: a phone that turned since its size
	// was read comes back in its new shape, which the screenshot's frame
	// then describes.
	whole := full == region || (known != (image.Point{}) && region == b.logical(known))
	return phone.Crop(img, region, full, b.scale, b.scale, whole, dst)
}
