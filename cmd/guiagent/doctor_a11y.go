package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/config"
)

// checkAccessibility says, on Linux, whether the accessibility bus (AT-SPI2)
// is reachable, whether IsEnabled is set, and which applications expose
// trees: gui_snapshot, refs and targets without a model need them.
func checkAccessibility(ctx context.Context, c config.Config, add func(level, name, detail, fix string)) {
	if runtime.GOOS != "linux" {
		return
	}
	const name = "accessibility"
	if c.Accessibility == string(atspi.ModeOff) {
		add("ok", name, "off ("+config.Var("Accessibility")+"): no gui_snapshot, refs, or targets from the tree", "")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r := atspi.Check(ctx, atspi.Options{SessionBus: c.SessionBus, Bus: c.AccessibilityBus, Mode: atspi.Mode(c.Accessibility)})
	if !r.Reachable {
		add("warn", name, "the accessibility bus is not reachable: "+r.Problem, "apt-get install at-spi2-core dbus-x11, and run guiagent in the desktop's D-Bus session")
		return
	}
	var apps []string
	for _, a := range r.Apps {
		if a.Windows > 0 {
			apps = append(apps, fmt.Sprintf("%s (%d windows)", a.Name, a.Windows))
		}
	}
	enabled := "IsEnabled unknown"
	if r.EnabledKnown {
		enabled = fmt.Sprintf("IsEnabled %v", r.Enabled)
	}
	detail := fmt.Sprintf("mode %s, bus %s, %s; applications exposing trees: %s", r.Mode, r.Address, enabled, orNone(strings.Join(apps, ", ")))
	fix := ""
	if r.EnabledKnown && !r.Enabled && r.Mode != atspi.ModeOn {
		fix = "Chromium, Qt and GTK 4 expose their trees only with IsEnabled: set " + config.Var("Accessibility") + "=on"
	}
	add("ok", name, detail, fix)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
