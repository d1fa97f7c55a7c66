// Package portaltest starts what the portal backend's tests need: a private
// D-Bus session bus (dbus-daemon with a configuration of its own), a fake of
// xdg-desktop-portal that follows the specification (Fake), and a headless
// sway run as an unprivileged user with the real xdg-desktop-portal and
// xdg-desktop-portal-wlr on that bus (Sway). Imported by tests only.
package portaltest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(busConfig, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	return testenv.DBusDaemon(t, env, "--config-file="+conf)
}
