package darwin

import (
	"context"
	"errors"
	"fmt"
	"image"
	"unsafe"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Capture grabs region (global points, inside one display) at the display's
// device resolution into dst when its buffer is large enough, else into a new
// image. It uses CGDisplayCreateImageForRect, or CGWindowListCreateImage where
// that is missing, and fails with ErrScreenRecording when macOS withholds the
// screen.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if err := b.readyLocked(); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	a := b.sys.api
	ok, known := b.screenRecordingAllowed(false)
	b.mu.Unlock()
	if known && !ok {
		return nil, screenRecordingError("CGPreflightScreenCaptureAccess is false")
	}
	ds, raws, err := b.layout()
	if err != nil {
		return nil, err
	}
	i, local, err := locateRegion(ds, region)
	if err != nil {
		return nil, err
	}
	if a.CGDisplayCreateImageForRect == nil && a.CGWindowListCreateImage == nil {
		return nil, errors.New("macOS capture: this macOS no longer exports CGDisplayCreateImageForRect or CGWindowListCreateImage; a ScreenCaptureKit capture path is not implemented yet: use the VNC backend (enable Screen Sharing and run guiagent with --vnc localhost:5900)")
	}
	var img uintptr
	if a.CGDisplayCreateImageForRect != nil {
		img = a.CGDisplayCreateImageForRect(raws[i].id, local)
	}
	if img == 0 && a.CGWindowListCreateImage != nil {
		// Also the fallback for odd-sized regions, which some macOS versions
		// refuse in CGDisplayCreateImageForRect.
		img = a.CGWindowListCreateImage(globalRect(region), windowListOnScreenOnly, 0, windowImageBestResolution)
	}
	if img == 0 {
		if known && ok {
			return nil, fmt.Errorf("macOS capture: CoreGraphics returned no image of %v on display %s although Screen Recording is granted: the display may be asleep or changing mode; retry, and if it persists re-grant Screen Recording in System Settings > Privacy & Security", region, ds[i].ID)
		}
		return nil, screenRecordingError(fmt.Sprintf("the capture of display %s returned no image", ds[i].ID))
	}
	defer a.CGImageRelease(img)
	return b.copyImage(a, img, dst)
}

// copyImage converts a CGImage into an RGBA image, reusing dst when it can.
func (b *Backend) copyImage(a *api, img uintptr, dst *image.RGBA) (*image.RGBA, error) {
	w, h := int(a.CGImageGetWidth(img)), int(a.CGImageGetHeight(img))
	if w <= 0 || h <= 0 {
		return nil, screenRecordingError(fmt.Sprintf("the capture returned a %dx%d image", w, h))
	}
	layout := pixelLayout{
		bitsPerPixel:     int(a.CGImageGetBitsPerPixel(img)),
		bitsPerComponent: int(a.CGImageGetBitsPerComponent(img)),
		bitmapInfo:       a.CGImageGetBitmapInfo(img),
	}
	provider := a.CGImageGetDataProvider(img) // owned by img
	if provider == 0 {
		return nil, errors.New("macOS capture: the image has no data provider")
	}
	data := a.CGDataProviderCopyData(provider)
	if data == 0 {
		return nil, errors.New("macOS capture: CGDataProviderCopyData returned nothing (out of memory?)")
	}
	defer a.CFRelease(data)
	n := a.CFDataGetLength(data)
	p := a.CFDataGetBytePtr(data)
	if n <= 0 || p == nil {
		return nil, errors.New("macOS capture: the image data is empty")
	}
	src := unsafe.Slice((*byte)(p), n)
	out := desktop.ReuseRGBA(dst, w, h)
	if err := convertPixels(out, src, w, h, int(a.CGImageGetBytesPerRow(img)), layout); err != nil {
		return nil, err
	}
	return out, nil
}

// globalRect converts a global rectangle to a CGRect.
func globalRect(r geom.Rect) cgRect {
	return cgRect{X: float64(r.X), Y: float64(r.Y), W: float64(r.W), H: float64(r.H)}
}
