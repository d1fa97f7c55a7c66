//go:build linux

package main

import (
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/portal/portaltest"
	"github.com/guiagent/guiagent/internal/geom"
)

// TestDoctorOnGNOMEPortal: in a GNOME Wayland session doctor names the
// portal backend and why, captures through it, and says the one-time
// permission dialog waits on the screen; once the user approves, input is
// ready and the grant's restore token is in the state dir.
func TestDoctorOnGNOMEPortal(t *testing.T) {
	bus := portaltest.Bus(t, os.Environ())
	fake := portaltest.StartFake(t, bus, portaltest.FakeOptions{AskUser: true, Monitors: []geom.Rect{{W: 800, H: 600}}, Screen: image.NewRGBA(image.Rect(0, 0, 800, 600))})
	env := baseEnv(t)
	state := t.TempDir()
	for k, v := range map[string]string{"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland", "XDG_CURRENT_DESKTOP": "GNOME",
		"DISPLAY": ":0", "DBUS_SESSION_BUS_ADDRESS": bus, "GUI_AGENT_STATE_DIR": state} {
		env[k] = v
	}
	wait, notice := grantWait, grantNotice
	grantWait, grantNotice = time.Second, io.Discard
	defer func() { grantWait, grantNotice = wait, notice }()

	_, out, _ := runCmd(t, env, "doctor")
	if level, detail := doctorRow(out, "backend"); level != "ok" || detail != "WAYLAND_DISPLAY=wayland-0 and XDG_SESSION_TYPE=wayland: portal (XDG_CURRENT_DESKTOP=GNOME is not a wlroots compositor)" {
		t.Errorf("backend row %s %q:\n%s", level, detail, out)
	}
	if level, _ := doctorRow(out, "capture"); level != "ok" {
		t.Errorf("capture through the portal:\n%s", out)
	}
	if level, detail := doctorRow(out, "input"); level != "warn" || !strings.Contains(detail, "permission dialog") || !strings.Contains(detail, "waiting on the user's screen") {
		t.Errorf("input row while the dialog waits: %s %q", level, detail)
	}

	stop := make(chan struct{})
	defer close(stop)
	if n := fake.ClosedRequests(); n != 1 {
		t.Errorf("doctor left %d requests closed, want 1: its dialog taken down at exit", n)
	}
	go func() { // the user approves the next dialog
		for !fake.Approve() {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	grantWait = 10 * time.Second
	_, out, _ = runCmd(t, env, "doctor")
	if level, detail := doctorRow(out, "input"); level != "ok" {
		t.Errorf("input row after the approval: %s %q\n%s", level, detail, out)
	}
	if _, err := os.Stat(filepath.Join(state, "portal", "remote-desktop.token")); err != nil {
		t.Errorf("no restore token kept: %v", err)
	}
}
