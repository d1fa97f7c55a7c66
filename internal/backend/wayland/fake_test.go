//go:build linux

package wayland

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// fakeCompositor serves a registry of the given globals on a socket: enough
// Wayland for Open, one 800x600 output, and nothing else.
func fakeCompositor(t *testing.T, globals ...string) Options {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "wayland-9"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveFake(c, globals)
		}
	}()
	return Options{Display: "wayland-9", RuntimeDir: dir}
}

func serveFake(c net.Conn, globals []string) {
	defer c.Close()
	send := func(sender uint32, op uint16, args func(*encoder)) {
		_, _ = c.Write(event(sender, op, args))
	}
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		n, err := c.Read(tmp)
		if err != nil {
			return
		}
		buf = append(buf, tmp[:n]...)
		for len(buf) >= headerSize {
			sender, op, size := header(buf)
			if len(buf) < size {
				break
			}
			d := &decoder{data: buf[headerSize:size]}
			switch {
			case sender == displayID && op == 1: // get_registry
				reg := d.uint()
				for i, g := range globals {
					send(reg, 0, func(e *encoder) { e.uint(uint32(i + 1)); e.string(g); e.uint(4) })
				}
			case sender == displayID && op == 0: // sync
				cb := d.uint()
				send(cb, 0, func(e *encoder) { e.uint(0) })
				send(displayID, 1, func(e *encoder) { e.uint(cb) })
			case op == 0 && sender == 2: // registry.bind
				name, iface, _, id := d.uint(), d.string(), d.uint(), d.uint()
				_ = name
				if iface == ifOutput {
					send(id, 1, func(e *encoder) { e.uint(1); e.int(800); e.int(600); e.int(60000) })
					send(id, 2, func(e *encoder) {})
				}
			}
			buf = buf[size:]
		}
	}
}

// TestMissingProtocolsAreNamed: on a compositor offering capture only, each
// other capability fails with an error naming its protocol and the
// compositor, and Open without screencopy fails naming it.
func TestMissingProtocolsAreNamed(t *testing.T) {
	ctx := context.Background()
	o := fakeCompositor(t, ifShm, ifOutput, ifScreencopy, ifSeat)
	b, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ds, err := b.Displays(ctx)
	if err != nil || len(ds) != 1 || ds[0].Bounds != (geom.Rect{W: 800, H: 600}) || !ds[0].Primary {
		t.Fatalf("Displays = %+v, %v; want one 800x600 primary output (wl_output alone, no xdg-output)", ds, err)
	}
	who := b.Compositor()
	if who == "" || who == "the compositor" {
		t.Errorf("Compositor() = %q, want the peer's process name", who)
	}
	checks := []struct {
		name, protocol string
		err            error
	}{
		{"MoveTo", ifVirtualPointer, b.MoveTo(ctx, geom.GlobalPoint{X: 10, Y: 10})},
		{"ButtonDown", ifVirtualPointer, b.ButtonDown(ctx, desktop.Left)},
		{"Scroll", ifVirtualPointer, b.Scroll(ctx, desktop.Down, 1)},
		{"KeyDown", ifVirtualKeyboard, b.KeyDown(ctx, desktop.Ctrl)},
		{"TypeText", ifVirtualKeyboard, b.TypeText(ctx, "x")},
		{"WriteClipboard", ifDataControlWlr, b.WriteClipboard(ctx, "x")},
	}
	_, rerr := b.ReadClipboard(ctx)
	_, werr := b.ActiveWindowTitle(ctx)
	checks = append(checks, struct {
		name, protocol string
		err            error
	}{"ReadClipboard", ifDataControlExt, rerr}, struct {
		name, protocol string
		err            error
	}{"ActiveWindowTitle", ifToplevels, werr})
	for _, c := range checks {
		if c.err == nil || !strings.Contains(c.err.Error(), c.protocol) || !strings.Contains(c.err.Error(), who) ||
			!errors.Is(c.err, desktop.ErrUnsupported) || !errors.Is(c.err, ErrMissingProtocol) {
			t.Errorf("%s on a compositor without %s: %v; want an error naming it and %q, wrapping ErrUnsupported", c.name, c.protocol, c.err, who)
		}
	}
	if _, err := b.CursorPosition(ctx); err == nil {
		t.Error("CursorPosition before any move returned a position")
	}

	// Without a seat, input, clipboard and windows name wl_seat.
	nb, err := Open(ctx, fakeCompositor(t, ifShm, ifOutput, ifScreencopy, ifVirtualPointer, ifVirtualKeyboard, ifDataControlWlr, ifToplevels))
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	_, cerr := nb.ReadClipboard(ctx)
	_, terr := nb.ActiveWindowTitle(ctx)
	for i, err := range []error{nb.MoveTo(ctx, geom.GlobalPoint{X: 1, Y: 1}), nb.KeyDown(ctx, "a"), cerr, terr} {
		if err == nil || !strings.Contains(err.Error(), ifSeat) {
			t.Errorf("capability %d without a seat: %v, want an error naming %s", i, err, ifSeat)
		}
	}

	_, err = Open(ctx, fakeCompositor(t, ifShm, ifOutput))
	if err == nil || !strings.Contains(err.Error(), ifScreencopy) || !strings.Contains(err.Error(), "capture") {
		t.Errorf("Open without screencopy: %v, want an error naming %s and capture", err, ifScreencopy)
	}
	r, err := Check(ctx, fakeCompositor(t, ifShm, ifOutput))
	if err != nil {
		t.Fatal(err)
	}
	if m := strings.Join(r.Missing(), " "); !strings.Contains(m, ifScreencopy) || !strings.Contains(m, ifVirtualKeyboard) || strings.Contains(m, ifShm) {
		t.Errorf("Check's missing list %q", m)
	}
}
