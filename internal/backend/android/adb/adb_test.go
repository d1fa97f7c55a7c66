package adb_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/android/adb"
	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestVersionAndDevices(t *testing.T) {
	d := androidtest.Start(t)
	c := &adb.Client{Addr: d.Server}
	v, err := c.Version(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if v < 31 {
		t.Errorf("server version %d, want adb 1.0.31 or later (41 for Debian's 29.0.6)", v)
	}
	devs, err := c.Devices(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 {
		t.Fatalf("devices = %+v, want the one fake", devs)
	}
	got := devs[0]
	if got.Serial != d.Serial || got.State != "device" || got.Model != "Pixel_7" || got.Product != "panther" || got.Device != "panther" || got.TransportID == "" {
		t.Errorf("devices-l parsed as %+v, want serial %s, state device, model Pixel_7, product and device panther, a transport id", got, d.Serial)
	}
}

func TestShellV2ExitCodeAndStderr(t *testing.T) {
	d := androidtest.Start(t)
	dev := (&adb.Client{Addr: d.Server}).Device(d.Serial)
	r, err := dev.Shell(ctx(t), "wm size; cat /sdcard/missing.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "Physical size: 1080x2400\n" {
		t.Errorf("stdout %q, want only wm size's line (no \\r)", r.Stdout)
	}
	if !strings.Contains(string(r.Stderr), "cat: /sdcard/missing.txt: No such file or directory") {
		t.Errorf("stderr %q, want cat's complaint apart from stdout", r.Stderr)
	}
	if r.Exit != 1 {
		t.Errorf("exit status %d, want 1 (cat's)", r.Exit)
	}
	r, err = dev.Shell(ctx(t), "nosuchcommand")
	if err != nil || r.Exit != 127 {
		t.Errorf("unknown command: exit %d, err %v; want 127", r.Exit, err)
	}
	if _, err := dev.Run(ctx(t), "nosuchcommand"); err == nil || !strings.Contains(err.Error(), "inaccessible or not found") {
		t.Errorf("Run of an unknown command: %v, want an error with the shell's message", err)
	}
}

func TestShellFallbackWithoutShellV2(t *testing.T) {
	cfg := androidtest.DefaultConfig()
	cfg.NoShellV2 = true
	d := androidtest.StartPhone(t, androidtest.NewPhone(cfg))
	dev := (&adb.Client{Addr: d.Server}).Device(d.Serial)
	f, err := dev.Features(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if f["shell_v2"] || !f["cmd"] {
		t.Fatalf("features %v: want cmd without shell_v2", f)
	}
	r, err := dev.Shell(ctx(t), "wm size; wm density")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "Physical size: 1080x2400\nPhysical density: 420\n" || r.Exit != -1 {
		t.Errorf("shell: fallback gave %q exit %d, want both lines with \\n line ends and exit -1 (unknown)", r.Stdout, r.Exit)
	}
}

func TestExecBinaryIntact(t *testing.T) {
	d := androidtest.Start(t)
	dev := (&adb.Client{Addr: d.Server}).Device(d.Serial)
	var data []byte
	for i := 0; i < 300000; i++ {
		data = append(data, byte(i*7), '\n', '\r', 0)
	}
	if err := d.Phone.WriteFile("/sdcard/blob.bin", data); err != nil {
		t.Fatal(err)
	}
	got, err := dev.Exec(ctx(t), "cat /sdcard/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("exec: returned %d bytes, want the %d bytes of the file unchanged", len(got), len(data))
	}
	png, err := dev.Exec(ctx(t), "screencap -p")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screencap -p over exec: starts %q, want the PNG signature intact", png[:min(8, len(png))])
	}
}

func TestPushPullRoundTrip(t *testing.T) {
	d := androidtest.Start(t)
	dev := (&adb.Client{Addr: d.Server}).Device(d.Serial)
	data := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 10000) // 180 kB: several DATA blocks
	if err := dev.Push(ctx(t), bytes.NewReader(data), "/sdcard/Download/x.bin", 0o644, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := dev.Pull(ctx(t), "/sdcard/Download/x.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("pulled %d bytes, pushed %d: not the same", len(got), len(data))
	}
	if _, err := dev.Pull(ctx(t), "/sdcard/none"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Errorf("pull of a missing file: %v, want the device's No such file error", err)
	}
	if err := dev.Push(ctx(t), bytes.NewReader(data), "/system/x", 0o644, time.Now()); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("push to /system: %v, want the device's refusal", err)
	}
}

func TestTrackDevices(t *testing.T) {
	d := androidtest.Start(t)
	c := &adb.Client{Addr: d.Server}
	tctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	ch, err := c.TrackDevices(tctx)
	if err != nil {
		t.Fatal(err)
	}
	first := <-ch
	if len(first) != 1 || first[0].Serial != d.Serial || first[0].State != "device" {
		t.Fatalf("first list %+v, want the fake as device", first)
	}
	// An unplugged network device stays listed as offline while the server
	// tries to reconnect (track-devices sends nothing for that, as adb
	// 29 does); disconnecting it removes it.
	d.Unplug()
	if out, err := d.ADB(t, "disconnect", d.Serial); err != nil {
		t.Fatalf("adb disconnect: %v: %s", err, out)
	}
	timeout := time.After(15 * time.Second)
	for {
		select {
		case devs := <-ch:
			if len(devs) == 0 {
				return
			}
		case <-timeout:
			t.Fatal("track-devices reported no change after the device was unplugged")
		}
	}
}

func TestDeviceGoneIsAnErrorNamingIt(t *testing.T) {
	d := androidtest.Start(t)
	dev := (&adb.Client{Addr: d.Server, Timeout: 5 * time.Second}).Device(d.Serial)
	if _, err := dev.Run(ctx(t), "true"); err != nil {
		t.Fatal(err)
	}
	d.Unplug()
	start := time.Now()
	_, err := dev.Run(ctx(t), "input tap 1 1")
	if err == nil {
		t.Fatal("a command to an unplugged device succeeded")
	}
	if !strings.Contains(err.Error(), d.Serial) {
		t.Errorf("error %q does not name the device %s", err, d.Serial)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("the error took %v", took)
	}
	t.Logf("error: %v (gone: %v)", err, errors.Is(err, adb.ErrDeviceGone))
}

func TestNoServerIsClear(t *testing.T) {
	c := &adb.Client{Addr: "127.0.0.1:1", Timeout: time.Second}
	_, err := c.Version(ctx(t))
	if !errors.Is(err, adb.ErrServer) {
		t.Errorf("Version with no server: %v, want ErrServer", err)
	}
}

func TestCommandHonoursContext(t *testing.T) {
	d := androidtest.Start(t)
	dev := (&adb.Client{Addr: d.Server}).Device(d.Serial)
	c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := dev.Run(c, "sleep 5")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), d.Serial) {
		t.Errorf("a command past its deadline: %v, want a deadline error naming %s", err, d.Serial)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the command returned after %v with a 300ms deadline", took)
	}
	// The client's own timeout bounds a command whose context has none.
	dev = (&adb.Client{Addr: d.Server, Timeout: 300 * time.Millisecond}).Device(d.Serial)
	start = time.Now()
	if _, err := dev.Run(context.Background(), "sleep 5"); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("Timeout 300ms: %v after %v", err, time.Since(start))
	}
}

func TestStartServer(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ADB_LOCAL_TRANSPORT_MAX_PORT", "5553")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	t.Cleanup(func() { _ = exec.Command("adb", "-P", strconv.Itoa(port), "kill-server").Run() })
	if err := adb.StartServer(ctx(t), "", port); err != nil {
		t.Fatal(err)
	}
	if _, err := (&adb.Client{Addr: "127.0.0.1:" + strconv.Itoa(port)}).Version(ctx(t)); err != nil {
		t.Errorf("after StartServer: %v", err)
	}
	if err := adb.StartServer(ctx(t), "/nonexistent/adb", port); err != nil {
		t.Errorf("StartServer with a server answering must not run adb: %v", err)
	}
}
