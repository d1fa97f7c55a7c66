//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestDoctorAccessibility: with a session bus and the GTK test form on it,
// doctor says the accessibility bus is reachable and names the form among
// the applications exposing trees; with no session bus it says the bus is
// not reachable and how to get one; with accessibility off, that it is off.
func TestDoctorAccessibility(t *testing.T) {
	testenv.NeedX(t)
	vd := xvfbtest.Start(t, 640, 480)
	bus := atspitest.Bus(t, vd.Display)
	atspitest.Start(t, vd.Display, bus, "ready", atspitest.FormApp()...)
	env := baseEnv(t)
	env["DISPLAY"], env["DBUS_SESSION_BUS_ADDRESS"] = vd.Display, bus
	_, out, _ := runCmd(t, env, "doctor")
	if level, detail := doctorRow(out, "accessibility"); level != "ok" || !strings.Contains(detail, "form.py (1 windows)") || !strings.Contains(detail, "IsEnabled ") {
		t.Errorf("with the form on the bus: %s %q\n%s", level, detail, out)
	}
	none := baseEnv(t)
	none["DISPLAY"] = vd.Display
	_, out, _ = runCmd(t, none, "doctor")
	if level, detail := doctorRow(out, "accessibility"); level != "warn" || !strings.Contains(detail, "not reachable") {
		t.Errorf("with no session bus: %s %q", level, detail)
	}
	env["GUI_AGENT_ACCESSIBILITY"] = "off"
	_, out, _ = runCmd(t, env, "doctor")
	if _, detail := doctorRow(out, "accessibility"); !strings.HasPrefix(detail, "off") {
		t.Errorf("with accessibility off: %q", detail)
	}
}
