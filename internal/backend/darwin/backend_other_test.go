//go:build !darwin

package darwin

import (
	"context"
	"errors"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestOutsideMacOSEveryCallIsUnsupported(t *testing.T) {
	ctx := context.Background()
	b := New(Options{})
	if b.Name() != "darwin" {
		t.Fatalf("Name %q", b.Name())
	}
	caps := desktop.CapabilitiesOf(ctx, b)
	if !caps.Input || !caps.Clipboard || !caps.Windows {
		t.Fatalf("capabilities %+v: the backend must offer input, clipboard and windows", caps)
	}
	calls := map[string]error{
		"Start":      b.Start(ctx),
		"MoveTo":     b.MoveTo(ctx, geom.GlobalPoint{}),
		"ButtonDown": b.ButtonDown(ctx, desktop.Left),
		"KeyDown":    b.KeyDown(ctx, "a"),
		"TypeText":   b.TypeText(ctx, "x"),
	}
	_, calls["Displays"] = b.Displays(ctx)
	_, calls["Capture"] = b.Capture(ctx, geom.Rect{W: 1, H: 1}, nil)
	_, calls["ReadClipboard"] = b.ReadClipboard(ctx)
	_, calls["ActiveWindowTitle"] = b.ActiveWindowTitle(ctx)
	for name, err := range calls {
		if !errors.Is(err, desktop.ErrUnsupported) {
			t.Errorf("%s: %v, want desktop.ErrUnsupported", name, err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
