package guiagent

import (
	"testing"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/platform"
)

// TestDeprecatedXDisplayStillDrives: a Go program that names its display
// by the old field (or the new one) gets X11 on that display, even in a
// Wayland session; Backend picks the backend by name.
func TestDeprecatedXDisplayStillDrives(t *testing.T) {
	t.Setenv("WAYLAND_DISPLAY", "wayland-1")
	t.Setenv("XDG_SESSION_TYPE", "wayland")
	t.Setenv("XDG_CURRENT_DESKTOP", "GNOME")
	for _, o := range []Options{{XDisplay: ":5"}, {DisplayServer: ":5"}, {DisplayServer: ":5", XDisplay: ":6"}} {
		c, err := o.config()
		if err != nil {
			t.Fatal(err)
		}
		ch, err := platform.Select(app.PlatformOptions(c))
		if err != nil || ch.Backend != platform.X11 || c.XDisplay != ":5" || ch.Why != "--display :5 picks x11" {
			t.Errorf("%+v: display %q, %s %q, %v", o, c.XDisplay, ch.Backend, ch.Why, err)
		}
	}
	c, err := Options{Backend: "portal"}.config()
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := platform.Select(app.PlatformOptions(c)); err != nil || ch.Backend != platform.Portal || ch.Why != "Options.Backend portal" {
		t.Errorf("Backend portal: %s %q, %v", ch.Backend, ch.Why, err)
	}
}
