// Package androidtest is a fake Android device for tests: a TCP listener
// that speaks the device side of the adb transport protocol (what adbd
// speaks: CNXN, OPEN, OKAY, WRTE, CLSE messages with 24-byte headers,
// lock-step writes) with the services shell: (terminal-style output),
// shell,v2 (the shell protocol), exec: and sync:, in front of a scripted
// Phone: a screen rendered to PNG, a UI tree dumped in uiautomator's XML,
// and the shell commands an automation client uses (input, wm, screencap,
// uiautomator, ime, am, pm, settings, getprop), their output copied from
// AOSP. Start runs it behind a private real adb server.
package androidtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
)

// adb transport commands.
const (
	aCNXN = 0x4e584e43
	aOPEN = 0x4e45504f
	aOKAY = 0x59414b4f
	aCLSE = 0x45534c43
	aWRTE = 0x45545257
	aAUTH = 0x48545541
	aSYNC = 0x434e5953
)

const (
	adbVersion = 0x01000001
	maxPayload = 256 * 1024
)

type message struct {
	cmd, arg0, arg1 uint32
	data            []byte
}

// checksum is the data "crc32" field of the adb header: a sum of the bytes.
func checksum(b []byte) uint32 {
	var s uint32
	for _, c := range b {
		s += uint32(c)
	}
	return s
}

func readMessage(r io.Reader) (message, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return message{}, err
	}
	le := binary.LittleEndian
	m := message{cmd: le.Uint32(h[0:]), arg0: le.Uint32(h[4:]), arg1: le.Uint32(h[8:])}
	n := le.Uint32(h[12:])
	if le.Uint32(h[20:]) != m.cmd^0xffffffff {
		return m, fmt.Errorf("bad magic in message %08x", m.cmd)
	}
	if n > 16<<20 {
		return m, fmt.Errorf("message of %d bytes", n)
	}
	m.data = make([]byte, n)
	if _, err := io.ReadFull(r, m.data); err != nil {
		return m, err
	}
	if sum := le.Uint32(h[16:]); sum != 0 && sum != checksum(m.data) {
		return m, fmt.Errorf("bad checksum")
	}
	return m, nil
}

func encode(m message) []byte {
	b := make([]byte, 24+len(m.data))
	le := binary.LittleEndian
	le.PutUint32(b[0:], m.cmd)
	le.PutUint32(b[4:], m.arg0)
	le.PutUint32(b[8:], m.arg1)
	le.PutUint32(b[12:], uint32(len(m.data)))
	le.PutUint32(b[16:], checksum(m.data))
	le.PutUint32(b[20:], m.cmd^0xffffffff)
	copy(b[24:], m.data)
	return b
}

// adbd is the fake device's daemon: it accepts the adb server's
// connections and serves each stream a service of the phone.
type adbd struct {
	phone *Phone
	ln    net.Listener

	mu    sync.Mutex
	conns map[net.Conn]bool
	gone  bool
	wg    sync.WaitGroup
}

func listen(p *Phone) (*adbd, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &adbd{phone: p, ln: ln, conns: map[net.Conn]bool{}}
	d.wg.Add(1)
	go d.accept()
	return d, nil
}

func (d *adbd) addr() string { return d.ln.Addr().String() }

// close stops the daemon: the listener and every connection, as a device
// that is unplugged.
func (d *adbd) close() {
	d.mu.Lock()
	d.gone = true
	for c := range d.conns {
		_ = c.Close()
	}
	d.mu.Unlock()
	_ = d.ln.Close()
	d.wg.Wait()
}

func (d *adbd) accept() {
	defer d.wg.Done()
	for {
		c, err := d.ln.Accept()
		if err != nil {
			return
		}
		d.mu.Lock()
		if d.gone {
			d.mu.Unlock()
			_ = c.Close()
			return
		}
		d.conns[c] = true
		d.mu.Unlock()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			newDevConn(d, c).serve()
			d.mu.Lock()
			delete(d.conns, c)
			d.mu.Unlock()
		}()
	}
}

// devConn is one transport connection from the adb server.
type devConn struct {
	d       *adbd
	c       net.Conn
	wmu     sync.Mutex
	maxData int

	mu      sync.Mutex
	streams map[uint32]*stream
	nextID  uint32
	dead    chan struct{}
}

func newDevConn(d *adbd, c net.Conn) *devConn {
	return &devConn{d: d, c: c, maxData: maxPayload, streams: map[uint32]*stream{}, nextID: 1, dead: make(chan struct{})}
}

func (dc *devConn) send(m message) error {
	dc.wmu.Lock()
	defer dc.wmu.Unlock()
	_, err := dc.c.Write(encode(m))
	return err
}

func (dc *devConn) serve() {
	defer func() {
		close(dc.dead)
		_ = dc.c.Close()
		dc.mu.Lock()
		for _, s := range dc.streams {
			s.in.CloseWithError(io.EOF)
		}
		dc.mu.Unlock()
	}()
	for {
		m, err := readMessage(dc.c)
		if err != nil {
			return
		}
		switch m.cmd {
		case aCNXN:
			if m.arg1 > 0 && int(m.arg1) < dc.maxData {
				dc.maxData = int(m.arg1)
			}
			if dc.d.phone.cfg().Unauthorized {
				// Ask for a signature no key of the server's will match: the
				// server then offers its public key (the phone's prompt) and
				// lists the device as unauthorized.
				if err := dc.send(message{cmd: aAUTH, arg0: 1, data: []byte("guiagent-fake-token!")}); err != nil {
					return
				}
				continue
			}
			if err := dc.send(message{cmd: aCNXN, arg0: adbVersion, arg1: maxPayload, data: []byte(dc.d.phone.banner())}); err != nil {
				return
			}
		case aAUTH:
			if m.arg0 == 2 { // a signature: refused, ask again
				if err := dc.send(message{cmd: aAUTH, arg0: 1, data: []byte("guiagent-fake-token!")}); err != nil {
					return
				}
			}
			// 3, the server's public key: the prompt nobody accepts.
		case aSYNC:
		case aOPEN:
			service := strings.TrimRight(string(m.data), "\x00")
			dc.mu.Lock()
			id := dc.nextID
			dc.nextID++
			s := newStream(dc, id, m.arg0)
			dc.streams[id] = s
			dc.mu.Unlock()
			if err := dc.send(message{cmd: aOKAY, arg0: id, arg1: m.arg0}); err != nil {
				return
			}
			go s.run(service)
		case aOKAY:
			if s := dc.stream(m.arg1); s != nil {
				select {
				case s.ack <- struct{}{}:
				default:
				}
			}
		case aWRTE:
			s := dc.stream(m.arg1)
			if s == nil {
				continue
			}
			_, _ = s.inW.Write(m.data)
			if err := dc.send(message{cmd: aOKAY, arg0: s.local, arg1: s.remote}); err != nil {
				return
			}
		case aCLSE:
			if s := dc.stream(m.arg1); s != nil {
				s.peerClosed()
			}
		}
	}
}

func (dc *devConn) stream(id uint32) *stream {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	return dc.streams[id]
}

// stream is one service stream. Incoming data goes into an unbounded
// buffer; writes go out one WRTE at a time, each waiting for its OKAY.
type stream struct {
	dc            *devConn
	local, remote uint32
	ack           chan struct{}
	in            *io.PipeReader
	inW           *bufWriter
	closed        chan struct{}
	once          sync.Once
}

// bufWriter is the unbounded write side of an incoming-data buffer.
type bufWriter struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  bytes.Buffer
	eof  bool
}

func newStream(dc *devConn, local, remote uint32) *stream {
	bw := &bufWriter{}
	bw.cond = sync.NewCond(&bw.mu)
	pr, pw := io.Pipe()
	s := &stream{dc: dc, local: local, remote: remote, ack: make(chan struct{}, 1), in: pr, inW: bw, closed: make(chan struct{})}
	go func() { // pump the unbounded buffer into the pipe
		for {
			bw.mu.Lock()
			for bw.buf.Len() == 0 && !bw.eof {
				bw.cond.Wait()
			}
			if bw.buf.Len() == 0 && bw.eof {
				bw.mu.Unlock()
				pw.Close()
				return
			}
			b := bytes.Clone(bw.buf.Bytes())
			bw.buf.Reset()
			bw.mu.Unlock()
			if _, err := pw.Write(b); err != nil {
				return
			}
		}
	}()
	return s
}

func (w *bufWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.cond.Signal()
	w.mu.Unlock()
	return len(p), nil
}

func (w *bufWriter) close() {
	w.mu.Lock()
	w.eof = true
	w.cond.Signal()
	w.mu.Unlock()
}

func (s *stream) peerClosed() {
	s.inW.close()
	s.once.Do(func() { close(s.closed) })
	s.dc.mu.Lock()
	delete(s.dc.streams, s.local)
	s.dc.mu.Unlock()
}

var errStreamClosed = errors.New("stream closed")

// Write sends p in WRTE messages, each after the previous one's OKAY.
func (s *stream) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), s.dc.maxData)
		if err := s.dc.send(message{cmd: aWRTE, arg0: s.local, arg1: s.remote, data: p[:k]}); err != nil {
			return n, err
		}
		select {
		case <-s.ack:
		case <-s.closed:
			return n, errStreamClosed
		case <-s.dc.dead:
			return n, errStreamClosed
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

func (s *stream) Read(p []byte) (int, error) { return s.in.Read(p) }

// close ends the stream from the device's side.
func (s *stream) close() {
	s.once.Do(func() { close(s.closed) })
	_ = s.dc.send(message{cmd: aCLSE, arg0: s.local, arg1: s.remote})
	s.dc.mu.Lock()
	delete(s.dc.streams, s.local)
	s.dc.mu.Unlock()
	s.inW.close()
}

func (s *stream) run(service string) {
	defer s.close()
	p := s.dc.d.phone
	switch {
	case strings.HasPrefix(service, "shell,") || strings.HasPrefix(service, "shell:"):
		opts, cmd, _ := strings.Cut(strings.TrimPrefix(service, "shell"), ":")
		v2 := false
		for _, o := range strings.Split(strings.TrimPrefix(opts, ","), ",") {
			if o == "v2" {
				v2 = true
			}
		}
		if v2 && !p.cfg().NoShellV2 {
			s.shellV2(cmd)
			return
		}
		out, errOut, _ := p.Run(cmd)
		all := append(out, errOut...)
		_, _ = s.Write(bytes.ReplaceAll(all, []byte("\n"), []byte("\r\n")))
	case strings.HasPrefix(service, "exec:"):
		out, _, _ := p.Run(strings.TrimPrefix(service, "exec:"))
		_, _ = s.Write(out)
	case service == "sync:":
		serveSync(s, p)
	default:
		// adbd closes a stream it has no service for.
	}
}

// shellV2 runs cmd and answers in shell protocol packets: stdout (1),
// stderr (2), then the exit status (3).
func (s *stream) shellV2(cmd string) {
	go func() { _, _ = io.Copy(io.Discard, s.in) }() // stdin, close-stdin, window size: not used
	out, errOut, code := s.dc.d.phone.Run(cmd)
	packet := func(id byte, b []byte) []byte {
		h := make([]byte, 5, 5+len(b))
		h[0] = id
		binary.LittleEndian.PutUint32(h[1:], uint32(len(b)))
		return append(h, b...)
	}
	var buf []byte
	if len(out) > 0 {
		buf = append(buf, packet(1, out)...)
	}
	if len(errOut) > 0 {
		buf = append(buf, packet(2, errOut)...)
	}
	buf = append(buf, packet(3, []byte{byte(code)})...)
	_, _ = s.Write(buf)
}

// serveSync speaks the sync protocol: SEND (DATA..., DONE) and RECV, STAT, QUIT.
func serveSync(s *stream, p *Phone) {
	le := binary.LittleEndian
	reply := func(id string, b []byte) {
		h := make([]byte, 8, 8+len(b))
		copy(h, id)
		le.PutUint32(h[4:], uint32(len(b)))
		_, _ = s.Write(append(h, b...))
	}
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(s, hdr[:]); err != nil {
			return
		}
		n := le.Uint32(hdr[4:])
		id := string(hdr[:4])
		if id == "QUIT" {
			return
		}
		arg := make([]byte, n)
		if n > 4096 && id != "DATA" {
			return
		}
		if _, err := io.ReadFull(s, arg); err != nil {
			return
		}
		switch id {
		case "SEND":
			spec := string(arg)
			path := spec
			if i := strings.LastIndexByte(spec, ','); i >= 0 {
				path = spec[:i]
			}
			var data []byte
			for {
				if _, err := io.ReadFull(s, hdr[:]); err != nil {
					return
				}
				k := le.Uint32(hdr[4:])
				if string(hdr[:4]) == "DONE" {
					break
				}
				if string(hdr[:4]) != "DATA" || k > 64<<10 {
					reply("FAIL", []byte("bad sync message"))
					return
				}
				chunk := make([]byte, k)
				if _, err := io.ReadFull(s, chunk); err != nil {
					return
				}
				data = append(data, chunk...)
			}
			if err := p.writeFile(path, data); err != nil {
				reply("FAIL", []byte(err.Error()))
				continue
			}
			reply("OKAY", nil)
		case "RECV":
			data, err := p.readFile(string(arg))
			if err != nil {
				reply("FAIL", []byte(err.Error()))
				continue
			}
			for len(data) > 0 {
				k := min(len(data), 64<<10)
				reply("DATA", data[:k])
				data = data[k:]
			}
			reply("DONE", nil)
		case "STAT":
			st := make([]byte, 12)
			if data, err := p.readFile(string(arg)); err == nil {
				le.PutUint32(st[0:], 0o100644)
				le.PutUint32(st[4:], uint32(len(data)))
			}
			h := []byte("STAT")
			_, _ = s.Write(append(h, st...))
		default:
			reply("FAIL", []byte("unknown sync request "+id))
			return
		}
	}
}
