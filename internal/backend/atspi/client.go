// Package atspi reads the accessibility tree of Linux desktop applications
// over AT-SPI2 on D-Bus, in pure Go (github.com/godbus/dbus/v5). Client is a
// desktop.ElementSource; the X11 backend carries it (platform attaches it).
//
// A snapshot costs few round trips: the application's
// org.a11y.atspi.Cache.GetItems gives every object's role, name, states and
// parent in one reply; Component.GetExtents and the other per-element calls
// are pipelined (many calls outstanding, replies handed back in order) on the
// application's own peer-to-peer connection when it offers one. What bounds
// a snapshot of a GTK 3 window is Component.GetExtents, one per element
// returned: GTK answers it with an X round trip (gdk_window_get_origin), which
// costs the application and the X server about five times what another call
// costs (measured on gtk3-widget-factory: some 240 µs of their CPU time
// against 45 µs). So the walk makes no call an element does not need, and
// keeps its own CPU time low, since it competes with the application for
// the processors: calls issued together go out in one write, the
// peer-to-peer reader gathers replies while many are out, and the common
// replies are decoded without reflection. Every call
// has a timeout and the whole walk a budget, so a hung application costs at
// most the budget; what the walk has by then comes back marked truncated.
//
// Applications built on ATK (GTK 3, Chromium, Firefox) offer their cache
// only once an assistive technology listens to events. With ModeOn the
// client registers one event listener (one that never fires) when it
// connects, as a screen reader does; with ModeAuto it does not (activating
// the cache stalls an application with a huge tree while it fills it) and
// walks such applications level by level instead: each level's calls
// pipelined, only into showing objects, from the windows the scope covers.
package atspi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Mode is GUI_AGENT_ACCESSIBILITY.
type Mode string

// Modes.
const (
	// ModeAuto reads the trees applications expose without asking more of them.
	ModeAuto Mode = "auto"
	// ModeOn also sets org.a11y.Status.IsEnabled, so that Chromium, Qt and
	// GTK 4 applications expose their trees as they do for a screen reader,
	// and listens to events, so that ATK applications offer their cache.
	ModeOn Mode = "on"
	// ModeOff reads nothing (platform attaches no client).
	ModeOff Mode = "off"
)

// Options configures a Client.
type Options struct {
	// SessionBus is the address of the D-Bus session bus
	// (DBUS_SESSION_BUS_ADDRESS), where org.a11y.Bus tells the accessibility
	// bus's address and org.a11y.Status holds IsEnabled.
	SessionBus string
	// Bus is the address of the accessibility bus (AT_SPI_BUS_ADDRESS); ""
	// asks org.a11y.Bus.GetAddress on the session bus.
	Bus string
	// Mode ModeOn sets IsEnabled when the client connects.
	Mode Mode
	// CallTimeout bounds every D-Bus call (default 1 s; never past the
	// snapshot's budget).
	CallTimeout time.Duration
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Place, when set, says where the compositor placed the toplevel
	// windows (Wayland, where an application's boxes are relative to its
	// window; platform gives it sway's or Hyprland's IPC): each window's
	// boxes are moved by its place, and a window it does not list (a popup,
	// a window on a hidden workspace) is left out.
	Place func(ctx context.Context) ([]Placed, error)
}

// Client reads accessibility trees. It connects on first use and again after
// the bus goes away. It is safe for concurrent use.
type Client struct {
	o   Options
	log *slog.Logger

	mu     sync.Mutex
	conn   *dbus.Conn         // the accessibility bus
	peers  map[string]*direct // peer-to-peer connections by application bus name (nil: none offered)
	big    map[string]bool    // by application bus name: its tree is too big for its cache (see bigTree)
	names  map[string]string  // by application bus name: its name, once it answered (a bus name is never reused)
	pidOf  map[string]int     // by application bus name: its process id, with Options.Place
	closed bool
}

var _ desktop.ElementSource = (*Client)(nil)

// New returns a client; it does not connect yet.
func New(o Options) *Client {
	if o.CallTimeout <= 0 {
		o.CallTimeout = time.Second
	}
	if o.Mode == "" {
		o.Mode = ModeAuto
	}
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return &Client{o: o, log: l.With("elements", "atspi"), peers: map[string]*direct{}, big: map[string]bool{}}
}

// Close closes the client's connections. Elements fails afterwards.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.dropLocked()
	return nil
}

func (c *Client) dropLocked() {
	for _, p := range c.peers {
		if p != nil {
			_ = p.Close()
		}
	}
	c.peers = map[string]*direct{}
	c.names = nil
	c.pidOf = nil
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// Connect connects now rather than on first use (with ModeOn it sets
// IsEnabled, so that applications build their trees before the first
// snapshot).
func (c *Client) Connect(ctx context.Context) error {
	_, err := c.bus(ctx)
	return err
}

// ErrNoBus is returned when the accessibility bus cannot be reached.
var ErrNoBus = errors.New("the accessibility bus (AT-SPI2) is not reachable")

// busAddress finds the accessibility bus: Options.Bus, else
// org.a11y.Bus.GetAddress on the session bus. With ModeOn it also sets
// IsEnabled there.
func busAddress(ctx context.Context, o Options) (string, error) {
	if o.Bus != "" && o.Mode != ModeOn {
		return o.Bus, nil
	}
	if o.SessionBus == "" {
		if o.Bus != "" {
			return o.Bus, nil
		}
		return "", fmt.Errorf("%w: DBUS_SESSION_BUS_ADDRESS is not set: run inside a desktop session (or dbus-run-session), or set AT_SPI_BUS_ADDRESS", ErrNoBus)
	}
	sess, err := dbus.Connect(o.SessionBus, dbus.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("%w: connect to the session bus %s: %v", ErrNoBus, o.SessionBus, err)
	}
	defer sess.Close()
	p := peer{conn: sess, dest: busName}
	if o.Mode == ModeOn {
		if _, err := p.do(ctx, o.CallTimeout, busPath, ifaceProps, "Set", ifaceStatus, "IsEnabled", dbus.MakeVariant(true)); err != nil {
			return "", fmt.Errorf("%w: set org.a11y.Status.IsEnabled: %v (is at-spi2-core installed?)", ErrNoBus, err)
		}
	}
	if o.Bus != "" {
		return o.Bus, nil
	}
	call, err := p.do(ctx, o.CallTimeout, busPath, busName, "GetAddress")
	if err != nil {
		return "", fmt.Errorf("%w: org.a11y.Bus.GetAddress on the session bus: %v (install at-spi2-core, or set AT_SPI_BUS_ADDRESS)", ErrNoBus, err)
	}
	var addr string
	if err := call.Store(&addr); err != nil || addr == "" {
		return "", fmt.Errorf("%w: org.a11y.Bus.GetAddress returned no address", ErrNoBus)
	}
	return addr, nil
}

// bus returns the accessibility bus connection, connecting (and registering
// the client's event listener) when there is none.
func (c *Client) bus(ctx context.Context) (*dbus.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("atspi: the client is closed")
	}
	if c.conn != nil && c.conn.Connected() {
		return c.conn, nil
	}
	c.dropLocked()
	addr, err := busAddress(ctx, c.o)
	if err != nil {
		return nil, err
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(context.Background()))
	if err != nil {
		return nil, fmt.Errorf("%w: connect to %s: %v", ErrNoBus, addr, err)
	}
	if c.o.Mode == ModeOn {
		// A listener for an event that never fires: ATK applications register
		// their Cache once some client listens to events, as for a screen
		// reader. Doing so, each of them adds its whole tree to its cache at
		// once, which stalls an application with tens of thousands of
		// objects for seconds: so only ModeOn asks for it.
		reg := peer{conn: conn, dest: registryName}
		const event = "object:property-change:accessible-table-summary"
		if _, err := reg.do(ctx, c.o.CallTimeout, registryPath, ifaceRegistry, "RegisterEvent", event, []string{}, ""); err != nil {
			if _, err1 := reg.do(ctx, c.o.CallTimeout, registryPath, ifaceRegistry, "RegisterEvent", event); err1 != nil {
				c.log.Debug("register an event listener", "err", err)
			}
		}
	}
	c.conn = conn
	return conn, nil
}

// peerOf returns where calls to the application at bus name go: its
// peer-to-peer connection when it offers one, else the bus.
func (c *Client) peerOf(ctx context.Context, conn *dbus.Conn, name string) peer {
	c.mu.Lock()
	p, known := c.peers[name]
	c.mu.Unlock()
	if known {
		if p != nil && p.Connected() {
			return peer{d: p}
		}
		if p == nil {
			return peer{conn: conn, dest: name}
		}
	}
	bus := peer{conn: conn, dest: name}
	var addr string
	if call, err := bus.do(ctx, c.o.CallTimeout, rootPath, ifaceApp, "GetApplicationBusAddress"); err == nil {
		_ = call.Store(&addr)
	}
	var d *direct
	if addr != "" {
		d = c.dialPeer(ctx, addr)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.peers[name]; old != nil && old != d {
		_ = old.Close()
	}
	c.peers[name] = d
	if d != nil {
		return peer{d: d}
	}
	return bus
}

// dialPeer connects to an application's peer-to-peer address, or returns
// nil (its calls then go through the bus). An application that hangs
// accepts the connection and never answers: the whole handshake is bounded
// by the call timeout and the context.
func (c *Client) dialPeer(ctx context.Context, addr string) *direct {
	timeout := c.o.CallTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	d, err := dialDirect(addr, timeout)
	if err != nil {
		c.log.Debug("connect to an application's own address", "address", addr, "err", err)
		return nil
	}
	return d
}

// app is one application on the accessibility bus.
type app struct {
	bus  string // unique bus name
	name string
	p    peer
}

// apps lists the applications registered on the bus, with their names.
func (c *Client) apps(ctx context.Context, conn *dbus.Conn) ([]*app, error) {
	reg := peer{conn: conn, dest: registryName}
	call, err := reg.do(ctx, c.o.CallTimeout, rootPath, ifAccessible, "GetChildren")
	if err != nil {
		return nil, fmt.Errorf("%w: list the applications (org.a11y.atspi.Registry GetChildren): %v", ErrNoBus, err)
	}
	var refs []ref
	if err := call.Store(&refs); err != nil {
		return nil, storeErr("the application list", err)
	}
	apps := make([]*app, 0, len(refs))
	c.mu.Lock()
	known := c.names
	c.mu.Unlock()
	var ask []*app
	for _, r := range refs {
		if r.Name != "" && r.Path != "/org/a11y/atspi/null" {
			a := &app{bus: r.Name, p: peer{conn: conn, dest: r.Name}}
			name, ok := known[r.Name]
			if a.name = name; !ok {
				ask = append(ask, a)
			}
			apps = append(apps, a)
		}
	}
	// Only applications not seen before are asked for their names (one
	// that hangs would otherwise cost a call timeout on every snapshot).
	named := map[string]bool{}
	err = pipeline(ctx, peer{}, len(ask), 32, c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		return ask[i].p.call(ctx, rootPath, ifaceProps, "Get", ifAccessible, "Name")
	}, func(i int, call *dbus.Call) error {
		if !replyOK(call) {
			return nil
		}
		if v, ok := call.Body[0].(dbus.Variant); ok {
			ask[i].name, _ = v.Value().(string)
			named[ask[i].bus] = true
		}
		return nil
	})
	if err != nil && !errors.Is(err, errHung) {
		return nil, err
	}
	names := make(map[string]string, len(apps))
	for _, a := range apps {
		if _, ok := known[a.bus]; ok || named[a.bus] {
			names[a.bus] = a.name
		}
	}
	c.mu.Lock()
	if c.conn == conn {
		c.names = names
	}
	c.mu.Unlock()
	sort.SliceStable(apps, func(i, j int) bool { return apps[i].name < apps[j].name })
	return apps, nil
}

// AppNames lists the names of the applications on the bus.
func (c *Client) AppNames(ctx context.Context) ([]string, error) {
	conn, err := c.bus(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := c.apps(ctx, conn)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range apps {
		names = append(names, a.name)
	}
	return names, nil
}

func appNames(apps []*app) string {
	var n []string
	for _, a := range apps {
		n = append(n, fmt.Sprintf("%q", a.name))
	}
	return strings.Join(n, ", ")
}
