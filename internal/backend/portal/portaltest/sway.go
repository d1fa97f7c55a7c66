//go:build linux

package portaltest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/testenv"
)

// TestUser runs sway when the tests run as root (sway refuses to run as
// root); Sway creates it when it is missing.
const TestUser = testenv.TestUser

// NeedSway skips the test in the short lane (go test -short); otherwise the
// test runs and fails when sway, grim, swaybg or the portals are missing.
func NeedSway(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a headless sway with xdg-desktop-portal and xdg-desktop-portal-wlr: skipped in the short lane (-short); run go test without -short to include it")
	}
	for _, bin := range []string{"sway", "swaybg", "grim", "dbus-daemon", "pipewire", "/usr/libexec/xdg-desktop-portal", "/usr/libexec/xdg-desktop-portal-wlr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed: apt-get install sway swaybg grim dbus-daemon pipewire-bin xdg-desktop-portal xdg-desktop-portal-wlr (scripts/debian-packages.sh install ci)", bin)
		}
	}
}

// Sway is a headless sway of one output for this test, run as TestUser
// (or this user, when not root) with its own XDG_RUNTIME_DIR.
type Sway struct {
	RuntimeDir string // mode 0700, owned by the user sway runs as
	Display    string // the socket's name in RuntimeDir, e.g. wayland-1
	Size       image.Point
	log        *testenv.Buffer
}

// StartSway starts sway with one headless output of size showing
// background (a PNG, drawn by swaybg) and waits until grim sees it.
func StartSway(t testing.TB, size image.Point, background image.Image) *Sway {
	t.Helper()
	NeedSway(t)
	cred, _, _ := testenv.Unprivileged(t)
	dir, err := os.MkdirTemp("", "portaltest-sway-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Sway{RuntimeDir: dir, Size: size, log: &testenv.Buffer{}}
	bg := filepath.Join(dir, "background.png")
	writePNG(t, bg, background)
	conf := filepath.Join(dir, "sway.conf")
	config := fmt.Sprintf("output HEADLESS-1 mode %dx%d position 0 0 bg %s stretch\ndefault_border none\n", size.X, size.Y, bg)
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		for _, p := range []string{dir, bg, conf} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command("sway", "-c", conf)
	cmd.Env = []string{"XDG_RUNTIME_DIR=" + dir, "HOME=" + dir, "PATH=" + os.Getenv("PATH"),
		"WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman"}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sway: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); _ = cmd.Wait() })
	s.waitReady(t)
	return s
}

// waitReady waits for the socket and for grim to see the background drawn.
func (s *Sway) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if s.Display == "" {
			if m, _ := filepath.Glob(filepath.Join(s.RuntimeDir, "wayland-[0-9]")); len(m) > 0 {
				s.Display = filepath.Base(m[0])
			}
		}
		if s.Display != "" {
			if img, err := s.grim(); err == nil && !uniform(img) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("sway did not show its background within 20 s; its log:\n%s", s.log.String())
}

// Env is the environment of a client of this sway run as this process's
// user (root reaches the user's socket).
func (s *Sway) Env() []string {
	return []string{"XDG_RUNTIME_DIR=" + s.RuntimeDir, "WAYLAND_DISPLAY=" + s.Display, "PATH=" + os.Getenv("PATH"), "HOME=" + s.RuntimeDir}
}

// Grim captures the screen with grim, the oracle.
func (s *Sway) Grim(t testing.TB) *image.RGBA {
	t.Helper()
	img, err := s.grim()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func (s *Sway) grim() (*image.RGBA, error) {
	cmd := exec.Command("grim", "-t", "png", "-")
	cmd.Env = s.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("grim: %v: %s", err, errb.String())
	}
	img, err := png.Decode(&out)
	if err != nil {
		return nil, err
	}
	return toRGBA(img), nil
}

// Portal is the real xdg-desktop-portal with xdg-desktop-portal-wlr on a
// private bus, for a Sway.
type Portal struct {
	Addr string          // the bus address
	Log  *testenv.Buffer // what the portals and PipeWire printed

	mu      sync.Mutex
	dialogs []string // the titles of the Access dialogs answered
}

// AccessDialogs lists the titles of the permission dialogs the portal asked
// for (and the stand-in for the user approved).
func (p *Portal) AccessDialogs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.dialogs...)
}

// accessName is the test's stand-in for the user at the portal's dialogs:
// xdg-desktop-portal exports the Screenshot portal only with an
// org.freedesktop.impl.portal.Access implementation (xdg-desktop-portal-wlr
// has none; on a desktop xdg-desktop-portal-gtk or the desktop's own
// provides it), and asks it "Allow Apps to Take Screenshots?" before the
// first non-interactive screenshot.
const accessName = "org.freedesktop.impl.portal.desktop.guiagenttest"

// StartPortal starts a private session bus with PipeWire (which
// xdg-desktop-portal-wlr will not start without), xdg-desktop-portal-wlr,
// the stand-in Access implementation, and xdg-desktop-portal reading its
// portal files from a folder of the test's (XDG_DESKTOP_PORTAL_DIR: wlr's
// file and the stand-in's, unless noAccess), with XDG_CURRENT_DESKTOP=sway.
func (s *Sway) StartPortal(t testing.TB, noAccess bool) *Portal {
	t.Helper()
	dir := t.TempDir()
	wlr, err := os.ReadFile("/usr/share/xdg-desktop-portal/portals/wlr.portal")
	if err != nil {
		t.Fatalf("xdg-desktop-portal-wlr's portal file: %v (apt-get install xdg-desktop-portal-wlr)", err)
	}
	own := "[portal]\nDBusName=" + accessName + "\nInterfaces=org.freedesktop.impl.portal.Access;\nUseIn=sway;\n"
	files := map[string][]byte{"wlr.portal": wlr, "guiagenttest.portal": []byte(own)}
	if noAccess {
		delete(files, "guiagenttest.portal")
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(s.Env(), "XDG_CURRENT_DESKTOP=sway", "XDG_SESSION_TYPE=wayland", "XDG_DESKTOP_PORTAL_DIR="+dir, "XDG_DATA_HOME="+t.TempDir())
	p := &Portal{Addr: Bus(t, env), Log: &testenv.Buffer{}}
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+p.Addr)
	p.start(t, env, filepath.Join(s.RuntimeDir, "pipewire-0"), "pipewire")
	p.start(t, env, "org.freedesktop.impl.portal.desktop.wlr", "/usr/libexec/xdg-desktop-portal-wlr", "-l", "DEBUG")
	if !noAccess {
		p.serveAccess(t)
	}
	p.start(t, env, "org.freedesktop.portal.Desktop", "/usr/libexec/xdg-desktop-portal", "-v")
	return p
}

// start runs a program with env and waits for ready: a file it makes, or
// its bus name.
func (p *Portal) start(t testing.TB, env []string, ready string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", args[0], err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); _ = cmd.Wait() })
	var err error
	if filepath.IsAbs(ready) {
		err = waitFile(ready)
	} else {
		err = waitName(p.Addr, ready)
	}
	if err != nil {
		t.Fatalf("%s: %v; log:\n%s", args[0], err, p.Log.String())
	}
}

type accessIface struct{ p *Portal }

// AccessDialog is org.freedesktop.impl.portal.Access.AccessDialog(o handle,
// s app_id, s parent_window, s title, s subtitle, s body, a{sv} options) ->
// (u response, a{sv} results): the stand-in approves (response 0).
func (a *accessIface) AccessDialog(handle dbus.ObjectPath, appID, parent, title, subtitle, body string, opts map[string]dbus.Variant) (uint32, map[string]dbus.Variant, *dbus.Error) {
	a.p.mu.Lock()
	a.p.dialogs = append(a.p.dialogs, title)
	a.p.mu.Unlock()
	return 0, map[string]dbus.Variant{}, nil
}

func (p *Portal) serveAccess(t testing.TB) {
	t.Helper()
	conn, err := dbus.Connect(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Export(&accessIface{p}, "/org/freedesktop/portal/desktop", "org.freedesktop.impl.portal.Access"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(accessName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v", accessName, err)
	}
}

// waitFile waits until the file name exists.
func waitFile(name string) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s did not appear within 10 s", name)
}

// waitName waits until name has an owner on the bus at addr.
func waitName(addr, name string) error {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var has bool
		if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err == nil && has {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not appear on the bus within 15 s", name)
}

func uniform(img *image.RGBA) bool {
	for i := 4; i < len(img.Pix); i += 4 {
		if !bytes.Equal(img.Pix[i:i+4], img.Pix[:4]) {
			return false
		}
	}
	return true
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

func writePNG(t testing.TB, name string, img image.Image) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// ImplVersion is the version property of a backend's interface, 0 when it
// has none.
func (p *Portal) ImplVersion(t testing.TB, name, iface string) uint32 {
	t.Helper()
	conn, err := dbus.Connect(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var v dbus.Variant
	if err := conn.Object(name, "/org/freedesktop/portal/desktop").Call("org.freedesktop.DBus.Properties.Get", 0, iface, "version").Store(&v); err != nil {
		t.Logf("%s has no %s.version: %v", name, iface, err)
		return 0
	}
	n, _ := v.Value().(uint32)
	return n
}
