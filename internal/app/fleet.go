package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/fleet"
	"github.com/guiagent/guiagent/internal/platform"
)

// sessionDesktop is one MCP session's private desktop: an App of its own
// (screen, input, task gate, MCP server) sharing the fleet App's hotkey
// policy, kill switch, audit, pipeline, run store, metrics and log.
type sessionDesktop struct {
	*App
	display string
	// commandLog is the file the session command writes to ("" without one).
	commandLog string
}

// NewFleet builds an App that serves MCP over HTTP with a private Xvfb per
// session (c.DesktopPerSession); it opens no desktop of its own. Close ends
// every session and its desktop.
func NewFleet(c config.Config, x Extra) (*App, error) {
	a, err := newBase(c, x)
	if err != nil {
		return nil, err
	}
	if err := a.openShared(c); err != nil {
		a.Close()
		return nil, err
	}
	if c.Backend == string(platform.Browser) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		po := PlatformOptions(c)
		po.Browser.Ask = a.askDialog
		a.browser, err = platform.LaunchSharedBrowser(ctx, po)
		cancel()
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("the fleet's browser: %w", err)
		}
		a.closes = append(a.closes, a.browser.Close)
	}
	version := x.Version
	a.fleet, err = fleet.New(fleet.Options{
		Open: func(ctx context.Context, id, record string) (*fleet.Desktop, error) {
			return a.openSessionDesktop(ctx, id, record, x)
		},
		Max:    c.MaxDesktops,
		Logger: a.log,
	})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.closes = append(a.closes, func() error { a.fleet.Close(); return nil })
	a.log.Info("serving a private desktop per MCP session", "width", c.DesktopPerSession.W, "height", c.DesktopPerSession.H,
		"max_desktops", c.MaxDesktops, "session_command", c.SessionCommand != "", "version", version)
	if !modelConfigured(c) {
		a.log.Info("gui_execute_task is not offered: no model is configured; the atomic tools work", "fix", "set "+config.Vars("Provider", "Model", "APIKey"))
	}
	return a, nil
}

// ListenAndServeFleet serves a fleet App on the configured address until
// ctx ends, then ends every session and destroys its desktop.
func (a *App) ListenAndServeFleet(ctx context.Context, onListen func(net.Addr) error) error {
	o := a.HTTPOptions()
	o.OnListen = a.listening(onListen)
	return a.fleet.ListenAndServe(ctx, o)
}

// openSessionDesktop starts a private Xvfb for MCP session id (named record
// everywhere but in its server), the session command on it, and the App and
// server acting only on it. Everything it started is stopped again when it fails.
func (a *App) openSessionDesktop(ctx context.Context, id, record string, x Extra) (_ *fleet.Desktop, err error) {
	c := a.Config()
	sd := &sessionDesktop{App: &App{cfg: c, sources: c.Sources, scrub: a.scrub, log: a.log, keys: a.keys, kill: a.kill,
		audit: a.audit, shots: a.shots, store: a.store, metrics: a.metrics, token: a.token, sessionID: id, recordID: record,
		questions: a.questions, link: a.link}} // one broker and dashboard for every desktop's questions
	defer func() {
		if err != nil {
			_ = sd.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if a.browser != nil {
		return a.openSessionContext(ctx, sd, c, record, x)
	}
	vd, err := platform.StartXvfb(ctx, platform.XvfbOptions{Width: c.DesktopPerSession.W, Height: c.DesktopPerSession.H})
	if err != nil {
		return nil, fmt.Errorf("start the session's Xvfb: %w", err)
	}
	sd.display = vd.Display
	sd.closes = append(sd.closes, vd.Close)
	screen, closeScreen, err := platform.Open(ctx, privateX11Options(vd.Display))
	if err != nil {
		return nil, err
	}
	sd.screen = screen
	sd.closes = append(sd.closes, closeScreen)
	sd.input = desktop.NewInput(screen)
	if a.kill != nil {
		sd.input.Gate = a.kill.Gate // one kill switch stops every desktop
	}
	if c.SessionCommand != "" {
		stop, err := a.startSessionCommand(sd, record)
		if err != nil {
			return nil, err
		}
		sd.closes = append(sd.closes, stop)
	}
	if err := sd.openServer(c, x); err != nil {
		return nil, err
	}
	a.sessionDesktops.Store(record, sd)
	sd.closes = append(sd.closes, func() error { a.sessionDesktops.Delete(record); return nil })
	return &fleet.Desktop{Server: sd.server, Display: vd.Display, Size: vd.Size, Close: sd.Close}, nil
}

// openSessionContext gives the session a browser context of its own, with
// a viewport of --desktop-per-session's size, in the fleet's one browser.
func (a *App) openSessionContext(ctx context.Context, sd *sessionDesktop, c config.Config, record string, x Extra) (*fleet.Desktop, error) {
	screen, closeScreen, err := a.browser.Open(ctx, c.DesktopPerSession)
	if err != nil {
		return nil, fmt.Errorf("the session's browser context: %w", err)
	}
	sd.screen = screen
	sd.display = screen.DisplayName()
	sd.closes = append(sd.closes, closeScreen)
	sd.input = desktop.NewInput(screen)
	if a.kill != nil {
		sd.input.Gate = a.kill.Gate
	}
	if err := sd.openServer(c, x); err != nil {
		return nil, err
	}
	a.sessionDesktops.Store(record, sd)
	sd.closes = append(sd.closes, func() error { a.sessionDesktops.Delete(record); return nil })
	return &fleet.Desktop{Server: sd.server, Display: "browser context", Size: c.DesktopPerSession, Close: sd.Close}, nil
}

// startSessionCommand starts --session-command on sd's display; its output
// goes to desktops/<record id>/session-command.log beside the run records.
// The returned function stops it.
func (a *App) startSessionCommand(sd *sessionDesktop, id string) (func() error, error) {
	dir := filepath.Join(filepath.Dir(sd.cfg.RunsDir), "desktops", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session command log: %w", err)
	}
	sd.commandLog = filepath.Join(dir, "session-command.log")
	out, err := os.OpenFile(sd.commandLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session command log: %w", err)
	}
	cmd, err := platform.StartCommand(sd.display, sd.cfg.SessionCommand, &cappedWriter{w: out, left: maxSessionCommandLog})
	if err != nil {
		out.Close()
		return nil, err
	}
	a.log.Info("session command started", "session", id, "display", sd.display, "pid", cmd.Pid(), "log", sd.commandLog)
	return func() error { cmd.Stop(); return out.Close() }, nil
}

// maxSessionCommandLog caps one session command's log: a chatty application
// cannot fill the disk of a long-running fleet.
const maxSessionCommandLog = 16 << 20

// cappedWriter passes on at most left bytes, then one line saying so, and
// drops the rest (reporting success, so the command does not get EPIPE).
type cappedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	left int
	cut  bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left <= 0 {
		if !c.cut {
			c.cut = true
			_, _ = io.WriteString(c.w, "\n[guiagent: the session command's output exceeded 16 MiB; the rest is dropped]\n")
		}
		return len(p), nil
	}
	n := min(len(p), c.left)
	c.left -= n
	if _, err := c.w.Write(p[:n]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sessionScreen is the live screen of the desktop of the MCP session whose
// record id is id.
func (a *App) sessionScreen(ctx context.Context, id string) ([]byte, error) {
	v, ok := a.sessionDesktops.Load(id)
	if !ok {
		return nil, fmt.Errorf("no live desktop for session %q (it ended)", id)
	}
	return v.(*sessionDesktop).liveScreen(ctx)
}

// stopAllTasks cancels the running task of every per-session desktop.
func (a *App) stopAllTasks() error {
	n := 0
	a.sessionDesktops.Range(func(_, v any) bool {
		if t := v.(*sessionDesktop).tasks; t != nil && t.cancel("stopped from the dashboard") {
			n++
		}
		return true
	})
	if n == 0 {
		return errors.New("no task is running")
	}
	return nil
}

// sessionCount is the number of open MCP sessions (the metrics gauge).
func (a *App) sessionCount() int {
	if a.fleet != nil {
		return len(a.fleet.Desktops())
	}
	if a.server != nil {
		return a.server.SessionCount()
	}
	return 0
}

// desktopCount is the number of live desktops (the metrics gauge).
func (a *App) desktopCount() int {
	if a.fleet != nil {
		return len(a.fleet.Desktops())
	}
	if a.screen != nil {
		return 1
	}
	return 0
}
