// Package xvfbtest starts private X servers for tests: an Xvfb of a given size,
// or an Xorg dummy server with two monitors. Missing servers fail the test
// (they never skip it): CI installs them.
package xvfbtest

import (
	"context"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/testenv"
)

// Start starts a private Xvfb of w x h pixels (depth 24) and closes it when the
// test ends. It calls t.Fatal when Xvfb is missing or does not start.
func Start(t testing.TB, w, h int) *platform.VirtualDisplay {
	t.Helper()
	testenv.NeedX(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	vd, err := platform.StartXvfb(ctx, platform.XvfbOptions{Width: w, Height: h})
	if err != nil {
		t.Fatalf("start Xvfb %dx%d: %v", w, h, err)
	}
	t.Cleanup(func() {
		if err := vd.Close(); err != nil {
			t.Errorf("close Xvfb %s: %v", vd.Display, err)
		}
	})
	return vd
}

// DualMonitors is the layout StartDual gives: two 1920x1080 monitors side by side.
var DualMonitors = []geom.Rect{{X: 0, Y: 0, W: 1920, H: 1080}, {X: 1920, Y: 0, W: 1920, H: 1080}}

// StartDual starts a private Xorg dummy server with the DualMonitors layout and
// closes it when the test ends. It calls t.Fatal when Xorg or the dummy driver
// is missing or the server does not start (Xorg needs root, as in CI).
func StartDual(t testing.TB) *platform.VirtualDisplay {
	t.Helper()
	testenv.NeedXorg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	vd, err := platform.StartXorgDummy(ctx, DualMonitors)
	if err != nil {
		t.Fatalf("start Xorg dummy with two monitors: %v", err)
	}
	t.Cleanup(func() {
		if err := vd.Close(); err != nil {
			t.Errorf("close Xorg %s: %v", vd.Display, err)
		}
	})
	return vd
}
