package atspi_test

import (
	"context"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/uitree"
)

// session is an X display and a private session bus with the accessibility
// bus on it, and a client.
type session struct {
	display, bus string
	c            *atspi.Client
}

func newSession(t *testing.T, mode atspi.Mode) *session {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Xvfb, a D-Bus session and GTK applications")
	}
	vd := xvfbtest.Start(t, 1280, 800)
	bus := atspitest.Bus(t, vd.Display)
	c := atspi.New(atspi.Options{SessionBus: bus, Mode: mode})
	t.Cleanup(func() { _ = c.Close() })
	return &session{display: vd.Display, bus: bus, c: c}
}

// snapshot takes a snapshot and fails the test on error.
func (s *session) snapshot(t *testing.T, q desktop.ElementQuery) *desktop.ElementSnapshot {
	t.Helper()
	snap, err := s.c.Elements(context.Background(), q)
	if err != nil {
		t.Fatalf("Elements(%+v): %v", q, err)
	}
	return snap
}

func TestFormSnapshot(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp()...)
	var snap *desktop.ElementSnapshot
	atspitest.Wait(context.Background(), 10*time.Second, func() bool {
		snap = s.snapshot(t, desktop.ElementQuery{})
		return len(snap.Elements) > 5
	})
	t.Logf("window %q apps %v truncated %v %s took %v\n%s", snap.Window, snap.Apps, snap.Truncated, snap.TruncatedBy, snap.Took, uitree.Outline(snap.Elements, nil))
}
