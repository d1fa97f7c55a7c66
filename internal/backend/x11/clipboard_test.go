package x11_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// xclient is a tiny X client written for these tests, as an application
// would be: it owns the CLIPBOARD with some targets (no INCR: its data is
// small), or plays a clipboard manager.
type xclient struct {
	t    testing.TB
	conn *xgb.Conn
	win  xproto.Window

	mu      sync.Mutex
	offer   map[xproto.Atom][]byte // target -> data served (type = target)
	owns    bool
	notify  chan xproto.SelectionNotifyEvent
	manager bool
	saved   map[string][]byte // what the manager saved, by target name
	saveReq chan struct{}     // closed when the manager answered SAVE_TARGETS
	deleted bool              // someone converted the ICCCM DELETE target
}

func newXClient(t testing.TB, display string) *xclient {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	x := &xclient{t: t, conn: c, notify: make(chan xproto.SelectionNotifyEvent, 8), saved: map[string][]byte{}, saveReq: make(chan struct{})}
	setup := xproto.Setup(c)
	x.win, _ = xproto.NewWindowId(c)
	if err := xproto.CreateWindowChecked(c, 0, x.win, setup.DefaultScreen(c).Root, 0, 0, 1, 1, 0,
		xproto.WindowClassInputOnly, 0, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange}).Check(); err != nil {
		t.Fatal(err)
	}
	go x.loop()
	t.Cleanup(func() { c.Close() })
	return x
}

func (x *xclient) atom(name string) xproto.Atom {
	rep, err := xproto.InternAtom(x.conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		x.t.Fatal(err)
	}
	return rep.Atom
}

func (x *xclient) name(a xproto.Atom) string {
	rep, err := xproto.GetAtomName(x.conn, a).Reply()
	if err != nil {
		return "?"
	}
	return rep.Name
}

// own makes the client the CLIPBOARD owner offering targets (name -> data).
func (x *xclient) own(targets map[string][]byte) {
	offer := map[xproto.Atom][]byte{}
	for n, d := range targets {
		offer[x.atom(n)] = d
	}
	x.mu.Lock()
	x.offer, x.owns = offer, true
	x.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(x.conn, x.win, x.atom("CLIPBOARD"), xproto.TimeCurrentTime).Check(); err != nil {
		x.t.Fatal(err)
	}
}

// beManager makes the client own CLIPBOARD_MANAGER.
func (x *xclient) beManager() {
	x.mu.Lock()
	x.manager = true
	x.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(x.conn, x.win, x.atom("CLIPBOARD_MANAGER"), xproto.TimeCurrentTime).Check(); err != nil {
		x.t.Fatal(err)
	}
}

func (x *xclient) loop() {
	for {
		ev, err := x.conn.WaitForEvent()
		if ev == nil && err == nil {
			return
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			if e.Target == x.atom("SAVE_TARGETS") {
				go x.save(e)
			} else {
				x.serve(e)
			}
		case xproto.SelectionClearEvent:
			x.mu.Lock()
			x.owns = false
			x.mu.Unlock()
		case xproto.SelectionNotifyEvent:
			x.notify <- e
		}
	}
}

func (x *xclient) serve(e xproto.SelectionRequestEvent) {
	x.mu.Lock()
	offer, owns := x.offer, x.owns
	x.mu.Unlock()
	reply := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: e.Property}
	if e.Target == x.atom("DELETE") && owns {
		x.mu.Lock()
		x.deleted = true // an editor would delete the selected text now
		x.mu.Unlock()
		xproto.ChangeProperty(x.conn, xproto.PropModeReplace, e.Requestor, e.Property, x.atom("NULL"), 8, 0, nil)
	} else if e.Target == x.atom("TARGETS") && owns {
		buf := make([]byte, 4, 4*(len(offer)+1))
		xgb.Put32(buf, uint32(x.atom("TARGETS")))
		for a := range offer {
			b := make([]byte, 4)
			xgb.Put32(b, uint32(a))
			buf = append(buf, b...)
		}
		xproto.ChangeProperty(x.conn, xproto.PropModeReplace, e.Requestor, e.Property, xproto.AtomAtom, 32, uint32(len(buf)/4), buf)
	} else if d, ok := offer[e.Target]; ok && owns {
		xproto.ChangeProperty(x.conn, xproto.PropModeReplace, e.Requestor, e.Property, e.Target, 8, uint32(len(d)), d)
	} else {
		reply.Property = xproto.AtomNone
	}
	xproto.SendEvent(x.conn, false, e.Requestor, xproto.EventMaskNoEvent, string(reply.Bytes()))
}

// fetch converts CLIPBOARD to target into the client's window (no INCR).
func (x *xclient) fetch(target xproto.Atom) ([]byte, bool) {
	prop := x.atom("FAKE_MANAGER_PROP")
	xproto.ConvertSelection(x.conn, x.win, x.atom("CLIPBOARD"), target, prop, xproto.TimeCurrentTime)
	select {
	case e := <-x.notify:
		if e.Property == xproto.AtomNone {
			return nil, false
		}
	case <-time.After(3 * time.Second):
		return nil, false
	}
	rep, err := xproto.GetProperty(x.conn, true, x.win, prop, xproto.GetPropertyTypeAny, 0, 1<<20).Reply()
	if err != nil {
		return nil, false
	}
	return rep.Value, true
}

// save is the fake clipboard manager's SAVE_TARGETS: fetch every target of
// the CLIPBOARD, answer the requestor, then own the CLIPBOARD with the copy.
func (x *xclient) save(e xproto.SelectionRequestEvent) {
	list, ok := x.fetch(x.atom("TARGETS"))
	saved := map[string][]byte{}
	for i := 0; ok && i+4 <= len(list); i += 4 {
		a := xproto.Atom(xgb.Get32(list[i:]))
		if n := x.name(a); n != "TARGETS" && n != "MULTIPLE" && n != "TIMESTAMP" {
			if d, ok := x.fetch(a); ok {
				saved[n] = d
			}
		}
	}
	x.mu.Lock()
	x.saved = saved
	x.mu.Unlock()
	reply := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: e.Property}
	xproto.SendEvent(x.conn, false, e.Requestor, xproto.EventMaskNoEvent, string(reply.Bytes()))
	x.own(saved)
	close(x.saveReq)
}

// userApp is another application reading the clipboard: a second backend.
func userApp(t testing.TB, display string) *x11.Backend {
	t.Helper()
	b := x11.New(x11.Options{Display: display})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// wantTarget checks that the clipboard's target reads back byte for byte.
func wantTarget(t *testing.T, app *x11.Backend, target string, want []byte, when string) {
	t.Helper()
	got, _, err := app.ReadTarget(ctxT(t), target)
	if err != nil {
		t.Errorf("%s: read %s: %v", when, target, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: %s is %d bytes, want %d bytes byte-exact (first difference at %d)", when, target, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// longText is pasted (over 50 characters) and typed into the probe.
var longText = strings.Repeat("a long paste, ü and 世界, ", 40)

func TestImageOnlyClipboardSurvivesALongPasteAndOurExit(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	app := userApp(t, vd.Display) // before the owner connects: xgb's extension set-up writes globals its reader reads
	png := append([]byte("\x89PNG\r\n\x1a\n"), randomBytes(120_000)...)
	owner := newXClient(t, vd.Display)
	owner.own(map[string][]byte{"image/png": png})
	h.ResetText(t)
	if err := h.b.TypeText(ctxT(t), longText); err != nil {
		t.Fatalf("TypeText(long): %v", err)
	}
	if got := h.Text(t, longText, 10*time.Second); got != longText {
		t.Fatalf("the pasted text arrived as %q", got)
	}
	wantTarget(t, app, "image/png", png, "after the paste")
	if _, err := h.b.ReadClipboard(ctxT(t)); err == nil || !strings.Contains(err.Error(), "no text") {
		t.Errorf("ReadClipboard of an image-only clipboard: %v, want an error saying it holds no text", err)
	}
	if err := h.b.Close(); err != nil { // no clipboard manager: a keeper takes over
		t.Fatal(err)
	}
	wantTarget(t, app, "image/png", png, "after guiagent closed")
}

func TestHTMLAndTextBothRestoredByteExact(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	app := userApp(t, vd.Display)
	html := []byte(`<meta charset="utf-8"><b>Grüße</b> <i>世界</i> &amp; more`)
	text := []byte("Grüße 世界 & more")
	owner := newXClient(t, vd.Display)
	owner.own(map[string][]byte{"text/html": html, "UTF8_STRING": text, "DELETE": nil})
	h.ResetText(t)
	if err := h.b.TypeText(ctxT(t), longText); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, longText, 10*time.Second); got != longText {
		t.Fatalf("the pasted text arrived as %q", got)
	}
	owner.mu.Lock()
	if owner.deleted {
		t.Error("saving the clipboard converted the DELETE target, which deletes the user's selected data")
	}
	owner.mu.Unlock()
	wantTarget(t, app, "text/html", html, "after the paste")
	wantTarget(t, app, "UTF8_STRING", text, "after the paste")
	if got, err := app.ReadClipboard(ctxT(t)); err != nil || got != string(text) {
		t.Errorf("ReadClipboard after the paste = %q, %v; want %q", got, err, text)
	}
}

func TestOneMegabyteClipboardRoundTripsWhole(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	app := userApp(t, vd.Display)
	big := strings.Repeat("0123456789abcdef ü 世界\n", 1<<20/27+1)[:1<<20-3] + "end" // 1 MiB, multi-byte
	// The user's application owns 1 MiB; guiagent reads it whole (INCR read).
	if err := app.WriteClipboard(ctxT(t), big); err != nil {
		t.Fatal(err)
	}
	got, err := h.b.ReadClipboard(ctxT(t))
	if err != nil || got != big {
		t.Fatalf("ReadClipboard of 1 MiB = %d bytes, %v; want %d bytes exact", len(got), err, len(big))
	}
	// A paste saves the 1 MiB clipboard and restores it; the app reads it
	// back from guiagent whole (INCR serve).
	h.ResetText(t)
	if err := h.b.TypeText(ctxT(t), longText); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, longText, 10*time.Second); got != longText {
		t.Fatalf("the pasted text arrived as %q", got)
	}
	if got, err := app.ReadClipboard(ctxT(t)); err != nil || got != big {
		t.Errorf("after the paste the app reads %d bytes, %v; want the %d bytes it had, exact", len(got), err, len(big))
	}
	// gui_clipboard set of 1 MiB, read by the app.
	big2 := strings.ToUpper(big)
	if err := h.b.WriteClipboard(ctxT(t), big2); err != nil {
		t.Fatal(err)
	}
	if got, err := app.ReadClipboard(ctxT(t)); err != nil || got != big2 {
		t.Errorf("the app reads %d bytes of guiagent's 1 MiB clipboard, %v; want %d exact", len(got), err, len(big2))
	}
	// After guiagent exits, the keeper serves the same 1 MiB.
	if err := h.b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := app.ReadClipboard(ctxT(t)); err != nil || got != big2 {
		t.Errorf("after guiagent closed, the app reads %d bytes, %v; want %d exact", len(got), err, len(big2))
	}
}

func TestClipboardManagerReceivesSaveTargetsAtExit(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	app := userApp(t, vd.Display)
	manager := newXClient(t, vd.Display)
	manager.beManager()
	html := []byte("<p>kept by the manager ✓</p>")
	text := []byte("kept by the manager ✓")
	owner := newXClient(t, vd.Display)
	owner.own(map[string][]byte{"text/html": html, "UTF8_STRING": text})
	h.ResetText(t)
	if err := h.b.TypeText(ctxT(t), longText); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, longText, 10*time.Second); got != longText {
		t.Fatalf("the pasted text arrived as %q", got)
	}
	if err := h.b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-manager.saveReq:
	case <-time.After(5 * time.Second):
		t.Fatal("the clipboard manager received no SAVE_TARGETS when guiagent closed")
	}
	manager.mu.Lock()
	saved := manager.saved
	manager.mu.Unlock()
	if !bytes.Equal(saved["text/html"], html) || !bytes.Equal(saved["UTF8_STRING"], text) {
		t.Errorf("the manager saved html %q and text %q; want %q and %q", saved["text/html"], saved["UTF8_STRING"], html, text)
	}
	wantTarget(t, app, "text/html", html, "after guiagent exited")
}

// BenchmarkTypeKeysVsPaste measures the two ways to enter long text that
// keep the user's clipboard: typing it as keys, or pasting it (save every
// target, paste, restore). It informed the choice of pasting plus a keeper
// process over typing (see handoff.go).
func BenchmarkTypeKeysVsPaste(b *testing.B) {
	vd := xvfbtest.Start(b, 800, 600)
	h := newHarness(b, vd.Display)
	owner := newXClient(b, vd.Display)
	owner.own(map[string][]byte{"UTF8_STRING": []byte("the user's clipboard"), "text/html": []byte("<b>the user's clipboard</b>")})
	for _, n := range []int{200, 2000} {
		text := strings.Repeat("The quick brown fox, 42! ", n/25+1)[:n]
		b.Run(fmt.Sprintf("keys/%d", n), func(b *testing.B) {
			for b.Loop() {
				h.ResetText(b)
				if err := h.b.TypeAsKeys(context.Background(), text); err != nil {
					b.Fatal(err)
				}
				if got := h.Text(b, text, time.Minute); got != text {
					b.Fatalf("typed %d of %d characters", len(got), len(text))
				}
			}
		})
		b.Run(fmt.Sprintf("paste/%d", n), func(b *testing.B) {
			for b.Loop() {
				h.ResetText(b)
				if err := h.b.TypeText(context.Background(), text); err != nil {
					b.Fatal(err)
				}
				if got := h.Text(b, text, time.Minute); got != text {
					b.Fatalf("pasted %d of %d characters", len(got), len(text))
				}
			}
		})
	}
}

// BenchmarkKeeperHandOff measures what Close costs when the backend owns the
// clipboard and no clipboard manager runs: starting the keeper process.
func BenchmarkKeeperHandOff(b *testing.B) {
	vd := xvfbtest.Start(b, 640, 480)
	app := newXClient(b, vd.Display)
	for b.Loop() {
		b.StopTimer()
		be := x11.New(x11.Options{Display: vd.Display})
		if err := be.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := be.WriteClipboard(context.Background(), "kept after exit"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := be.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		app.own(map[string][]byte{"UTF8_STRING": []byte("x")}) // the keeper exits
		b.StartTimer()
	}
}
