package sampleapp

import (
	"image/color"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// driver injects input with XTEST on its own connection, as a desktop backend
// would, and reads the screen with GetImage.
type driver struct {
	t     testing.TB
	c     *xgb.Conn
	setup *xproto.SetupInfo
	root  xproto.Window
	km    keymap
}

const (
	ksShiftL   = 0xffe1
	ksControlL = 0xffe3
)

func newDriver(t testing.TB, display string) *driver {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("driver: connect to %s: %v", display, err)
	}
	t.Cleanup(c.Close)
	if err := xtest.Init(c); err != nil {
		t.Fatalf("driver: the X server lacks XTEST: %v", err)
	}
	setup := xproto.Setup(c)
	km, err := loadKeymap(c, setup)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, c: c, setup: setup, root: setup.DefaultScreen(c).Root, km: km}
}

func (d *driver) fake(typ byte, detail byte, x, y int) {
	d.t.Helper()
	if err := xtest.FakeInputChecked(d.c, typ, detail, 0, d.root, int16(x), int16(y), 0).Check(); err != nil {
		d.t.Fatalf("driver: XTEST FakeInput(%d,%d): %v", typ, detail, err)
	}
}

// sync waits until the server processed everything sent so far.
func (d *driver) sync() { _, _ = xproto.GetInputFocus(d.c).Reply() }

func (d *driver) move(x, y int) { d.fake(xproto.MotionNotify, 0, x, y) }

func (d *driver) click(x, y int, button byte) {
	d.move(x, y)
	d.fake(xproto.ButtonPress, button, 0, 0)
	d.fake(xproto.ButtonRelease, button, 0, 0)
	d.sync()
}

// keycode finds the keycode and shift level that type keysym ks.
func (d *driver) keycode(ks xproto.Keysym) (xproto.Keycode, bool) {
	d.t.Helper()
	for kc := int(d.setup.MinKeycode); kc <= int(d.setup.MaxKeycode); kc++ {
		l := d.km.list(xproto.Keycode(kc))
		for lvl := 0; lvl < min(2, len(l)); lvl++ {
			if l[lvl] == ks {
				return xproto.Keycode(kc), lvl == 1
			}
		}
	}
	d.t.Fatalf("driver: no keycode types keysym %#x", ks)
	return 0, false
}

// tap presses and releases keysym ks, holding shift when its level needs it
// and the given modifier keysyms.
func (d *driver) tap(ks xproto.Keysym, mods ...xproto.Keysym) {
	d.t.Helper()
	kc, shift := d.keycode(ks)
	if shift {
		mods = append(mods, ksShiftL)
	}
	var held []xproto.Keycode
	for _, m := range mods {
		mk, _ := d.keycode(m)
		d.fake(xproto.KeyPress, byte(mk), 0, 0)
		held = append(held, mk)
	}
	d.fake(xproto.KeyPress, byte(kc), 0, 0)
	d.fake(xproto.KeyRelease, byte(kc), 0, 0)
	for i := len(held) - 1; i >= 0; i-- {
		d.fake(xproto.KeyRelease, byte(held[i]), 0, 0)
	}
	d.sync()
}

// typeASCII types printable ASCII through the keymap.
func (d *driver) typeASCII(s string) {
	d.t.Helper()
	for _, r := range s {
		d.tap(xproto.Keysym(r))
	}
}

// typeRemapped types r by mapping it onto a spare keycode, the way backends
// type characters the keymap lacks; the application must follow MappingNotify.
func (d *driver) typeRemapped(r rune) {
	d.t.Helper()
	kc := d.setup.MaxKeycode // usually unused
	orig := append([]xproto.Keysym(nil), d.km.list(kc)...)
	ks := make([]xproto.Keysym, d.km.per)
	ks[0], ks[1] = runeKeysym(r), runeKeysym(r)
	if err := xproto.ChangeKeyboardMappingChecked(d.c, 1, kc, byte(d.km.per), ks).Check(); err != nil {
		d.t.Fatalf("driver: remap keycode %d: %v", kc, err)
	}
	d.fake(xproto.KeyPress, byte(kc), 0, 0)
	d.fake(xproto.KeyRelease, byte(kc), 0, 0)
	d.sync()
	d.t.Cleanup(func() { xproto.ChangeKeyboardMapping(d.c, 1, kc, byte(d.km.per), orig) })
}

// pixel reads one root window pixel.
func (d *driver) pixel(x, y int) color.RGBA {
	d.t.Helper()
	r, err := xproto.GetImage(d.c, xproto.ImageFormatZPixmap, xproto.Drawable(d.root), int16(x), int16(y), 1, 1, 0xffffffff).Reply()
	if err != nil || len(r.Data) < 3 {
		d.t.Fatalf("driver: GetImage at (%d,%d): %v", x, y, err)
	}
	// Depth 24 ZPixmap on little-endian servers: B, G, R, pad.
	return color.RGBA{R: r.Data[2], G: r.Data[1], B: r.Data[0], A: 255}
}

// clipboardOwner owns CLIPBOARD with text until the test ends.
func clipboardOwner(t testing.TB, display, text string) {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	screen := xproto.Setup(c).DefaultScreen(c)
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
		if err != nil {
			t.Fatal(err)
		}
		return r.Atom
	}
	clip, utf8Atom, targets := atom("CLIPBOARD"), atom("UTF8_STRING"), atom("TARGETS")
	win, _ := xproto.NewWindowId(c)
	xproto.CreateWindow(c, screen.RootDepth, win, screen.Root, -10, -10, 1, 1, 0, xproto.WindowClassInputOutput, screen.RootVisual, 0, nil)
	xproto.SetSelectionOwner(c, win, clip, xproto.TimeCurrentTime)
	o, err := xproto.GetSelectionOwner(c, clip).Reply()
	if err != nil || o.Owner != win {
		t.Fatalf("clipboard owner: could not take CLIPBOARD: %v", err)
	}
	go func() {
		for {
			ev, xerr := c.WaitForEvent()
			if ev == nil && xerr == nil {
				return
			}
			req, ok := ev.(xproto.SelectionRequestEvent)
			if !ok {
				continue
			}
			reply := xproto.SelectionNotifyEvent{Time: req.Time, Requestor: req.Requestor, Selection: req.Selection, Target: req.Target, Property: req.Property}
			switch req.Target {
			case utf8Atom:
				xproto.ChangeProperty(c, xproto.PropModeReplace, req.Requestor, req.Property, utf8Atom, 8, uint32(len(text)), []byte(text))
			case targets:
				b := make([]byte, 8)
				xgb.Put32(b, uint32(targets))
				xgb.Put32(b[4:], uint32(utf8Atom))
				xproto.ChangeProperty(c, xproto.PropModeReplace, req.Requestor, req.Property, xproto.AtomAtom, 32, 2, b)
			default:
				reply.Property = xproto.AtomNone
			}
			xproto.SendEvent(c, false, req.Requestor, 0, string(reply.Bytes()))
		}
	}()
}
