//go:build linux

package vnc_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/vnc"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// testLogger shows warnings and errors only.
func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestConformanceXvnc runs the shared backend suite over RFB against a private
// Xvnc (security type None), with a fresh VNC connection and X probe per
// subtest; the probe is an application on the X display that Xvnc serves.
func TestConformanceXvnc(t *testing.T) {
	x := startXvnc(t, 1280, 800, "")
	suite.Run(t, func(t *testing.T) suite.Harness { return newHarness(t, x, "") })
}

// VNC Authentication against Xvnc with a password file in vncpasswd's format:
// the right password connects and captures, a wrong one fails naming the
// server and the password.
func TestVncAuthXvnc(t *testing.T) {
	const pw = "s3cret!x"
	x := startXvnc(t, 800, 600, pw)
	h := newHarness(t, x, pw)
	ctx := ctxT(t)
	green := color.RGBA{R: 20, G: 180, B: 60, A: 255}
	h.Fill(t, geom.Rect{X: 100, Y: 100, W: 50, H: 40}, green)
	img, err := h.b.Capture(ctx, geom.Rect{X: 90, Y: 90, W: 70, H: 60}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.RGBAAt(30, 30); got != green {
		t.Errorf("pixel inside the fill = %v, want %v", got, green)
	}
	if d := h.b.Describe(ctx); d["security"] != "VNC Authentication" || d["rfb"] != "3.8" || d["clipboard"] != "extended (UTF-8)" || d["screen"] != "800x600" {
		t.Errorf("Describe = %v", d)
	}

	bad := vnc.New(vnc.Options{Addr: x.Addr, Password: "wrong", Logger: testLogger()})
	err = bad.Start(ctx)
	if !errors.Is(err, vnc.ErrAuthFailed) || !strings.Contains(err.Error(), x.Addr) || !strings.Contains(err.Error(), "password") {
		t.Errorf("Start with a wrong password: %v; want ErrAuthFailed naming %s and the password", err, x.Addr)
	}
	if err := bad.Close(); err != nil {
		t.Errorf("Close after a failed Start: %v", err)
	}
	if strings.Contains(fmt.Sprint(err), "wrong") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// The clipboard crosses between the VNC client and X applications, in UTF-8
// both ways: an application pastes what WriteClipboard set, and ReadClipboard
// returns what an application copied.
func TestClipboardWithApplications(t *testing.T) {
	x := startXvnc(t, 800, 600, "")
	h := newHarness(t, x, "")
	ctx := ctxT(t)
	const ours = "Grüße 世界 ✓\nsecond line"
	if err := h.b.WriteClipboard(ctx, ours); err != nil {
		t.Fatal(err)
	}
	in := desktop.NewInput(h.b)
	h.ResetText(t)
	if err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, "v"}); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, ours, 5*time.Second); got != ours {
		t.Errorf("the application pasted %q, want %q", got, ours)
	}

	const theirs = "copied in the app → 東京"
	h.Own(t, theirs)
	deadline := time.Now().Add(5 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		var err error
		if got, err = h.b.ReadClipboard(ctx); err != nil {
			t.Fatal(err)
		}
		if got == theirs {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != theirs {
		t.Errorf("ReadClipboard = %q, want the application's %q", got, theirs)
	}
}

// xrandr resizing the Xvnc screen reaches the client as DesktopSize.
func TestDesktopResize(t *testing.T) {
	x := startXvnc(t, 1280, 800, "")
	h := newHarness(t, x, "")
	ctx := ctxT(t)
	out, err := exec.Command("xrandr", "-display", x.Display, "-s", "1024x768").CombinedOutput()
	if err != nil {
		t.Fatalf("xrandr -s 1024x768: %v: %s (install x11-xserver-utils)", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	var ds []geom.Display
	for time.Now().Before(deadline) {
		// Captures keep the connection busy, so the server sends the change.
		if _, err := h.b.Capture(ctx, geom.Rect{W: 8, H: 8}, nil); err != nil {
			t.Fatal(err)
		}
		if ds, err = h.b.Displays(ctx); err != nil {
			t.Fatal(err)
		}
		if ds[0].Bounds == (geom.Rect{W: 1024, H: 768}) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ds[0].Bounds != (geom.Rect{W: 1024, H: 768}) {
		t.Fatalf("after xrandr -s 1024x768, Displays = %+v", ds)
	}
	h.Fill(t, geom.Rect{W: 1024, H: 768}, color.RGBA{R: 128, G: 128, B: 128, A: 255})
	mag := color.RGBA{R: 200, G: 20, B: 180, A: 255}
	h.Fill(t, geom.Rect{X: 1000, Y: 700, W: 24, H: 68}, mag)
	img, err := h.b.Capture(ctx, geom.Rect{W: 1024, H: 768}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.RGBAAt(1010, 760); got != mag {
		t.Errorf("bottom-right pixel of the resized screen = %v, want %v", got, mag)
	}
}

// BenchmarkCapture1280x800 measures a full-screen capture over loopback (Raw
// encoding, 4 MB per frame).
func BenchmarkCapture1280x800(b *testing.B) {
	x := startXvnc(b, 1280, 800, "")
	be := vnc.New(vnc.Options{Addr: x.Addr, Logger: testLogger()})
	if err := be.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	var dst *image.RGBA
	region := geom.Rect{W: 1280, H: 800}
	b.SetBytes(1280 * 800 * 4)
	for b.Loop() {
		img, err := be.Capture(context.Background(), region, dst)
		if err != nil {
			b.Fatal(err)
		}
		dst = img
	}
}

// Upper-case text arrives with Shift, so the server does not turn Caps Lock
// on to reach the letters and leave it on for the user.
func TestTypeUpperCaseLeavesCapsLockOff(t *testing.T) {
	x := startXvnc(t, 800, 600, "")
	h := newHarness(t, x, "")
	ctx := ctxT(t)
	h.ResetText(t)
	const text = "HELLO ÜBER WORLD"
	if err := h.b.TypeText(ctx, text); err != nil {
		t.Fatal(err)
	}
	if got := h.Text(t, text, 5*time.Second); got != text {
		t.Errorf("typed %q, the application holds %q", text, got)
	}
	q, err := xproto.QueryPointer(h.Conn(), h.Root()).Reply()
	if err != nil {
		t.Fatal(err)
	}
	if q.Mask&(xproto.ModMaskLock|xproto.ModMaskShift) != 0 {
		t.Errorf("after typing, the keyboard state is %#x: Caps Lock or Shift is left on", q.Mask)
	}
}
