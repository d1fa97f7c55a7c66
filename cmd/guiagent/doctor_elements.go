package main

import (
	"context"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
)

// checkElements reports the backend's element source (AT-SPI2, UI
// Automation, AX) and whether a small snapshot of the focused window works.
// A failure is a warning: everything else works without elements. The
// source's error says how to fix it (the macOS one names the Accessibility
// permission and the binary to grant it to).
func checkElements(ctx context.Context, screen desktop.Screen, add func(level, name, detail, fix string)) {
	src, ok := desktop.ElementsOf(screen)
	if !ok {
		add("warn", "element tree", fmt.Sprintf("the %s backend has no element source (accessibility off, or none on this backend)", screen.Name()),
			"set "+config.Var("Accessibility")+"=auto to read applications' accessibility trees")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	snap, err := src.Elements(ctx, desktop.ElementQuery{MaxElements: 50, Budget: 2 * time.Second})
	if err != nil {
		add("warn", "element tree", err.Error(), "")
		return
	}
	detail := fmt.Sprintf("%s: %d elements of the focused window %q in %v", snap.Source, len(snap.Elements), snap.Window, snap.Took.Round(time.Millisecond))
	if snap.Truncated && snap.TruncatedBy != "max_elements" {
		detail += " (truncated: " + snap.TruncatedBy + ")"
	}
	add("ok", "element tree", detail, "")
}
