// Package x11probe is test support for backends that drive an X display (the
// x11 backend directly, the vnc backend through Xvnc): a Probe is an X client
// of its own that plays the application the backend drives, and implements the
// application side of suite.Harness. It imports testing and is imported only
// by tests.
package x11probe

import (
	"fmt"
	"image/color"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// Title is the probe window's title (WM_NAME, as UTF8_STRING).
const Title = "guiagent probe ✓"

// Origin says where the root position of the global origin is, so that the
// probe reports and paints in the backend's global coordinates.
type Origin int

const (
	// RootOrigin puts the global origin at the root window's (0,0), as a VNC
	// framebuffer does.
	RootOrigin Origin = iota
	// PrimaryMonitorOrigin puts it at the RandR primary monitor's top-left, as
	// the x11 backend does (root (0,0) when RandR has no primary monitor).
	PrimaryMonitorOrigin
)

// Probe is an X client of its own (separate connection) that plays the
// application: a fullscreen window that records the input it receives,
// assembles typed text (pasting on ctrl+v, honouring Shift and Caps Lock as the
// core protocol does), paints rectangles, and can own the clipboard like a
// user's application.
type Probe struct {
	conn   *xgb.Conn
	root   xproto.Window
	win    xproto.Window
	gc     xproto.Gcontext
	origin geom.GlobalPoint // root position of the global origin
	size   geom.Size

	clipboard, utf8, targets, pasteProp, marker xproto.Atom

	mu        sync.Mutex
	changed   chan struct{}
	events    []suite.Received
	text      []rune
	markers   int
	clipText  string // what the probe serves when it owns CLIPBOARD
	clipOwned bool
	down      map[xproto.Keycode]bool // keycodes seen pressed and not yet released

	// keymap, owned by the event goroutine.
	minKC   xproto.Keycode
	per     int
	keysyms []xproto.Keysym
}

// New connects to display, maps a focused fullscreen window titled Title and
// returns once it is visible. The connection closes when the test ends.
func New(t testing.TB, display string, origin Origin) *Probe {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("probe: connect %s: %v", display, err)
	}
	p := &Probe{conn: c, changed: make(chan struct{}), down: map[xproto.Keycode]bool{}}
	t.Cleanup(func() { c.Close() })
	setup := xproto.Setup(c)
	scr := setup.DefaultScreen(c)
	p.root = scr.Root
	p.size = geom.Size{W: int(scr.WidthInPixels), H: int(scr.HeightInPixels)}
	if g, err := xproto.GetGeometry(c, xproto.Drawable(p.root)).Reply(); err == nil {
		p.size = geom.Size{W: int(g.Width), H: int(g.Height)}
	}
	if origin == PrimaryMonitorOrigin {
		p.origin = primaryOrigin(c, p.root)
	}
	for _, a := range []struct {
		dst  *xproto.Atom
		name string
	}{{&p.clipboard, "CLIPBOARD"}, {&p.utf8, "UTF8_STRING"}, {&p.targets, "TARGETS"}, {&p.pasteProp, "PROBE_PASTE"}, {&p.marker, "PROBE_MARKER"}} {
		r, err := xproto.InternAtom(c, false, uint16(len(a.name)), a.name).Reply()
		if err != nil {
			t.Fatalf("probe: intern %s: %v", a.name, err)
		}
		*a.dst = r.Atom
	}
	p.loadKeymap(t, setup)

	p.win, _ = xproto.NewWindowId(c)
	mask := uint32(xproto.EventMaskKeyPress | xproto.EventMaskKeyRelease | xproto.EventMaskButtonPress |
		xproto.EventMaskButtonRelease | xproto.EventMaskPointerMotion | xproto.EventMaskExposure |
		xproto.EventMaskStructureNotify | xproto.EventMaskPropertyChange)
	err = xproto.CreateWindowChecked(c, scr.RootDepth, p.win, p.root, 0, 0, uint16(p.size.W), uint16(p.size.H), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect|xproto.CwEventMask,
		[]uint32{pixel(color.RGBA{128, 128, 128, 255}), 1, mask}).Check()
	if err != nil {
		t.Fatalf("probe: create window: %v", err)
	}
	xproto.ChangeProperty(c, xproto.PropModeReplace, p.win, xproto.AtomWmName, p.utf8, 8, uint32(len(Title)), []byte(Title))
	p.gc, _ = xproto.NewGcontextId(c)
	xproto.CreateGC(c, p.gc, xproto.Drawable(p.win), xproto.GcForeground, []uint32{0})
	mapped := make(chan struct{})
	go p.loop(setup, mapped)
	if err := xproto.MapWindowChecked(c, p.win).Check(); err != nil {
		t.Fatalf("probe: map window: %v", err)
	}
	select {
	case <-mapped:
	case <-time.After(5 * time.Second):
		t.Fatal("probe: window was not mapped within 5s")
	}
	if err := xproto.SetInputFocusChecked(c, xproto.InputFocusParent, p.win, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatalf("probe: focus window: %v", err)
	}
	p.sync(t)
	return p
}

// primaryOrigin finds the primary monitor's root position through RandR.
func primaryOrigin(c *xgb.Conn, root xproto.Window) geom.GlobalPoint {
	if err := x11.InitExtension(c, randr.Init); err != nil {
		return geom.GlobalPoint{}
	}
	rep, err := randr.GetMonitors(c, root, true).Reply()
	if err != nil || len(rep.Monitors) == 0 {
		return geom.GlobalPoint{}
	}
	for _, m := range rep.Monitors {
		if m.Primary {
			return geom.GlobalPoint{X: int(m.X), Y: int(m.Y)}
		}
	}
	return geom.GlobalPoint{}
}

// Conn is the probe's own X connection.
func (p *Probe) Conn() *xgb.Conn { return p.conn }

// Root is the root window of the probe's screen.
func (p *Probe) Root() xproto.Window { return p.root }

func pixel(c color.RGBA) uint32 { return uint32(c.R)<<16 | uint32(c.G)<<8 | uint32(c.B) }

// upperKeysym returns the upper-case keysym of a lower-case letter keysym.
func upperKeysym(s xproto.Keysym) xproto.Keysym {
	r, ok := keysym.Rune(uint32(s))
	if !ok || !unicode.IsLower(r) {
		return s
	}
	u := unicode.ToUpper(r)
	switch {
	case u == r:
		return s
	case u < 0x100:
		return xproto.Keysym(u)
	}
	return xproto.Keysym(0x01000000 + u)
}

func (p *Probe) loadKeymap(t testing.TB, setup *xproto.SetupInfo) {
	rep, err := xproto.GetKeyboardMapping(p.conn, setup.MinKeycode, byte(int(setup.MaxKeycode)-int(setup.MinKeycode)+1)).Reply()
	if err != nil {
		if t != nil {
			t.Fatalf("probe: keymap: %v", err)
		}
		return
	}
	p.minKC, p.per, p.keysyms = setup.MinKeycode, int(rep.KeysymsPerKeycode), rep.Keysyms
}

func (p *Probe) sym(kc xproto.Keycode, col int) xproto.Keysym {
	i := (int(kc)-int(p.minKC))*p.per + col
	if col >= p.per || i < 0 || i >= len(p.keysyms) {
		return 0
	}
	return p.keysyms[i]
}

func modifiers(state uint16) []string {
	var m []string
	if state&xproto.ModMaskShift != 0 {
		m = append(m, "shift")
	}
	if state&xproto.ModMaskControl != 0 {
		m = append(m, "ctrl")
	}
	if state&xproto.ModMask1 != 0 {
		m = append(m, "alt")
	}
	if state&xproto.ModMask4 != 0 {
		m = append(m, "super")
	}
	slices.Sort(m)
	return m
}

// record appends an event and wakes waiters.
func (p *Probe) record(e suite.Received) {
	p.mu.Lock()
	p.events = append(p.events, e)
	p.wake()
	p.mu.Unlock()
}

// wake signals a change. Caller holds mu.
func (p *Probe) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Probe) global(x, y int16) geom.GlobalPoint {
	return geom.GlobalPoint{X: int(x) - p.origin.X, Y: int(y) - p.origin.Y}
}

func (p *Probe) loop(setup *xproto.SetupInfo, mapped chan struct{}) {
	mappedOnce := sync.OnceFunc(func() { close(mapped) })
	for {
		ev, xerr := p.conn.WaitForEvent()
		if ev == nil && xerr == nil {
			return
		}
		if xerr != nil {
			continue
		}
		switch e := ev.(type) {
		case xproto.ExposeEvent:
			mappedOnce()
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard {
				p.loadKeymap(nil, setup) // like a real client: fetch the new mapping before the next key
			}
		case xproto.MotionNotifyEvent:
			p.record(suite.Received{Kind: "motion", At: p.global(e.RootX, e.RootY)})
		case xproto.ButtonPressEvent:
			p.button(e, true)
		case xproto.ButtonReleaseEvent:
			p.button(xproto.ButtonPressEvent(e), false)
		case xproto.KeyPressEvent:
			p.key(e, true)
		case xproto.KeyReleaseEvent:
			p.key(xproto.KeyPressEvent(e), false)
		case xproto.SelectionNotifyEvent:
			p.pasted(e)
		case xproto.SelectionRequestEvent:
			p.serve(e)
		case xproto.SelectionClearEvent:
			p.mu.Lock()
			p.clipOwned = false
			p.mu.Unlock()
		case xproto.ClientMessageEvent:
			if e.Type == p.marker {
				p.mu.Lock()
				p.markers++
				p.wake()
				p.mu.Unlock()
			}
		}
	}
}

func (p *Probe) button(e xproto.ButtonPressEvent, down bool) {
	at := p.global(e.RootX, e.RootY)
	switch e.Detail {
	case 1, 2, 3:
		kind := "button_up"
		if down {
			kind = "button_down"
		}
		p.record(suite.Received{Kind: kind, At: at, Button: desktop.Button(e.Detail), Modifiers: modifiers(e.State)})
	case 4, 5, 6, 7:
		if down {
			dir := map[xproto.Button]desktop.Direction{4: desktop.Up, 5: desktop.Down, 6: desktop.LeftD, 7: desktop.RightD}[e.Detail]
			p.record(suite.Received{Kind: "scroll", At: at, Direction: dir, Modifiers: modifiers(e.State)})
		}
	}
}

func (p *Probe) key(e xproto.KeyPressEvent, down bool) {
	base := p.sym(e.Detail, 0)
	name, _ := x11.KeysymKey(base)
	if name == "" {
		name = desktop.Key(fmt.Sprintf("keysym-0x%x", uint32(base)))
	}
	kind := "key_up"
	if down {
		kind = "key_down"
	}
	mods := modifiers(e.State)
	p.mu.Lock()
	if down {
		p.down[e.Detail] = true
	} else {
		delete(p.down, e.Detail)
	}
	p.mu.Unlock()
	p.record(suite.Received{Kind: kind, Key: name, Modifiers: mods})
	if !down {
		return
	}
	ctrl, alt := e.State&xproto.ModMaskControl != 0, e.State&xproto.ModMask1 != 0
	if ctrl && (base == 'v' || base == 'V') {
		xproto.ConvertSelection(p.conn, p.win, p.clipboard, p.utf8, p.pasteProp, e.Time)
		return
	}
	if ctrl || alt {
		return
	}
	s := base
	if e.State&xproto.ModMaskShift != 0 {
		if shifted := p.sym(e.Detail, 1); shifted != 0 {
			s = shifted
		} else if base >= 'a' && base <= 'z' {
			s = base - 0x20
		}
	}
	if e.State&xproto.ModMaskLock != 0 { // Caps Lock, as the core protocol interprets it
		s = upperKeysym(s)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s == 0xff08 { // BackSpace
		if len(p.text) > 0 {
			p.text = p.text[:len(p.text)-1]
		}
	} else if r, ok := keysym.Rune(uint32(s)); ok {
		p.text = append(p.text, r)
	}
	p.wake()
}

func (p *Probe) pasted(e xproto.SelectionNotifyEvent) {
	if e.Property == xproto.AtomNone {
		return
	}
	rep, err := xproto.GetProperty(p.conn, true, p.win, e.Property, xproto.GetPropertyTypeAny, 0, 1<<20).Reply()
	if err != nil {
		return
	}
	p.mu.Lock()
	p.text = append(p.text, []rune(string(rep.Value))...)
	p.wake()
	p.mu.Unlock()
}

// Own makes the probe the CLIPBOARD owner with text, as a user's application would.
func (p *Probe) Own(t testing.TB, text string) {
	t.Helper()
	p.mu.Lock()
	p.clipText, p.clipOwned = text, true
	p.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(p.conn, p.win, p.clipboard, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatalf("probe: own clipboard: %v", err)
	}
}

// OwnsClipboard reports whether the probe still owns CLIPBOARD (it loses it
// when another client takes it).
func (p *Probe) OwnsClipboard() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clipOwned
}

func (p *Probe) serve(e xproto.SelectionRequestEvent) {
	p.mu.Lock()
	text, owned := p.clipText, p.clipOwned
	p.mu.Unlock()
	reply := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: e.Property}
	switch {
	case !owned:
		reply.Property = xproto.AtomNone
	case e.Target == p.targets:
		buf := make([]byte, 8)
		xgb.Put32(buf, uint32(p.targets))
		xgb.Put32(buf[4:], uint32(p.utf8))
		xproto.ChangeProperty(p.conn, xproto.PropModeReplace, e.Requestor, e.Property, xproto.AtomAtom, 32, 2, buf)
	case e.Target == p.utf8:
		xproto.ChangeProperty(p.conn, xproto.PropModeReplace, e.Requestor, e.Property, p.utf8, 8, uint32(len(text)), []byte(text))
	default:
		reply.Property = xproto.AtomNone
	}
	xproto.SendEvent(p.conn, false, e.Requestor, xproto.EventMaskNoEvent, string(reply.Bytes()))
}

// sync makes a round trip on the probe's connection.
func (p *Probe) sync(t testing.TB) {
	t.Helper()
	if _, err := xproto.GetInputFocus(p.conn).Reply(); err != nil {
		t.Fatalf("probe: sync: %v", err)
	}
}

// Drain waits until every event the server queued for the probe so far was handled,
// by sending itself a marker event and waiting for it.
func (p *Probe) Drain(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	want := p.markers + 1
	p.mu.Unlock()
	ev := xproto.ClientMessageEvent{Format: 32, Window: p.win, Type: p.marker, Data: xproto.ClientMessageDataUnionData32New(make([]uint32, 5))}
	if err := xproto.SendEventChecked(p.conn, false, p.win, xproto.EventMaskNoEvent, string(ev.Bytes())).Check(); err != nil {
		t.Fatalf("probe: send marker: %v", err)
	}
	deadline := time.After(5 * time.Second)
	for {
		p.mu.Lock()
		done, ch := p.markers >= want, p.changed
		p.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("probe: marker event did not come back within 5s")
		}
	}
}

// KeycodesDown returns, ascending, the keycodes the probe window saw go down
// and not yet up, whatever keysyms they have now. Call Drain first so that
// every key event sent so far was handled.
func (p *Probe) KeycodesDown() []xproto.Keycode {
	p.mu.Lock()
	defer p.mu.Unlock()
	codes := make([]xproto.Keycode, 0, len(p.down))
	for kc := range p.down {
		codes = append(codes, kc)
	}
	slices.Sort(codes)
	return codes
}

// --- the application side of suite.Harness ---

// Fill paints r (global logical pixels) with c in the probe window, as suite.Harness's Fill.
func (p *Probe) Fill(t testing.TB, r geom.Rect, c color.RGBA) {
	t.Helper()
	xproto.ChangeGC(p.conn, p.gc, xproto.GcForeground, []uint32{pixel(c)})
	rect := xproto.Rectangle{X: int16(r.X + p.origin.X), Y: int16(r.Y + p.origin.Y), Width: uint16(r.W), Height: uint16(r.H)}
	if err := xproto.PolyFillRectangleChecked(p.conn, xproto.Drawable(p.win), p.gc, []xproto.Rectangle{rect}).Check(); err != nil {
		t.Fatalf("probe: fill %v: %v", r, err)
	}
	p.sync(t)
}

// Events waits until at least n events arrived since the last call (or
// timeout) and returns them all, as suite.Harness's Events.
func (p *Probe) Events(t testing.TB, n int, timeout time.Duration) []suite.Received {
	t.Helper()
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		if len(p.events) >= n {
			evs := p.events
			p.events = nil
			p.mu.Unlock()
			return evs
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			p.mu.Lock()
			evs := p.events
			p.events = nil
			p.mu.Unlock()
			return evs
		}
	}
}

// Text waits until the typed text is want (or timeout) and returns what it
// is, as suite.Harness's Text.
func (p *Probe) Text(t testing.TB, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		got, ch := string(p.text), p.changed
		p.mu.Unlock()
		if got == want {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			return got
		}
	}
}

// ResetText handles every queued event, then empties the text and forgets
// events, as suite.Harness's ResetText.
func (p *Probe) ResetText(t testing.TB) {
	t.Helper()
	p.Drain(t)
	p.mu.Lock()
	p.text, p.events = nil, nil
	p.mu.Unlock()
}
