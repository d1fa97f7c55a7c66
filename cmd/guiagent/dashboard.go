package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/web"
)

// dashboard builds the live dashboard served at "/" beside /mcp and a listen
// callback that prints its one-time login link to the terminal.
func (a *app) dashboard(token string, stderr io.Writer) (http.Handler, func(net.Addr)) {
	d := web.New(web.Options{
		Token:     token,
		Screen:    a.liveScreen,
		Subscribe: a.subscribe,
		Current: func() any {
			if a.runner == nil {
				return nil
			}
			if info, ok := a.runner.Current(); ok {
				return info
			}
			return nil
		},
		Stop: func() error {
			if a.runner == nil || !a.runner.Cancel("stopped from the dashboard") {
				return errors.New("no task is running")
			}
			return nil
		},
		Audit:   func() any { return a.audit.Snapshot() },
		Runs:    a.store,
		Logger:  a.log,
		Secrets: a.cfg.Secrets(),
	})
	onListen := func(addr net.Addr) {
		host := addr.String()
		if strings.HasPrefix(host, "[::]") || strings.HasPrefix(host, "0.0.0.0") {
			_, port, _ := net.SplitHostPort(host)
			host = net.JoinHostPort("127.0.0.1", port)
		}
		fmt.Fprintf(stderr, "guiagent: MCP endpoint http://%s/mcp\nguiagent: dashboard (one-time login link): %s\n", host, d.LoginURL("http://"+host))
	}
	return d, onListen
}

// liveScreen is a JPEG of the default display with the pointer drawn,
// captured, drawn and encoded once by the imaging pipeline.
func (a *app) liveScreen(ctx context.Context) ([]byte, error) {
	ds, err := a.screen.Displays(ctx)
	if err != nil {
		return nil, err
	}
	d, err := geom.FindDisplay(ds, a.cfg.DisplayIndex)
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
func (a *app) subscribe() (<-chan agent.Event, func()) {
	ch := make(chan agent.Event, 256)
	if a.runner == nil {
		return ch, func() {}
	}
	remove := a.runner.AddObserver(agent.ObserverFunc(func(ev agent.Event) {
		select {
		case ch <- detach(ev):
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
