// Package guiagent lets a Go program see and operate a desktop: take
// screenshots, click, type and press keys at points of a screenshot, hand a
// whole goal to guiagent's vision agent (Execute), or serve all of it to AI
// agents over the Model Context Protocol (MCPServer, Handler).
//
// An Agent drives one desktop: the X display of the session, a private
// virtual display it starts (Options.VirtualDisplay), or a remote one over
// VNC. Input from every caller (Go methods, MCP tools, tasks) goes through one
// serialized layer that never leaves a key or button held, obeys the hotkey
// policy and the kill switch, and is released by Close.
//
// Points carry their space: Screenshot.Point gives a point in the pixels of
// that screenshot's image, ScreenPoint one in screen pixels (logical pixels of
// the virtual desktop, origin at the primary display's top-left).
//
// The settings a host application's settings screen changes (the vision
// model and the display) are served by Handler at /api/settings and
// /api/displays with the same authentication as /mcp; a change applies to the
// next task without a restart.
package guiagent

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
)

// Version is guiagent's version, as MCP clients and `guiagent version` see it;
// release builds set it with -ldflags "-X github.com/guiagent/guiagent.Version=...".
var Version = "0.1.0-dev"

// Agent is a running guiagent: one desktop, its input, the task runner, the
// MCP server and the HTTP API. Its methods are safe for concurrent use; input
// from concurrent calls never interleaves.
type Agent struct {
	app     *app.App
	handler http.Handler
}

// New opens the desktop o describes (starting a private virtual display when
// asked) and builds the agent. It fails fast, naming the option at fault and
// what it accepts. Close releases everything, also after ctx ends.
func New(ctx context.Context, o Options) (*Agent, error) {
	c, err := o.config()
	if err != nil {
		return nil, err
	}
	a, err := app.New(ctx, c, app.Extra{Log: o.Log, Version: Version, ForceVirtual: o.AlwaysVirtualDisplay})
	if err != nil {
		return nil, err
	}
	h, err := a.Handler()
	if err != nil {
		a.Close()
		return nil, err
	}
	return &Agent{app: a, handler: h}, nil
}

// Close stops a running task, releases held keys and buttons, stops a private
// display, and flushes run records and logs. It is safe to call more than once.
func (a *Agent) Close() error { return a.app.Close() }

// ReleaseInput releases every key and button the agent holds (after
// MouseDown, or a hold the MCP tools made). It is safe to call at any time,
// also while a call runs; a shutting-down host calls it first.
func (a *Agent) ReleaseInput() error { return a.app.Input().ReleaseAll() }

// MCPServer is the MCP server with guiagent's tools and resources, to serve
// on the host's own transport (mcp.Server.Connect or Run). Settings are not
// among its tools: a calling model cannot reconfigure its supervisor.
func (a *Agent) MCPServer() *mcp.Server { return a.app.MCP().MCP() }

// Handler serves Streamable HTTP MCP at /mcp, the dashboard at / and the
// settings API at /api/settings and /api/displays, all behind the bearer
// token HTTPToken returns (the dashboard also accepts its login link's
// cookie), refusing non-loopback Host headers unless Options.AllowRemote.
func (a *Agent) Handler() http.Handler { return a.handler }

// HTTPToken is the bearer token Handler and ListenAndServe require:
// Options.HTTPToken, or the one New generated.
func (a *Agent) HTTPToken() string { return a.app.Token() }

// Endpoint says where ListenAndServe listens.
type Endpoint struct {
	// Addr is the bound address (useful with port 0).
	Addr net.Addr
	// MCPURL is the Streamable HTTP endpoint.
	MCPURL string
	// LoginURL opens the dashboard once without the token.
	LoginURL string
}

// ListenAndServe serves Handler on Options.HTTPAddr until ctx ends, then shuts
// down; onListen, when not nil, is called once it listens (before it serves),
// and an error from it stops the server with that error.
func (a *Agent) ListenAndServe(ctx context.Context, onListen func(Endpoint) error) error {
	return a.app.ListenAndServe(ctx, func(addr net.Addr) error {
		if onListen == nil {
			return nil
		}
		mcpURL, login := a.app.LoginURL(addr)
		return onListen(Endpoint{Addr: addr, MCPURL: mcpURL, LoginURL: login})
	})
}

// ServeStdio serves MCP over the process's stdin and stdout until the client
// disconnects or ctx ends. Nothing but JSON-RPC is written to stdout.
func (a *Agent) ServeStdio(ctx context.Context) error { return a.app.ServeStdio(ctx) }

// Backend names the desktop backend the agent drives through: "x11",
// "wayland", "portal", "vnc", "windows" or "darwin" (Options.Backend, or the
// one the session called for).
func (a *Agent) Backend() string { return a.app.Backend() }

// DisplayName names the desktop the agent drives as its session does: an X
// display such as ":99" for a private one it started (start the application
// to operate with DISPLAY set to it), a Wayland socket such as "wayland-1"
// (WAYLAND_DISPLAY), a VNC server's address; "" on Windows and macOS.
func (a *Agent) DisplayName() string { return a.app.DisplayName() }

// XDisplay is the X display the agent drives, or "" when the backend is not
// x11.
//
// Deprecated: use DisplayName, with Backend to tell what kind it is.
func (a *Agent) XDisplay() string {
	if a.Backend() != "x11" {
		return ""
	}
	return a.DisplayName()
}

// HasModel reports whether Execute (and gui_execute_task) has a model now.
func (a *Agent) HasModel() bool { return a.app.HasModel() }

// ErrNoModel is returned by Execute when no model is configured.
var ErrNoModel = errors.New("guiagent: no model is configured: set Options.Provider, Model and APIKey (or BaseURL for a local server), " +
	config.Vars("Provider", "Model", "APIKey") + " for LoadOptions, or PUT them to /api/settings")
