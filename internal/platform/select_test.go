//go:build linux

package platform_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
)

// TestSelectTable: each session a user can be in gets the backend the
// table promises, with the reason doctor prints.
func TestSelectTable(t *testing.T) {
	sway := platform.Session{Type: "wayland", WaylandDisplay: "wayland-1", CurrentDesktop: "sway", XDisplay: ":0"}
	gnome := platform.Session{Type: "wayland", WaylandDisplay: "wayland-0", CurrentDesktop: "ubuntu:GNOME", XDisplay: ":0"}
	cases := []struct {
		name string
		o    platform.Options
		want platform.Backend
		why  string
	}{
		{"sway", platform.Options{Session: sway}, platform.Wayland, "WAYLAND_DISPLAY=wayland-1 and XDG_SESSION_TYPE=wayland: wayland (wlroots: sway)"},
		{"gnome", platform.Options{Session: gnome}, platform.Portal, "WAYLAND_DISPLAY=wayland-0 and XDG_SESSION_TYPE=wayland: portal (XDG_CURRENT_DESKTOP=ubuntu:GNOME is not a wlroots compositor)"},
		{"kde", platform.Options{Session: platform.Session{WaylandDisplay: "wayland-0", CurrentDesktop: "KDE"}}, platform.Portal, "WAYLAND_DISPLAY=wayland-0: portal (XDG_CURRENT_DESKTOP=KDE is not a wlroots compositor)"},
		{"hyprland without a session type", platform.Options{Session: platform.Session{WaylandDisplay: "wayland-1", CurrentDesktop: "Hyprland"}}, platform.Wayland, "WAYLAND_DISPLAY=wayland-1: wayland (wlroots: Hyprland)"},
		{"unknown compositor", platform.Options{Session: platform.Session{WaylandDisplay: "wayland-1"}}, platform.Wayland, "wlroots assumed: XDG_CURRENT_DESKTOP is not set; pass --backend portal"},
		{"x11 session with a nested compositor", platform.Options{Session: platform.Session{Type: "x11", WaylandDisplay: "wayland-1", XDisplay: ":0"}}, platform.X11, "DISPLAY=:0 and XDG_SESSION_TYPE=x11: x11"},
		{"x11", platform.Options{Session: platform.Session{XDisplay: ":7"}}, platform.X11, "DISPLAY=:7: x11"},
		{"explicit x11 in a wayland session", platform.Options{Backend: platform.X11, Session: gnome}, platform.X11, "--backend x11"},
		{"explicit by variable", platform.Options{Backend: platform.Portal, BackendSetting: "GUI_AGENT_BACKEND=", Session: sway}, platform.Portal, "GUI_AGENT_BACKEND=portal"},
		{"vnc address", platform.Options{VNC: "h:5901", Session: gnome}, platform.VNC, "--vnc h:5901 is set"},
		{"forced private display", platform.Options{ForceVirtual: true, Session: gnome}, platform.X11, "a private Xvfb"},
		{"virtual display without a session", platform.Options{VirtualDisplay: geom.Size{W: 640, H: 480}}, platform.X11, "neither WAYLAND_DISPLAY nor DISPLAY is set: a private Xvfb"},
	}
	for _, c := range cases {
		got, err := platform.Select(c.o)
		if err != nil || got.Backend != c.want || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: Select = %v %q, %v; want %s because %q", c.name, got.Backend, got.Why, err, c.want, c.why)
		}
	}
}

// TestSelectRefusesWhatCannotWork: a backend asked for that this session
// cannot give fails with the setting named and the fix.
func TestSelectRefusesWhatCannotWork(t *testing.T) {
	for _, c := range []struct {
		o    platform.Options
		want []string
	}{
		{platform.Options{Backend: platform.Wayland, Session: platform.Session{XDisplay: ":0"}}, []string{"--backend wayland", "WAYLAND_DISPLAY is not set"}},
		{platform.Options{Backend: platform.VNC}, []string{"--backend vnc", "--vnc host[:port]"}},
		{platform.Options{Backend: platform.Windows}, []string{"--backend windows", "not available on linux", "auto, x11, wayland, portal, vnc"}},
		{platform.Options{}, []string{"neither WAYLAND_DISPLAY nor DISPLAY", "--virtual-display"}},
	} {
		_, err := platform.Select(c.o)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Select(%+v) = %v, want an error saying %q", c.o, err, w)
			}
		}
	}
}

// TestOpenWlrootsNamesTheMissingSocket: choosing the native Wayland backend
// with no compositor behind WAYLAND_DISPLAY is a clear error naming the
// socket, not an X11 fallback.
func TestOpenWlrootsNamesTheMissingSocket(t *testing.T) {
	dir := t.TempDir()
	_, _, err := platform.Open(context.Background(), platform.Options{Session: platform.Session{Type: "wayland", WaylandDisplay: "wayland-9", CurrentDesktop: "sway", RuntimeDir: dir}})
	if err == nil || !strings.Contains(err.Error(), "wayland-9") || !strings.Contains(err.Error(), "--backend portal") {
		t.Fatalf("Open on a missing sway socket = %v, want an error naming wayland-9 and --backend portal", err)
	}
}
