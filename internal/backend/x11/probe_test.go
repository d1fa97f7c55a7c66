package x11_test

import (
	"context"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/backend/x11/x11probe"
	"github.com/guiagent/guiagent/internal/desktop"
)

// harness pairs a started backend with a probe (the application, see x11probe)
// on the same display; the probe's global origin is the primary monitor's, as
// the backend's is.
type harness struct {
	*x11probe.Probe
	b *x11.Backend
}

func newHarness(t testing.TB, display string) *harness {
	t.Helper()
	p := x11probe.New(t, display, x11probe.PrimaryMonitorOrigin)
	b := x11.New(x11.Options{Display: display})
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start backend on %s: %v", display, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	return &harness{Probe: p, b: b}
}

func (h *harness) Screen() desktop.Screen { return h.b }
