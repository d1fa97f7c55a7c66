package vnc

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Client-to-server message types (RFC 6143 section 7.5).
const (
	msgSetPixelFormat           = 0
	msgSetEncodings             = 2
	msgFramebufferUpdateRequest = 3
	msgKeyEvent                 = 4
	msgPointerEvent             = 5
	msgClientCutText            = 6
)

// writeTimeout bounds one message write, so a stalled server cannot hang a caller forever.
const writeTimeout = 10 * time.Second

// writeMsg writes one whole message.
func (b *Backend) writeMsg(msg []byte) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.conn == nil {
		return fmt.Errorf("vnc: not connected to %s: call Start first", b.addr)
	}
	_ = b.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := b.conn.Write(msg)
	if err != nil {
		return fmt.Errorf("vnc: send to %s: %w; the connection is lost, start the backend again", b.addr, err)
	}
	return nil
}

// setPixelFormatMsg asks for 32 bits per pixel, depth 24, little-endian true
// colour with red in the lowest byte: the bytes of each pixel arrive in RGBX
// order, ready for image.RGBA.
func setPixelFormatMsg() []byte {
	m := make([]byte, 20)
	m[0] = msgSetPixelFormat
	pf := m[4:]
	pf[0] = 32 // bits per pixel
	pf[1] = 24 // depth
	pf[2] = 0  // little-endian
	pf[3] = 1  // true colour
	binary.BigEndian.PutUint16(pf[4:], 255)
	binary.BigEndian.PutUint16(pf[6:], 255)
	binary.BigEndian.PutUint16(pf[8:], 255)
	pf[10], pf[11], pf[12] = 0, 8, 16 // red, green, blue shifts
	return m
}

// setEncodingsMsg lists the encodings in order of preference.
func setEncodingsMsg(encs ...int32) []byte {
	m := make([]byte, 4+4*len(encs))
	m[0] = msgSetEncodings
	binary.BigEndian.PutUint16(m[2:], uint16(len(encs)))
	for i, e := range encs {
		binary.BigEndian.PutUint32(m[4+4*i:], uint32(e))
	}
	return m
}

// updateRequestMsg asks for the rectangle x, y, w, h (framebuffer pixels).
func updateRequestMsg(incremental bool, x, y, w, h int) []byte {
	m := make([]byte, 10)
	m[0] = msgFramebufferUpdateRequest
	if incremental {
		m[1] = 1
	}
	binary.BigEndian.PutUint16(m[2:], uint16(x))
	binary.BigEndian.PutUint16(m[4:], uint16(y))
	binary.BigEndian.PutUint16(m[6:], uint16(w))
	binary.BigEndian.PutUint16(m[8:], uint16(h))
	return m
}

// keyEventMsg presses or releases the key of an X keysym.
func keyEventMsg(down bool, keysym uint32) []byte {
	m := make([]byte, 8)
	m[0] = msgKeyEvent
	if down {
		m[1] = 1
	}
	binary.BigEndian.PutUint32(m[4:], keysym)
	return m
}

// pointerEventMsg sets the button mask and moves to x, y (framebuffer pixels).
func pointerEventMsg(mask uint8, x, y int) []byte {
	m := make([]byte, 6)
	m[0] = msgPointerEvent
	m[1] = mask
	binary.BigEndian.PutUint16(m[2:], uint16(x))
	binary.BigEndian.PutUint16(m[4:], uint16(y))
	return m
}

// cutTextMsg is a ClientCutText carrying payload; a negative length marks an
// Extended Clipboard message.
func cutTextMsg(length int32, payload []byte) []byte {
	m := make([]byte, 8, 8+len(payload))
	m[0] = msgClientCutText
	binary.BigEndian.PutUint32(m[4:], uint32(length))
	return append(m, payload...)
}
