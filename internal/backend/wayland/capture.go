package wayland

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// captureTimeout bounds the wait for one screencopy frame.
const captureTimeout = 5 * time.Second

// capBuffer is the shared-memory wl_buffer captures are copied into, kept
// between captures of the same size and format.
type capBuffer struct {
	w, h, stride int
	format       uint32
	mem          *shmFile
	pool, buf    uint32
}

func (c *capBuffer) fits(f frameFormat) bool {
	return c != nil && c.w == f.w && c.h == f.h && c.stride == f.stride && c.format == f.format
}

// free destroys the buffer and its pool. Caller holds capMu.
func (c *capBuffer) free(b *Backend) {
	if c == nil {
		return
	}
	if c.buf != 0 {
		_ = b.c.send(c.buf, 0) // wl_buffer.destroy
	}
	if c.pool != 0 {
		_ = b.c.send(c.pool, 1) // wl_shm_pool.destroy
	}
	c.mem.close()
}

// newCapBuffer creates a wl_shm pool and buffer for frames of format f.
func (b *Backend) newCapBuffer(f frameFormat) (*capBuffer, error) {
	size := f.stride * f.h
	mem, err := newShm("guiagent-screencopy", size)
	if err != nil {
		return nil, err
	}
	c := &capBuffer{w: f.w, h: f.h, stride: f.stride, format: f.format, mem: mem}
	b.regMu.Lock()
	shm := b.bound[ifShm]
	b.regMu.Unlock()
	if err := b.c.send(shm, 0, newObj{out: &c.pool}, fdArg(mem.fd), int32(size)); err != nil {
		mem.close()
		return nil, err
	}
	if err := b.c.send(c.pool, 0, newObj{out: &c.buf}, int32(0), int32(f.w), int32(f.h), int32(f.stride), f.format); err != nil {
		c.free(b)
		return nil, err
	}
	return c, nil
}

// captureTiming is where the time of one capture went: the compositor's
// answer with the buffer's format (Offer: from the request to buffer_done),
// the compositor's frame (Frame: from our copy request to ready, the wait
// for its next repaint and its copy into our buffer), and ours (Convert: its
// pixels into RGBA).
type captureTiming struct {
	Offer, Frame, Convert time.Duration
}

// frameFormat is a screencopy frame's shm buffer format.
type frameFormat struct {
	format       uint32
	w, h, stride int
	yInvert      bool
}

// frameEvent is one event of a zwlr_screencopy_frame_v1.
type frameEvent struct {
	op uint16
	f  frameFormat
}

// Capture copies region (global logical pixels, on one output; a region
// crossing outputs is clipped to the output holding most of it) at the
// output's device resolution, through zwlr_screencopy_manager_v1, without the
// cursor. The image is dst reshaped when dst is large enough.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if region.Empty() {
		return nil, fmt.Errorf("wayland capture: region %v is empty", region)
	}
	p, clip, origin, err := b.outputAt(region)
	if err != nil {
		return nil, err
	}
	lx, ly := clip.X+origin.X-p.logical.X, clip.Y+origin.Y-p.logical.Y
	b.capMu.Lock()
	defer b.capMu.Unlock()
	return b.copyFrame(ctx, p, geom.Rect{X: lx, Y: ly, W: clip.W, H: clip.H}, dst)
}

// copyFrame runs one screencopy of local (output-local logical pixels) of p.
// Caller holds capMu.
func (b *Backend) copyFrame(ctx context.Context, p place, local geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	b.regMu.Lock()
	mgr := b.bound[ifScreencopy]
	b.regMu.Unlock()
	evs := make(chan frameEvent, 64)
	var frame uint32
	h := func(op uint16, d *decoder) {
		ev := frameEvent{op: op}
		switch op {
		case 0: // buffer(format, width, height, stride)
			ev.f = frameFormat{format: d.uint(), w: int(d.uint()), h: int(d.uint()), stride: int(d.uint())}
		case 1: // flags
			ev.f.yInvert = d.uint()&1 != 0
		case 4: // damage: not needed
			return
		}
		select {
		case evs <- ev:
		default:
		}
	}
	t0 := time.Now()
	var tCopy time.Time
	if err := b.c.send(mgr, 1, newObj{h: h, out: &frame}, int32(0), p.id, int32(local.X), int32(local.Y), int32(local.W), int32(local.H)); err != nil {
		return nil, err
	}
	defer func() {
		_ = b.c.send(frame, 1) // destroy
		b.c.forget(frame)
	}()
	v3 := b.boundVersion(ifScreencopy) >= 3
	var f frameFormat
	have, copied := false, false
	t := time.NewTimer(captureTimeout)
	defer t.Stop()
	for {
		var ev frameEvent
		select {
		case ev = <-evs:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.c.dead:
			return nil, b.c.failed()
		case <-t.C:
			return nil, fmt.Errorf("wayland capture: %s sent no frame of output %s within %v", b.compositor, p.name, captureTimeout)
		}
		switch ev.op {
		case 0:
			if !have && knownFormat(ev.f.format) {
				f, have = ev.f, true
			}
			if !v3 && have && !copied {
				tCopy = time.Now()
				if err := b.startCopy(frame, f); err != nil {
					return nil, err
				}
				copied = true
			}
		case 6: // buffer_done
			if !have {
				return nil, fmt.Errorf("wayland capture: %s offers output %s in no shared-memory format guiagent reads (want xrgb8888, argb8888, xbgr8888 or abgr8888)", b.compositor, p.name)
			}
			if !copied {
				tCopy = time.Now()
				if err := b.startCopy(frame, f); err != nil {
					return nil, err
				}
				copied = true
			}
		case 1:
			f.yInvert = ev.f.yInvert
		case 2: // ready
			tReady := time.Now()
			img := desktop.ReuseRGBA(dst, f.w, f.h)
			convert(img, b.cap.mem.data, f)
			b.capTime = captureTiming{Offer: tCopy.Sub(t0), Frame: tReady.Sub(tCopy), Convert: time.Since(tReady)}
			return img, nil
		case 3:
			return nil, fmt.Errorf("wayland capture: %s failed to copy output %s (region %v): the output may be off or gone", b.compositor, p.name, local)
		}
	}
}

// startCopy makes sure the capture buffer fits f and asks for the copy. Caller holds capMu.
func (b *Backend) startCopy(frame uint32, f frameFormat) error {
	if !b.cap.fits(f) {
		b.cap.free(b)
		b.cap = nil
		c, err := b.newCapBuffer(f)
		if err != nil {
			return err
		}
		b.cap = c
	}
	return b.c.send(frame, 0, b.cap.buf) // copy(buffer)
}
