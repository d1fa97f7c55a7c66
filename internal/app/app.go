// Package app assembles a running guiagent from one config.Config: the
// desktop backend, input with its ledger and kill switch, the screenshot
// pipeline, the run store, the task runner (rebuilt when the settings change),
// the MCP server, the dashboard and the settings API. The public package at the
// module root and cmd/guiagent are built on it; nothing else imports it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/fleet"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/ocr"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/telemetry"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/vision"
	"github.com/guiagent/guiagent/internal/web"
)

// Extra is what an App needs beyond its Config.
type Extra struct {
	// Log receives logs when Config.LogFile is empty; nil means os.Stderr.
	Log io.Writer
	// Version names the server to MCP clients; "" means "dev".
	Version string
	// ForceVirtual starts the private display (Config.VirtualDisplay, else
	// 1280x800) even when an X display is reachable.
	ForceVirtual bool
	// Seer, when set, is the plain-vision model of flows instead of the one
	// the configuration gives (tests).
	Seer vision.Seer
}

// App is everything a running guiagent holds, built from one Config.
type App struct {
	log    *slog.Logger
	screen desktop.Screen
	input  *desktop.Input
	exec   *operate.Executor // the one executor of a.input: MCP tools, tasks, flows and the Go API
	shots  *imaging.Pipeline
	kill   *safety.KillSwitch
	keys   *safety.KeyPolicy
	audit  *safety.Audit
	store  *trace.Store
	tasks  *taskSwitch
	flows  *flows
	server *mcpserver.Server
	token  string

	mu      sync.Mutex // guards cfg and sources (the settings API changes them)
	cfg     config.Config
	sources config.Sources

	metrics *telemetry.Metrics
	// fleet serves a desktop per session (--desktop-per-session); nil otherwise.
	fleet *fleet.Fleet
	// sessionDesktops are the per-session desktops' parts, by session id.
	sessionDesktops sync.Map // string -> *sessionDesktop
	// browser is the one browser whose contexts are a fleet's desktops
	// (--backend browser); nil otherwise.
	browser *platform.SharedBrowser
	// sessionID is the one MCP session of a per-session App ("" otherwise);
	// recordID names it in records, files, logs and the dashboard (the
	// session id is its credential and appears nowhere else).
	sessionID, recordID string

	scrub        *secret.Scrubber // the one scrubber of every writer; the settings API adds a new key to it
	forceVirtual bool             // the private display was asked for whatever $DISPLAY is
	dashOnce     sync.Once
	dash         *web.Dashboard
	questions    *ask.Broker // questions waiting for a person (the dashboard answers them)
	link         *dashLink   // one-time dashboard links for secret questions (URL-mode elicitation)
	closes       []func() error

	// ocr reads the screen's text (gui_find_text, gui_read_text, the OCR
	// tier of targets, flows' text targets); nil: ocrMissing says why.
	ocr        *ocr.Reader
	ocrMissing error
}

// New opens the log (c.LogFile, else x.Log) and the desktop and builds every
// part. Close releases what it opened, also after a partial start.
func New(ctx context.Context, c config.Config, x Extra) (*App, error) {
	a, err := newBase(c, x)
	if err != nil {
		return nil, err
	}
	if err := a.open(ctx, c, x); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// newBase builds what every App starts from: the one scrubber, from c's
// secrets, and the log (c.LogFile, else x.Log, else stderr) written through it.
func newBase(c config.Config, x Extra) (*App, error) {
	if x.Log == nil {
		x.Log = os.Stderr
	}
	scrub := secret.NewScrubber(c.Secrets()...)
	log, closeLog, err := newLogger(c, x.Log, scrub)
	if err != nil {
		return nil, err
	}
	for _, d := range c.Deprecations() {
		log.Warn(d)
	}
	return &App{cfg: c, sources: c.Sources, scrub: scrub, log: log, closes: []func() error{func() error { closeLog(); return nil }}}, nil
}

func (a *App) open(ctx context.Context, c config.Config, x Extra) error {
	a.forceVirtual = x.ForceVirtual
	if err := a.openShared(c); err != nil {
		return err
	}
	po := PlatformOptions(c)
	po.ForceVirtual = x.ForceVirtual
	po.Browser.Ask = a.askDialog
	screen, closeScreen, err := platform.Open(ctx, po)
	if errors.Is(err, platform.ErrNoDisplay) {
		return fmt.Errorf("%w (or set %s=1280x800)", err, config.Var("VirtualDisplay"))
	}
	if err != nil {
		return err
	}
	a.screen = screen
	a.closes = append(a.closes, closeScreen)
	a.input = desktop.NewInput(screen)
	if err := a.attachLedger(ctx); err != nil {
		return err
	}
	if a.kill != nil {
		a.input.Gate = a.kill.Gate
	}
	if err := a.openServer(c, x); err != nil {
		return err
	}
	a.logDesktop(ctx, x.Version)
	a.log.Info("tools offered", "tools", strings.Join(a.server.ToolNames(), ","))
	if !a.tasks.configured() {
		a.log.Info("gui_execute_task is not offered: no model is configured; the atomic tools work", "fix", "set "+config.Vars("Provider", "Model", "APIKey")+", or PUT them to /api/settings (serve --http)")
	}
	return nil
}

// openShared builds what every desktop of the App shares: hotkey policy,
// kill switch, audit, screenshot pipeline, run store, metrics and token.
func (a *App) openShared(c config.Config) error {
	if err := checkBeforeDesktop(c); err != nil {
		return err
	}
	var err error
	if a.keys, err = safety.NewKeyPolicy(safety.KeyPolicyOptions{Blocked: c.BlockedHotkeys, Allowed: c.AllowedHotkeys, Confirm: c.ConfirmHotkeys}); err != nil {
		return fmt.Errorf("%s/%s/%s: %w", config.Var("BlockedHotkeys"), config.Var("AllowedHotkeys"), config.Var("ConfirmHotkeys"), err)
	}
	a.questions = ask.NewBroker(false) // HTTPOptions turns the dashboard on
	a.link = &dashLink{}
	if c.KillSwitchFile != "" {
		a.kill = safety.NewKillSwitch(c.KillSwitchFile)
	}
	a.audit = safety.NewAudit(safety.DefaultAuditSize, a.scrub)
	a.shots = imaging.NewPipeline()
	so := trace.DefaultOptions()
	so.Dir, so.DebugImages, so.Scrubber, so.Logger = c.RunsDir, c.DebugImages, a.scrub, a.log
	so.MaxRuns, so.MaxBytes = c.RunsKeep, int64(c.RunsMaxMB)<<20
	a.store = trace.NewStore(so)
	a.closes = append(a.closes, a.store.Close)
	a.metrics = telemetry.New(telemetry.Options{Sessions: a.sessionCount, Desktops: a.desktopCount})
	if a.token = c.HTTPToken; a.token == "" {
		if a.token, err = hosting.GenerateToken(); err != nil {
			return err
		}
		a.scrub.Add(a.token)
	}
	return nil
}

// openServer builds the executor, the task switch and the MCP server on
// a.screen and a.input.
func (a *App) openServer(c config.Config, x Extra) error {
	eo := operate.Options{Keys: a.keys, Questions: a.questions, AskTimeout: c.AskTimeout, Logger: a.log}
	if a.kill != nil {
		eo.KillSwitch = a.kill
	}
	a.exec = operate.New(a.input, eo)
	a.tasks = newTaskSwitch(c.OnBusy, a.scrub)
	if modelConfigured(c) {
		r, err := a.newRunner(c)
		if err != nil {
			return err
		}
		a.tasks.set(r, c.DisplayIndex)
	}
	opts := mcpserver.Options{
		Tools:  ToolSelection(c),
		Screen: a.screen, Input: a.input, Executor: a.exec, Shots: a.shots, Shot: shotOptions(c),
		CoordinateMode: c.CoordinateMode, DefaultDisplay: c.DisplayIndex,
		CurrentDisplay:        func() string { return a.Config().DisplayIndex },
		ScreenshotAfterAction: c.ScreenshotAfterAction,
		Keys:                  a.keys, KillSwitch: a.kill, Audit: a.audit, Scrubber: a.scrub,
		Questions: a.questions, AskTimeout: c.AskTimeout, DashboardURL: a.link.url,
		Records: func(id string) mcpserver.ToolRecorder { return a.store.Session(id) },
		Runs:    a.store,
		Name:    "guiagent", Version: x.Version, Logger: a.log, // a per-session server adds the session id itself
		CurrentTask: a.currentTask,
		Metrics:     a.metrics, SessionID: a.sessionID, RecordID: a.recordID,
	}
	if a.sessionID != "" {
		opts.KeepAlive = c.SessionKeepAlive
	}
	if a.tasks.configured() {
		opts.Tasks = a.tasks // without a model gui_execute_task is offered once the settings API gives one
	}
	a.openOCR(c)
	opts.OCR, opts.OCRMissing = a.ocr, a.ocrMissing
	a.flows = &flows{a: a, seer: x.Seer}
	opts.Flows, opts.FlowCacheDir = a.flows, c.FlowCacheDir()
	if vm, err := newVision(c); err == nil {
		opts.Vision, opts.VisionProfile, opts.LocateProfile = vm.seer, vm.seer.AskProfile(), vm.seer.LocateProfile()
	} else if modelConfigured(c) {
		a.log.Warn("the vision tools (gui_locate, gui_query, gui_assert, gui_wait_for, target) are off", "why", err)
	}
	var err error
	a.server, err = mcpserver.New(opts)
	return err
}

// openOCR starts the OCR engine once, for the server and flows: Tesseract
// with c.OCRLangs, the program c.OCRTesseract names. When it cannot run (not installed, a language missing)
// a.ocrMissing keeps why, with the install command, and OCR is off.
func (a *App) openOCR(c config.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	e, err := tesseract.New(ctx, OCROptions(c))
	if err != nil {
		a.ocrMissing = err
		a.log.Info("OCR is off (gui_find_text, gui_read_text and text targets say how to install it)", "why", err)
		return
	}
	a.closes = append(a.closes, e.Close)
	a.ocr = ocr.NewReader(e, 0)
}

// OCROptions are the options of the OCR engine c describes: its languages
// and program.
func OCROptions(c config.Config) tesseract.Options {
	return tesseract.Options{Langs: c.OCRLangs, Binary: c.OCRTesseract, BinaryVar: config.Var("OCRTesseract")}
}

func shotOptions(c config.Config) imaging.Options {
	return imaging.Options{MaxLongEdge: c.MaxLongEdge, Format: c.ImageFormat, Quality: c.JPEGQuality, MaxBytes: c.MaxImageBytes}
}

// currentTask is the running task (an agent.RunInfo) or nil when idle.
func (a *App) currentTask() any {
	if info, ok := a.tasks.current(); ok {
		return info
	}
	return nil
}

// newRunner builds the task runner c describes, recording into the run store.
func (a *App) newRunner(c config.Config) (*agent.Runner, error) {
	adapter, err := newAdapter(c)
	if err != nil {
		return nil, err
	}
	if a.metrics != nil {
		adapter = a.metrics.Adapter(adapter)
	}
	log := a.log
	if a.recordID != "" {
		log = log.With("session", a.recordID)
	}
	if (c.Elements == "text" || c.Elements == "both") && adapter.Name() != llm.AdapterGeneric {
		log.Warn("the model's adapter has no place for the elements' outline: only the generic JSON adapter shows it (marks still go on the screenshot)",
			"setting", config.Var("Elements"), "adapter", adapter.Name())
	}
	mem, err := newMemoryModel(c)
	if err != nil {
		return nil, fmt.Errorf("memory model: %w", err)
	}
	ground, err := newGrounder(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.Var("GroundingModel"), err)
	}
	o := agent.Options{
		Input: a.input, Executor: a.exec, Screen: a.screen, Shots: a.shots, Shot: shotOptions(c), Adapter: adapter,
		Grounder: ground, Policy: a.keys, Confirm: a.keys, Questions: a.questions, AskTimeout: c.AskTimeout,
		MaxSteps: c.MaxSteps, Timeout: c.TaskTimeout, TokenBudget: c.TokenBudget, StepDelay: c.StepDelay,
		KeepImages: c.KeepImages, OnBusy: c.OnBusy, DisableHumanOverride: !c.HumanOverride, Logger: log,
		Elements: agent.ElementsMode(c.Elements),
		NewRecorder: func(runID string, t agent.Task) (agent.Recorder, error) {
			// Begin records c redacted and scrubs the credentials it holds
			// from the whole run record, a key set at run time included.
			if a.recordID != "" { // a fleet session's: shown to that session only
				return a.store.BeginOwned(trace.KindTask, a.recordID, runID, t.Task, c)
			}
			return a.store.Begin(runID, t.Task, c)
		},
	}
	if mem != nil {
		o.MemoryModel = mem
	}
	if a.kill != nil {
		o.KillSwitch = a.kill
	}
	r, err := agent.New(o)
	if err != nil {
		return nil, err
	}
	if a.metrics != nil {
		r.AddObserver(a.metrics.Observer())
	}
	return r, nil
}

// Config returns the configuration in force (settings changes included).
func (a *App) Config() config.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// Logger is the App's logger (secrets scrubbed).
func (a *App) Logger() *slog.Logger { return a.log }

// Screen is the desktop backend.
func (a *App) Screen() desktop.Screen { return a.screen }

// Input is the serialized input layer with its ledger and kill switch gate.
func (a *App) Input() *desktop.Input { return a.input }

// Exec is the action executor every front end performs input through.
func (a *App) Exec() *operate.Executor { return a.exec }

// Shots is the screenshot pipeline.
func (a *App) Shots() *imaging.Pipeline { return a.shots }

// Audit is the audit log of every input call (MCP tools and Go calls).
func (a *App) Audit() *safety.Audit { return a.audit }

// Keys is the hotkey policy.
func (a *App) Keys() *safety.KeyPolicy { return a.keys }

// MCP is the MCP server.
func (a *App) MCP() *mcpserver.Server { return a.server }

// Backend is the name of the backend driving the desktop (x11, wayland,
// portal, vnc, windows, darwin).
func (a *App) Backend() string { return a.screen.Name() }

// DisplayName names the desktop driven as its session does (":99" for a
// private X display, "wayland-1", a VNC address), "" on Windows and macOS.
func (a *App) DisplayName() string { return a.screen.DisplayName() }

// Scrubber is the one secrets scrubber of every writer of the App (for a
// caller that writes records of its own, such as eval's trajectories).
func (a *App) Scrubber() *secret.Scrubber { return a.scrub }

// Token is the HTTP bearer token: GUI_AGENT_HTTP_TOKEN, else one generated at New.
func (a *App) Token() string { return a.token }

// HasModel reports whether gui_execute_task has a model now.
func (a *App) HasModel() bool { return a.tasks.configured() }

// RunTask runs t on the current task runner (the settings in force), or fails
// it with ErrNoModel when no model is configured.
func (a *App) RunTask(ctx context.Context, t agent.Task, progress func(agent.Event)) agent.Result {
	return a.tasks.Run(ctx, t, progress)
}

// Close releases held input, stops the desktop (a private display too),
// flushes the run store and closes the log, newest first. It is safe to call
// twice and after a partial New.
func (a *App) Close() error {
	var errs []error
	if a.tasks != nil {
		a.tasks.cancel("guiagent is closing")
	}
	if a.exec != nil {
		a.exec.Close()
	}
	if a.input != nil {
		errs = append(errs, a.input.ReleaseAll())
	}
	for i := len(a.closes) - 1; i >= 0; i-- {
		errs = append(errs, a.closes[i]())
	}
	a.closes = nil
	return errors.Join(errs...)
}

// ServeStdio serves MCP over stdin and stdout until the client leaves or ctx ends.
func (a *App) ServeStdio(ctx context.Context) error { return a.server.ServeStdio(ctx) }

// HTTPOptions are the listener options the configuration gives, with the
// dashboard (and the settings API) mounted at "/".
func (a *App) HTTPOptions() hosting.HTTPOptions {
	c := a.Config()
	return hosting.HTTPOptions{Addr: c.HTTPAddr, Token: a.token, AllowRemote: c.AllowRemote, Dashboard: a.Dashboard(),
		Metrics: a.metrics.Handler(), MetricsPublic: c.MetricsPublic}
}

// Handler is the HTTP handler: /mcp, the dashboard and the settings API.
// Building it serves nothing: the dashboard counts as served (a place where
// questions can be answered) from the first request the handler gets.
func (a *App) Handler() (http.Handler, error) {
	h, err := a.server.NewHTTPHandler(a.HTTPOptions())
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { a.questions.SetDashboard(true) })
		h.ServeHTTP(w, r)
	}), nil
}

// ListenAndServe serves HTTP on the configured address until ctx ends;
// onListen gets the bound address first, and an error from it stops the server.
func (a *App) ListenAndServe(ctx context.Context, onListen func(net.Addr) error) error {
	o := a.HTTPOptions()
	o.OnListen = a.listening(onListen)
	return a.server.ListenAndServe(ctx, o)
}

// newLogger writes to the configured file or w, never stdout, through scrub.
func newLogger(c config.Config, w io.Writer, scrub *secret.Scrubber) (*slog.Logger, func(), error) {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	closeFn := func() {}
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("open log file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	w = scrub.Writer(w) // a key a log line carries shows as secret.Marker, one set later too
	ho := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		// One vocabulary for log processors: the task run is run_id, the MCP
		// session session_id, whichever package logged the line.
		ho.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 {
				switch a.Key {
				case "run":
					a.Key = "run_id"
				case "session":
					a.Key = "session_id"
				}
			}
			return a
		}
		return slog.New(slog.NewJSONHandler(w, ho)), closeFn, nil
	}
	return slog.New(slog.NewTextHandler(w, ho)), closeFn, nil
}

// setVision offers the vision tools for c's model, or withdraws them when c
// has none (the settings API changed the model).
func (a *App) setVision(c config.Config) {
	vm, err := newVision(c)
	if err != nil {
		if modelConfigured(c) {
			a.log.Warn("the vision tools (gui_locate, gui_query, gui_assert, gui_wait_for, target) are off", "why", err)
		}
		a.server.SetVision(nil, geom.Profile{}, geom.Profile{})
		return
	}
	a.server.SetVision(vm.seer, vm.seer.AskProfile(), vm.seer.LocateProfile())
}

// askDialog asks a person what a page's dialog gets
// (GUI_AGENT_BROWSER_DIALOGS=ask): the user of the MCP client whose input
// call raised it (elicitation) and the dashboard at once; with nobody to
// ask, the dialog is dismissed at once (an error here dismisses it).
func (a *App) askDialog(ctx context.Context, kind, message string) (bool, string, error) {
	var chs []ask.Channel // the user of the MCP client whose call raised the dialog
	if a.server != nil {
		if ch := a.server.ActiveAskChannel(); ch != nil {
			chs = append(chs, ch)
		}
	}
	if len(chs) == 0 && (a.questions == nil || !a.questions.Dashboard()) {
		return false, "", errors.New("nobody to ask: no MCP client that can be asked, and the dashboard is not served")
	}
	q := ask.Question{Text: fmt.Sprintf("The page shows a %s dialog: %q. Accept it?", kind, message), Kind: action.AskConfirm}
	if kind == "prompt" {
		q = ask.Question{Text: fmt.Sprintf("The page asks (prompt dialog): %q. Your answer (cancel dismisses it):", message), Kind: action.AskText}
	}
	ans, err := ask.Ask(ctx, a.questions, q, chs...)
	if err != nil {
		return false, "", err
	}
	if kind == "prompt" {
		return ans.Outcome == ask.Accept, ans.Value, nil
	}
	return ans.Approved(), "", nil
}
