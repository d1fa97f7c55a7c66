// Package x11 is the desktop backend for X11 servers, written in pure Go over
// github.com/jezek/xgb (no cgo, no build tags: it compiles on every OS; MIT-SHM
// capture is only used on Linux).
//
// One Backend holds one X connection. Capture uses MIT-SHM when the server
// offers it and plain GetImage otherwise; input goes through XTEST; the
// clipboard is served from a hidden window of the backend's own.
//
// Coordinates: X11 has no per-monitor scaling, so every display reports Scale 1
// (logical pixels are device pixels). Global coordinates have their origin at the
// primary monitor's top-left; the backend translates to X root-window coordinates.
package x11

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Options configures a Backend.
type Options struct {
	// Display is the X display name (":0", ":42", "host:1"). Required: the
	// backend does not read $DISPLAY (config does, and cmd passes it here).
	Display string
	// XAuthority is the X authority file (config fills it from $XAUTHORITY or
	// ~/.Xauthority); the clipboard keeper process is given it. "" means none.
	XAuthority string
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Elements is the element source the backend offers as its
	// desktop.ElementSource (platform attaches the AT-SPI2 client); nil means
	// none. Close closes it when it is an io.Closer.
	Elements desktop.ElementSource
}

// Backend drives one X11 display over a single connection. It is safe for
// concurrent use; keyboard and clipboard operations are serialized internally.
type Backend struct {
	opts Options
	log  *slog.Logger
	// SourceActor acts on elements through Options.Elements.
	desktop.SourceActor

	conn    *xgb.Conn
	setup   *xproto.SetupInfo
	screen  *xproto.ScreenInfo
	root    xproto.Window
	hidden  xproto.Window // our InputOnly window for selections
	started bool

	hasXTest, hasShm, hasRandr, hasXFixes bool
	versions                              map[string]string

	atoms atoms

	layoutMu sync.Mutex
	origin   geom.GlobalPoint // root-window position of the global origin (primary's top-left)

	capMu sync.Mutex
	shm   *shmSegment

	kbdMu  sync.Mutex // serializes key presses, typing and keymap changes
	keymap keymap
	sticky map[xproto.Keysym]xproto.Keycode   // keysyms mapped onto spare keycodes for KeyDown
	held   map[desktop.Key][][]xproto.Keycode // per held key, the keycodes each KeyDown pressed
	down   map[xproto.Keycode]int             // keycodes KeyDown holds, with their number of holders

	sel selection

	loopDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Capability guards.
var (
	_ desktop.Screen    = (*Backend)(nil)
	_ desktop.Pointer   = (*Backend)(nil)
	_ desktop.Keyboard  = (*Backend)(nil)
	_ desktop.Clipboard = (*Backend)(nil)
	_ desktop.Windows   = (*Backend)(nil)
	_ desktop.Describer = (*Backend)(nil)
)

// New returns a backend for o.Display. It has no side effects; call Start.
func New(o Options) *Backend {
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return &Backend{opts: o, log: l.With("backend", "x11"), SourceActor: desktop.SourceActor{Source: o.Elements}}
}

// Name returns "x11".
func (b *Backend) Name() string { return "x11" }

// DisplayName returns the X display the backend connects to.
func (b *Backend) DisplayName() string {
	return b.opts.Display
}

// extInitMu serializes xgb extension initialisation, which writes global tables.
var extInitMu sync.Mutex

// InitExtension runs an xgb extension's Init (randr.Init, xtest.Init, ...) on c
// under the lock the backend holds for its own: xgb's Init writes
// package-global tables, so every X client in the process that initialises an
// extension while a Backend may be starting (a test's probe window) goes
// through here.
func InitExtension(c *xgb.Conn, init func(*xgb.Conn) error) error {
	extInitMu.Lock()
	defer extInitMu.Unlock()
	return init(c)
}

// xgb logs connection details to stderr through its package logger; silence it
// before any connection exists (writing it later would race with xgb's readers).
func init() { xgb.Logger = log.New(io.Discard, "", 0) }

// Reachable dials display (the X socket) with a short timeout and reports why it
// cannot be reached. It does not authenticate.
func Reachable(display string) error {
	network, addr, err := socketAddr(display)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return fmt.Errorf("cannot connect to X display %s: %w", display, err)
	}
	return c.Close()
}

// socketAddr returns where the X server of display listens.
func socketAddr(display string) (network, addr string, err error) {
	if display == "" {
		return "", "", errors.New("no X display given: set Options.Display (guiagent takes it from --display or $DISPLAY)")
	}
	i := strings.LastIndex(display, ":")
	if i < 0 {
		return "", "", fmt.Errorf("bad X display %q: want a form like :0 or host:1", display)
	}
	host, num := display[:i], display[i+1:]
	if j := strings.IndexByte(num, '.'); j >= 0 {
		num = num[:j]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return "", "", fmt.Errorf("bad X display %q: want a form like :0 or host:1", display)
	}
	if strings.HasPrefix(host, "/") { // launchd-style socket path
		return "unix", display[:i] + ":" + num, nil
	}
	if j := strings.LastIndex(host, "/"); j >= 0 {
		host = host[j+1:]
	}
	if host == "" || host == "unix" {
		return "unix", "/tmp/.X11-unix/X" + strconv.Itoa(n), nil
	}
	return "tcp", net.JoinHostPort(host, strconv.Itoa(6000+n)), nil
}

// Start connects to the display, checks the extensions and starts the event
// loop. On error the backend is left closable.
func (b *Backend) Start(ctx context.Context) error {
	if b.started {
		return errors.New("x11 backend already started")
	}
	display := b.DisplayName()
	if err := Reachable(display); err != nil {
		return fmt.Errorf("%w; check DISPLAY (and XAUTHORITY), or use a virtual display (--virtual-display 1280x800)", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return fmt.Errorf("connect to X display %s: %w (check XAUTHORITY and access control)", display, err)
	}
	b.conn = conn
	b.started = true
	b.setup = xproto.Setup(conn)
	b.screen = b.setup.DefaultScreen(conn)
	b.root = b.screen.Root
	b.versions = map[string]string{}

	extInitMu.Lock()
	if xtest.Init(conn) == nil {
		if v, err := xtest.GetVersion(conn, 2, 2).Reply(); err == nil {
			b.hasXTest = true
			b.versions["XTEST"] = fmt.Sprintf("%d.%d", v.MajorVersion, v.MinorVersion)
		}
	}
	if shmSupported && shm.Init(conn) == nil {
		if v, err := shm.QueryVersion(conn).Reply(); err == nil {
			b.hasShm = true
			b.versions["MIT-SHM"] = fmt.Sprintf("%d.%d", v.MajorVersion, v.MinorVersion)
		}
	}
	if randr.Init(conn) == nil {
		if v, err := randr.QueryVersion(conn, 1, 6).Reply(); err == nil {
			b.hasRandr = v.MajorVersion > 1 || (v.MajorVersion == 1 && v.MinorVersion >= 5)
			b.versions["RANDR"] = fmt.Sprintf("%d.%d", v.MajorVersion, v.MinorVersion)
		}
	}
	if xfixes.Init(conn) == nil {
		if v, err := xfixes.QueryVersion(conn, 5, 0).Reply(); err == nil {
			b.hasXFixes = true
			b.versions["XFIXES"] = fmt.Sprintf("%d.%d", v.MajorVersion, v.MinorVersion)
		}
	}
	extInitMu.Unlock()

	if err := b.checkPixelFormat(); err != nil {
		return err
	}
	if err := b.atoms.intern(conn); err != nil {
		return fmt.Errorf("x11: intern atoms: %w", err)
	}
	if err := b.createHiddenWindow(); err != nil {
		return err
	}
	if err := b.keymap.load(conn, b.setup); err != nil {
		return fmt.Errorf("x11: read the keyboard mapping: %w", err)
	}
	b.sticky = map[xproto.Keysym]xproto.Keycode{}
	b.held = map[desktop.Key][][]xproto.Keycode{}
	b.down = map[xproto.Keycode]int{}
	b.sel.init()
	b.loopDone = make(chan struct{})
	go b.eventLoop()
	if _, err := b.Displays(ctx); err != nil {
		return err
	}
	return nil
}

// checkPixelFormat verifies that captures will be 32-bit little-endian BGRX.
func (b *Backend) checkPixelFormat() error {
	if b.screen.RootDepth != 24 && b.screen.RootDepth != 32 {
		return fmt.Errorf("x11: root depth %d is not supported: run the X server at depth 24 (e.g. Xvfb -screen 0 1280x800x24)", b.screen.RootDepth)
	}
	bpp := 0
	for _, f := range b.setup.PixmapFormats {
		if f.Depth == b.screen.RootDepth {
			bpp = int(f.BitsPerPixel)
		}
	}
	if bpp != 32 {
		return fmt.Errorf("x11: %d bits per pixel at depth %d is not supported (want 32)", bpp, b.screen.RootDepth)
	}
	if b.setup.ImageByteOrder != xproto.ImageOrderLSBFirst {
		return errors.New("x11: the server sends images most-significant byte first, which this backend does not convert")
	}
	return nil
}

func (b *Backend) createHiddenWindow() error {
	wid, err := xproto.NewWindowId(b.conn)
	if err != nil {
		return fmt.Errorf("x11: allocate a window id: %w", err)
	}
	err = xproto.CreateWindowChecked(b.conn, 0, wid, b.root, -10, -10, 1, 1, 0,
		xproto.WindowClassInputOnly, 0, xproto.CwOverrideRedirect|xproto.CwEventMask,
		[]uint32{1, xproto.EventMaskPropertyChange}).Check()
	if err != nil {
		return fmt.Errorf("x11: create the selection window: %w", err)
	}
	b.hidden = wid
	return nil
}

// Close releases any key KeyDown still holds, hands a clipboard the backend
// owns to the clipboard manager or a keeper process (so it outlives us), then
// the X connection and the shared memory segment, restores any keycodes the
// backend remapped, and stops the event loop. It is safe after a
// partial Start and when called more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		if c, ok := b.opts.Elements.(io.Closer); ok {
			defer c.Close()
		}
		if b.conn == nil {
			return
		}
		var errs []error
		b.kbdMu.Lock()
		if len(b.down) > 0 { // before the spare keycodes lose their keysyms
			errs = append(errs, b.releaseHeld())
		}
		if len(b.sticky) > 0 {
			codes := make([]xproto.Keycode, 0, len(b.sticky))
			for _, kc := range b.sticky {
				codes = append(codes, kc)
			}
			errs = append(errs, b.clearKeycodes(codes))
			b.sticky = nil
		}
		b.kbdMu.Unlock()
		b.capMu.Lock()
		if b.shm != nil {
			errs = append(errs, b.shm.release(b.conn))
			b.shm = nil
		}
		b.capMu.Unlock()
		if b.hidden != 0 && b.loopDone != nil {
			errs = append(errs, b.handOff())
		}
		if b.hidden != 0 {
			xproto.DestroyWindow(b.conn, b.hidden)
		}
		_, _ = xproto.GetInputFocus(b.conn).Reply() // flush
		b.conn.Close()
		if b.loopDone != nil {
			select {
			case <-b.loopDone:
			case <-time.After(2 * time.Second):
			}
		}
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

func (b *Backend) ready() error {
	if b == nil || b.conn == nil || !b.started {
		return errors.New("x11 backend is not started: call Start first")
	}
	return nil
}

// Describe reports the display, extensions, screen size and keymap.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	d := map[string]string{"display": b.DisplayName()}
	if b.ready() != nil {
		d["state"] = "not started"
		return d
	}
	yesNo := func(name string, ok bool) {
		if ok {
			d[strings.ToLower(name)] = "yes " + b.versions[name]
		} else {
			d[strings.ToLower(name)] = "no"
		}
	}
	yesNo("XTEST", b.hasXTest)
	b.capMu.Lock() // Capture turns hasShm off when MIT-SHM fails
	hasShm := b.hasShm
	b.capMu.Unlock()
	yesNo("MIT-SHM", hasShm)
	yesNo("RANDR", b.hasRandr)
	yesNo("XFIXES", b.hasXFixes)
	d["vendor"] = b.setup.Vendor
	d["screen"] = fmt.Sprintf("%dx%d depth %d", b.screen.WidthInPixels, b.screen.HeightInPixels, b.screen.RootDepth)
	d["scale"] = "1 (X11 reports no per-monitor scale)"
	if ds, err := b.Displays(ctx); err == nil {
		d["displays"] = strconv.Itoa(len(ds))
	}
	b.kbdMu.Lock()
	d["keymap"] = b.keymap.describe()
	b.kbdMu.Unlock()
	return d
}
