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
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/backend/portal"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/platform"
)

// check is one doctor finding.
type check struct {
	level  string // "ok", "info", "warn", "FAIL"
	name   string
	detail string
	fix    string
	// extra rows (settings at their defaults, backend details) are shown
	// only with --all.
	extra bool
}

// checks collects doctor's findings.
type checks []check

func (cs *checks) add(level, name, detail, fix string) {
	*cs = append(*cs, check{level: level, name: name, detail: detail, fix: fix})
}

// addExtra adds a row shown only with --all.
func (cs *checks) addExtra(level, name, detail string) {
	*cs = append(*cs, check{level: level, name: name, detail: detail, extra: true})
}

// cmdDoctor checks what guiagent needs and prints what is missing and how to fix
// it. It exits 1 when something required fails. It never prints secrets.
func cmdDoctor(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) int {
	var cs checks
	args, all, err := doctorArgs(args)
	if err != nil {
		cs.add("FAIL", "configuration", err.Error(), "run guiagent doctor --help")
		cs.print(stdout, all)
		return 1
	}
	args, script := doctorScript(args)
	c, _, err := config.Load("doctor", args, getenv)
	if err != nil {
		cs.add("FAIL", "configuration", err.Error(), "correct the variable or flag named above")
		cs.print(stdout, all)
		return 1
	}
	cs.add("ok", "platform", runtime.GOOS+"/"+runtime.GOARCH+", guiagent "+versionString(), "")
	if script != "" {
		checkMidsceneScript(script, &c, getenv, &cs)
	}

	// Desktop.
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	po := app.PlatformOptions(c)
	sel, selErr := platform.Select(po)
	if selErr == nil {
		cs.add("ok", "backend", sel.Why, "")
	}
	screen, closeScreen, err := platform.Open(ctx, po)
	if err != nil {
		fix := "" // the message says how, but for X11's
		if selErr == nil && sel.Backend == platform.X11 && !errors.Is(err, platform.ErrNoDisplay) {
			fix = "run inside a desktop session, set DISPLAY, or pass --virtual-display 1280x800 (needs Xvfb: apt-get install xvfb)"
		}
		cs.add("FAIL", "display", err.Error(), fix)
	} else {
		defer closeScreen()
		ch := app.ChooseDesktop(ctx, c, screen)
		level := "ok"
		if ch.Warn {
			level = "warn"
		}
		cs.add(level, "desktop", fmt.Sprintf("%s, %s: %s", ch.Display, ch.Size, ch.Why), "")
		checkDesktop(ctx, screen, &cs)
		checkElements(ctx, screen, cs.add)
		checkHeldInput(ctx, c, screen, cs.add)
	}
	if _, err := exec.LookPath("Xvfb"); err != nil && runtime.GOOS == "linux" {
		cs.add("warn", "virtual display", "Xvfb is not installed, so --virtual-display and `guiagent demo` cannot start a private desktop", "apt-get install xvfb")
	} else if runtime.GOOS == "linux" {
		cs.add("ok", "virtual display", "Xvfb available for --virtual-display and demo", "")
	}

	checkBrowser(c, &cs)
	checkAndroid(ctx, c, &cs)
	checkPhones(ctx, c, &cs)
	checkOCR(ctx, c, cs.add)
	checkAccessibility(ctx, c, cs.add)

	checkModel(c, cs.add)
	checkMidsceneEnv(getenv, script != "", cs.add)
	tc := toolsCheck(c)
	cs.add(tc.level, tc.name, tc.detail, tc.fix)
	checkSettings(c, &cs)
	checkFiles(c, cs.add)
	cs.print(stdout, all)
	for _, ch := range cs {
		if ch.level == "FAIL" {
			return 1
		}
	}
	return 0
}

// doctorArgs takes doctor's own flag, --all, out of args (before any "--").
func doctorArgs(args []string) (rest []string, all bool, err error) {
	for i, a := range args {
		if a == "--" {
			return append(rest, args[i:]...), all, nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "all" {
			rest = append(rest, a)
			continue
		}
		all = true
		if hasVal {
			if all, err = strconv.ParseBool(val); err != nil {
				return nil, false, fmt.Errorf("%s: want --all, --all=true or --all=false", a)
			}
		}
	}
	return rest, all, nil
}

// checkModel says which model, adapter and profile are configured, without
// contacting the provider.
func checkModel(c config.Config, add func(level, name, detail, fix string)) {
	checkVision(c, add)
	defer checkProviderKeys(c, add)
	switch {
	case !app.ModelConfigured(c):
		add("warn", "model", "no model configured: gui_execute_task is not offered; the atomic tools work",
			"set "+config.Var("Provider")+" ("+strings.Join(llm.ProviderNames(), ", ")+"), "+config.Vars("Model", "APIKey"))
	case c.APIKey == "" && c.BaseURL == "":
		add("FAIL", "model", fmt.Sprintf("provider %s, model %s, but no API key is set for it (%s: none is set)", c.Provider, c.Model, keyVars(c, c.Provider)),
			"set one of them, or "+config.Var("BaseURL")+" for a local server that needs no key")
	default:
		p, perr := app.ProfileFor(c)
		detail := fmt.Sprintf("provider %s, model %s, adapter %s, coordinates profile %q", c.Provider, c.Model, app.AdapterName(c), p.Name)
		if c.APIKey != "" {
			detail += ", " + keySource(c, c.Provider)
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

// grantWait is how long doctor waits for the user's answer to a backend's
// permission dialog, and grantNotice where it says at once that it waits.
var (
	grantWait             = 30 * time.Second
	grantNotice io.Writer = os.Stderr
)

// inputReady asks a backend whose input needs the user's grant whether it
// has it, waiting up to grantWait while its permission dialog is on the
// screen (and saying so at once, as doctor prints its findings at the end).
func inputReady(ctx context.Context, screen desktop.Screen) error {
	r, ok := screen.(desktop.InputReadiness)
	if !ok {
		return nil
	}
	err := r.InputReady(ctx)
	if !errors.Is(err, portal.ErrPermissionPending) {
		return err
	}
	fmt.Fprintf(grantNotice, "guiagent doctor: %v (doctor waits up to %s for the answer)\n", err, grantWait)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grantWait)
	defer cancel()
	pending := err
	for errors.Is(err, portal.ErrPermissionPending) && wctx.Err() == nil {
		err = r.InputReady(wctx)
	}
	if wctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return pending // still waiting when doctor stopped
	}
	return err
}

func checkDesktop(ctx context.Context, screen desktop.Screen, cs *checks) {
	ds, err := screen.Displays(ctx)
	if err != nil || len(ds) == 0 {
		cs.add("FAIL", "display", fmt.Sprintf("%s backend lists no displays: %v", screen.Name(), err), "check the X server")
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
	cs.add("ok", "displays", fmt.Sprintf("%s backend: %s", screen.Name(), strings.Join(parts, "; ")), "")
	if _, err := screen.Capture(ctx, ds[0].Bounds, nil); err != nil {
		cs.add("FAIL", "capture", err.Error(), "allow screen capture for this process")
	} else {
		cs.add("ok", "capture", "screenshot of display "+ds[0].ID+" works", "")
	}
	caps := desktop.CapabilitiesOf(ctx, screen)
	if err := inputReady(ctx, screen); caps.Input && err != nil {
		level := "FAIL"
		if errors.Is(err, portal.ErrPermissionPending) {
			level = "warn"
		}
		cs.add(level, "input", err.Error(), "")
	} else if caps.Input {
		cs.add("ok", "input", "mouse and keyboard injection available", "")
	} else {
		cs.add("FAIL", "input", "this backend cannot inject input", "on X11 the server needs the XTEST extension")
	}
	if cb, ok := screen.(desktop.Clipboard); ok {
		if _, err := cb.ReadClipboard(ctx); err != nil && !strings.Contains(err.Error(), "empty") && !strings.Contains(err.Error(), "no owner") {
			cs.add("warn", "clipboard", "reading the clipboard failed: "+err.Error(), "typing long or non-ASCII text pastes through the clipboard; check the desktop's clipboard")
		} else {
			cs.add("ok", "clipboard", "readable", "")
		}
	} else {
		cs.add("warn", "clipboard", "not available on this backend", "long and non-ASCII text may type slower")
	}
	keys := make([]string, 0, len(caps.Details))
	for k := range caps.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cs.addExtra("ok", "backend "+k, caps.Details[k])
	}
}

// print writes the findings, a fix under each that is not ok, and (without
// all) how many rows --all would add.
func (cs checks) print(w io.Writer, all bool) {
	hidden := 0
	for _, ch := range cs {
		if ch.extra && !all {
			hidden++
			continue
		}
		fmt.Fprintf(w, "%-4s %-16s %s\n", ch.level, ch.name, ch.detail)
		if ch.fix != "" && ch.level != "ok" {
			fmt.Fprintf(w, "     %-16s fix: %s\n", "", ch.fix)
		}
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d more rows, settings at their defaults and backend details: guiagent doctor --all)\n", hidden)
	}
}

// checkSettings shows each run-time setting that is set with the layer that
// set it (flag, environment or settings file), the key only as set or not;
// the settings left at their defaults are extra rows (--all).
func checkSettings(c config.Config, cs *checks) {
	if c.SettingsFile == "" {
		cs.add("warn", "settings file", "none: no HOME or XDG_CONFIG_HOME, so settings changed over /api/settings last until exit", "set "+config.Var("SettingsFile"))
	} else {
		cs.add("ok", "settings file", c.SettingsFile+" (flags and "+config.EnvPrefix+"* variables take precedence over it)", "")
	}
	for _, s := range config.Settings {
		v, src := s.Get(c), c.Sources.Of(s.Env)
		level := "ok"
		switch {
		case s.Secret && v != "":
			v = "set"
		case v == "" && s.Env == "API_KEY" && app.ModelConfigured(c) && c.BaseURL == "":
			v, level = "not set, and the model needs it (see model)", "warn"
		case v == "":
			v, level = "not set", "info"
		}
		detail := fmt.Sprintf("%s (source: %s)", v, src)
		if src == config.SourceDefault {
			cs.addExtra(level, s.Name, detail)
		} else {
			cs.add(level, s.Name, detail, "")
		}
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
		cs.add("ok", "other values", "set by a flag or the environment: "+strings.Join(others, ", "), "")
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
	if !app.ModelConfigured(c) {
		add("warn", "vision tools", "gui_locate, gui_query, gui_assert and gui_wait_for are not offered, and `target` is found only in the accessibility tree or by OCR: they need a model (see model)", "")
		return
	}
	if err != nil {
		add("warn", "vision tools", "gui_locate, gui_query, gui_assert, gui_wait_for and `target` are not offered: "+err.Error(),
			"configure a vision model ("+config.Vars("Provider", "Model", "APIKey")+")")
		return
	}
	add("ok", "vision tools", fmt.Sprintf("gui_locate, gui_query, gui_assert, gui_wait_for and `target`: query/assert by %s, locating by %s", c.Model, locateBy), "")
}
