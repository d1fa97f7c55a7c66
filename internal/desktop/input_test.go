package desktop_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

var errBoom = errors.New("boom: injected backend failure")

// trail renders the fake's recorded primitives as "key_down(Control_L) ...".
func trail(b *fake.Backend) string {
	var s []string
	for _, e := range b.Events() {
		s = append(s, e.String())
	}
	return strings.Join(s, " ")
}

// assertNothingPressed checks the backend's real state, the ledger, and that
// every down in the recorded order has a later up.
func assertNothingPressed(t *testing.T, b *fake.Backend, in *desktop.Input) {
	t.Helper()
	if keys, btns := b.Pressed(); len(keys)+len(btns) > 0 {
		t.Errorf("backend still has keys %v and buttons %v pressed; events: %s", keys, btns, trail(b))
	}
	if keys, btns := in.Held(); len(keys)+len(btns) > 0 {
		t.Errorf("ledger still holds keys %v and buttons %v", keys, btns)
	}
	down := map[string]bool{}
	for _, e := range b.Events() {
		switch e.Op {
		case fake.OpKeyDown:
			down["key "+string(e.Key)] = true
		case fake.OpKeyUp:
			delete(down, "key "+string(e.Key))
		case fake.OpButtonDown:
			down["button "+e.Button.String()] = true
		case fake.OpButtonUp:
			delete(down, "button "+e.Button.String())
		}
	}
	if len(down) > 0 {
		t.Errorf("recorded events press without release: %v; events: %s", down, trail(b))
	}
}

func pt(x, y int) *geom.GlobalPoint { return &geom.GlobalPoint{X: x, Y: y} }

func TestActionsArriveInOrder(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	in := desktop.NewInput(b)
	if err := in.Click(ctx, pt(10, 20), desktop.Right, 2, []desktop.Key{desktop.Ctrl}); err != nil {
		t.Fatal(err)
	}
	want := "move(10,20) key_down(Control_L) button_down(right)(10,20) button_up(right)(10,20) " +
		"button_down(right)(10,20) button_up(right)(10,20) key_up(Control_L)"
	if got := trail(b); got != want {
		t.Errorf("ctrl+double right click:\n got %s\nwant %s", got, want)
	}
	if ev := b.Events()[2]; len(ev.Modifiers) != 1 || ev.Modifiers[0] != "ctrl" {
		t.Errorf("button_down arrived with modifiers %v, want [ctrl]", ev.Modifiers)
	}
	if p, _, ok := in.LastPointer(); !ok || p != (geom.GlobalPoint{X: 10, Y: 20}) {
		t.Errorf("LastPointer = %v, %v; want (10,20)", p, ok)
	}
	b.ResetEvents()
	if err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, desktop.Shift, "t"}); err != nil {
		t.Fatal(err)
	}
	want = "key_down(Control_L) key_down(Shift_L) key_down(t) key_up(t) key_up(Shift_L) key_up(Control_L)"
	if got := trail(b); got != want {
		t.Errorf("hotkey:\n got %s\nwant %s", got, want)
	}
	if err := in.Click(ctx, nil, desktop.Left, 4, nil); err == nil {
		t.Error("Click with 4 clicks succeeded, want an error")
	}
}

func TestReleasedWhenPrimitiveFailsMidway(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		fail func(b *fake.Backend)
		run  func(in *desktop.Input) error
	}{
		{"hotkey third key down", func(b *fake.Backend) { b.FailAfter(fake.OpKeyDown, 2, errBoom) },
			func(in *desktop.Input) error { return in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, desktop.Shift, "t"}) }},
		{"ctrl+click button down", func(b *fake.Backend) { b.FailNext(fake.OpButtonDown, errBoom) },
			func(in *desktop.Input) error {
				return in.Click(ctx, pt(5, 5), desktop.Left, 1, []desktop.Key{desktop.Ctrl})
			}},
		{"ctrl+click button up", func(b *fake.Backend) { b.FailNext(fake.OpButtonUp, errBoom) },
			func(in *desktop.Input) error {
				return in.Click(ctx, pt(5, 5), desktop.Left, 1, []desktop.Key{desktop.Ctrl})
			}},
		{"drag motion", func(b *fake.Backend) { b.FailAfter(fake.OpMove, 3, errBoom) },
			func(in *desktop.Input) error {
				return in.Drag(ctx, geom.GlobalPoint{X: 1, Y: 1}, nil, geom.GlobalPoint{X: 300, Y: 200}, desktop.Left)
			}},
		{"shift+key key up", func(b *fake.Backend) { b.FailNext(fake.OpKeyUp, errBoom) },
			func(in *desktop.Input) error { return in.PressKey(ctx, "a", 3, []desktop.Key{desktop.Shift}) }},
		{"ctrl+scroll", func(b *fake.Backend) { b.FailNext(fake.OpScroll, errBoom) },
			func(in *desktop.Input) error {
				return in.Scroll(ctx, pt(9, 9), desktop.Down, 3, []desktop.Key{desktop.Ctrl})
			}},
		{"type", func(b *fake.Backend) { b.FailNext(fake.OpType, errBoom) },
			func(in *desktop.Input) error { return in.Type(ctx, "hello") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := fake.New(fake.Options{})
			in := desktop.NewInput(b)
			c.fail(b)
			if err := c.run(in); !errors.Is(err, errBoom) {
				t.Fatalf("got error %v, want the injected failure", err)
			}
			assertNothingPressed(t, b, in)
		})
	}
}

func TestReleasedOnCancel(t *testing.T) {
	for _, at := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("after %d events", at), func(t *testing.T) {
			b := fake.New(fake.Options{})
			in := desktop.NewInput(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancel from the backend's side once at events arrived: the next primitive sees a dead context.
			b.OnEvent(func(e fake.Event) {
				if e.Seq == at {
					cancel()
				}
			})
			err := in.Drag(ctx, geom.GlobalPoint{X: 10, Y: 10}, nil, geom.GlobalPoint{X: 400, Y: 300}, desktop.Left)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("drag cancelled midway returned %v, want context.Canceled", err)
			}
			assertNothingPressed(t, b, in)
		})
	}
	t.Run("hotkey via gate", func(t *testing.T) {
		b := fake.New(fake.Options{})
		in := desktop.NewInput(b)
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		in.Gate = func(ctx context.Context) error {
			if n++; n == 3 {
				cancel()
			}
			return ctx.Err()
		}
		err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, desktop.Alt, "t"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if got, want := trail(b), "key_down(Control_L) key_down(Alt_L) key_up(Alt_L) key_up(Control_L)"; got != want {
			t.Errorf("events %s, want %s", got, want)
		}
		assertNothingPressed(t, b, in)
	})
	t.Run("already cancelled", func(t *testing.T) {
		b := fake.New(fake.Options{})
		in := desktop.NewInput(b)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := in.Click(ctx, pt(1, 1), desktop.Left, 1, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if evs := b.Events(); len(evs) != 0 {
			t.Errorf("a cancelled click still sent %s", trail(b))
		}
	})
}

func TestReleasedOnPanic(t *testing.T) {
	catch := func(fn func()) (p any) {
		defer func() { p = recover() }()
		fn()
		return nil
	}
	t.Run("gate panics", func(t *testing.T) {
		b := fake.New(fake.Options{})
		in := desktop.NewInput(b)
		n := 0
		in.Gate = func(context.Context) error {
			if n++; n == 3 {
				panic("policy bug")
			}
			return nil
		}
		p := catch(func() { _ = in.Click(context.Background(), pt(3, 3), desktop.Left, 1, []desktop.Key{desktop.Ctrl}) })
		if p != "policy bug" {
			t.Fatalf("recovered %v, want the gate's panic re-raised", p)
		}
		assertNothingPressed(t, b, in)
	})
	t.Run("backend panics after pressing", func(t *testing.T) {
		b := fake.New(fake.Options{})
		in := desktop.NewInput(b)
		b.OnEvent(func(e fake.Event) {
			if e.Op == fake.OpKeyDown && e.Key == desktop.Shift {
				panic("driver bug")
			}
		})
		p := catch(func() { _ = in.Hotkey(context.Background(), []desktop.Key{desktop.Ctrl, desktop.Shift, "s"}) })
		if p != "driver bug" {
			t.Fatalf("recovered %v, want the backend's panic re-raised", p)
		}
		b.OnEvent(nil)
		assertNothingPressed(t, b, in)
		// The Input stays usable after a panic.
		if err := in.Click(context.Background(), pt(4, 4), desktop.Left, 1, nil); err != nil {
			t.Fatalf("click after a panic: %v", err)
		}
	})
}

func TestReleaseAllReleasesHeldInput(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	in := desktop.NewInput(b)
	if err := in.KeyDown(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	if err := in.MouseDown(ctx, pt(50, 60), desktop.Left); err != nil {
		t.Fatal(err)
	}
	if err := in.KeyDown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if keys, btns := b.Pressed(); len(keys) != 2 || len(btns) != 1 {
		t.Fatalf("after hold_key and mouse_down the backend holds %v %v, want shift, a and left", keys, btns)
	}
	// A release that fails once is retried, not forgotten.
	b.FailNext(fake.OpKeyUp, errBoom)
	if err := in.KeyUp(ctx, "a"); !errors.Is(err, errBoom) {
		t.Fatalf("KeyUp with a failing backend returned %v", err)
	}
	b.ResetEvents()
	if err := in.ReleaseAll(); err != nil {
		t.Fatalf("ReleaseAll: %v", err)
	}
	assertNothingPressed(t, b, in)
	if got, want := trail(b), "button_up(left)(50,60) key_up(a) key_up(Shift_L)"; got != want {
		t.Errorf("ReleaseAll sent %s, want %s", got, want)
	}
	// ReleaseAll on an empty ledger sends nothing.
	b.ResetEvents()
	if err := in.ReleaseAll(); err != nil || len(b.Events()) != 0 {
		t.Errorf("second ReleaseAll: %v, events %s", err, trail(b))
	}
}

func TestHeldInputSurvivesOtherActions(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	in := desktop.NewInput(b)
	if err := in.KeyDown(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	// A failing action releases only what it pressed, not the held shift.
	b.FailNext(fake.OpButtonDown, errBoom)
	if err := in.Click(ctx, pt(7, 7), desktop.Left, 1, []desktop.Key{desktop.Ctrl}); !errors.Is(err, errBoom) {
		t.Fatalf("got %v", err)
	}
	keys, _ := b.Pressed()
	if len(keys) != 1 || keys[0] != desktop.Shift {
		t.Errorf("after a failed ctrl+click the backend holds %v, want only the held shift", keys)
	}
	if err := in.KeyUp(ctx, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	assertNothingPressed(t, b, in)
}

// TestActionsFromTwoGoroutinesNeverInterleave runs two kinds of composite
// actions concurrently on a slow backend and checks, from the recorded order,
// that each action's primitives arrived as one uninterrupted block.
func TestActionsFromTwoGoroutinesNeverInterleave(t *testing.T) {
	b := fake.New(fake.Options{PrimitiveDelay: 100 * time.Microsecond})
	in := desktop.NewInput(b)
	const rounds = 40
	hotkey := []string{"key_down(Control_L)", "key_down(a)", "key_up(a)", "key_up(Control_L)"}
	click := []string{"move(100,200)", "key_down(Shift_L)", "button_down(left)(100,200)", "button_up(left)(100,200)", "key_up(Shift_L)"}
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	wg.Go(func() {
		for range rounds {
			errs <- in.Hotkey(context.Background(), []desktop.Key{desktop.Ctrl, "a"})
		}
	})
	wg.Go(func() {
		for range rounds {
			errs <- in.Click(context.Background(), pt(100, 200), desktop.Left, 1, []desktop.Key{desktop.Shift})
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	evs := b.Events()
	var seen [2]int
	for i := 0; i < len(evs); {
		var block []string
		kind := 0
		if evs[i].Op == fake.OpMove {
			block, kind = click, 1
		} else {
			block = hotkey
		}
		for j, want := range block {
			if i+j >= len(evs) || evs[i+j].String() != want {
				t.Fatalf("events interleave at %d: want %s, block so far %v; whole trail: %s", i+j, want, block[:j], trail(b))
			}
		}
		seen[kind]++
		i += len(block)
	}
	if seen != [2]int{rounds, rounds} {
		t.Errorf("saw %d hotkeys and %d clicks, want %d of each", seen[0], seen[1], rounds)
	}
}

func TestMissingCapabilities(t *testing.T) {
	in := desktop.NewInput(screenOnly{})
	if err := in.Click(context.Background(), nil, desktop.Left, 1, nil); !errors.Is(err, desktop.ErrNoInput) || !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("Click on a capture-only backend: %v, want ErrNoInput", err)
	}
	if err := in.Type(context.Background(), "x"); !errors.Is(err, desktop.ErrNoInput) {
		t.Errorf("Type on a capture-only backend: %v, want ErrNoInput", err)
	}
	caps := desktop.CapabilitiesOf(context.Background(), fake.New(fake.Options{}))
	if !caps.Capture || !caps.Input || !caps.Clipboard || !caps.Windows || caps.Details["backend"] != "fake" {
		t.Errorf("fake capabilities = %+v, want all of them with details", caps)
	}
}

// screenOnly is a backend without input capabilities.
type screenOnly struct{ desktop.Screen }
