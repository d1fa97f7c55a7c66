package atspi

import (
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// appTree is an application on bus with showing windows of the given titles.
func appTree(bus string, titles ...string) *tree {
	t := &tree{a: &app{bus: bus, name: bus}, root: &node{}}
	for _, title := range titles {
		t.root.children = append(t.root.children, &node{name: title, st: 1 << stateShowing})
	}
	return t
}

func TestPlacementMatchesWindowsByProcessThenTitle(t *testing.T) {
	editor := appTree(":1.5", "notes.txt", "Preferences", "") // "": an open menu, no toplevel of the compositor's
	calc := appTree(":1.7", "Calculator")
	sandboxed := appTree(":1.9", "Sandboxed") // its bus connection is a proxy's process
	pl := &placement{
		pids: map[string]int{":1.5": 100, ":1.7": 200, ":1.9": 999},
		wins: []Placed{
			{PID: 200, Title: "Calculator — 2 + 2", Rect: geom.Rect{X: 1480, Y: 100, W: 300, H: 400}, Focused: true},
			{PID: 100, Title: "Preferences", Rect: geom.Rect{X: 300, Y: 150, W: 400, H: 300}},
			{PID: 100, Title: "notes.txt", Rect: geom.Rect{X: 0, Y: 0, W: 1280, H: 800}},
			{PID: 555, Title: "Sandboxed", Rect: geom.Rect{X: 50, Y: 60, W: 10, H: 10}},
			{PID: 300, Title: "xterm", Rect: geom.Rect{X: 700, Y: 20, W: 10, H: 10}, Absolute: true},
		},
	}
	offs, focused := pl.origins([]*tree{editor, calc, sandboxed})
	want := map[*node][2]int{
		editor.root.children[0]:    {0, 0},
		editor.root.children[1]:    {300, 150},
		calc.root.children[0]:      {1480, 100}, // the process's only window, whatever its title
		sandboxed.root.children[0]: {50, 60},    // by title, among the windows of no application's process
	}
	if len(offs) != len(want) {
		t.Errorf("matched %d windows, want %d: %v", len(offs), len(want), offs)
	}
	for n, o := range want {
		if got, ok := offs[n]; !ok || got.x != o[0] || got.y != o[1] {
			t.Errorf("window %q: offset %v (matched %v), want %v", n.name, got, ok, o)
		}
	}
	if focused != calc.root.children[0] {
		t.Errorf("the focused window is %v, want the calculator (the compositor's focused window)", focused)
	}
	if _, ok := offs[editor.root.children[2]]; ok {
		t.Error("a menu without a toplevel of its own was placed")
	}

	// An XWayland client's boxes are the screen's already.
	x11 := appTree(":1.13", "xterm")
	pl.pids[":1.13"] = 300
	offs, _ = pl.origins([]*tree{x11})
	if o, ok := offs[x11.root.children[0]]; !ok || o != (offset{}) {
		t.Errorf("the XWayland window: offset %v (matched %v), want none", o, ok)
	}
}
