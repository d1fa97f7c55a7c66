package androidtest

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/android/adb"
	"github.com/guiagent/guiagent/internal/testenv"
)

// Device is a fake phone attached to a private real adb server.
type Device struct {
	Phone *Phone
	// Serial is the device's serial on the server ("127.0.0.1:PORT").
	Serial string
	// Server is the adb server's address (HOST:PORT); ServerPort its port.
	Server     string
	ServerPort int
	// ADBPath is the adb program; Env the environment to run it with
	// against this server (HOME, ANDROID_ADB_SERVER_PORT, ...).
	ADBPath string
	Env     []string

	d *adbd
}

// Start starts a fake phone with DefaultConfig behind a private adb
// server. Everything stops at the test's cleanup.
func Start(t testing.TB) *Device { return StartPhone(t, NewPhone(DefaultConfig())) }

// StartPhone is Start with the given phone.
func StartPhone(t testing.TB, p *Phone) *Device {
	t.Helper()
	adbPath, err := exec.LookPath("adb")
	if err != nil {
		t.Fatalf("adb is not installed (Debian: apt install adb; CI installs it with scripts/debian-packages.sh): %v", err)
	}
	port := freePort(t)
	env := append(os.Environ(), "HOME="+t.TempDir(), "ANDROID_ADB_SERVER_PORT="+strconv.Itoa(port),
		"ADB_LOCAL_TRANSPORT_MAX_PORT=5553", "ADB_MDNS=0", "ADB_MDNS_OPENSCREEN=0")
	srv := exec.Command(adbPath, "-L", "tcp:"+strconv.Itoa(port), "server", "nodaemon")
	srv.Env = env
	var logs testenv.Buffer
	srv.Stdout, srv.Stderr = &logs, &logs
	testenv.DieWithTest(srv)
	if err := srv.Start(); err != nil {
		t.Fatalf("starting the adb server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Wait(); close(done) }()
	dev := &Device{Server: "127.0.0.1:" + strconv.Itoa(port), ServerPort: port, ADBPath: adbPath, Env: env}
	t.Cleanup(func() {
		kill := exec.Command(adbPath, "-P", strconv.Itoa(port), "kill-server")
		kill.Env = env
		_ = kill.Run()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
	})
	c := &adb.Client{Addr: dev.Server, Timeout: 2 * time.Second}
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	if !testenv.WaitUntil(10*time.Second, func() bool {
		_, err := c.Version(context.Background())
		return err == nil || exited()
	}) || exited() {
		t.Fatalf("the adb server on port %d did not answer: %s", port, logs.String())
	}
	dev.attach(t, p)
	return dev
}

// Attach starts another fake phone on the same adb server.
func (d *Device) Attach(t testing.TB, p *Phone) *Device {
	t.Helper()
	nd := &Device{Server: d.Server, ServerPort: d.ServerPort, ADBPath: d.ADBPath, Env: d.Env}
	nd.attach(t, p)
	return nd
}

func (d *Device) attach(t testing.TB, p *Phone) {
	t.Helper()
	fake, err := listen(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.close)
	d.Phone, d.d, d.Serial = p, fake, fake.addr()
	out, err := d.ADB(t, "connect", d.Serial)
	if err != nil || !strings.Contains(out, "connected to") && !(p.cfg().Unauthorized && strings.Contains(out, "failed to authenticate")) {
		t.Fatalf("adb connect %s: %v: %s", d.Serial, err, out)
	}
	c := &adb.Client{Addr: d.Server, Timeout: 2 * time.Second}
	want := "device"
	if p.cfg().Unauthorized {
		want = "unauthorized"
	}
	state := ""
	if !testenv.WaitUntil(10*time.Second, func() bool {
		devs, err := c.Devices(context.Background())
		if err != nil {
			return false
		}
		for _, dv := range devs {
			if dv.Serial == d.Serial {
				state = dv.State
			}
		}
		return state == want
	}) {
		t.Fatalf("fake device %s did not become %q on the adb server (state %q)", d.Serial, want, state)
	}
}

// ADB runs the adb program against this server.
func (d *Device) ADB(t testing.TB, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(d.ADBPath, append([]string{"-P", strconv.Itoa(d.ServerPort)}, args...)...)
	cmd.Env = d.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	testenv.DieWithTest(cmd)
	err := cmd.Run()
	return out.String(), err
}

// Unplug stops the fake device as if its cable were pulled: its
// connections close and it accepts no new ones.
func (d *Device) Unplug() { d.d.close() }

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
