package vnc

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// captureWait is one capture waiting for the server's answer. The reader
// counts the pixels of the region that arrive and, once all did, copies the
// region into dst while it still holds the framebuffer lock.
type captureWait struct {
	rect    image.Rectangle // framebuffer pixels
	need    int             // pixels in rect
	covered int             // pixels of rect received since the request
	dst     *image.RGBA
	done    chan struct{}
	err     error
}

func (p *captureWait) finish(err error) {
	p.err = err
	close(p.done)
}

// copyFrom copies p.rect of fb into p.dst (bounds at 0,0).
func (p *captureWait) copyFrom(fb *image.RGBA) {
	w := p.rect.Dx() * 4
	for y := 0; y < p.rect.Dy(); y++ {
		s := fb.PixOffset(p.rect.Min.X, p.rect.Min.Y+y)
		copy(p.dst.Pix[y*p.dst.Stride:y*p.dst.Stride+w], fb.Pix[s:s+w])
	}
}

// Capture grabs region (global pixels = framebuffer pixels) into dst when its
// buffer is large enough, else into a new image.
//
// It sends a non-incremental FramebufferUpdateRequest for the region and waits
// (at most Options.UpdateTimeout) until every pixel of it arrived, then copies
// it from the local framebuffer. A non-incremental request is always answered
// at once with the server's current pixels; an incremental one is only
// answered when something changed, so it cannot prove that the local copy is
// current without waiting out a timeout. The cost is that each capture moves
// the region's pixels (4 bytes each, Raw) over the network.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if region.Empty() {
		return nil, fmt.Errorf("vnc capture: empty region %v: give a width and height above zero", region)
	}
	rect := image.Rect(region.X, region.Y, region.X+region.W, region.Y+region.H)
	img := desktop.ReuseRGBA(dst, region.W, region.H)

	b.capMu.Lock()
	defer b.capMu.Unlock()
	b.fbMu.Lock()
	fbRect := b.fb.Rect
	if !rect.In(fbRect) {
		b.fbMu.Unlock()
		return nil, fmt.Errorf("vnc capture: region %v is outside the remote screen (%dx%d): capture inside the display (see Displays)", region, fbRect.Dx(), fbRect.Dy())
	}
	p := &captureWait{rect: rect, need: rect.Dx() * rect.Dy(), dst: img, done: make(chan struct{})}
	b.pending = p
	b.fbMu.Unlock()

	abandon := func() {
		b.fbMu.Lock()
		if b.pending == p {
			b.pending = nil
		}
		b.fbMu.Unlock()
	}
	if err := b.writeMsg(updateRequestMsg(false, rect.Min.X, rect.Min.Y, rect.Dx(), rect.Dy())); err != nil {
		abandon()
		return nil, err
	}
	timer := time.NewTimer(b.opts.UpdateTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
		if p.err != nil {
			return nil, p.err
		}
		return img, nil
	case <-ctx.Done():
		abandon()
		return nil, ctx.Err()
	case <-timer.C:
		abandon()
		return nil, fmt.Errorf("vnc capture: %s did not send the requested pixels of %v within %v: the server or network is too slow or stalled; raise the update timeout or check the connection", b.addr, region, b.opts.UpdateTimeout)
	}
}
