package atspi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
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
// and three reads (system calls) per call, and its decoder allocates 4 KB
// per message; a pipelined walk makes hundreds of small calls at a time. So
// this one writes each call from its caller, reads replies through a
// buffer, and marshals the walk's calls and its common replies itself
// (others are decoded by godbus: dbus.DecodeMessage). Replies come back as
// *dbus.Call, as from godbus. It carries method calls out and replies back,
// nothing else: no file descriptors, and what else the application sends is
// dropped.
type direct struct {
	nc net.Conn

	wmu  sync.Mutex // held while a call is written or queued
	held int        // holds in force: calls queue in wbuf until the last is released
	wbuf []byte     // calls queued while held

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
	d := &direct{nc: nc, pending: map[uint32]*dbus.Call{}}
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
	for _, c := range pending {
		c.Err = err
		c.Done <- c
	}
}

// call sends a method call; its reply (or error) arrives on the returned
// call's Done channel.
func (d *direct) call(path dbus.ObjectPath, iface, member string, args ...any) *dbus.Call {
	c := &dbus.Call{Path: path, Method: iface + "." + member, Args: args, Done: make(chan *dbus.Call, 1)}
	b, err := encodeCall(path, iface, member, args)
	if err != nil {
		c.Err = err
		c.Done <- c
		return c
	}
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
	binary.LittleEndian.PutUint32(b[8:12], serial)
	// Written here, not by a goroutine of its own: a walk issues its
	// calls one reply at a time once its pipeline is full, and a wake-up
	// costs more than the write. While a burst of calls is held they are
	// queued and go out in one write (see hold).
	d.wmu.Lock()
	if d.held > 0 {
		d.wbuf = append(d.wbuf, b...)
		d.wmu.Unlock()
		return c
	}
	_, err = d.nc.Write(b)
	d.wmu.Unlock()
	if err != nil {
		d.end(err)
	}
	return c
}

// forget drops the calls given up on (timed out, or their walk ended) from
// those awaiting a reply: their replies, should they come, are dropped, and
// they no longer count as out (see gather).
func (d *direct) forget(calls []*dbus.Call) {
	if len(calls) == 0 {
		return
	}
	gone := make(map[*dbus.Call]bool, len(calls))
	for _, c := range calls {
		gone[c] = true
	}
	d.mu.Lock()
	for serial, c := range d.pending {
		if gone[c] {
			delete(d.pending, serial)
		}
	}
	d.mu.Unlock()
}

// hold queues the calls made until release, which writes them at once: a
// pipeline issues its calls in bursts (its first calls, then more as
// replies come in), and each write is a system call that may wake the
// application. A holder releases before it waits for a reply.
func (d *direct) hold() {
	d.wmu.Lock()
	d.held++
	d.wmu.Unlock()
}

// release ends a hold; the last one writes the calls queued.
func (d *direct) release() {
	d.wmu.Lock()
	d.held--
	var err error
	if d.held == 0 && len(d.wbuf) > 0 {
		_, err = d.nc.Write(d.wbuf)
		d.wbuf = d.wbuf[:0]
	}
	d.wmu.Unlock()
	if err != nil {
		d.end(err)
	}
}

// encodeCall marshals a method call (serial 0, set by the caller) whose
// arguments are all uint32, int32 or string, as the walk's are; other
// arguments are left to godbus.
func encodeCall(path dbus.ObjectPath, iface, member string, args []any) ([]byte, error) {
	sig := make([]byte, 0, len(args))
	for _, a := range args {
		switch a.(type) {
		case uint32:
			sig = append(sig, 'u')
		case int32:
			sig = append(sig, 'i')
		case string:
			sig = append(sig, 's')
		default:
			return encodeCallGodbus(path, iface, member, args)
		}
	}
	var m wireOut
	m.b = append(m.b, 'l', byte(dbus.TypeMethodCall), 0, 1)
	m.u32(0) // body length, set below
	m.u32(0) // serial
	m.u32(0) // header fields' length, set below
	field := func(code, sigc byte, v string) {
		m.align(8)
		m.b = append(m.b, code, 1, sigc, 0)
		if sigc == 'g' {
			m.b = append(m.b, byte(len(v)))
			m.b = append(m.b, v...)
			m.b = append(m.b, 0)
			return
		}
		m.str(v)
	}
	field(byte(dbus.FieldPath), 'o', string(path))
	field(byte(dbus.FieldInterface), 's', iface)
	field(byte(dbus.FieldMember), 's', member)
	if len(sig) > 0 {
		field(byte(dbus.FieldSignature), 'g', string(sig))
	}
	binary.LittleEndian.PutUint32(m.b[12:16], uint32(len(m.b)-16))
	m.align(8)
	start := len(m.b)
	for _, a := range args {
		switch v := a.(type) {
		case uint32:
			m.u32(v)
		case int32:
			m.u32(uint32(v))
		case string:
			m.str(v)
		}
	}
	binary.LittleEndian.PutUint32(m.b[4:8], uint32(len(m.b)-start))
	return m.b, nil
}

func encodeCallGodbus(path dbus.ObjectPath, iface, member string, args []any) ([]byte, error) {
	msg := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldPath:      dbus.MakeVariant(path),
		dbus.FieldInterface: dbus.MakeVariant(iface),
		dbus.FieldMember:    dbus.MakeVariant(member),
	}}
	if len(args) > 0 {
		msg.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(args...))
		msg.Body = args
	}
	var buf bytes.Buffer
	err := msg.EncodeTo(&buf, binary.LittleEndian)
	return buf.Bytes(), err
}

// wireOut marshals little-endian D-Bus values; alignment is from the
// message start.
type wireOut struct{ b []byte }

func (w *wireOut) align(n int) {
	for len(w.b)%n != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *wireOut) u32(v uint32) {
	w.align(4)
	w.b = binary.LittleEndian.AppendUint32(w.b, v)
}

func (w *wireOut) str(s string) {
	w.u32(uint32(len(s)))
	w.b = append(w.b, s...)
	w.b = append(w.b, 0)
}

// reader reads messages and hands replies to their calls.
func (d *direct) reader(r *bufio.Reader) {
	var head [16]byte
	var scratch []byte
	for {
		if r.Buffered() == 0 {
			d.gather()
		}
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
		// Replies decoded here copy what they keep, so one buffer serves
		// them all; a cache reply keeps its message (rawItems) and gets
		// its own.
		var buf []byte
		switch {
		case size > 64<<10:
			buf = make([]byte, size)
		case cap(scratch) < size:
			scratch = make([]byte, max(size, 4<<10))
			fallthrough
		default:
			buf = scratch[:size]
		}
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
		if _, raw := firstBody(rep).(rawItems); raw && size <= 64<<10 {
			scratch = nil // the reply holds buf
		}
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

// gather pauses the reader while many calls are out, so that the replies
// arriving meanwhile are read and handed over together: each read that
// finds one reply wakes this process, and its waiting caller, once per
// reply, and those wake-ups take the processor from the application that
// answers (see gatherPause).
func (d *direct) gather() {
	d.mu.Lock()
	n := len(d.pending)
	d.mu.Unlock()
	if n >= gatherMin {
		time.Sleep(gatherPause)
	}
}

// With gatherMin calls out or more, the reader reads every gatherPause: a
// walk keeps up to inflight calls out, so the application never waits for
// it, and a GetExtents takes the application a few hundred microseconds
// (an X round trip), so a pause gathers a few replies. Measured on
// BenchmarkWidgetFactory, it halves the CPU time a snapshot costs this
// process (about 30 ms to 15 ms on a loaded two-core machine).
const (
	gatherMin   = 16
	gatherPause = time.Millisecond
)

// reply is what a caller needs of a reply message.
type reply struct {
	serial  uint32 // the call's
	errName string
	body    []any
}

func firstBody(r reply) any {
	if len(r.body) == 0 {
		return nil
	}
	return r.body[0]
}

// fastReply decodes a reply of one of the signatures most of a walk's
// replies have (u, i, b, s, au, (iiii), (so), a(so), v, a{sv}, a(ua(so)), none) into what godbus
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
		v := []uint32{}
		w.array(4, func() { v = append(v, w.u32()) })
		r.body = []any{v}
	case "(iiii)":
		w.align(8)
		r.body = []any{[]any{int32(w.u32()), int32(w.u32()), int32(w.u32()), int32(w.u32())}}
	case "(so)":
		w.align(8)
		name := w.str()
		r.body = []any{[]any{name, dbus.ObjectPath(w.str())}}
	case "v":
		v, ok := w.variant()
		if !ok {
			return r, false
		}
		r.body = []any{v}
	case cacheItemsSig:
		r.body = []any{rawItems{w}} // decoded by its caller (rawItems.items)
	case "a{sv}":
		m, ok := w.dict()
		if !ok {
			return r, false
		}
		r.body = []any{m}
	case "a(ua(so))":
		r.body = []any{w.relations()}
	case "a(so)": // GetChildren
		r.body = []any{w.refs()}
	default:
		return r, false
	}
	return r, w.ok() && r.serial != 0
}

// dict reads an a{sv} (Properties.GetAll) whose values variant reads; ok
// is false for any other value.
func (w *wire) dict() (map[string]dbus.Variant, bool) {
	m := map[string]dbus.Variant{}
	w.array(8, func() {
		k := w.str()
		v, ok := w.variant()
		if !ok {
			w.bad = true // the rest cannot be read past it
			return
		}
		m[k] = v
	})
	return m, w.ok()
}

// refs reads an a(so) as godbus decodes it.
func (w *wire) refs() [][]any {
	refs := [][]any{}
	w.array(8, func() {
		name := w.str()
		refs = append(refs, []any{name, dbus.ObjectPath(w.str())})
	})
	return refs
}

// relations reads an a(ua(so)) (GetRelationSet) as godbus decodes it.
func (w *wire) relations() [][]any {
	rels := [][]any{}
	w.array(8, func() {
		typ := w.u32()
		rels = append(rels, []any{typ, w.refs()})
	})
	return rels
}

// array reads an array: its length in bytes, then elements that each start
// aligned to a (8 for structs and dict entries, 4 for strings and uint32s;
// the first one so even when the array is empty), elem reading each, until
// the array or the message ends. It reports whether the elements ended
// exactly where the array does.
func (w *wire) array(a int, elem func()) bool {
	n := int(w.u32())
	w.align(a)
	stop := w.pos + n
	for w.pos < stop && w.ok() {
		w.align(a)
		elem()
	}
	return w.ok() && w.pos == stop
}

// wire reads D-Bus marshalled values; alignment is from the message start.
type wire struct {
	b     []byte
	order binary.ByteOrder
	pos   int
	bad   bool
}

func (w *wire) ok() bool { return !w.bad }

func (w *wire) align(n int) {
	w.pos = (w.pos + n - 1) &^ (n - 1)
	if w.pos > len(w.b) {
		w.bad = true // the padding is cut short
	}
}

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

// variant reads a variant holding a string, object path, number, boolean
// or object reference (ok false for any other).
func (w *wire) variant() (dbus.Variant, bool) {
	switch w.sig() {
	case "s":
		return dbus.MakeVariant(w.str()), w.ok()
	case "o":
		return dbus.MakeVariant(dbus.ObjectPath(w.str())), w.ok()
	case "i":
		return dbus.MakeVariant(int32(w.u32())), w.ok()
	case "u":
		return dbus.MakeVariant(w.u32()), w.ok()
	case "b":
		return dbus.MakeVariant(w.u32() != 0), w.ok()
	case "a{ss}": // Accessible's Attributes
		m := map[string]string{}
		w.array(8, func() {
			k := w.str()
			m[k] = w.str()
		})
		return dbus.MakeVariant(m), w.ok()
	case "(so)":
		w.align(8)
		name := w.str()
		return dbus.MakeVariantWithSignature([]any{name, dbus.ObjectPath(w.str())}, dbus.ParseSignatureMust("(so)")), w.ok()
	case "d":
		w.align(8)
		if w.pos+8 > len(w.b) {
			w.bad = true
			return dbus.Variant{}, false
		}
		w.pos += 8
		return dbus.MakeVariant(math.Float64frombits(w.order.Uint64(w.b[w.pos-8 : w.pos]))), true
	}
	return dbus.Variant{}, false
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

// cacheItemsSig is the signature of Cache.GetItems's reply (cacheItem).
const cacheItemsSig = "a((so)(so)(so)iiassusau)"

// rawItems is a Cache.GetItems reply from the peer-to-peer client, not
// decoded yet: the whole tree in one message, which items reads without
// going through reflection.
type rawItems struct{ w wire }

// items decodes the reply; ok is false when it is cut short.
func (r rawItems) items() (items []cacheItem, ok bool) {
	w := r.w
	ref := func() ref {
		w.align(8)
		name := w.str()
		return ref{name, dbus.ObjectPath(w.str())}
	}
	whole := w.array(8, func() {
		it := cacheItem{Obj: ref(), App: ref(), Parent: ref()}
		it.Index, it.Count = int32(w.u32()), int32(w.u32())
		w.array(4, func() { it.Ifaces = append(it.Ifaces, w.str()) })
		it.Name, it.Role, it.Desc = w.str(), w.u32(), w.str()
		w.array(4, func() { it.States = append(it.States, w.u32()) })
		items = append(items, it)
	})
	return items, whole
}
