//go:build linux

package wayland_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func bg() context.Context { return context.Background() }

// display returns the display named name.
func display(t *testing.T, b *wayland.Backend, name string) geom.Display {
	t.Helper()
	ds, err := b.Displays(bg())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no display %s in %+v", name, ds)
	return geom.Display{}
}

// TestCaptureMatchesGrim: screenshots of each output, whole and in part,
// are grim's pixels exactly (grim -o OUTPUT and grim -g as the oracle).
func TestCaptureMatchesGrim(t *testing.T) {
	e := startEnv(t)
	h := e.harness(t)
	colours := []color.RGBA{{200, 30, 40, 255}, {20, 180, 90, 255}, {30, 60, 220, 255}, {240, 200, 20, 255}}
	for _, d := range []geom.Display{display(t, h.b, swaytest.Output1), display(t, h.b, swaytest.Output2)} {
		for i, c := range colours { // a pattern with edges at odd logical pixels
			h.Fill(t, geom.Rect{X: d.Bounds.X + 13 + 97*i, Y: d.Bounds.Y + 21 + 31*i, W: 71, H: 43}, c)
		}
		got, err := h.b.Capture(bg(), d.Bounds, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := grimImage(t, e.s, "-o", d.Name)
		sameImage(t, d.Name+" whole", got, want)
		if ps := d.PhysicalSize(); got.Bounds().Dx() != ps.W || got.Bounds().Dy() != ps.H {
			t.Errorf("%s: capture is %v, want the output's %dx%d device pixels", d.Name, got.Bounds(), ps.W, ps.H)
		}
		r := geom.Rect{X: d.Bounds.X + 7, Y: d.Bounds.Y + 11, W: 301, H: 157}
		part, err := h.b.Capture(bg(), r, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantPart := grimImage(t, e.s, "-s", fmt.Sprint(d.ScaleFactor()), "-g", fmt.Sprintf("%d,%d %dx%d", r.X, r.Y, r.W, r.H))
		sameImage(t, fmt.Sprintf("%s region %v", d.Name, r), part, wantPart)
	}
}

// sameImage fails unless got and want have the same size and pixels.
func sameImage(t *testing.T, what string, got, want *image.RGBA) {
	t.Helper()
	if got.Bounds().Size() != want.Bounds().Size() {
		t.Errorf("%s: capture is %v, grim's is %v", what, got.Bounds(), want.Bounds())
		return
	}
	bad, first := 0, image.Point{-1, -1}
	w, hh := got.Bounds().Dx(), got.Bounds().Dy()
	for y := range hh {
		for x := range w {
			if got.RGBAAt(x, y) != want.RGBAAt(want.Rect.Min.X+x, want.Rect.Min.Y+y) {
				if bad == 0 {
					first = image.Point{x, y}
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d pixels differ from grim's; the first at %v: %v, grim %v", what, bad, w*hh, first,
			got.RGBAAt(first.X, first.Y), want.RGBAAt(want.Rect.Min.X+first.X, want.Rect.Min.Y+first.Y))
	}
}

// TestClickGTKButtonOnScaledOutput clicks the native GTK button of the
// window on the scale-2 output, and just beside it.
func TestClickGTKButtonOnScaledOutput(t *testing.T) {
	e := startEnv(t)
	h := e.harness(t)
	d := display(t, h.b, swaytest.Output2)
	if d.ScaleFactor() != 2 {
		t.Fatalf("%s has scale %v, want 2", d.Name, d.ScaleFactor())
	}
	box := e.app.Where[swaytest.Output2].ButtonBox
	in := desktop.NewInput(h.b)
	t.Cleanup(func() { _ = in.ReleaseAll() })
	clicked := func(p geom.GlobalPoint, wait time.Duration) bool {
		e.app.Take()
		if err := in.Click(bg(), &p, desktop.Left, 1, nil); err != nil {
			t.Fatal(err)
		}
		_, ok := e.app.Wait(wait, func(ev swaytest.Event) bool { return ev.Ev == "clicked" })
		return ok
	}
	// Just right of the button: no click.
	beside := geom.GlobalPoint{X: d.Bounds.X + box.X + box.W + 2, Y: d.Bounds.Y + box.Y + box.H/2}
	if clicked(beside, time.Second) {
		t.Errorf("a click at %v, 2 logical pixels right of the button %+v on %s, pressed it", beside, box, d.Name)
	}
	centre := geom.GlobalPoint{X: d.Bounds.X + box.X + box.W/2, Y: d.Bounds.Y + box.Y + box.H/2}
	if !clicked(centre, 5*time.Second) {
		t.Errorf("a click at %v, the centre of the button %+v on %s (scale 2), did not press it", centre, box, d.Name)
	}
	// Its last pixel inside, at the bottom right.
	corner := geom.GlobalPoint{X: d.Bounds.X + box.X + box.W - 1, Y: d.Bounds.Y + box.Y + box.H - 1}
	if !clicked(corner, 5*time.Second) {
		t.Errorf("a click at %v, the button's last logical pixel, did not press it", corner)
	}
}

// TestTypeIntoGTKEntryOnScaledOutput types non-ASCII text into the entry of
// the window on the scale-2 output, which a click on the entry focused.
func TestTypeIntoGTKEntryOnScaledOutput(t *testing.T) {
	e := startEnv(t)
	h := e.harness(t)
	d := display(t, h.b, swaytest.Output2)
	box := e.app.Where[swaytest.Output2].EntryBox
	in := desktop.NewInput(h.b)
	t.Cleanup(func() { _ = in.ReleaseAll() })
	p := geom.GlobalPoint{X: d.Bounds.X + box.X + box.W/2, Y: d.Bounds.Y + box.Y + box.H/2}
	if err := in.Click(bg(), &p, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		title, err := h.b.ActiveWindowTitle(bg())
		return err == nil && title == "guiagent-fixture "+swaytest.Output2
	}, "the clicked window's title as the active window's (foreign toplevel)")
	for _, text := range []string{"héllo 界面 ✓", " and more: Ωμέγα ñ 🙂"} {
		e.app.Take()
		if err := in.Type(bg(), text); err != nil {
			t.Fatal(err)
		}
		ev, ok := e.app.Wait(5*time.Second, func(ev swaytest.Event) bool {
			return ev.Ev == "text" && ev.Win == swaytest.Output2 && strings.HasSuffix(ev.Text, text)
		})
		if !ok {
			got, _ := swaytest.Text(e.app.Take(), swaytest.Output2)
			t.Fatalf("typed %q into the entry on %s; it holds %q", text, d.Name, got)
		}
		time.Sleep(200 * time.Millisecond)
		if got, changed := swaytest.Text(e.app.Take(), swaytest.Output2); changed && got != ev.Text {
			t.Errorf("after typing %q the entry went on to %q", text, got)
		}
	}
}

// TestClipboardWithWlClipboard: what the backend writes wl-paste reads, what
// wl-copy writes the backend reads, and typing leaves the clipboard (an
// image here) exactly as it was.
func TestClipboardWithWlClipboard(t *testing.T) {
	e := startEnv(t)
	h := e.harness(t)
	s := e.s
	for _, want := range []string{"plain text 42", "Grüße 世界 ✓\nsecond line"} {
		if err := h.b.WriteClipboard(bg(), want); err != nil {
			t.Fatal(err)
		}
		if got := string(s.Run(t, nil, "wl-paste", "-n")); got != want {
			t.Errorf("the backend wrote %q, wl-paste read %q", want, got)
		}
		types := strings.Fields(string(s.Run(t, nil, "wl-paste", "--list-types")))
		if !slices.Contains(types, "text/plain;charset=utf-8") || !slices.Contains(types, "UTF8_STRING") {
			t.Errorf("the backend's clipboard offers %q, want text/plain;charset=utf-8 and UTF8_STRING", types)
		}
	}
	const fromCopy = "from wl-copy: ✓ Ωμέγα"
	s.RunDetached(t, []byte(fromCopy), "wl-copy")
	waitFor(t, func() bool { got, err := h.b.ReadClipboard(bg()); return err == nil && got == fromCopy }, "ReadClipboard to return wl-copy's text")

	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 1, 2, 250}, 3000)...)
	s.RunDetached(t, png, "wl-copy", "--type", "image/png")
	waitFor(t, func() bool { _, err := h.b.ReadClipboard(bg()); return err != nil }, "ReadClipboard to see wl-copy's image")
	if _, err := h.b.ReadClipboard(bg()); err == nil || !strings.Contains(err.Error(), "image/png") {
		t.Errorf("ReadClipboard of an image: %v, want an error naming image/png", err)
	}
	in := desktop.NewInput(h.b)
	if err := in.Type(bg(), "Grüße 世界 ✓ typed"); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, "Grüße 世界 ✓ typed", 5*time.Second); got != "Grüße 世界 ✓ typed" {
		t.Errorf("typed text arrived as %q", got)
	}
	if got := s.Run(t, nil, "wl-paste", "--type", "image/png"); !bytes.Equal(got, png) {
		t.Errorf("after typing, the clipboard's image/png is %d bytes, want the %d bytes wl-copy set", len(got), len(png))
	}

	// A clipboard the backend holds outlives it (a keeper serves it), until
	// another client takes the clipboard.
	b2 := s.Open(t)
	const kept = "kept after Close ✓"
	if err := b2.WriteClipboard(bg(), kept); err != nil {
		t.Fatal(err)
	}
	if err := b2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := string(s.Run(t, nil, "wl-paste", "-n")); got != kept {
		t.Errorf("after the backend that wrote %q closed, wl-paste read %q", kept, got)
	}
	s.RunDetached(t, []byte("taken"), "wl-copy")
	waitFor(t, func() bool { return string(s.Run(t, nil, "wl-paste", "-n")) == "taken" }, "wl-copy to take the clipboard from the keeper")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCancelLeavesNothingHeld cancels typing half-way and closes a backend
// that holds a button and a modifier: the application sees every key and
// button released, and the next text arrives without a modifier.
func TestCancelLeavesNothingHeld(t *testing.T) {
	e := startEnv(t)
	h := e.harness(t)
	in := desktop.NewInput(h.b)
	ctx, cancel := context.WithCancel(bg())
	n := 0
	in.Gate = func(ctx context.Context) error {
		if n++; n == 3 {
			cancel()
		}
		return ctx.Err()
	}
	long := strings.Repeat("abc ✓ ", 40)
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	err := h.b.TypeText(ctx, long)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("TypeText cancelled half-way returned %v, want context.Canceled", err)
	}
	p, q := geom.GlobalPoint{X: 300, Y: 300}, geom.GlobalPoint{X: 600, Y: 400}
	dctx, dcancel := context.WithCancel(bg())
	in.Gate = func(ctx context.Context) error {
		if n++; n > 6 {
			dcancel()
		}
		return ctx.Err()
	}
	n = 0
	if err := in.Drag(dctx, p, nil, q, desktop.Left, desktop.Ctrl); !errors.Is(err, context.Canceled) {
		t.Errorf("Drag cancelled mid-way returned %v, want context.Canceled", err)
	}
	in.Gate = nil
	if k, b := in.Held(); len(k)+len(b) > 0 {
		t.Errorf("the ledger holds %v %v after the cancelled drag", k, b)
	}
	// A second backend holds a button and ctrl, then closes.
	b2 := e.s.Open(t)
	if err := b2.MoveTo(bg(), p); err != nil {
		t.Fatal(err)
	}
	if err := b2.KeyDown(bg(), desktop.Ctrl); err != nil {
		t.Fatal(err)
	}
	if err := b2.ButtonDown(bg(), desktop.Left); err != nil {
		t.Fatal(err)
	}
	if err := b2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	evs := h.Events(t, 0, 0)
	if s := stuckEvents(evs); s != "" {
		t.Errorf("after the cancels and Close, %s stayed pressed: %v", s, evs)
	}
	h.ResetText(t)
	if err := in.Type(bg(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, "x", 5*time.Second); got != "x" {
		t.Errorf("typing x after the cancels gave %q", got)
	}
	for _, ev := range h.Events(t, 0, 0) {
		if ev.Kind == "key_down" && len(ev.Modifiers) > 0 {
			t.Errorf("x arrived with modifiers %v held", ev.Modifiers)
		}
	}
}

// TestCheckListsSwaysProtocols: doctor's probe finds every protocol on sway.
func TestCheckListsSwaysProtocols(t *testing.T) {
	s := swaytest.Start(t)
	r, err := wayland.Check(bg(), s.Options())
	if err != nil {
		t.Fatal(err)
	}
	if r.Compositor != "sway" {
		t.Errorf("Check found compositor %q, want sway", r.Compositor)
	}
	if m := r.Missing(); len(m) != 0 {
		t.Errorf("Check says sway lacks %v: %+v", m, r.Protocols)
	}
	for _, p := range r.Protocols {
		if p.Name == "zwlr_screencopy_manager_v1" && p.Version < 3 {
			t.Errorf("screencopy at version %d, sway 1.7 has 3", p.Version)
		}
	}
}

// TestFractionalScale: at scale 1.5 the output is 1280x720 logical pixels
// of 1920x1080 device pixels; the backend says so, as sway does, its capture
// is grim's, whole and in part, and a click lands on the GTK button there.
func TestFractionalScale(t *testing.T) {
	s := swaytest.Start(t)
	s.Msg(t, "output", swaytest.Output2, "scale", "1.5")
	e := &env{s: s, app: s.StartApp(t)}
	h := e.harness(t)
	d := display(t, h.b, swaytest.Output2)
	if d.ScaleFactor() != 1.5 || d.Bounds != (geom.Rect{X: 1280, Y: 0, W: 1280, H: 720}) {
		t.Fatalf("%s at scale 1.5: %+v, want 1280x720+1280+0 at scale 1.5", d.Name, d)
	}
	for i, c := range []color.RGBA{{200, 30, 40, 255}, {20, 180, 90, 255}, {30, 60, 220, 255}} {
		h.Fill(t, geom.Rect{X: d.Bounds.X + 13 + 97*i, Y: 21 + 31*i, W: 71, H: 43}, c)
	}
	got, err := h.b.Capture(bg(), d.Bounds, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameImage(t, "scale 1.5 whole", got, grimImage(t, s, "-o", d.Name))
	r := geom.Rect{X: d.Bounds.X + 10, Y: 20, W: 400, H: 300}
	part, err := h.b.Capture(bg(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if part.Bounds().Dx() != 600 || part.Bounds().Dy() != 450 {
		t.Errorf("a 400x300 region at scale 1.5 captured as %v, want 600x450 device pixels", part.Bounds())
	}
	sameImage(t, "scale 1.5 region", part, grimImage(t, s, "-s", "1.5", "-g", fmt.Sprintf("%d,%d %dx%d", r.X, r.Y, r.W, r.H)))
	box := e.app.Where[swaytest.Output2].ButtonBox
	p := geom.GlobalPoint{X: d.Bounds.X + box.X + box.W/2, Y: d.Bounds.Y + box.Y + box.H/2}
	in := desktop.NewInput(h.b)
	if err := in.Click(bg(), &p, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.app.Wait(5*time.Second, func(ev swaytest.Event) bool { return ev.Ev == "clicked" && ev.Win == swaytest.Output2 }); !ok {
		t.Errorf("a click at %v, the centre of the button %+v at scale 1.5, did not press it", p, box)
	}
}

// TestTypeIntoFoot types into foot (a terminal with its own xkbcommon
// keymap handling) through a backend opened just before: a fresh virtual
// keyboard's first keys must arrive (wtype without a pause lost them all).
func TestTypeIntoFoot(t *testing.T) {
	s := swaytest.Start(t)
	if _, err := exec.LookPath("foot"); err != nil {
		t.Fatal("foot is not installed: apt-get install foot (scripts/debian-packages.sh install ci)")
	}
	out := filepath.Join(s.Dir, "typed")
	foot := s.Command("foot", []string{"--title", "guiagent-foot", "sh", "-c", "stty -echo; cat > " + out})
	if err := foot.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = foot.Process.Kill(); _ = foot.Wait() })
	waitFor(t, func() bool {
		return strings.Contains(string(s.Msg(t, "-t", "get_tree")), `"guiagent-foot"`)
	}, "foot's window")
	// Ready when its shell runs cat (the redirection made the file).
	waitFor(t, func() bool { _, err := os.Stat(out); return err == nil }, "foot's shell to start")
	s.Msg(t, `[title="^guiagent-foot$"] focus`)
	b := s.Open(t)
	waitFor(t, func() bool { title, err := b.ActiveWindowTitle(bg()); return err == nil && title == "guiagent-foot" }, "foot to have the focus")
	const text = "héllo 界面 ✓ Grüße\n"
	if err := b.TypeText(bg(), text); err != nil {
		t.Fatal(err)
	}
	var got []byte
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < len(text) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got, _ = os.ReadFile(out)
	}
	if string(got) != text {
		t.Errorf("typed %q into foot, it read %q", text, got)
	}
}
