// Package wayland is the desktop backend for wlroots compositors (sway,
// Hyprland, river, labwc, Wayfire), in pure Go: a small Wayland wire client
// of its own (client.go, wire.go; file descriptors over SCM_RIGHTS, shared
// memory in memfds) and these protocols:
//
//   - capture: zwlr_screencopy_manager_v1 into wl_shm buffers;
//   - layout: wl_output and zxdg_output_manager_v1 (logical position and
//     size; the scale is the output's physical width over its logical width,
//     so fractional scales map right);
//   - pointer: zwlr_virtual_pointer_v1, absolute motion over the layout;
//   - keyboard: one zwp_virtual_keyboard_v1 for the whole session, with an XKB
//     keymap of its own that grows a keycode for every keysym it is asked to
//     type (any Unicode text is typed as keys; the clipboard is not used);
//   - clipboard: ext_data_control_manager_v1 or zwlr_data_control_manager_v1;
//   - windows: zwlr_foreign_toplevel_manager_v1 (the activated toplevel's title).
//
// A protocol the compositor lacks makes the capability that needs it fail
// with an error naming the protocol and the compositor; Check reports them
// all for doctor. Coordinates: global logical pixels have their origin at the
// primary output's top-left (the output at the layout's origin, else the
// top-left-most); Wayland has no primary output of its own.
//
// The transport is Linux's; on other systems Open returns an error.
package wayland

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Options configures Open and Check.
type Options struct {
	// Display is the compositor's socket: a name relative to RuntimeDir
	// ("wayland-1", the value of WAYLAND_DISPLAY) or an absolute path. ""
	// means "wayland-0", libwayland's default.
	Display string
	// RuntimeDir is XDG_RUNTIME_DIR, where a relative Display lives.
	RuntimeDir string
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Placer says where the compositor placed its windows (sway's or
	// Hyprland's IPC: NewPlacer); nil on a compositor that does not say.
	Placer Placer
	// Elements is the element source the backend offers (AT-SPI2, mapping
	// each window's boxes through Placer), in layout logical pixels; nil
	// gives none: without a Placer there can be none.
	Elements desktop.ElementSource
}

// SocketPath returns the socket Options name, or an error saying what is missing.
func (o Options) SocketPath() (string, error) {
	d := o.Display
	if d == "" {
		d = "wayland-0"
	}
	if filepath.IsAbs(d) {
		return d, nil
	}
	if strings.ContainsRune(d, '/') {
		return "", fmt.Errorf("wayland display %q is neither a socket name nor an absolute path: use a name like wayland-1 (WAYLAND_DISPLAY) or /run/user/1000/wayland-1", d)
	}
	if o.RuntimeDir == "" {
		return "", fmt.Errorf("wayland display %q is relative but no runtime directory is set: set XDG_RUNTIME_DIR (or give the socket's absolute path)", d)
	}
	return filepath.Join(o.RuntimeDir, d), nil
}

// Protocol names the backend uses.
const (
	ifShm             = "wl_shm"
	ifOutput          = "wl_output"
	ifSeat            = "wl_seat"
	ifXdgOutput       = "zxdg_output_manager_v1"
	ifScreencopy      = "zwlr_screencopy_manager_v1"
	ifVirtualPointer  = "zwlr_virtual_pointer_manager_v1"
	ifVirtualKeyboard = "zwp_virtual_keyboard_manager_v1"
	ifDataControlWlr  = "zwlr_data_control_manager_v1"
	ifDataControlExt  = "ext_data_control_manager_v1"
	ifToplevels       = "zwlr_foreign_toplevel_manager_v1"
)

// bindVersion is the highest version of each interface the backend speaks.
var bindVersion = map[string]uint32{
	ifShm: 1, ifOutput: 4, ifSeat: 1, ifXdgOutput: 3, ifScreencopy: 3, ifVirtualPointer: 2,
	ifVirtualKeyboard: 1, ifDataControlWlr: 2, ifDataControlExt: 1, ifToplevels: 3,
}

// global is one entry of the compositor's registry.
type global struct {
	name    uint32
	iface   string
	version uint32
}

// Backend is a session on one Wayland compositor. It is safe for concurrent use.
type Backend struct {
	opts Options
	log  *slog.Logger
	// SourceActor acts on elements through Options.Elements.
	desktop.SourceActor
	c          *client
	socket     string
	compositor string
	start      time.Time

	regMu    sync.Mutex
	registry uint32
	globals  map[uint32]global // by global name
	bound    map[string]uint32 // object id of each bound singleton global

	outs outputs

	capMu   sync.Mutex
	cap     *capBuffer
	capTime captureTiming // of the latest capture

	ptrMu  sync.Mutex
	ptr    uint32
	ptrErr error // why there is no pointer (no wl_seat)
	cursor *cursorPos
	btns   map[desktop.Button]bool

	kbd keyboard

	clip clipboard
	tops toplevels

	lastTime atomic.Uint32 // the latest input event timestamp given

	seatCaps   atomic.Uint32 // wl_seat capabilities as the compositor last told
	seatChange chan struct{} // signalled at every capabilities event

	closeOnce sync.Once
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

// connect dials the compositor and reads its registry.
func connect(ctx context.Context, o Options) (*Backend, error) {
	path, err := o.SocketPath()
	if err != nil {
		return nil, err
	}
	s, err := dial(path)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the Wayland compositor at %s: %w (check WAYLAND_DISPLAY and XDG_RUNTIME_DIR)", path, err)
	}
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	b := &Backend{opts: o, log: l.With("backend", "wayland"), SourceActor: desktop.SourceActor{Source: o.Elements}, socket: path, start: time.Now(),
		globals: map[uint32]global{}, bound: map[string]uint32{}, btns: map[desktop.Button]bool{}}
	b.seatChange = make(chan struct{}, 1)
	b.compositor = peerCommand(s)
	if b.compositor == "" {
		b.compositor = "the compositor"
	}
	b.c = newClient(s)
	b.outs.init()
	if err := b.c.send(displayID, 1, newObj{h: b.registryEvent, out: &b.registry}); err != nil {
		b.c.close()
		return nil, err
	}
	if err := b.c.roundtrip(ctx); err != nil {
		b.c.close()
		return nil, fmt.Errorf("wayland: read the registry of %s at %s: %w", b.compositor, path, err)
	}
	return b, nil
}

// registryEvent handles wl_registry.global and global_remove.
func (b *Backend) registryEvent(op uint16, d *decoder) {
	switch op {
	case 0:
		g := global{name: d.uint(), iface: d.string(), version: d.uint()}
		if d.err != nil {
			return
		}
		b.regMu.Lock()
		b.globals[g.name] = g
		b.regMu.Unlock()
		if g.iface == ifOutput && b.outs.live() {
			b.bindOutput(g)
		}
	case 1:
		name := d.uint()
		b.regMu.Lock()
		delete(b.globals, name)
		b.regMu.Unlock()
		b.outs.remove(name)
	}
}

// find returns the global offering iface.
func (b *Backend) find(iface string) (global, bool) {
	b.regMu.Lock()
	defer b.regMu.Unlock()
	var best global
	ok := false
	for _, g := range b.globals {
		if g.iface == iface && (!ok || g.name < best.name) {
			best, ok = g, true
		}
	}
	return best, ok
}

// bind binds the singleton global iface once and returns its object id.
func (b *Backend) bind(iface string, h handler) (uint32, uint32, error) {
	b.regMu.Lock()
	if id, ok := b.bound[iface]; ok {
		b.regMu.Unlock()
		return id, 0, nil
	}
	b.regMu.Unlock()
	g, ok := b.find(iface)
	if !ok {
		return 0, 0, b.missing(iface)
	}
	id, v, err := b.bindGlobal(g, h)
	if err != nil {
		return 0, 0, err
	}
	b.regMu.Lock()
	b.bound[iface] = id
	b.regMu.Unlock()
	return id, v, nil
}

// bindGlobal binds g at the highest version both sides speak.
func (b *Backend) bindGlobal(g global, h handler) (uint32, uint32, error) {
	v := min(g.version, bindVersion[g.iface])
	var id uint32
	if err := b.c.send(b.registry, 0, g.name, bindObj{iface: g.iface, version: v, h: h, out: &id}); err != nil {
		return 0, 0, err
	}
	return id, v, nil
}

// boundVersion returns the version iface was bound at (0 when not bound).
func (b *Backend) boundVersion(iface string) uint32 {
	g, ok := b.find(iface)
	if !ok {
		return 0
	}
	return min(g.version, bindVersion[iface])
}

// ErrMissingProtocol is wrapped by every error about a protocol the compositor lacks.
var ErrMissingProtocol = errors.New("protocol not offered by the compositor")

// missing is the error for a capability whose protocol the compositor lacks.
func (b *Backend) missing(iface string, alternatives ...string) error {
	what := iface
	if len(alternatives) > 0 {
		what += " (or " + strings.Join(alternatives, ", ") + ")"
	}
	return fmt.Errorf("wayland: %s at %s does not offer %s, which %s needs: %w; %w (use a wlroots compositor such as sway, Hyprland, river, labwc or Wayfire, or the X11 or portal backend)",
		b.compositor, b.socket, what, purpose[iface], ErrMissingProtocol, desktop.ErrUnsupported)
}

// purpose says what each protocol is for, in errors and Check.
var purpose = map[string]string{
	ifShm: "capture", ifOutput: "the display layout", ifSeat: "input and the clipboard",
	ifXdgOutput: "the logical layout of scaled outputs", ifScreencopy: "capture",
	ifVirtualPointer: "pointer input", ifVirtualKeyboard: "keyboard input",
	ifDataControlWlr: "the clipboard", ifDataControlExt: "the clipboard", ifToplevels: "the active window's title",
}

// Name returns "wayland".
func (b *Backend) Name() string { return "wayland" }

// DisplayName names the desktop as the session does: the compositor's
// socket (WAYLAND_DISPLAY, or its path when it was given as one).
func (b *Backend) DisplayName() string {
	if b.opts.Display != "" {
		return b.opts.Display
	}
	return b.socket
}

// Compositor names the compositor (its process name, e.g. "sway").
func (b *Backend) Compositor() string { return b.compositor }

// Describe reports the compositor, its socket and the protocols in use.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	m := map[string]string{"compositor": b.compositor, "socket": b.socket, "windows placed by": "nothing: no element tree"}
	if b.opts.Placer != nil {
		m["windows placed by"] = b.opts.Placer.Name()
	}
	for _, p := range b.protocols() {
		if p.Version > 0 {
			m[p.Name] = "v" + strconv.Itoa(int(p.Version))
		} else {
			m[p.Name] = "missing"
		}
	}
	return m
}

// Protocol is one protocol the backend uses and whether the compositor offers it.
type Protocol struct {
	// Name is the Wayland interface, e.g. zwlr_screencopy_manager_v1.
	Name string `json:"name"`
	// For says which capability needs it.
	For string `json:"for"`
	// Version is the compositor's version of it; 0 when it is missing.
	Version uint32 `json:"version"`
	// Required is set for what capture needs (without it Open fails).
	Required bool `json:"required"`
}

// Report is what Check found.
type Report struct {
	Socket     string     `json:"socket"`
	Compositor string     `json:"compositor"`
	Protocols  []Protocol `json:"protocols"`
}

// Missing lists the protocols the compositor lacks, ext and wlr data control
// counting as one.
func (r Report) Missing() []string {
	have := map[string]bool{}
	for _, p := range r.Protocols {
		have[p.Name] = p.Version > 0
	}
	var out []string
	for _, p := range r.Protocols {
		if p.Version > 0 || (p.Name == ifDataControlWlr && have[ifDataControlExt]) || (p.Name == ifDataControlExt && have[ifDataControlWlr]) {
			continue
		}
		out = append(out, p.Name)
	}
	return out
}

func (b *Backend) protocols() []Protocol {
	names := []string{ifShm, ifOutput, ifSeat, ifXdgOutput, ifScreencopy, ifVirtualPointer, ifVirtualKeyboard, ifDataControlExt, ifDataControlWlr, ifToplevels}
	out := make([]Protocol, 0, len(names))
	for _, n := range names {
		p := Protocol{Name: n, For: purpose[n], Required: n == ifShm || n == ifOutput || n == ifScreencopy}
		if g, ok := b.find(n); ok {
			p.Version = g.version
		}
		out = append(out, p)
	}
	return out
}

// Check connects to the compositor, lists which of the protocols the backend
// needs it offers, and disconnects: doctor's probe.
func Check(ctx context.Context, o Options) (Report, error) {
	b, err := connect(ctx, o)
	if err != nil {
		return Report{}, err
	}
	defer b.c.close()
	return Report{Socket: b.socket, Compositor: b.compositor, Protocols: b.protocols()}, nil
}

// Open connects to the compositor and starts a session: outputs, capture,
// and the input, clipboard and window protocols it offers (each missing one
// makes only its capability fail, naming it). It fails when capture is
// impossible (no wl_shm, wl_output or zwlr_screencopy_manager_v1).
func Open(ctx context.Context, o Options) (*Backend, error) {
	b, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := b.startScreen(ctx); err != nil {
		_ = b.Close()
		return nil, err
	}
	b.startOptional(ctx)
	if err := b.c.roundtrip(ctx); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// startScreen binds what capture and the layout need and reads the outputs.
func (b *Backend) startScreen(ctx context.Context) error {
	for _, iface := range []string{ifShm, ifScreencopy} {
		if _, _, err := b.bind(iface, nil); err != nil {
			return err
		}
	}
	if _, ok := b.find(ifXdgOutput); ok {
		if _, _, err := b.bind(ifXdgOutput, nil); err != nil {
			return err
		}
	}
	b.outs.start()
	b.regMu.Lock()
	var outs []global
	for _, g := range b.globals {
		if g.iface == ifOutput {
			outs = append(outs, g)
		}
	}
	b.regMu.Unlock()
	sort.Slice(outs, func(i, j int) bool { return outs[i].name < outs[j].name })
	if len(outs) == 0 {
		return fmt.Errorf("wayland: %s at %s has no outputs (wl_output): nothing to capture", b.compositor, b.socket)
	}
	for _, g := range outs {
		b.bindOutput(g)
	}
	// Two roundtrips: the bind, then the xdg_output objects' first events.
	for range 2 {
		if err := b.c.roundtrip(ctx); err != nil {
			return err
		}
	}
	return nil
}

// startOptional starts input, clipboard and windows where the compositor
// offers their protocols; each capability's methods report what is missing.
func (b *Backend) startOptional(ctx context.Context) {
	if _, _, err := b.bind(ifSeat, b.seatEvent); err != nil {
		b.kbd.mu.Lock()
		b.kbd.err = err
		b.kbd.mu.Unlock()
		b.clip.mu.Lock()
		b.clip.err = err
		b.clip.mu.Unlock()
		b.tops.mu.Lock()
		b.tops.err = err
		b.tops.mu.Unlock()
		b.ptrMu.Lock()
		b.ptrErr = err
		b.ptrMu.Unlock()
		return
	}
	b.ptrMu.Lock()
	if _, err := b.pointer(); err != nil {
		b.log.Debug("wayland pointer unavailable", "err", err)
	}
	b.ptrMu.Unlock()
	if err := b.startKeyboard(ctx); err != nil {
		b.log.Debug("wayland keyboard unavailable", "err", err)
	}
	b.settleDevices(ctx)
	if err := b.startClipboard(); err != nil {
		b.log.Debug("wayland clipboard unavailable", "err", err)
	}
	if err := b.startToplevels(); err != nil {
		b.log.Debug("wayland window list unavailable", "err", err)
	}
}

// Seat capabilities.
const (
	capPointer  = 1
	capKeyboard = 2
)

// deviceSettle is how long clients get, once per session, to bind the
// wl_pointer and wl_keyboard the seat offers once the virtual devices exist:
// a seat without devices of its own (headless sway, a VM) gains its pointer
// and keyboard capabilities only then, and events sent before a client has
// bound them are lost (measured on sway 1.7: the first move and click, or
// every typed key in foot under load, with 50 ms; none in 6 loaded runs
// with this).
const deviceSettle = 300 * time.Millisecond

func (b *Backend) seatEvent(op uint16, d *decoder) {
	if op == 0 { // capabilities
		b.seatCaps.Store(d.uint())
		select {
		case b.seatChange <- struct{}{}:
		default:
		}
	}
}

// settleDevices waits until the seat advertises the pointer and keyboard this
// session created, then gives clients deviceSettle to bind them.
func (b *Backend) settleDevices(ctx context.Context) {
	want := uint32(0)
	b.ptrMu.Lock()
	if b.ptr != 0 {
		want |= capPointer
	}
	b.ptrMu.Unlock()
	b.kbd.mu.Lock()
	if b.kbd.id != 0 {
		want |= capKeyboard
	}
	b.kbd.mu.Unlock()
	if want == 0 {
		return
	}
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	for b.seatCaps.Load()&want != want {
		select {
		case <-b.seatChange:
		case <-t.C:
			b.log.Debug("wayland seat did not advertise the virtual devices", "caps", b.seatCaps.Load(), "want", want)
			return
		case <-ctx.Done():
			return
		}
	}
	time.Sleep(deviceSettle)
}

// Close releases every held key and button and disconnects. Safe after a partial start.
func (b *Backend) Close() error {
	var err error
	b.closeOnce.Do(func() {
		err = errors.Join(b.releaseAll(), b.handOff(), b.closeElements())
		if e := b.c.roundtrip(context.Background()); e != nil && err == nil && b.c.failed() == nil {
			err = e
		}
		b.capMu.Lock()
		b.cap.free(b)
		b.cap = nil
		b.capMu.Unlock()
		b.c.close()
	})
	return err
}

// now is the timestamp of an input event: milliseconds since the session
// began, and later than every timestamp given before, so that no two events
// share one.
func (b *Backend) now() uint32 {
	t := uint32(time.Since(b.start).Milliseconds())
	for {
		last := b.lastTime.Load()
		next := max(t, last+1)
		if b.lastTime.CompareAndSwap(last, next) {
			return next
		}
	}
}
