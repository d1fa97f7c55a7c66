package x11

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"

	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// rootSize returns the current size of the root window.
func (b *Backend) rootSize() geom.Size {
	if g, err := xproto.GetGeometry(b.conn, xproto.Drawable(b.root)).Reply(); err == nil {
		return geom.Size{W: int(g.Width), H: int(g.Height)}
	}
	return geom.Size{W: int(b.screen.WidthInPixels), H: int(b.screen.HeightInPixels)}
}

// Capture grabs region (global pixels) into dst when its buffer is large enough,
// else into a new image. It uses MIT-SHM when available (one segment reused
// between calls) and chunked GetImage otherwise.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if region.Empty() {
		return nil, fmt.Errorf("x11 capture: empty region %v: give a width and height above zero", region)
	}
	x, y := b.toRoot(geom.GlobalPoint{X: region.X, Y: region.Y})
	rs := b.rootSize()
	if x < 0 || y < 0 || x+region.W > rs.W || y+region.H > rs.H || region.W > 0xffff || region.H > 0xffff {
		return nil, fmt.Errorf("x11 capture: region %v is outside the screen (%dx%d): capture inside one display (see Displays)", region, rs.W, rs.H)
	}
	img := desktop.ReuseRGBA(dst, region.W, region.H)

	b.capMu.Lock()
	defer b.capMu.Unlock()
	if b.hasShm {
		err := b.captureShm(x, y, region.W, region.H, img.Pix)
		if err == nil {
			return img, nil
		}
		b.log.Warn("MIT-SHM capture failed; falling back to GetImage", "err", err)
		b.hasShm = false
		if b.shm != nil {
			_ = b.shm.release(b.conn)
			b.shm = nil
		}
	}
	if err := b.captureGetImage(ctx, x, y, region.W, region.H, img.Pix); err != nil {
		return nil, err
	}
	return img, nil
}

func (b *Backend) captureShm(x, y, w, h int, pix []byte) error {
	need := w * h * 4
	if b.shm == nil || len(b.shm.data) < need {
		if b.shm != nil {
			_ = b.shm.release(b.conn)
			b.shm = nil
		}
		rs := b.rootSize()
		seg, err := newShmSegment(b.conn, max(need, rs.W*rs.H*4))
		if err != nil {
			return err
		}
		b.shm = seg
	}
	_, err := shm.GetImage(b.conn, xproto.Drawable(b.root), int16(x), int16(y), uint16(w), uint16(h),
		0xffffffff, xproto.ImageFormatZPixmap, b.shm.seg, 0).Reply()
	if err != nil {
		return fmt.Errorf("shm GetImage: %w", err)
	}
	convertBGRX(pix, b.shm.data[:need])
	return nil
}

// captureGetImage reads the region in horizontal strips that each fit under the
// server's maximum request length, pipelining the requests.
func (b *Backend) captureGetImage(ctx context.Context, x, y, w, h int, pix []byte) error {
	maxBytes := int(b.setup.MaximumRequestLength)*4 - 64
	rows := max(1, maxBytes/(w*4))
	type strip struct {
		y0, n  int
		cookie xproto.GetImageCookie
	}
	var strips []strip
	for y0 := 0; y0 < h; y0 += rows {
		n := min(rows, h-y0)
		c := xproto.GetImage(b.conn, xproto.ImageFormatZPixmap, xproto.Drawable(b.root),
			int16(x), int16(y+y0), uint16(w), uint16(n), 0xffffffff)
		strips = append(strips, strip{y0, n, c})
	}
	var firstErr error
	for _, s := range strips {
		rep, err := s.cookie.Reply() // always drain every reply
		if firstErr != nil {
			continue
		}
		if err != nil {
			firstErr = fmt.Errorf("x11 GetImage: %w", err)
			continue
		}
		need := w * s.n * 4
		if len(rep.Data) < need {
			firstErr = fmt.Errorf("x11 GetImage: got %d bytes for %dx%d pixels", len(rep.Data), w, s.n)
			continue
		}
		convertBGRX(pix[s.y0*w*4:s.y0*w*4+need], rep.Data[:need])
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// convertBGRX converts little-endian 32-bit BGRX pixels in src to RGBA in dst
// (alpha 255), two pixels per 64-bit word. len(dst) must equal len(src), a
// multiple of 4.
func convertBGRX(dst, src []byte) {
	n := min(len(dst), len(src))
	i := 0
	for ; i+32 <= n; i += 32 {
		d, s := dst[i:i+32:i+32], src[i:i+32:i+32]
		binary.LittleEndian.PutUint64(d[0:], swizzle2(binary.LittleEndian.Uint64(s[0:])))
		binary.LittleEndian.PutUint64(d[8:], swizzle2(binary.LittleEndian.Uint64(s[8:])))
		binary.LittleEndian.PutUint64(d[16:], swizzle2(binary.LittleEndian.Uint64(s[16:])))
		binary.LittleEndian.PutUint64(d[24:], swizzle2(binary.LittleEndian.Uint64(s[24:])))
	}
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], swizzle2(binary.LittleEndian.Uint64(src[i:])))
	}
	for ; i+4 <= n; i += 4 {
		dst[i], dst[i+1], dst[i+2], dst[i+3] = src[i+2], src[i+1], src[i], 0xff
	}
}

// swizzle2 turns two BGRX pixels (bytes B,G,R,X each, little-endian) into two
// RGBA pixels: it swaps bytes 0 and 2 of each pixel and sets byte 3 to 0xff.
func swizzle2(v uint64) uint64 {
	const (
		g  = 0x0000ff000000ff00
		lo = 0x000000ff000000ff
		a  = 0xff000000ff000000
	)
	return v&g | (v>>16)&lo | (v&lo)<<16 | a
}
