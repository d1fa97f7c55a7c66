//go:build linux

package portal_test

import (
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/portal"
	"github.com/guiagent/guiagent/internal/backend/portal/portaltest"
	"github.com/guiagent/guiagent/internal/geom"
)

// TestScreenshotPortalOnSway: through the real xdg-desktop-portal and
// xdg-desktop-portal-wlr on a headless sway, Capture returns grim's pixels,
// and input says that this portal has no RemoteDesktop.
func TestScreenshotPortalOnSway(t *testing.T) {
	size := image.Point{X: 640, Y: 480}
	t0 := time.Now()
	sway := portaltest.StartSway(t, size, pattern(size.X, size.Y))
	t1 := time.Now()
	p := sway.StartPortal(t, false)
	t.Logf("sway ready in %s, the portals in %s", t1.Sub(t0), time.Since(t1))
	log := p.Log
	b := portal.New(portal.Options{SessionBus: p.Addr, Display: sway.Display, StateDir: t.TempDir(), InputWait: time.Second})
	ctx := context.Background()
	if err := b.Start(ctx); err != nil {
		t.Fatalf("%v; portals' log:\n%s", err, log.String())
	}
	defer b.Close()
	ds, err := b.Displays(ctx)
	if err != nil || len(ds) != 1 || ds[0].Bounds != (geom.Rect{W: size.X, H: size.Y}) {
		t.Fatalf("Displays = %v, %v; want one %v display; log:\n%s", ds, err, size, log.String())
	}
	start := time.Now()
	got, err := b.Capture(ctx, ds[0].Bounds, nil)
	if err != nil {
		t.Fatalf("capture: %v; log:\n%s", err, log.String())
	}
	t.Logf("a screenshot through the portal took %s", time.Since(start))
	want := sway.Grim(t)
	if got.Bounds() != want.Bounds() {
		t.Fatalf("portal image %v, grim's %v", got.Bounds(), want.Bounds())
	}
	diff := 0
	for i := range got.Pix {
		if got.Pix[i] != want.Pix[i] {
			diff++
		}
	}
	if diff != 0 {
		t.Errorf("%d of %d bytes differ between the portal's screenshot and grim's", diff, len(got.Pix))
	}
	part, err := b.Capture(ctx, geom.Rect{X: 100, Y: 50, W: 20, H: 10}, nil)
	if err != nil || part.RGBAAt(3, 2) != want.RGBAAt(103, 52) {
		t.Errorf("region capture: %v; pixel %v, grim %v", err, part.RGBAAt(3, 2), want.RGBAAt(103, 52))
	}
	// xdg-desktop-portal asks the Access dialog before a non-interactive
	// screenshot only of a backend of Screenshot version 2 or later;
	// xdg-desktop-portal-wlr 0.7 reports none, so it is never asked here.
	v := p.ImplVersion(t, "org.freedesktop.impl.portal.desktop.wlr", "org.freedesktop.impl.portal.Screenshot")
	t.Logf("xdg-desktop-portal-wlr's Screenshot version: %d; Access dialogs: %q", v, p.AccessDialogs())
	if v < 2 {
		if d := p.AccessDialogs(); len(d) != 0 {
			t.Errorf("Screenshot backend version %d, yet the portal asked %q", v, d)
		}
	} else if d := p.AccessDialogs(); len(d) != 1 {
		t.Errorf("the portal asked %d times (%q) over three screenshots, want once: the permission store keeps the answer", len(d), d)
	}
	if err := b.KeyDown(ctx, "a"); err == nil {
		t.Error("input through xdg-desktop-portal-wlr worked: it has no RemoteDesktop portal")
	} else {
		t.Logf("input: %v", err)
	}
}

// TestScreenshotPortalNeedsAccess: with xdg-desktop-portal-wlr alone
// xdg-desktop-portal offers no Screenshot portal (it exports Screenshot
// only beside an org.freedesktop.impl.portal.Access implementation), and
// Start says what is missing.
func TestScreenshotPortalNeedsAccess(t *testing.T) {
	size := image.Point{X: 320, Y: 240}
	sway := portaltest.StartSway(t, size, pattern(size.X, size.Y))
	p := sway.StartPortal(t, true)
	b := portal.New(portal.Options{SessionBus: p.Addr, Display: sway.Display})
	defer b.Close()
	err := b.Start(context.Background())
	for _, w := range []string{"org.freedesktop.portal.Screenshot", "Access", "xdg-desktop-portal-gtk"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Start without an Access implementation: %v; want it to name %q", err, w)
		}
	}
}
