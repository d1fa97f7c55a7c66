// Package vnc is the desktop backend for remote desktops and virtual machines
// reached over VNC: a pure-Go RFB 3.8 client (RFC 6143, also speaking 3.3 and
// 3.7) with no cgo and no build tags.
//
// One Backend holds one TCP connection. A reader goroutine applies
// FramebufferUpdates (Raw and CopyRect, plus the DesktopSize and Cursor
// pseudo-encodings) to a local copy of the remote framebuffer, and keeps the
// remote clipboard (ServerCutText, or the Extended Clipboard pseudo-encoding
// for UTF-8 text when the server offers it). Input is sent as PointerEvent and
// KeyEvent messages with X keysyms.
//
// Coordinates: the remote framebuffer is one display, "0", whose top-left is
// the global origin, at scale 1 (logical pixels are framebuffer pixels).
//
// Limitations of the protocol, not of this client:
//   - The pointer position is not reported by RFB: CursorPosition returns the
//     last position this client sent ((0,0) before the first move), so another
//     user moving the remote pointer cannot be seen.
//   - Keys are sent as keysyms and the server maps them onto its own keyboard
//     layout. TigerVNC's Xvnc adds keysyms missing from its keymap on the fly,
//     so any Unicode character types; servers that translate keysyms to
//     scancodes through a fixed layout (QEMU, many hypervisor consoles, some
//     Windows servers) may type characters missing from that layout wrongly or
//     not at all. Text goes key by key, never through the clipboard.
//   - Plain RFB cut text is Latin-1. Without the Extended Clipboard
//     pseudo-encoding, WriteClipboard rejects text outside Latin-1 and
//     ReadClipboard returns what the server last pushed.
package vnc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Options configures a Backend. The zero value of every field but Addr is usable.
type Options struct {
	// Addr is the VNC server as "host:port". A bare host means port 5900.
	Addr string
	// Password is the VNC password, used when the server asks for VNC
	// Authentication; only its first 8 bytes count (a limit of the protocol).
	Password string
	// Logger receives diagnostics; nil means slog.Default(). The password is never logged.
	Logger *slog.Logger
	// DialTimeout bounds the TCP connection and the handshake; zero means 10s.
	DialTimeout time.Duration
	// UpdateTimeout bounds how long Capture and ReadClipboard wait for the
	// server's answer; zero means 5s.
	UpdateTimeout time.Duration
}

// Backend drives one remote desktop over one RFB connection. It is safe for
// concurrent use: messages are written whole under a lock, captures run one at
// a time.
type Backend struct {
	opts Options
	log  *slog.Logger
	addr string // host:port actually dialled

	conn    net.Conn
	br      *bufio.Reader
	started bool

	wmu sync.Mutex // serializes writes of whole messages

	// Fixed after the handshake.
	version  string // "3.3", "3.7" or "3.8"
	security string // "None" or "VNC Authentication"
	name     string // desktop name from ServerInit

	fbMu    sync.Mutex
	fb      *image.RGBA // the local copy of the remote framebuffer (alpha 255)
	pending *captureWait
	resized int // DesktopSize changes seen
	bells   int

	capMu sync.Mutex // one capture at a time

	inMu    sync.Mutex
	mask    uint8            // buttons held (RFB button mask)
	pos     geom.GlobalPoint // last position sent
	keysyms map[desktop.Key]uint32

	clip clipboard

	readerDone chan struct{}
	errMu      sync.Mutex
	readErr    error // why the reader stopped

	closeOnce sync.Once
	closeErr  error
}

// Capability guards.
var (
	_ desktop.Screen    = (*Backend)(nil)
	_ desktop.Pointer   = (*Backend)(nil)
	_ desktop.Keyboard  = (*Backend)(nil)
	_ desktop.Clipboard = (*Backend)(nil)
	_ desktop.Describer = (*Backend)(nil)
)

// New returns a backend for o.Addr. It has no side effects; call Start.
func New(o Options) *Backend {
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.UpdateTimeout <= 0 {
		o.UpdateTimeout = 5 * time.Second
	}
	return &Backend{opts: o, log: l.With("backend", "vnc", "addr", o.Addr), addr: normalizeAddr(o.Addr), keysyms: map[desktop.Key]uint32{}}
}

// normalizeAddr adds the default port 5900 to a bare host.
func normalizeAddr(a string) string {
	if a == "" {
		return ""
	}
	if _, _, err := net.SplitHostPort(a); err == nil {
		return a
	}
	return net.JoinHostPort(a, "5900")
}

// Name returns "vnc".
func (b *Backend) Name() string { return "vnc" }

// DisplayName returns the server address (host:port).
func (b *Backend) DisplayName() string { return b.addr }

// Addr returns the server address the backend connects to (host:port).
func (b *Backend) Addr() string { return b.addr }

// Start dials the server, runs the RFB handshake (version, security,
// ClientInit shared, ServerInit), sets a 32-bit true-colour pixel format and
// the encodings, and starts the reader. On error the connection is closed
// again; Close stays safe to call.
func (b *Backend) Start(ctx context.Context) error {
	if b.started {
		return fmt.Errorf("vnc backend for %s already started", b.addr)
	}
	if b.addr == "" {
		return errors.New("vnc: no server address: give the VNC server as host:port (for example 192.168.1.20:5900)")
	}
	d := net.Dialer{Timeout: b.opts.DialTimeout}
	dctx, cancel := context.WithTimeout(ctx, b.opts.DialTimeout)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", b.addr)
	if err != nil {
		return fmt.Errorf("vnc: cannot connect to %s: %w; check that the VNC server runs and listens on that host and port (and that no firewall blocks it)", b.addr, err)
	}
	if deadline, ok := dctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	b.conn = conn
	b.br = bufio.NewReaderSize(conn, 1<<18)
	if err := b.handshake(); err != nil {
		_ = conn.Close()
		b.conn = nil
		if ctx.Err() != nil {
			return fmt.Errorf("vnc handshake with %s: %w", b.addr, ctx.Err())
		}
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	b.readerDone = make(chan struct{})
	b.started = true
	go b.readLoop()
	// A first update round trip: the server has then processed SetEncodings
	// and sent what they trigger (the extended clipboard caps) before this
	// answer, and it proves that the server serves pixels.
	if _, err := b.Capture(ctx, geom.Rect{W: 1, H: 1}, nil); err != nil {
		_ = b.Close()
		return fmt.Errorf("vnc: first framebuffer update from %s failed: %w", b.addr, err)
	}
	b.log.Info("connected", "rfb", b.version, "security", b.security, "desktop", b.name, "size", b.size())
	return nil
}

// Close closes the connection and waits for the reader to stop. It is safe
// before Start, after a failed Start and more than once.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	b.closeOnce.Do(func() {
		if b.conn == nil {
			return
		}
		b.releaseHeld()
		err := b.conn.Close()
		if b.readerDone != nil {
			<-b.readerDone
		}
		if err != nil && !errors.Is(err, net.ErrClosed) {
			b.closeErr = fmt.Errorf("vnc: close connection to %s: %w", b.addr, err)
		}
	})
	return b.closeErr
}

// releaseHeld releases buttons and keys still held before the connection goes away.
func (b *Backend) releaseHeld() {
	if !b.started {
		return
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if b.mask != 0 {
		b.mask = 0
		_ = b.writePointer(0, b.pos)
	}
	for k, s := range b.keysyms {
		_ = b.writeKey(false, s)
		delete(b.keysyms, k)
	}
}

// ready reports whether the connection is usable.
func (b *Backend) ready() error {
	if b == nil || !b.started {
		return errors.New("vnc backend is not started: call Start first")
	}
	select {
	case <-b.readerDone:
		return b.lostErr()
	default:
	}
	return nil
}

// lostErr explains why the connection is gone.
func (b *Backend) lostErr() error {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	if b.readErr == nil {
		return fmt.Errorf("vnc: the connection to %s is closed: start the backend again", b.addr)
	}
	return b.readErr
}

// size returns the current framebuffer size.
func (b *Backend) size() geom.Size {
	b.fbMu.Lock()
	defer b.fbMu.Unlock()
	if b.fb == nil {
		return geom.Size{}
	}
	return geom.Size{W: b.fb.Rect.Dx(), H: b.fb.Rect.Dy()}
}

// Displays returns the remote framebuffer as display "0" at the global origin.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	s := b.size()
	name := b.name
	if name == "" {
		name = b.addr
	}
	return []geom.Display{{ID: "0", Name: name, Bounds: geom.Rect{W: s.W, H: s.H}, Scale: 1, Primary: true}}, nil
}

// Describe reports the connection: server address, protocol version, security
// type, desktop name and size, clipboard mode.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	d := map[string]string{"server": b.addr}
	if !b.started {
		d["state"] = "not started"
		return d
	}
	if err := b.ready(); err != nil {
		d["state"] = err.Error()
	} else {
		d["state"] = "connected"
	}
	s := b.size()
	d["rfb"] = b.version
	d["security"] = b.security
	d["desktop"] = b.name
	d["screen"] = strconv.Itoa(s.W) + "x" + strconv.Itoa(s.H)
	d["encodings"] = "raw, copyrect, desktopsize, cursor"
	if b.clip.extended() {
		d["clipboard"] = "extended (UTF-8)"
	} else {
		d["clipboard"] = "plain cut text (Latin-1 only)"
	}
	d["keyboard"] = "keysyms mapped by the server's keymap"
	return d
}
