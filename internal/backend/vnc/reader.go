package vnc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
)

// Server-to-client message types (RFC 6143 section 7.6).
const (
	msgFramebufferUpdate   = 0
	msgSetColourMapEntries = 1
	msgBell                = 2
	msgServerCutText       = 3
)

// maxCutText bounds a clipboard message, to survive a broken or hostile server.
const maxCutText = 64 << 20

// readLoop reads server messages until the connection ends.
func (b *Backend) readLoop() {
	defer close(b.readerDone)
	err := b.readMessages()
	switch {
	case errors.Is(err, net.ErrClosed):
		err = fmt.Errorf("vnc: the connection to %s is closed: start the backend again", b.addr)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("vnc: %s closed the connection: the server stopped or dropped this viewer (another viewer may have connected non-shared); start the backend again", b.addr)
	default:
		err = fmt.Errorf("vnc: connection to %s failed: %w; start the backend again", b.addr, err)
	}
	b.errMu.Lock()
	b.readErr = err
	b.errMu.Unlock()
	b.fbMu.Lock()
	if b.pending != nil {
		b.pending.finish(err)
		b.pending = nil
	}
	b.fbMu.Unlock()
	b.clip.stop(err)
	b.log.Debug("reader stopped", "err", err)
}

func (b *Backend) readMessages() error {
	r := b.br
	var hdr [4]byte
	for {
		t, err := r.ReadByte()
		if err != nil {
			return err
		}
		switch t {
		case msgFramebufferUpdate:
			if _, err := io.ReadFull(r, hdr[:3]); err != nil {
				return err
			}
			if err := b.readUpdate(int(binary.BigEndian.Uint16(hdr[1:3]))); err != nil {
				return err
			}
		case msgSetColourMapEntries: // not used with true colour; skip
			var m [5]byte
			if _, err := io.ReadFull(r, m[:]); err != nil {
				return err
			}
			if _, err := r.Discard(6 * int(binary.BigEndian.Uint16(m[3:]))); err != nil {
				return err
			}
		case msgBell:
			b.fbMu.Lock()
			b.bells++
			b.fbMu.Unlock()
			b.log.Debug("bell")
		case msgServerCutText:
			var m [7]byte
			if _, err := io.ReadFull(r, m[:]); err != nil {
				return err
			}
			n := int32(binary.BigEndian.Uint32(m[3:]))
			ext := n < 0
			size := int64(n)
			if ext {
				size = -size
			}
			if size > maxCutText {
				return fmt.Errorf("server cut text of %d bytes exceeds the %d byte limit", size, maxCutText)
			}
			data := make([]byte, size)
			if _, err := io.ReadFull(r, data); err != nil {
				return err
			}
			if ext {
				b.clip.serverExtended(b, data)
			} else {
				b.clip.serverText(latin1ToUTF8(data))
			}
		default:
			return fmt.Errorf("unknown server message type %d: the server sent something this client did not ask for", t)
		}
	}
}

// readUpdate applies the n rectangles of one FramebufferUpdate.
func (b *Backend) readUpdate(n int) error {
	r := b.br
	var rh [12]byte
	pixels := false // whether the update carried pixel data, not only pseudo-rectangles
	resized := false
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(r, rh[:]); err != nil {
			return err
		}
		x, y := int(binary.BigEndian.Uint16(rh[0:])), int(binary.BigEndian.Uint16(rh[2:]))
		w, h := int(binary.BigEndian.Uint16(rh[4:])), int(binary.BigEndian.Uint16(rh[6:]))
		enc := int32(binary.BigEndian.Uint32(rh[8:]))
		rect := image.Rect(x, y, x+w, y+h)
		switch enc {
		case encRaw:
			pixels = true
			if err := b.readRaw(rect); err != nil {
				return err
			}
		case encCopyRect:
			pixels = true
			var src [4]byte
			if _, err := io.ReadFull(r, src[:]); err != nil {
				return err
			}
			b.copyRect(rect, image.Pt(int(binary.BigEndian.Uint16(src[0:])), int(binary.BigEndian.Uint16(src[2:]))))
		case encDesktopSize:
			b.resize(w, h)
			resized = true
		case encCursor: // the cursor shape: skip it, captures show the desktop without the pointer
			if _, err := r.Discard(w*h*4 + (w+7)/8*h); err != nil {
				return err
			}
		default:
			return fmt.Errorf("rectangle with encoding %d, which this client did not ask for", enc)
		}
	}
	b.fbMu.Lock()
	p := b.pending
	if p != nil && p.covered >= p.need {
		p.copyFrom(b.fb)
		p.finish(nil)
		b.pending = nil
	}
	again := p != nil && (!pixels || resized) && b.pending == p
	b.fbMu.Unlock()
	if again {
		// An update of pseudo-rectangles only (a cursor shape) answers a
		// request without its pixels on some servers (TigerVNC), and a resize
		// discards the pixels received so far: ask again.
		if err := b.writeMsg(updateRequestMsg(false, p.rect.Min.X, p.rect.Min.Y, p.rect.Dx(), p.rect.Dy())); err != nil {
			return err
		}
	}
	return nil
}

// readRaw reads a Raw rectangle straight into the framebuffer.
func (b *Backend) readRaw(rect image.Rectangle) error {
	b.fbMu.Lock()
	defer b.fbMu.Unlock()
	fb := b.fb
	if !rect.In(fb.Rect) {
		// Keep the stream in sync, but the pixels have nowhere to go.
		_, err := b.br.Discard(rect.Dx() * rect.Dy() * 4)
		if err != nil {
			return err
		}
		b.log.Warn("raw rectangle outside the framebuffer ignored", "rect", rect, "framebuffer", fb.Rect)
		return nil
	}
	rowBytes := rect.Dx() * 4
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		off := fb.PixOffset(rect.Min.X, y)
		row := fb.Pix[off : off+rowBytes]
		if _, err := io.ReadFull(b.br, row); err != nil {
			return err
		}
		for i := 3; i < len(row); i += 4 {
			row[i] = 0xff
		}
	}
	b.covered(rect)
	return nil
}

// copyRect copies the framebuffer area of rect's size at src to rect.
func (b *Backend) copyRect(rect image.Rectangle, src image.Point) {
	b.fbMu.Lock()
	defer b.fbMu.Unlock()
	fb := b.fb
	from := image.Rectangle{Min: src, Max: src.Add(rect.Size())}
	if !rect.In(fb.Rect) || !from.In(fb.Rect) {
		b.log.Warn("copyrect outside the framebuffer ignored", "rect", rect, "from", src, "framebuffer", fb.Rect)
		return
	}
	rowBytes := rect.Dx() * 4
	copyRow := func(i int) {
		d := fb.PixOffset(rect.Min.X, rect.Min.Y+i)
		s := fb.PixOffset(src.X, src.Y+i)
		copy(fb.Pix[d:d+rowBytes], fb.Pix[s:s+rowBytes])
	}
	if rect.Min.Y > src.Y { // overlapping downwards: copy bottom-up
		for i := rect.Dy() - 1; i >= 0; i-- {
			copyRow(i)
		}
	} else {
		for i := 0; i < rect.Dy(); i++ {
			copyRow(i)
		}
	}
	b.covered(rect)
}

// resize replaces the framebuffer after a DesktopSize change.
func (b *Backend) resize(w, h int) {
	b.fbMu.Lock()
	defer b.fbMu.Unlock()
	b.fb = newFramebuffer(w, h)
	b.resized++
	if p := b.pending; p != nil {
		if !p.rect.In(b.fb.Rect) {
			p.finish(fmt.Errorf("vnc capture: the screen of %s changed size to %dx%d during the capture of %v: list the displays again and capture inside the new size", b.addr, w, h, p.rect))
			b.pending = nil
		} else {
			p.covered = 0 // pixels received so far went with the old framebuffer
		}
	}
	b.log.Info("remote screen resized", "width", w, "height", h)
}

// covered counts pixels of rect that the pending capture waits for. Caller holds fbMu.
func (b *Backend) covered(rect image.Rectangle) {
	if p := b.pending; p != nil {
		in := rect.Intersect(p.rect)
		p.covered += in.Dx() * in.Dy()
	}
}

// latin1ToUTF8 decodes ISO 8859-1, the encoding of plain RFB cut text.
func latin1ToUTF8(p []byte) string {
	r := make([]rune, len(p))
	for i, c := range p {
		r[i] = rune(c)
	}
	return string(r)
}
