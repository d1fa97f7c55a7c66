//go:build linux

package vnc_test

import (
	"context"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/vnc"
	"github.com/guiagent/guiagent/internal/backend/x11/x11probe"
	"github.com/guiagent/guiagent/internal/desktop"
)

// harness pairs a started VNC backend with a probe (the application, see
// x11probe) on the X display that the same Xvnc serves; the framebuffer's
// origin is the root window's.
type harness struct {
	*x11probe.Probe
	b *vnc.Backend
}

func newHarness(t testing.TB, x *xvnc, password string) *harness {
	t.Helper()
	p := x11probe.New(t, x.Display, x11probe.RootOrigin)
	b := vnc.New(vnc.Options{Addr: x.Addr, Password: password, Logger: testLogger()})
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start the vnc backend on %s: %v", x.Addr, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	return &harness{Probe: p, b: b}
}

func (h *harness) Screen() desktop.Screen { return h.b }
