package phone_test

import (
	"errors"
	"image"
	"slices"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TestKeys holds ctrl, presses a and releases both: a goes with ctrl, and
// ctrl's release sends nothing; a modifier pressed alone is sent alone.
func TestKeys(t *testing.T) {
	var k phone.Keys
	k.Down(desktop.Ctrl)
	k.Down("a")
	mods, used := k.Up("a")
	if !slices.Equal(mods, []desktop.Key{desktop.Ctrl}) || used {
		t.Errorf("a's release: mods %v, used %v; want [ctrl], false", mods, used)
	}
	if mods, used := k.Up(desktop.Ctrl); len(mods) != 0 || !used {
		t.Errorf("ctrl's release after a: mods %v, used %v; want none, true", mods, used)
	}
	k.Down(desktop.Shift)
	if mods, used := k.Up(desktop.Shift); len(mods) != 0 || used {
		t.Errorf("shift alone: mods %v, used %v; want none, false", mods, used)
	}
	if mods, used := k.Up("b"); len(mods) != 0 || used {
		t.Errorf("a key never held: mods %v, used %v; want none, false", mods, used)
	}
}

func TestHandleBoundsAndLookup(t *testing.T) {
	n := &phone.Node{Class: "android.widget.Button", ResourceID: "app:id/ok", Bounds: image.Rect(10, 20, 110, 70)}
	h := phone.Handle(n)
	if r, ok := phone.HandleBounds(h); !ok || r != n.Bounds {
		t.Errorf("HandleBounds(%q) = %v, %v; want %v", h, r, ok, n.Bounds)
	}
	for _, bad := range []string{"", "a|b", "a|b|1,2,x,4"} {
		if _, ok := phone.HandleBounds(bad); ok {
			t.Errorf("HandleBounds(%q) is a handle", bad)
		}
	}
	if got, err := phone.Lookup([]*phone.Node{n}, h); err != nil || got != n {
		t.Errorf("Lookup = %v, %v; want the node", got, err)
	}
	if _, err := phone.Lookup(nil, h); !errors.Is(err, phone.ErrGone) {
		t.Errorf("Lookup in an empty tree: %v, want ErrGone", err)
	}
}
