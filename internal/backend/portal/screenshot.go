package portal

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"net/url"
	"os"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/geom"
)

// screenshot takes the whole desktop through org.freedesktop.portal.Screenshot
// (interactive false), reads the PNG at the file URI of the Response and
// removes the file. A request whose answer takes longer than CaptureWait
// (a permission dialog) stays open, and the next screenshot waits on it.
func (b *Backend) screenshot(ctx context.Context) (*image.RGBA, error) {
	b.shotMu.Lock()
	defer b.shotMu.Unlock()
	if b.bus == nil {
		return nil, errors.New("portal: the backend is not started")
	}
	req := b.shot
	if req == nil {
		var err error
		opts := map[string]dbus.Variant{"interactive": dbus.MakeVariant(false)}
		if req, err = b.bus.call(ctx, ifaceShot+".Screenshot", opts, ""); err != nil {
			return nil, fmt.Errorf("portal capture: %w", err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, b.opts.CaptureWait)
	defer cancel()
	results, err := req.wait(wctx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		b.shot = req // leave the dialog up; the next capture waits on it
		return nil, fmt.Errorf("portal capture: %w: no answer from the Screenshot portal in %s; approve the screenshot permission there, then retry", ErrPermissionPending, b.opts.CaptureWait)
	}
	b.shot = nil
	if err != nil {
		if ctx.Err() != nil {
			req.cancel()
		}
		return nil, fmt.Errorf("portal capture: %w", err)
	}
	img, err := readShot(results)
	if err != nil {
		return nil, fmt.Errorf("portal capture: %w", err)
	}
	b.lastImg = geom.Size{W: img.Bounds().Dx(), H: img.Bounds().Dy()}
	return img, nil
}

// readShot decodes the PNG at results' uri (a file:// URI the portal wrote)
// and removes the file, which nobody else needs.
func readShot(results map[string]dbus.Variant) (*image.RGBA, error) {
	v, ok := results["uri"]
	uri, isString := v.Value().(string)
	if !ok || !isString {
		return nil, fmt.Errorf("the Screenshot response has no uri (results %v)", results)
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, fmt.Errorf("the Screenshot response's uri %q is not a file:// URI", uri)
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, fmt.Errorf("read the screenshot the portal wrote: %w", err)
	}
	img, err := png.Decode(f)
	f.Close()
	rmErr := os.Remove(u.Path)
	if err != nil {
		return nil, fmt.Errorf("decode the screenshot %s: %w", u.Path, err)
	}
	if rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the screenshot the portal wrote: %w", rmErr)
	}
	if rgba, ok := img.(*image.RGBA); ok && rgba.Rect.Min == (image.Point{}) {
		return rgba, nil
	}
	out := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(out, out.Rect, img, img.Bounds().Min, draw.Src)
	return out, nil
}
