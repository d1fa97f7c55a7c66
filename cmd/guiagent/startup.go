package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/mcpserver"
)

// toolSelection is the --tools/GUI_AGENT_TOOLS selection for the server;
// --read-only selects the observe group.
func toolSelection(c config.Config) []string {
	if c.ReadOnly {
		return []string{mcpserver.GroupObserve}
	}
	return c.Tools
}

// printToolGroups lists the groups --tools accepts with their tools.
func printToolGroups(w io.Writer) {
	fmt.Fprintln(w, "\nTool groups for --tools (or name single tools):")
	for _, g := range mcpserver.ToolGroups() {
		tools := strings.Join(g.Tools, ", ")
		if tools == "" {
			tools = "(none in this version)"
		}
		fmt.Fprintf(w, "  %-10s %s\n", g.Name, tools)
	}
}

// desktopChoice says which desktop guiagent drives, its size, and why that
// one; warn is set when a setting the user gave is not used.
type desktopChoice struct {
	display, size, why string
	warn               bool
}

// chooseDesktop explains the desktop platform.Open connected to for c.
func chooseDesktop(ctx context.Context, c config.Config, screen desktop.Screen) desktopChoice {
	ch := desktopChoice{display: ledgerDisplay(c, screen), size: displaySizes(ctx, screen)}
	name := ""
	if d, ok := screen.(interface{ DisplayName() string }); ok {
		name = d.DisplayName()
	}
	vd := c.VirtualDisplay
	switch {
	case c.VNC != "":
		ch.why = "--vnc/GUI_AGENT_VNC is set"
	case vd.W != 0 && name != c.XDisplay && c.XDisplay == "":
		ch.why = fmt.Sprintf("a private Xvfb started for --virtual-display %dx%d, since DISPLAY is not set", vd.W, vd.H)
	case vd.W != 0 && name != c.XDisplay:
		ch.why = fmt.Sprintf("a private Xvfb started for --virtual-display %dx%d, since DISPLAY=%s is not reachable", vd.W, vd.H, c.XDisplay)
	case vd.W != 0:
		ch.why = fmt.Sprintf("DISPLAY=%s is reachable, so --virtual-display %dx%d is not used: it starts a private Xvfb only when no display is reachable (unset DISPLAY, or --display an unused one, to get it)", c.XDisplay, vd.W, vd.H)
		ch.warn = true
	default:
		ch.why = fmt.Sprintf("DISPLAY=%s (from --display or the environment)", c.XDisplay)
	}
	return ch
}

// displaySizes lists the displays' sizes, e.g. "1280x800" or "1920x1080+0+0, 1280x1024+1920+0".
func displaySizes(ctx context.Context, screen desktop.Screen) string {
	ds, err := screen.Displays(ctx)
	if err != nil || len(ds) == 0 {
		return "unknown size"
	}
	if len(ds) == 1 {
		return fmt.Sprintf("%dx%d", ds[0].Bounds.W, ds[0].Bounds.H)
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%dx%d%+d%+d", d.Bounds.W, d.Bounds.H, d.Bounds.X, d.Bounds.Y))
	}
	return strings.Join(parts, ", ")
}

// logDesktop writes the start-up line naming the desktop, its size and why.
func (a *app) logDesktop(ctx context.Context) {
	ch := chooseDesktop(ctx, a.cfg, a.screen)
	log := a.log.Info
	if ch.warn {
		log = a.log.Warn
	}
	log("desktop ready", "display", ch.display, "size", ch.size, "why", ch.why, "backend", a.screen.Name(), "version", version)
}

// toolsCheck is doctor's finding on the tools a server would offer.
func toolsCheck(c config.Config) check {
	names, err := mcpserver.ResolveTools(toolSelection(c))
	if err != nil {
		return check{"FAIL", "tools", err.Error(), "correct --tools or GUI_AGENT_TOOLS"}
	}
	noTask := !modelConfigured(c) && slices.Contains(names, "gui_execute_task")
	if noTask {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "gui_execute_task" })
	}
	if len(names) == 0 {
		return check{"FAIL", "tools", "the selection offers no tool: gui_execute_task needs a model and none is configured", "select other tools, or configure a model"}
	}
	detail := fmt.Sprintf("%d offered: %s", len(names), strings.Join(names, ", "))
	if noTask {
		detail += "; gui_execute_task is not offered because no model is configured"
	}
	return check{"ok", "tools", detail, ""}
}
