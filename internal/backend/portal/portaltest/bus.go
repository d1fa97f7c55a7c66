// Package portaltest starts what the portal backend's tests need: a private
// D-Bus session bus (dbus-daemon with a configuration of its own), a fake of
// xdg-desktop-portal that follows the specification (Fake), and a headless
// sway run as an unprivileged user with the real xdg-desktop-portal and
// xdg-desktop-portal-wlr on that bus (Sway). Imported by tests only.
package portaltest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/testenv"
)

// busConfig is a session bus for this test alone: one listening socket in
// dir, EXTERNAL authentication, every connection allowed to own and call
// anything, and the system's service files for activation (the permission
// store the real portal asks for).
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=%s</listen>
  <auth>EXTERNAL</auth>
  <standard_session_servicedirs/>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// Bus starts a private session bus and returns its address; it stops when
// the test ends. Services it activates inherit env (nil: this process's).
func Bus(t testing.TB, env []string) string {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatal("dbus-daemon is not installed: apt-get install dbus-daemon")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(busConfig, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file="+conf, "--nofork", "--print-address=1", "--nopidfile")
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			t.Fatalf("dbus-daemon printed no address: %s", stderr.String())
		}
		return addr
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not print its address within 10 s")
	}
	return ""
}
