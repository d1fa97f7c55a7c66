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
		if why := whyNoElements(screen); why != "" {
			add("warn", "element tree", why, "")
			return
		}
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

// noPlacement is why GNOME and KDE (through the portal) have no element tree.
const noPlacement = "the portal backend (GNOME, KDE) has no element tree: their compositors do not tell a client where windows are on the screen, and a Wayland application's accessibility tree gives boxes relative to its own window (screenshots, OCR and vision work; sway and Hyprland say where windows are)"

// whyNoElements is what a backend says of its missing element source when
// it is not accessibility being off: the Wayland backend on a compositor
// that does not say where windows are, and the portal backend.
func whyNoElements(screen desktop.Screen) string {
	for s := screen; s != nil; {
		if w, ok := s.(interface{ WhyNoElements() string }); ok {
			return w.WhyNoElements()
		}
		if s.Name() == "portal" {
			return noPlacement
		}
		u, ok := s.(desktop.Unwrapper)
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	return ""
}
