package app

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/platform"
)

// ToolSelection is the --tools/GUI_AGENT_TOOLS selection for the server;
// --read-only selects the observe group.
func ToolSelection(c config.Config) []string {
	if c.ReadOnly {
		return []string{mcpserver.GroupObserve}
	}
	return c.Tools
}

// serving is what a server built from c has for the tools that need
// something: a vision model, a task runner (a model), flows (always) and an
// element source (Linux, accessibility not off), as openServer gives them
// to mcpserver.New.
func serving(c config.Config) mcpserver.Serving {
	_, err := newVision(c)
	page := c.Backend == string(platform.Browser)
	phone := platform.Backend(c.Backend).Phone()
	return mcpserver.Serving{Vision: err == nil, Tasks: modelConfigured(c), Flows: true,
		Elements: page || phone || runtime.GOOS == "linux" && c.Accessibility != "off",
		Pages:    page, Tabs: page, Uploads: page, Apps: phone}
}

// OfferedTools lists the tools a server built from c offers at start, as
// mcpserver.New decides them (doctor shows them).
func OfferedTools(c config.Config) ([]string, error) {
	return mcpserver.OfferedTools(ToolSelection(c), serving(c))
}

// checkBeforeDesktop refuses, before any desktop is opened, what New would
// otherwise refuse only after opening one: a tool selection that names an
// unknown tool or offers none, a bad coordinate mode or screenshot option,
// and a model configuration that cannot be built.
func checkBeforeDesktop(c config.Config) error {
	if _, err := OfferedTools(c); err != nil {
		return err
	}
	if _, err := geom.ParseSpace(c.CoordinateMode, geom.SpaceImage); err != nil {
		return fmt.Errorf("%s: %w", config.Var("CoordinateMode"), err)
	}
	if err := shotOptions(c).Validate(); err != nil {
		return fmt.Errorf("screenshot options: %w", err)
	}
	if !modelConfigured(c) {
		return nil
	}
	if _, err := newAdapter(c); err != nil {
		return err
	}
	if _, err := newMemoryModel(c); err != nil {
		return fmt.Errorf("memory model: %w", err)
	}
	if _, err := newGrounder(c); err != nil {
		return fmt.Errorf("%s: %w", config.Var("GroundingModel"), err)
	}
	return nil
}

// DesktopChoice says which desktop guiagent drives, its size, and why that
// one; warn is set when a setting the user gave is not used.
type DesktopChoice struct {
	Display, Size, Why string
	Warn               bool
}

// ChooseDesktop explains the desktop platform.Open connected to for c.
func ChooseDesktop(ctx context.Context, c config.Config, screen desktop.Screen) DesktopChoice {
	ch := DesktopChoice{Display: LedgerDisplay(c, screen), Size: displaySizes(ctx, screen)}
	name := screen.DisplayName()
	sel, err := platform.Select(PlatformOptions(c))
	vd := c.VirtualDisplay
	switch {
	case err != nil:
		ch.Why, ch.Warn = err.Error(), true
	case sel.Backend != platform.X11:
		ch.Why = sel.Why
	case vd.W != 0 && name != c.XDisplay && c.XDisplay == "":
		ch.Why = fmt.Sprintf("a private Xvfb started for --virtual-display %dx%d, since DISPLAY is not set", vd.W, vd.H)
	case vd.W != 0 && name != c.XDisplay:
		ch.Why = fmt.Sprintf("a private Xvfb started for --virtual-display %dx%d, since DISPLAY=%s is not reachable", vd.W, vd.H, c.XDisplay)
	case vd.W != 0:
		ch.Why = fmt.Sprintf("DISPLAY=%s is reachable, so --virtual-display %dx%d is not used: it starts a private Xvfb only when no display is reachable (unset DISPLAY, or --display an unused one, to get it)", c.XDisplay, vd.W, vd.H)
		ch.Warn = true
	default:
		ch.Why = sel.Why
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
func (a *App) logDesktop(ctx context.Context, version string) {
	ch := ChooseDesktop(ctx, a.cfg, a.screen)
	if a.forceVirtual {
		ch.Why, ch.Warn = "a private Xvfb this process started for itself: nothing runs on your own screen", false
	}
	log := a.log.Info
	if ch.Warn {
		log = a.log.Warn
	}
	log("desktop ready", "display", ch.Display, "size", ch.Size, "why", ch.Why, "backend", a.screen.Name(), "version", version)
	if r, ok := a.screen.(desktop.InputReadiness); ok {
		go func() { // the portal's grant: say at once that its dialog waits on the screen
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := r.InputReady(ctx); err != nil {
				a.log.Warn("input is not ready yet", "why", err.Error())
			}
		}()
	}
}
