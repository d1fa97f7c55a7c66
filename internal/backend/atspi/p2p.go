package atspi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// direct is a client of an application's peer-to-peer D-Bus server
// (org.a11y.atspi.Application.GetApplicationBusAddress), where a walk sends
// nearly all its calls. godbus's own connection costs a goroutine, a write
// and three reads (system calls) per call; a pipelined walk makes hundreds
// of small calls at a time, so this one writes what calls are waiting in one
// go and reads replies through a buffer. Messages are encoded and decoded
// by godbus (dbus.Message); replies come back as *dbus.Call, as from godbus.
// It carries method calls out and replies back, nothing else: no file
// descriptors, and what else the application sends is dropped.
type direct struct {
	nc net.Conn

	wmu  sync.Mutex
	wbuf []byte        // encoded calls not written yet
	kick chan struct{} // the writer has something to write
	quit chan struct{} // closed when the connection ends

	mu      sync.Mutex
	serial  uint32
	pending map[uint32]*dbus.Call
	err     error // why the connection ended; nil while it is up
}

// errClosed is a call's error when its connection ended before the reply.
var errClosed = errors.New("atspi: the application's connection closed")

// dialDirect connects to a peer-to-peer address ("unix:path=..." or
// "unix:abstract=...") and authenticates (EXTERNAL), all within timeout.
func dialDirect(addr string, timeout time.Duration) (*direct, error) {
	network, where, ok := unixAddress(addr)
	if !ok {
		return nil, fmt.Errorf("atspi: unsupported peer-to-peer address %q", addr)
	}
	nc, err := net.DialTimeout(network, where, timeout)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(timeout))
	r := bufio.NewReaderSize(nc, 64<<10)
	if err := authExternal(nc, r); err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	d := &direct{nc: nc, kick: make(chan struct{}, 1), quit: make(chan struct{}), pending: map[uint32]*dbus.Call{}}
	go d.writer()
	go d.reader(r)
	return d, nil
}

// authExternal runs the EXTERNAL authentication of the D-Bus protocol.
func authExternal(w io.Writer, r *bufio.Reader) error {
	uid := hex.EncodeToString([]byte(strconv.Itoa(os.Getuid())))
	if _, err := io.WriteString(w, "\x00AUTH EXTERNAL "+uid+"\r\n"); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("atspi: authenticate to the application: %w", err)
	}
	if !strings.HasPrefix(line, "OK ") {
		return fmt.Errorf("atspi: the application refused EXTERNAL authentication: %q", strings.TrimSpace(line))
	}
	_, err = io.WriteString(w, "BEGIN\r\n")
	return err
}

// unixAddress parses a D-Bus address "unix:path=..." or "unix:abstract=..."
// (the first of several, ';'-separated) into a net.Dial network and address.
func unixAddress(addr string) (network, where string, ok bool) {
	addr, _, _ = strings.Cut(addr, ";")
	rest, found := strings.CutPrefix(addr, "unix:")
	if !found {
		return "", "", false
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(kv, "=")
		v, err := url.PathUnescape(v)
		if err != nil {
			return "", "", false
		}
		switch k {
		case "path":
			return "unix", v, true
		case "abstract":
			return "unix", "@" + v, true
		}
	}
	return "", "", false
}

// Connected reports whether the connection is up.
func (d *direct) Connected() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err == nil
}

// Close ends the connection; calls still waiting fail.
func (d *direct) Close() error {
	d.end(errClosed)
	return nil
}

// end records why the connection ended, closes it and fails the calls
// still waiting (once).
func (d *direct) end(err error) {
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return
	}
	d.err = err
	pending := d.pending
	d.pending = nil
	d.mu.Unlock()
	_ = d.nc.Close()
	close(d.quit)
	for _, c := range pending {
		c.Err = err
		c.Done <- c
	}
}

// call sends a method call; its reply (or error) arrives on the returned
// call's Done channel.
func (d *direct) call(path dbus.ObjectPath, iface, member string, args ...any) *dbus.Call {
	msg := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:      dbus.MakeVariant(path),
		dbus.FieldInterface: dbus.MakeVariant(iface),
		dbus.FieldMember:    dbus.MakeVariant(member),
	}}
	if len(args) > 0 {
		msg.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(args...))
		msg.Body = args
	}
	c := &dbus.Call{Path: path, Method: iface + "." + member, Args: args, Done: make(chan *dbus.Call, 1)}
	var buf bytes.Buffer
	if err := msg.EncodeTo(&buf, binary.LittleEndian); err != nil {
		c.Err = err
		c.Done <- c
		return c
	}
	b := buf.Bytes()
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		c.Err = d.err
		c.Done <- c
		return c
	}
	d.serial++
	if d.serial == 0 {
		d.serial = 1
	}
	serial := d.serial
	d.pending[serial] = c
	d.mu.Unlock()
	binary.LittleEndian.PutUint32(b[8:12], serial) // godbus leaves the serial to its own connection
	d.wmu.Lock()
	d.wbuf = append(d.wbuf, b...)
	d.wmu.Unlock()
	select {
	case d.kick <- struct{}{}:
	default:
	}
	return c
}

// writer writes the calls waiting, as many as there are in one write.
func (d *direct) writer() {
	var out []byte
	for {
		select {
		case <-d.kick:
		case <-d.quit:
			return
		}
		d.wmu.Lock()
		out, d.wbuf = d.wbuf, out[:0]
		d.wmu.Unlock()
		if len(out) == 0 {
			continue
		}
		if _, err := d.nc.Write(out); err != nil {
			d.end(err)
			return
		}
	}
}

// reader reads messages and hands replies to their calls.
func (d *direct) reader(r *bufio.Reader) {
	var head [16]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			d.end(errClosed)
			return
		}
		var order binary.ByteOrder = binary.LittleEndian
		if head[0] == 'B' {
			order = binary.BigEndian
		}
		body, fields := order.Uint32(head[4:8]), order.Uint32(head[12:16])
		size := 16 + int(fields+7)&^7 + int(body)
		if size > 1<<27 {
			d.end(errors.New("atspi: the application sent a message too long"))
			return
		}
		buf := make([]byte, size)
		copy(buf, head[:])
		if _, err := io.ReadFull(r, buf[16:]); err != nil {
			d.end(errClosed)
			return
		}
		typ := dbus.Type(buf[1])
		if typ != dbus.TypeMethodReply && typ != dbus.TypeError {
			continue // signals; calls to this client are not served
		}
		rep, ok := fastReply(buf, order)
		if !ok {
			msg, err := dbus.DecodeMessage(bytes.NewReader(buf))
			if err != nil {
				continue // not something this client waits for
			}
			rep.serial, _ = msg.Headers[dbus.FieldReplySerial].Value().(uint32)
			rep.errName, _ = msg.Headers[dbus.FieldErrorName].Value().(string)
			rep.body = msg.Body
		}
		d.mu.Lock()
		c := d.pending[rep.serial]
		delete(d.pending, rep.serial)
		d.mu.Unlock()
		if c == nil {
			continue
		}
		if typ == dbus.TypeError {
			c.Err = dbus.Error{Name: rep.errName, Body: rep.body}
		} else {
			c.Body = rep.body
		}
		c.Done <- c
	}
}

// reply is what a caller needs of a reply message.
type reply struct {
	serial  uint32 // the call's
	errName string
	body    []any
}

// fastReply decodes a reply of one of the simple signatures most of a
// walk's replies have (u, i, b, s, au, (iiii), (so), none) into what godbus
// would (godbus's decoder allocates 4 KB for every message, which a walk of
// hundreds of replies pays for in garbage collection); ok is false for any
// other, which godbus decodes.
func fastReply(buf []byte, order binary.ByteOrder) (r reply, ok bool) {
	w := wire{b: buf, order: order, pos: 16}
	end := 16 + int(order.Uint32(buf[12:16]))
	sig := ""
	for w.pos < end && w.ok() {
		w.align(8)
		code := w.byte()
		vsig := w.sig()
		switch {
		case code == byte(dbus.FieldReplySerial) && vsig == "u":
			r.serial = w.u32()
		case code == byte(dbus.FieldErrorName) && vsig == "s":
			r.errName = w.str()
		case code == byte(dbus.FieldSignature) && vsig == "g":
			sig = w.sig()
		case vsig == "s" || vsig == "o":
			w.str()
		case vsig == "g":
			w.sig()
		case vsig == "u":
			w.u32()
		default:
			return r, false
		}
	}
	w.pos = 16 + (end-16+7)&^7
	switch sig {
	case "":
	case "u":
		r.body = []any{w.u32()}
	case "i":
		r.body = []any{int32(w.u32())}
	case "b":
		r.body = []any{w.u32() != 0}
	case "s":
		r.body = []any{w.str()}
	case "au":
		n := int(w.u32())
		w.align(4)
		v := make([]uint32, 0, n/4)
		for stop := w.pos + n; w.pos < stop && w.ok(); {
			v = append(v, w.u32())
		}
		r.body = []any{v}
	case "(iiii)":
		w.align(8)
		r.body = []any{[]any{int32(w.u32()), int32(w.u32()), int32(w.u32()), int32(w.u32())}}
	case "(so)":
		w.align(8)
		name := w.str()
		r.body = []any{[]any{name, dbus.ObjectPath(w.str())}}
	default:
		return r, false
	}
	return r, w.ok() && r.serial != 0
}

// wire reads D-Bus marshalled values; alignment is from the message start.
type wire struct {
	b     []byte
	order binary.ByteOrder
	pos   int
	bad   bool
}

func (w *wire) ok() bool { return !w.bad }

func (w *wire) align(n int) { w.pos = (w.pos + n - 1) &^ (n - 1) }

func (w *wire) byte() byte {
	if w.pos >= len(w.b) {
		w.bad = true
		return 0
	}
	w.pos++
	return w.b[w.pos-1]
}

func (w *wire) u32() uint32 {
	w.align(4)
	if w.pos+4 > len(w.b) {
		w.bad = true
		return 0
	}
	w.pos += 4
	return w.order.Uint32(w.b[w.pos-4 : w.pos])
}

// str reads a string or object path (a length, the bytes, a nul).
func (w *wire) str() string {
	n := int(w.u32())
	if w.bad || n < 0 || w.pos+n+1 > len(w.b) {
		w.bad = true
		return ""
	}
	s := string(w.b[w.pos : w.pos+n])
	w.pos += n + 1
	return s
}

// sig reads a signature (a one-byte length, the bytes, a nul).
func (w *wire) sig() string {
	n := int(w.byte())
	if w.bad || w.pos+n+1 > len(w.b) {
		w.bad = true
		return ""
	}
	s := string(w.b[w.pos : w.pos+n])
	w.pos += n + 1
	return s
}
