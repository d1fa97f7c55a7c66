//go:build !windows

package windows

import (
	"context"
	"errors"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestOutsideWindowsEverythingIsUnsupported(t *testing.T) {
	b := New(Options{})
	ctx := context.Background()
	if err := b.Start(ctx); !errors.Is(err, desktop.ErrUnsupported) {
		t.Fatalf("Start err = %v, want desktop.ErrUnsupported", err)
	}
	if _, err := b.Displays(ctx); !errors.Is(err, desktop.ErrUnsupported) {
		t.Fatalf("Displays err = %v, want desktop.ErrUnsupported", err)
	}
	if _, err := b.Capture(ctx, geom.Rect{W: 10, H: 10}, nil); !errors.Is(err, desktop.ErrUnsupported) {
		t.Fatalf("Capture err = %v, want desktop.ErrUnsupported", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close after a failed Start: %v", err)
	}
	if b.Name() != "windows" {
		t.Fatalf("Name = %q", b.Name())
	}
}
