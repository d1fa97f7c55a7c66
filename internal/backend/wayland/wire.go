package wayland

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The Wayland wire format: every message is a header of two 32-bit words in
// host byte order (little-endian on every platform Wayland runs on) — the
// object id, then size<<16 | opcode — followed by its arguments, each padded
// to 4 bytes. File descriptors travel beside the bytes (SCM_RIGHTS).

// headerSize is the size of a message header in bytes.
const headerSize = 8

// maxMessage is the largest message libwayland accepts (its buffer size).
const maxMessage = 4096

// fixed is a Wayland 24.8 fixed-point number.
type fixed float64

// fdArg is a file descriptor argument, sent out of band.
type fdArg int

// newObj is a new_id argument of a typed interface: the client allocates the
// id (in send order) and registers h for the new object's events.
type newObj struct {
	h   handler
	out *uint32
}

// bindObj is the untyped new_id of wl_registry.bind: interface name, version, id.
type bindObj struct {
	iface   string
	version uint32
	h       handler
	out     *uint32
}

// handler receives the events of one object.
type handler func(op uint16, d *decoder)

// encoder appends the arguments of one request.
type encoder struct {
	buf []byte
	fds []int
}

func (e *encoder) uint(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }

func (e *encoder) int(v int32) { e.uint(uint32(v)) }

func (e *encoder) fixed(v fixed) { e.int(int32(math.Round(float64(v) * 256))) }

// string appends a string with its terminating NUL, padded to 4 bytes.
func (e *encoder) string(s string) {
	e.uint(uint32(len(s) + 1))
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, 0)
	e.pad()
}

// array appends a byte array, padded to 4 bytes.
func (e *encoder) array(b []byte) {
	e.uint(uint32(len(b)))
	e.buf = append(e.buf, b...)
	e.pad()
}

func (e *encoder) pad() {
	for len(e.buf)%4 != 0 {
		e.buf = append(e.buf, 0)
	}
}

// message returns the encoded request: header and arguments.
func message(sender uint32, op uint16, args []byte) ([]byte, error) {
	size := headerSize + len(args)
	if size > maxMessage {
		return nil, fmt.Errorf("wayland: request of %d bytes exceeds the protocol's %d-byte limit", size, maxMessage)
	}
	out := make([]byte, 0, size)
	out = binary.LittleEndian.AppendUint32(out, sender)
	out = binary.LittleEndian.AppendUint32(out, uint32(size)<<16|uint32(op))
	return append(out, args...), nil
}

// header splits a message header.
func header(b []byte) (sender uint32, op uint16, size int) {
	sender = binary.LittleEndian.Uint32(b)
	w := binary.LittleEndian.Uint32(b[4:])
	return sender, uint16(w), int(w >> 16)
}

// errShort reports an event whose arguments end early.
var errShort = errors.New("wayland: event shorter than its arguments")

// decoder reads the arguments of one event. A malformed event sets err and
// every later read returns zero values.
type decoder struct {
	data []byte
	off  int
	err  error
	fds  func() (int, bool)
}

func (d *decoder) uint() uint32 {
	if d.err != nil || d.off+4 > len(d.data) {
		d.err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint32(d.data[d.off:])
	d.off += 4
	return v
}

func (d *decoder) int() int32 { return int32(d.uint()) }

func (d *decoder) fixed() fixed { return fixed(float64(d.int()) / 256) }

func (d *decoder) array() []byte {
	n := int(d.uint())
	if d.err != nil || n < 0 || d.off+n > len(d.data) {
		d.err = errShort
		return nil
	}
	b := d.data[d.off : d.off+n]
	d.off += (n + 3) &^ 3
	return b
}

// string returns a string argument without its NUL; a null string is "".
func (d *decoder) string() string {
	b := d.array()
	if len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return string(b)
}

// fd takes the next received file descriptor; -1 when none arrived.
func (d *decoder) fd() int {
	if d.fds == nil {
		d.err = errors.New("wayland: event carries a file descriptor but none arrived")
		return -1
	}
	fd, ok := d.fds()
	if !ok {
		d.err = errors.New("wayland: event carries a file descriptor but none arrived")
		return -1
	}
	return fd
}
