package safety

import (
	"context"
	"errors"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestOverrideWatcher(t *testing.T) {
	ctx := context.Background()
	fb := fake.New(fake.Options{})
	in := desktop.NewInput(fb)
	// guiagent moved the pointer before this task: that position is stale.
	if err := in.Move(ctx, geom.GlobalPoint{X: 10, Y: 10}); err != nil {
		t.Fatal(err)
	}
	fb.SetCursor(geom.GlobalPoint{X: 800, Y: 600}) // the user moved it between tasks

	w := NewOverrideWatcher(in, 4)
	if err := w.Check(ctx); err != nil {
		t.Fatalf("an unarmed watcher reported %v", err)
	}
	if err := w.Arm(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx); err != nil {
		t.Fatalf("pointer where it was at Arm counted as a takeover: %v", err)
	}
	if got := w.Expected(); got != (geom.GlobalPoint{X: 800, Y: 600}) {
		t.Fatalf("expected %v before guiagent moved", got)
	}
	if err := in.Move(ctx, geom.GlobalPoint{X: 300, Y: 200}); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx); err != nil {
		t.Fatalf("guiagent's own move counted as a takeover: %v", err)
	}
	fb.SetCursor(geom.GlobalPoint{X: 303, Y: 197}) // jitter within tolerance
	if err := w.Check(ctx); err != nil {
		t.Fatalf("3 px of jitter counted as a takeover: %v", err)
	}
	fb.SetCursor(geom.GlobalPoint{X: 320, Y: 200})
	err := w.Check(ctx)
	var oe *OverrideError
	if !errors.Is(err, ErrHumanOverride) || !errors.As(err, &oe) {
		t.Fatalf("a human move was not detected: %v", err)
	}
	if oe.Expected != (geom.GlobalPoint{X: 300, Y: 200}) || oe.Actual != (geom.GlobalPoint{X: 320, Y: 200}) {
		t.Fatalf("error positions %+v", oe)
	}
	w.Disarm()
	if err := w.Check(ctx); err != nil {
		t.Fatalf("disarmed watcher reported %v", err)
	}
}

// A backend that cannot read the pointer cannot detect a takeover: Arm says
// so and Check stays quiet.
func TestOverrideWatcherWithoutPointer(t *testing.T) {
	fb := fake.New(fake.Options{})
	fb.FailNext(fake.OpCursorPosition, desktop.ErrUnsupported)
	w := NewOverrideWatcher(desktop.NewInput(fb), 0)
	if err := w.Arm(context.Background()); !errors.Is(err, desktop.ErrUnsupported) {
		t.Fatalf("Arm = %v", err)
	}
	if err := w.Check(context.Background()); err != nil {
		t.Fatalf("Check = %v", err)
	}
}
