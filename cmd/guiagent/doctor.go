package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/platform"
)

// check is one doctor finding.
type check struct {
	level  string // "ok", "warn", "FAIL"
	name   string
	detail string
	fix    string
}

// cmdDoctor checks what guiagent needs and prints what is missing and how to fix
// it. It exits 1 when something required fails. It never prints secrets.
func cmdDoctor(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) int {
	var checks []check
	add := func(level, name, detail, fix string) { checks = append(checks, check{level, name, detail, fix}) }
	c, _, err := config.Load("doctor", args, getenv)
	if err != nil {
		add("FAIL", "configuration", err.Error(), "correct the variable or flag named above")
		printChecks(stdout, checks)
		return 1
	}
	add("ok", "platform", runtime.GOOS+"/"+runtime.GOARCH+", guiagent "+guiagent.Version, "")

	// Desktop.
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	screen, closeScreen, err := platform.Open(ctx, platform.Options{Display: c.XDisplay, XAuthority: c.XAuthority, VirtualDisplay: c.VirtualDisplay, VNC: c.VNC, VNCPassword: c.VNCPassword})
	if err != nil {
		add("FAIL", "display", err.Error(), "run inside a desktop session, set DISPLAY, or pass --virtual-display 1280x800 (needs Xvfb: apt-get install xvfb)")
	} else {
		defer closeScreen()
		ch := app.ChooseDesktop(ctx, c, screen)
		level := "ok"
		if ch.Warn {
			level = "warn"
		}
		add(level, "desktop", fmt.Sprintf("%s, %s: %s", ch.Display, ch.Size, ch.Why), "")
		checkDesktop(ctx, screen, add)
		checkHeldInput(ctx, c, screen, add)
	}
	if _, err := exec.LookPath("Xvfb"); err != nil && runtime.GOOS == "linux" {
		add("warn", "virtual display", "Xvfb is not installed, so --virtual-display and `guiagent demo` cannot start a private desktop", "apt-get install xvfb")
	} else if runtime.GOOS == "linux" {
		add("ok", "virtual display", "Xvfb available for --virtual-display and demo", "")
	}

	checkOCR(ctx, c, add)

	checkModel(c, add)

	tc := toolsCheck(c)
	add(tc.level, tc.name, tc.detail, tc.fix)

	checkSettings(c, add)

	checkFiles(c, add)
	printChecks(stdout, checks)
	for _, ch := range checks {
		if ch.level == "FAIL" {
			return 1
		}
	}
	return 0
}

// checkModel says which model, adapter and profile are configured, without
// contacting the provider.
func checkModel(c config.Config, add func(level, name, detail, fix string)) {
	checkVision(c, add)
	switch {
	case !app.ModelConfigured(c):
		add("warn", "model", "no model configured: gui_execute_task is not offered; the atomic tools work",
			"set "+config.Var("Provider")+" ("+strings.Join(llm.ProviderNames(), ", ")+"), "+config.Vars("Model", "APIKey"))
	case c.APIKey == "" && c.BaseURL == "":
		add("FAIL", "model", fmt.Sprintf("provider %s, model %s, but %s is not set", c.Provider, c.Model, config.Var("APIKey")),
			"set "+config.Var("APIKey")+", or "+config.Var("BaseURL")+" for a local server that needs no key")
	default:
		p, perr := app.ProfileFor(c)
		detail := fmt.Sprintf("provider %s, model %s, adapter %s, coordinates profile %q", c.Provider, c.Model, app.AdapterName(c), p.Name)
		if c.APIKey != "" {
			detail += ", API key set"
		}
		if c.BaseURL != "" {
			detail += ", base URL " + c.BaseURL
		}
		if _, err := app.NewAdapter(c); err != nil || perr != nil {
			add("FAIL", "model", detail+": "+errors.Join(err, perr).Error(), "see the message")
		} else {
			add("ok", "model", detail+" (not contacted: doctor makes no network calls)", "")
		}
		checkModelLifecycle(c, time.Now(), add)
		if m, err := app.NewMemoryModel(c); err != nil {
			add("FAIL", "memory model", err.Error(), "check "+config.Vars("MemoryModel", "MemoryProvider", "MemoryAPIKey"))
		} else if m != nil {
			name := c.MemoryModel
			if name == "" {
				name = c.Model + " (the main model)"
			}
			add("ok", "memory model", "older steps are summarized by "+name, "")
		}
		if g, err := app.NewGrounder(c); err != nil {
			add("FAIL", "grounding", err.Error(), "check "+config.Vars("GroundingModel", "GroundingBaseURL"))
		} else if g != nil {
			add("ok", "grounding", "named targets are located by "+c.GroundingModel, "")
		}
	}
}

// checkModelLifecycle warns about a model its provider deprecated or shut
// down, from the SDK's own deprecation markers, and adds the provider's own
// findings (which computer tool is spoken, and why).
func checkModelLifecycle(c config.Config, now time.Time, add func(level, name, detail, fix string)) {
	p, ok := llm.ProviderNamed(c.Provider)
	if !ok {
		return
	}
	if l, ok := llm.LifecycleOf(c.Provider, c.Model); ok {
		next := l.Replacement
		if next == "" {
			next = p.Example
		}
		add("warn", "model lifecycle", fmt.Sprintf("%s is %s (the provider's SDK marks it)", c.Model, l.Describe(now)), "set "+config.Var("Model")+" to "+next)
	}
	if p.Doctor == nil {
		return
	}
	for _, ch := range p.Doctor(llm.Config{Provider: c.Provider, Model: c.Model, ToolVersion: c.ToolVersion}) {
		add(ch.Level, ch.Name, ch.Detail, ch.Fix)
	}
}

// checkFiles checks the runs folder and the kill switch.
func checkFiles(c config.Config, add func(level, name, detail, fix string)) {
	if err := os.MkdirAll(c.RunsDir, 0o700); err != nil {
		add("FAIL", "runs folder", err.Error(), "set "+config.Var("RunsDir")+" to a writable folder")
	} else if f, err := os.CreateTemp(c.RunsDir, ".doctor-*"); err != nil {
		add("FAIL", "runs folder", c.RunsDir+" is not writable: "+err.Error(), "set "+config.Var("RunsDir")+" to a writable folder")
	} else {
		f.Close()
		os.Remove(f.Name())
		add("ok", "runs folder", c.RunsDir, "")
	}
	if c.KillSwitchFile != "" {
		if _, err := os.Stat(c.KillSwitchFile); err == nil {
			add("warn", "kill switch", c.KillSwitchFile+" exists: all input is stopped", "remove the file to allow input")
		} else {
			add("ok", "kill switch", "armed: creating "+c.KillSwitchFile+" stops all input", "")
		}
	} else {
		add("warn", "kill switch", "none configured", "set "+config.Var("KillSwitchFile")+", e.g. "+filepath.Join(os.TempDir(), "guiagent.stop"))
	}
}

func checkDesktop(ctx context.Context, screen desktop.Screen, add func(level, name, detail, fix string)) {
	ds, err := screen.Displays(ctx)
	if err != nil || len(ds) == 0 {
		add("FAIL", "display", fmt.Sprintf("%s backend lists no displays: %v", screen.Name(), err), "check the X server")
		return
	}
	var parts []string
	for _, d := range ds {
		s := fmt.Sprintf("%s %s %v scale %g", d.ID, d.Name, d.Bounds, d.ScaleFactor())
		if d.Primary {
			s += " primary"
		}
		parts = append(parts, s)
	}
	add("ok", "displays", fmt.Sprintf("%s backend: %s", screen.Name(), strings.Join(parts, "; ")), "")
	if _, err := screen.Capture(ctx, ds[0].Bounds, nil); err != nil {
		add("FAIL", "capture", err.Error(), "allow screen capture for this process")
	} else {
		add("ok", "capture", "screenshot of display "+ds[0].ID+" works", "")
	}
	caps := desktop.CapabilitiesOf(ctx, screen)
	if caps.Input {
		add("ok", "input", "mouse and keyboard injection available", "")
	} else {
		add("FAIL", "input", "this backend cannot inject input", "on X11 the server needs the XTEST extension")
	}
	if cb, ok := screen.(desktop.Clipboard); ok {
		if _, err := cb.ReadClipboard(ctx); err != nil && !strings.Contains(err.Error(), "empty") && !strings.Contains(err.Error(), "no owner") {
			add("warn", "clipboard", "reading the clipboard failed: "+err.Error(), "typing long or non-ASCII text pastes through the clipboard; check the desktop's clipboard")
		} else {
			add("ok", "clipboard", "readable", "")
		}
	} else {
		add("warn", "clipboard", "not available on this backend", "long and non-ASCII text may type slower")
	}
	keys := make([]string, 0, len(caps.Details))
	for k := range caps.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("ok", "backend "+k, caps.Details[k], "")
	}
}

func printChecks(w io.Writer, checks []check) {
	for _, ch := range checks {
		fmt.Fprintf(w, "%-4s %-16s %s\n", ch.level, ch.name, ch.detail)
		if ch.fix != "" && ch.level != "ok" {
			fmt.Fprintf(w, "     %-16s fix: %s\n", "", ch.fix)
		}
	}
}

// checkSettings shows each run-time setting with the layer that set it (flag,
// environment, settings file or default), the key only as set or not.
func checkSettings(c config.Config, add func(level, name, detail, fix string)) {
	if c.SettingsFile == "" {
		add("warn", "settings file", "none: no HOME or XDG_CONFIG_HOME, so settings changed over /api/settings last until exit", "set "+config.Var("SettingsFile"))
	} else {
		add("ok", "settings file", c.SettingsFile+" (flags and "+config.EnvPrefix+"* variables take precedence over it)", "")
	}
	for _, s := range config.Settings {
		v := s.Get(c)
		switch {
		case s.Secret && v != "":
			v = "set"
		case v == "":
			v = "(empty)"
		}
		add("ok", s.Name, fmt.Sprintf("%s (source: %s)", v, c.Sources.Of(s.Env)), "")
	}
	// Every other value not at its default: its variable and source (values
	// are not printed here: some are credentials).
	var others []string
	for name, src := range c.Sources {
		if _, isSetting := settingEnv(name); !isSetting {
			if !strings.HasPrefix(name, "--") {
				name = config.EnvPrefix + name
			}
			others = append(others, fmt.Sprintf("%s (%s)", name, src))
		}
	}
	sort.Strings(others)
	if len(others) > 0 {
		add("ok", "other values", "set by a flag or the environment: "+strings.Join(others, ", "), "")
	}
}

// settingEnv reports whether name (a variable without GUI_AGENT_) is a setting's.
func settingEnv(name string) (config.Setting, bool) {
	for _, s := range config.Settings {
		if s.Env == name {
			return s, true
		}
	}
	return config.Setting{}, false
}

// checkVision says whether the vision tools are offered, by which models, or why not.
func checkVision(c config.Config, add func(level, name, detail, fix string)) {
	locateBy, err := app.VisionModels(c)
	if err != nil {
		add("warn", "vision tools", "gui_locate, gui_query, gui_assert, gui_wait_for and `target` are not offered: "+err.Error(),
			"configure a vision model ("+config.Vars("Provider", "Model", "APIKey")+")")
		return
	}
	add("ok", "vision tools", fmt.Sprintf("gui_locate, gui_query, gui_assert, gui_wait_for and `target`: query/assert by %s, locating by %s", c.Model, locateBy), "")
}
