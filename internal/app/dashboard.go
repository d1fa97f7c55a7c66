package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync/atomic"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/web"
)

// Dashboard is the live dashboard (with the settings API) served at "/"
// beside /mcp, built once.
func (a *App) Dashboard() *web.Dashboard {
	a.dashOnce.Do(func() {
		if a.fleet != nil {
			a.dash = a.fleetDashboard()
			return
		}
		a.dash = web.New(web.Options{
			Token:     a.token,
			Screen:    a.liveScreen,
			Subscribe: a.subscribe,
			Current:   a.currentTask,
			Stop: func() error {
				if !a.tasks.cancel("stopped from the dashboard") {
					return errors.New("no task is running")
				}
				return nil
			},
			Audit:     func() any { return a.audit.Snapshot() },
			Runs:      a.store,
			Settings:  a.settingsHandler(),
			Questions: a.questions,
			Logger:    a.log,
			Scrubber:  a.scrub,
		})
	})
	return a.dash
}

// fleetDashboard is the dashboard of a desktop-per-session server: the live
// desktops, each with its screen; Stop cancels the tasks of all of them.
func (a *App) fleetDashboard() *web.Dashboard {
	return web.New(web.Options{
		Token:         a.token,
		Desktops:      func() any { return a.fleet.Desktops() },
		DesktopScreen: a.sessionScreen,
		Stop:          a.stopAllTasks,
		Audit:         func() any { return a.audit.Snapshot() },
		Runs:          a.store,
		Questions:     a.questions,
		Logger:        a.log,
		Scrubber:      a.scrub,
	})
}

// dashLink mints one-time dashboard links once the listener is known; the
// desktops of a fleet share their server's.
type dashLink struct{ mint atomic.Pointer[func() string] }

// url is a fresh one-time link, or "" before the dashboard listens.
func (l *dashLink) url() string {
	if f := l.mint.Load(); f != nil {
		return (*f)()
	}
	return ""
}

// listening wraps a listener callback: it first records the listener's
// address, so questions can link to the dashboard.
func (a *App) listening(onListen func(net.Addr) error) func(net.Addr) error {
	return func(addr net.Addr) error {
		f := func() string { _, login := a.LoginURL(addr); return login }
		a.link.mint.Store(&f)
		a.questions.SetDashboard(true) // listening: the dashboard answers questions
		if onListen != nil {
			return onListen(addr)
		}
		return nil
	}
}

// LoginURL mints a one-time dashboard login link for the listener at addr
// (a wildcard address becomes 127.0.0.1).
func (a *App) LoginURL(addr net.Addr) (mcpURL, login string) {
	host := addr.String()
	if strings.HasPrefix(host, "[::]") || strings.HasPrefix(host, "0.0.0.0") {
		_, port, _ := net.SplitHostPort(host)
		host = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + host + "/mcp", a.Dashboard().LoginURL("http://" + host)
}

// liveScreen is a JPEG of the default display with the pointer drawn,
// captured, drawn and encoded once by the imaging pipeline.
func (a *App) liveScreen(ctx context.Context) ([]byte, error) {
	ds, err := a.screen.Displays(ctx)
	if err != nil {
		return nil, err
	}
	d, err := geom.FindDisplay(ds, a.Config().DisplayIndex)
	if err != nil {
		return nil, err
	}
	o := imaging.Options{MaxLongEdge: 1280, Quality: 60}
	if cur, err := a.input.CursorPosition(ctx); err == nil {
		o.Pointer = &cur
	}
	shot, err := a.shots.Shoot(ctx, a.screen, d, geom.Rect{}, o, "live")
	if err != nil {
		return nil, err
	}
	return shot.Data, nil
}

// subscribe streams copies of every run's events to the dashboard. Slow
// readers lose events rather than slow the run.
func (a *App) subscribe() (<-chan agent.Event, func()) {
	ch := make(chan agent.Event, 256)
	remove := a.tasks.AddObserver(agent.ObserverFunc(func(ev agent.Event) {
		select {
		case ch <- scrubEvent(a.scrub, detach(ev)):
		default:
		}
	}))
	return ch, remove
}

// detach copies what ev points to, since observers may not keep the run's values.
func detach(ev agent.Event) agent.Event {
	ev.Image = nil
	if ev.Decision != nil {
		d := *ev.Decision
		d.Request, d.Response = nil, nil
		ev.Decision = &d
	}
	if ev.Action != nil {
		x := *ev.Action
		ev.Action = &x
	}
	if ev.StepDone != nil {
		s := *ev.StepDone
		ev.StepDone = &s
	}
	if ev.Result != nil {
		r := *ev.Result
		ev.Result = &r
	}
	return ev
}

// scrubEvent replaces the secrets s knows (a key PUT to the settings API
// included) in every string of ev, which the dashboard sends as JSON. An event
// that cannot be rebuilt is withheld.
func scrubEvent(s *secret.Scrubber, ev agent.Event) agent.Event {
	if s.Empty() {
		return ev
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return agent.Event{Time: ev.Time, RunID: ev.RunID, Kind: agent.EvWarning, Message: "event withheld: it could not be checked for secrets"}
	}
	clean := s.Bytes(b)
	if bytes.Equal(clean, b) {
		return ev
	}
	var out agent.Event
	if err := json.Unmarshal(clean, &out); err != nil {
		return agent.Event{Time: ev.Time, RunID: ev.RunID, Kind: agent.EvWarning, Message: "event withheld: it held a secret"}
	}
	return out
}
