//go:build linux

package platform_test

import (
	"context"
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
)

// TestWaylandElementTreeOnSway: on headless sway, a GTK window floated to
// (300,150), another on the scale-2 output, and a client-side-decorated one
// (a header bar: its coordinates count from its surface, shadow included):
// the Wayland backend's snapshot finds each window's button where grim
// shows it (its box in global logical pixels, though the application knows
// only its window's coordinates), and a click at the box's centre presses it.
func TestWaylandElementTreeOnSway(t *testing.T) {
	s := swaytest.Start(t)
	bus := s.SessionBus(t)
	cases := []struct {
		title, output string
		at            image.Point
		// csd: the GTK window's coordinates count from the shadow's
		// corner, not the window sway places: grim and the click are the
		// oracles of the box's place.
		csd bool
	}{
		{"guiagent-elements HEADLESS-1", swaytest.Output1, image.Point{300, 150}, false},
		{"guiagent-elements HEADLESS-2", swaytest.Output2, image.Point{200, 100}, false},
		{"guiagent-elements CSD", swaytest.Output1, image.Point{700, 400}, true},
	}
	var titles []string
	for _, c := range cases {
		titles = append(titles, c.title)
	}
	app := s.StartElements(t, bus, titles...)
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
	for _, c := range cases {
		win := s.Float(t, c.title, c.output, c.at.X, c.at.Y)
		app.Floating(t, c.title)
		bb := app.Where[c.title].ButtonBox
		want := geom.Rect{X: win.X + bb.X, Y: win.Y + bb.Y, W: bb.W, H: bb.H}
		name := "Press " + strings.TrimPrefix(c.title, "guiagent-elements ")
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
					return snap.Window == c.title
				}
			}
			return false
		})
		if !found {
			t.Fatalf("%s: no snapshot of the focused window with the button %q within 10 s: err %v, snapshot %+v", c.title, name, err, snap)
		}
		if !c.csd && button.Box != want {
			t.Errorf("%s: the button's box is %+v; want %+v (the window's content at %+v in sway's tree, the button at %+v in it)", c.title, button.Box, want, win, bb)
		}
		if c.csd && (button.Box.W != bb.W || button.Box.H != bb.H || button.Box.Intersect(geom.Rect{X: win.X, Y: win.Y, W: win.W, H: win.H}) != button.Box) {
			t.Errorf("%s: the button's box is %+v; want a %dx%d box inside the window's content %+v", c.title, button.Box, bb.W, bb.H, win)
		}
		// grim as the oracle: the output repaints with the pointer on it.
		centre := geom.GlobalPoint{X: button.Box.X + button.Box.W/2, Y: button.Box.Y + button.Box.H/2}
		if err := scr.(desktop.Pointer).MoveTo(ctx, centre); err != nil {
			t.Fatal(err)
		}
		box := swaytest.Rect{X: button.Box.X, Y: button.Box.Y, W: button.Box.W, H: button.Box.H}
		if miss := s.RingMismatch(t, box, color.RGBA{255, 0, 255, 255}); miss != "" {
			t.Errorf("%s: grim does not show the magenta button at the snapshot's box %+v: %s", c.title, button.Box, miss)
			// A box that is right a moment later was read mid-layout.
			time.Sleep(time.Second)
			if later, err := src.Elements(ctx, desktop.ElementQuery{}); err == nil {
				for _, e := range later.Elements {
					if e.Role == desktop.RoleButton && e.Name == name {
						t.Logf("%s: a second later the button's box is %+v (the window's content %+v, the button at %+v in it)", c.title, e.Box, win, bb)
					}
				}
			}
		}
		app.Take()
		if err := in.Click(ctx, &centre, desktop.Left, 1, nil); err != nil {
			t.Fatal(err)
		}
		e, ok := app.Wait(5*time.Second, func(e swaytest.Event) bool { return e.Ev == "clicked" })
		if !ok || e.Win != c.title {
			t.Errorf("%s: a click at the centre %v of the button's box %+v: clicked %v on %q", c.title, centre, button.Box, ok, e.Win)
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
