package desktop_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

// TestDragAndMoveHoldModifiers: a shift-drag presses shift before the button
// and releases it after; a move holds its keys while it moves; a drag that
// fails midway leaves nothing pressed.
func TestDragAndMoveHoldModifiers(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	in := desktop.NewInput(b)
	if err := in.Drag(ctx, geom.GlobalPoint{X: 10, Y: 10}, nil, geom.GlobalPoint{X: 90, Y: 10}, desktop.Left, desktop.Shift); err != nil {
		t.Fatal(err)
	}
	got := trail(b)
	down, press, release, up := strings.Index(got, "key_down(Shift_L)"), strings.Index(got, "button_down"), strings.Index(got, "button_up"), strings.Index(got, "key_up(Shift_L)")
	if down < 0 || !(down < press && press < release && release < up) {
		t.Fatalf("shift-drag events %s: want shift down, button down, button up, shift up", got)
	}
	assertNothingPressed(t, b, in)

	m := fake.New(fake.Options{})
	in = desktop.NewInput(m)
	if err := in.Move(ctx, geom.GlobalPoint{X: 5, Y: 5}, desktop.Alt); err != nil {
		t.Fatal(err)
	}
	if got := trail(m); !strings.HasPrefix(got, "key_down(Alt_L)") || !strings.HasSuffix(got, "key_up(Alt_L)") {
		t.Fatalf("alt-move events %s", got)
	}

	f := fake.New(fake.Options{})
	in = desktop.NewInput(f)
	f.FailAfter(fake.OpMove, 3, errBoom) // midway through the drag's motion
	if err := in.Drag(ctx, geom.GlobalPoint{X: 1, Y: 1}, nil, geom.GlobalPoint{X: 50, Y: 50}, desktop.Left, desktop.Ctrl); !errors.Is(err, errBoom) {
		t.Fatalf("drag with a failing backend: %v", err)
	}
	assertNothingPressed(t, f, in)
}
