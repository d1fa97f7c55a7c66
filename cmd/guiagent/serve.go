package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
)

// app is everything a running guiagent holds, built from one Config.
type app struct {
	cfg    config.Config
	log    *slog.Logger
	screen desktop.Screen
	input  *desktop.Input
	shots  *imaging.Pipeline
	kill   *safety.KillSwitch
	keys   *safety.KeyPolicy
	audit  *safety.Audit
	store  *trace.Store
	runner *agent.Runner // nil when no model is configured
	server *mcpserver.Server
	closes []func() error
}

// newApp opens the log (c.LogFile, else stderr) and the desktop and builds
// every part. Close releases what it opened, also after a partial start.
func newApp(ctx context.Context, c config.Config, stderr io.Writer) (*app, error) {
	log, closeLog, err := newLogger(c, stderr)
	if err != nil {
		return nil, err
	}
	a := &app{cfg: c, log: log, closes: []func() error{func() error { closeLog(); return nil }}}
	screen, closeScreen, err := platform.Open(ctx, platform.Options{Display: c.XDisplay, XAuthority: c.XAuthority, VirtualDisplay: c.VirtualDisplay, VNC: c.VNC, VNCPassword: c.VNCPassword})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.screen = screen
	a.closes = append(a.closes, closeScreen)
	if a.keys, err = safety.NewKeyPolicy(safety.KeyPolicyOptions{Blocked: c.BlockedHotkeys, Allowed: c.AllowedHotkeys}); err != nil {
		a.Close()
		return nil, fmt.Errorf("GUI_AGENT_BLOCKED_HOTKEYS/GUI_AGENT_ALLOWED_HOTKEYS: %w", err)
	}
	a.input = desktop.NewInput(screen)
	if err := a.attachLedger(ctx); err != nil {
		a.Close()
		return nil, err
	}
	if c.KillSwitchFile != "" {
		a.kill = safety.NewKillSwitch(c.KillSwitchFile)
		a.input.Gate = a.kill.Gate
	}
	a.audit = safety.NewAudit(safety.DefaultAuditSize, c.Secrets()...)
	a.shots = imaging.NewPipeline()
	so := trace.DefaultOptions()
	so.Dir, so.DebugImages, so.Secrets, so.Logger = c.RunsDir, c.DebugImages, c.Secrets(), log
	so.MaxRuns, so.MaxBytes = c.RunsKeep, int64(c.RunsMaxMB)<<20
	a.store = trace.NewStore(so)
	a.closes = append(a.closes, a.store.Close)
	shot := imaging.Options{MaxLongEdge: c.MaxLongEdge, Format: c.ImageFormat, Quality: c.JPEGQuality, MaxBytes: c.MaxImageBytes}

	var tasks mcpserver.TaskRunner // nil: gui_execute_task is not offered
	if modelConfigured(c) {
		r, err := a.newRunner(shot)
		if err != nil {
			a.Close()
			return nil, err
		}
		a.runner, tasks = r, r
	}
	opts := mcpserver.Options{
		Tools:  toolSelection(c),
		Screen: screen, Input: a.input, Shots: a.shots, Shot: shot,
		CoordinateMode: c.CoordinateMode, DefaultDisplay: c.DisplayIndex,
		ScreenshotAfterAction: c.ScreenshotAfterAction,
		Keys:                  a.keys, KillSwitch: a.kill, Audit: a.audit, Tasks: tasks, Secrets: c.Secrets(),
		Records: func(id string) mcpserver.ToolRecorder { return a.store.Session(id) },
		Runs:    a.store,
		Name:    "guiagent", Version: version, Logger: log,
	}
	if a.runner != nil {
		opts.CurrentTask = func() any {
			if info, ok := a.runner.Current(); ok {
				return info
			}
			return nil
		}
	}
	if a.server, err = mcpserver.New(opts); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *app) newRunner(shot imaging.Options) (*agent.Runner, error) {
	c := a.cfg
	adapter, err := newAdapter(c)
	if err != nil {
		return nil, err
	}
	mem, err := newMemoryModel(c)
	if err != nil {
		return nil, fmt.Errorf("memory model: %w", err)
	}
	ground, err := newGrounder(c)
	if err != nil {
		return nil, fmt.Errorf("GUI_AGENT_GROUNDING_MODEL: %w", err)
	}
	o := agent.Options{
		Input: a.input, Screen: a.screen, Shots: a.shots, Shot: shot, Adapter: adapter,
		Grounder: ground, Policy: a.keys,
		MaxSteps: c.MaxSteps, Timeout: c.TaskTimeout, TokenBudget: c.TokenBudget, StepDelay: c.StepDelay,
		KeepImages: c.KeepImages, OnBusy: c.OnBusy, DisableHumanOverride: !c.HumanOverride, Logger: a.log,
		NewRecorder: func(runID string, t agent.Task) (agent.Recorder, error) {
			return a.store.Begin(runID, t.Task, c.Redacted())
		},
	}
	if mem != nil {
		o.MemoryModel = mem
	}
	if a.kill != nil {
		o.KillSwitch = a.kill
	}
	return agent.New(o)
}

// Close releases everything newApp opened, newest first; held input is released.
func (a *app) Close() error {
	var errs []error
	if a.input != nil {
		errs = append(errs, a.input.ReleaseAll())
	}
	for i := len(a.closes) - 1; i >= 0; i-- {
		errs = append(errs, a.closes[i]())
	}
	a.closes = nil
	return errors.Join(errs...)
}

// cmdServe serves MCP over stdio (default) or Streamable HTTP (--http).
func cmdServe(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, _, stderr io.Writer) error {
	c, rest, err := config.Load("serve", args, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("serve: unexpected argument %q (run 'guiagent help')", rest[0])
	}
	a, err := newApp(ctx, c, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	a.logDesktop(ctx)
	a.log.Info("tools offered", "tools", strings.Join(a.server.ToolNames(), ","))
	if a.runner == nil {
		a.log.Info("gui_execute_task is not offered: no model is configured; the atomic tools work", "fix", "set GUI_AGENT_PROVIDER, GUI_AGENT_MODEL, GUI_AGENT_API_KEY")
	}
	if !c.HTTP {
		return a.server.ServeStdio(ctx)
	}
	return a.serveHTTP(ctx, stderr)
}

func (a *app) serveHTTP(ctx context.Context, stderr io.Writer) error {
	c := a.cfg
	token, generated := c.HTTPToken, false
	if token == "" {
		var err error
		if token, err = mcpserver.GenerateToken(); err != nil {
			return err
		}
		generated = true
	}
	ho := mcpserver.HTTPOptions{Addr: c.HTTPAddr, Token: token, AllowRemote: c.AllowRemote}
	var announce func(net.Addr)
	ho.Dashboard, announce = a.dashboard(token, stderr)
	ho.OnListen = func(addr net.Addr) error {
		if generated {
			if err := publishToken(tokenFile(c), token, stderr); err != nil {
				return err
			}
		}
		announce(addr)
		return nil
	}
	return a.server.ListenAndServe(ctx, ho)
}

// tokenFile is where serve --http writes a generated bearer token: the file
// http-token beside the runs folder (by default
// $XDG_STATE_HOME/guiagent/http-token).
func tokenFile(c config.Config) string { return filepath.Join(filepath.Dir(c.RunsDir), "http-token") }

// publishToken writes a generated token to path (mode 0600) and shows it on
// the terminal (stderr), never in logs. serve calls it only once the listener
// is bound, so a second serve on a busy port leaves a running server's token
// file alone.
func publishToken(path, token string, stderr io.Writer) error {
	if err := mcpserver.WriteTokenFile(path, token); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	fmt.Fprintf(stderr, "guiagent: generated HTTP bearer token (also in %s, mode 0600):\n  %s\n", path, token)
	return nil
}
