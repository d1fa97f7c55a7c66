package mcpserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
)

// NewHTTPHandler returns the HTTP handler: Streamable HTTP MCP at /mcp behind a
// bearer token (401 when missing or wrong), and the optional dashboard at /.
// Every request first passes the Host allowlist (DNS rebinding: 403) and the
// cross-origin check (403), then the body limit (413) (internal/hosting).
func (s *Server) NewHTTPHandler(o hosting.HTTPOptions) (http.Handler, error) {
	o = o.WithDefaults()
	if o.Token == "" {
		return nil, hosting.ErrNoToken
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              s.log.With("component", "mcp-http"),
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxBodyBytes,
	})
	g := hosting.Guard{Log: s.log}
	return g.Wrap(o, g.RequireToken(o.Token, g.CapSessions(o, s.SessionCount, s.CancelWhenClientGone(mcpHandler))), s.Ready)
}

// ListenAndServe serves HTTP on o.Addr until ctx is done, then shuts down
// (waiting up to hosting.ShutdownGrace for calls in flight) and releases held
// input. Without AllowRemote it refuses a non-loopback address.
func (s *Server) ListenAndServe(ctx context.Context, o hosting.HTTPOptions) error {
	o = o.WithDefaults()
	if err := hosting.CheckListenAddr(o); err != nil {
		return err
	}
	h, err := s.NewHTTPHandler(o)
	if err != nil {
		return err
	}
	defer s.releaseAll()
	return hosting.Guard{Log: s.log}.Serve(ctx, o, h)
}

// Ready reports whether the desktop answers: its displays are listed and a
// 1x1 pixel of the default display is captured.
func (s *Server) Ready(ctx context.Context) error {
	ds, err := s.screen.Displays(ctx)
	if err != nil {
		return fmt.Errorf("listing displays: %w", err)
	}
	d, err := geom.FindDisplay(ds, s.opts.DefaultDisplay)
	if err != nil {
		return err
	}
	if _, err := s.screen.Capture(ctx, geom.Rect{X: d.Bounds.X, Y: d.Bounds.Y, W: 1, H: 1}, nil); err != nil {
		return fmt.Errorf("capturing display %s: %w", d.ID, err)
	}
	return nil
}

// SessionCount returns the number of open MCP sessions.
func (s *Server) SessionCount() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}
