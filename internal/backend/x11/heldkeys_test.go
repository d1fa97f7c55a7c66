package x11_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// keycodeOf returns the keycode the backend presses for k now.
func keycodeOf(t *testing.T, b *x11.Backend, k desktop.Key) xproto.Keycode {
	t.Helper()
	kc, _, err := b.KeycodeOf(k)
	if err != nil {
		t.Fatalf("keycode of %q: %v", k, err)
	}
	return kc
}

// serverDown reports whether the X server has kc pressed (QueryKeymap).
func serverDown(t *testing.T, c *xgb.Conn, kc xproto.Keycode) bool {
	t.Helper()
	rep, err := xproto.QueryKeymap(c).Reply()
	if err != nil {
		t.Fatalf("QueryKeymap: %v", err)
	}
	return rep.Keys[kc/8]&(1<<(kc%8)) != 0
}

// wantDown checks, after every queued event was handled, that the application
// saw exactly codes held and that the server agrees for each of them.
func (h *harness) wantDown(t *testing.T, when string, codes ...xproto.Keycode) {
	t.Helper()
	h.Drain(t)
	if got := h.KeycodesDown(); !slices.Equal(got, codes) {
		t.Errorf("%s: the application sees keycodes %v held, want %v", when, got, codes)
	}
	for _, kc := range codes {
		if !serverDown(t, h.Conn(), kc) {
			t.Errorf("%s: the X server has keycode %d up, want it held", when, kc)
		}
	}
}

// remap gives kc the keysyms lower and upper through c (another client, as
// setxkbmap would).
func remap(t *testing.T, c *xgb.Conn, kc xproto.Keycode, lower, upper xproto.Keysym) {
	t.Helper()
	setup := xproto.Setup(c)
	rep, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, byte(int(setup.MaxKeycode)-int(setup.MinKeycode)+1)).Reply()
	if err != nil {
		t.Fatal(err)
	}
	syms := make([]xproto.Keysym, rep.KeysymsPerKeycode)
	syms[0], syms[1] = lower, upper
	if err := xproto.ChangeKeyboardMappingChecked(c, 1, kc, rep.KeysymsPerKeycode, syms).Check(); err != nil {
		t.Fatalf("remap keycode %d: %v", kc, err)
	}
}

func TestKeyUpReleasesThePressedKeycodeAfterARemap(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	kcA := keycodeOf(t, h.b, "a")
	h.ResetText(t)
	if err := h.b.KeyDown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, `after KeyDown("a")`, kcA)

	// Another client moves "a" off its keycode while it is held.
	remap(t, h.Conn(), kcA, 0xe4, 0xc4) // adiaeresis, Adiaeresis
	deadline := time.Now().Add(5 * time.Second)
	for keycodeOf(t, h.b, "a") == kcA { // until the backend has read the new mapping
		if time.Now().After(deadline) {
			t.Fatal("the backend did not notice the keyboard mapping change within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := h.b.KeyUp(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, `after the remap and KeyUp("a")`)
	evs := h.Events(t, 0, 0)
	if !slices.ContainsFunc(evs, func(e suite.Received) bool { return e.Kind == "key_up" && e.Key == "ä" }) {
		t.Errorf("the application never saw the held keycode (now ä) go up: %+v", evs)
	}
}

func TestShiftedKeyLeavesTheCallersShiftHeld(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	shift, bang, a := keycodeOf(t, h.b, desktop.Shift), keycodeOf(t, h.b, "!"), keycodeOf(t, h.b, "a")
	h.ResetText(t)

	// Shift held first, then "!".
	for _, step := range []struct {
		up bool
		k  desktop.Key
	}{{false, desktop.Shift}, {false, "!"}, {true, "!"}} {
		var err error
		if step.up {
			err = h.b.KeyUp(ctx, step.k)
		} else {
			err = h.b.KeyDown(ctx, step.k)
		}
		if err != nil {
			t.Fatalf("key %q up=%v: %v", step.k, step.up, err)
		}
	}
	h.wantDown(t, `after KeyDown(Shift), KeyDown("!"), KeyUp("!")`, shift)
	if err := h.b.KeyDown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := h.b.KeyUp(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, "!A", 5*time.Second); got != "!A" {
		t.Errorf(`"a" pressed while the caller still holds Shift typed %q, want "!A"`, got)
	}
	if err := h.b.KeyUp(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, "after KeyUp(Shift)")

	// "!" first, then Shift: releasing "!" keeps the Shift the caller pressed.
	if err := h.b.KeyDown(ctx, "!"); err != nil {
		t.Fatal(err)
	}
	if err := h.b.KeyDown(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, `after KeyDown("!"), KeyDown(Shift)`, min(shift, bang), max(shift, bang))
	if err := h.b.KeyUp(ctx, "!"); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, `after KeyUp("!") with Shift held`, shift)
	if err := h.b.KeyUp(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, "after KeyUp(Shift)")

	// Typing shifted text while the caller holds Shift and "a" leaves both held.
	if err := h.b.KeyDown(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	if err := h.b.KeyDown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := h.b.TypeText(ctx, "Hi!a"); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, "after TypeText with Shift and a held", min(shift, a), max(shift, a))
	if err := h.b.KeyUp(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := h.b.KeyUp(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, "after releasing a and Shift")
}

func TestCloseReleasesHeldKeys(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	h := newHarness(t, vd.Display)
	ctx := ctxT(t)
	b := x11.New(x11.Options{Display: vd.Display})
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	held := []xproto.Keycode{keycodeOf(t, b, "q"), keycodeOf(t, b, desktop.Shift), keycodeOf(t, b, "?")}
	slices.Sort(held)
	h.ResetText(t)
	for _, k := range []desktop.Key{"q", "?"} {
		if err := b.KeyDown(ctx, k); err != nil {
			b.Close()
			t.Fatal(err)
		}
	}
	h.wantDown(t, "after KeyDown(q), KeyDown(?)", held...)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	h.wantDown(t, "after Close with q and ? held")
}
