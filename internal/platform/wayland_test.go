//go:build linux

package platform_test

import (
	"context"
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
)

// TestWaylandElementTreeOnSway: on headless sway, a GTK window floated to
// (300,150) and another on the scale-2 output: the Wayland backend's
// snapshot finds each window's button where grim shows it (its box in
// global logical pixels, though the application knows only its window's
// coordinates), and a click at the box's centre presses it.
func TestWaylandElementTreeOnSway(t *testing.T) {
	s := swaytest.Start(t)
	bus := s.SessionBus(t)
	titles := map[string]string{swaytest.Output1: "guiagent-elements HEADLESS-1", swaytest.Output2: "guiagent-elements HEADLESS-2"}
	app := s.StartElements(t, bus, titles[swaytest.Output1], titles[swaytest.Output2])
	at := map[string]image.Point{swaytest.Output1: {300, 150}, swaytest.Output2: {200, 100}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scr, closer, err := platform.Open(ctx, platform.Options{Backend: platform.Wayland, Accessibility: "auto", SessionBus: bus,
		Session: platform.Session{Type: "wayland", WaylandDisplay: s.Display, RuntimeDir: s.Dir, SwaySock: s.IPC()}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closer() }()
	src, ok := desktop.ElementsOf(scr)
	if !ok {
		t.Fatal("the Wayland backend on sway has no element source")
	}
	in := desktop.NewInput(scr)
	t.Cleanup(func() { _ = in.ReleaseAll() })
	for _, out := range []string{swaytest.Output1, swaytest.Output2} {
		title := titles[out]
		win := s.Float(t, title, out, at[out].X, at[out].Y)
		bb := app.Where[title].ButtonBox
		want := geom.Rect{X: win.X + bb.X, Y: win.Y + bb.Y, W: bb.W, H: bb.H}
		name := "Press " + out
		var snap *desktop.ElementSnapshot
		var button desktop.Element
		found := waitUntil(10*time.Second, func() bool {
			snap, err = src.Elements(ctx, desktop.ElementQuery{})
			if err != nil {
				return false
			}
			for _, e := range snap.Elements {
				if e.Role == desktop.RoleButton && e.Name == name {
					button = e
					return snap.Window == title
				}
			}
			return false
		})
		if !found {
			t.Fatalf("%s: no snapshot of the focused window %q with the button %q within 10 s: err %v, snapshot %+v", out, title, name, err, snap)
		}
		if button.Box != want {
			t.Errorf("%s: the button's box is %+v; want %+v (the window's content at %+v in sway's tree, the button at %+v in it)", out, button.Box, want, win, bb)
		}
		// grim as the oracle: the output repaints with the pointer on it.
		centre := geom.GlobalPoint{X: button.Box.X + button.Box.W/2, Y: button.Box.Y + button.Box.H/2}
		if err := scr.(desktop.Pointer).MoveTo(ctx, centre); err != nil {
			t.Fatal(err)
		}
		box := swaytest.Rect{X: button.Box.X, Y: button.Box.Y, W: button.Box.W, H: button.Box.H}
		if miss := s.RingMismatch(t, box, color.RGBA{255, 0, 255, 255}); miss != "" {
			t.Errorf("%s: grim does not show the magenta button at the snapshot's box %+v: %s", out, button.Box, miss)
		}
		app.Take()
		if err := in.Click(ctx, &centre, desktop.Left, 1, nil); err != nil {
			t.Fatal(err)
		}
		e, ok := app.Wait(5*time.Second, func(e swaytest.Event) bool { return e.Ev == "clicked" })
		if !ok || e.Win != title {
			t.Errorf("%s: a click at the centre %v of the button's box %+v: clicked %v on %q, want the button of %q", out, centre, button.Box, ok, e.Win, title)
		}
	}
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
