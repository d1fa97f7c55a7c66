package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
)

// cmdServe serves MCP over stdio (default) or Streamable HTTP (--http), on
// the public package: what a Go host can do, the command does the same way.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, _ io.Reader, _, stderr io.Writer) error {
	o, rest, err := guiagent.LoadOptions(args, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("serve: unexpected argument %q (run 'guiagent help')", rest[0])
	}
	o.Log = stderr
	if c, _, err := config.Load("serve", args, getenv); err == nil && c.DesktopPerSession != (geom.Size{}) {
		return serveFleet(ctx, c, stderr)
	}
	a, err := guiagent.New(ctx, o)
	if err != nil {
		return err
	}
	begin, disarm := limitShutdown(ctx, a.ReleaseInput, stderr)
	defer disarm()
	defer a.Close()
	defer begin() // serving has ended: from here shutdown is bounded
	if !o.HTTP {
		return a.ServeStdio(ctx)
	}
	return a.ListenAndServe(ctx, func(e guiagent.Endpoint) error {
		if o.HTTPToken == "" {
			if err := publishToken(tokenFile(o), a.HTTPToken(), stderr); err != nil {
				return err
			}
		}
		fmt.Fprintf(stderr, "guiagent: MCP endpoint %s\nguiagent: dashboard (one-time login link): %s\n"+
			"guiagent: once that link is used, sign in at %s/login with the bearer token, or make a new link from the dashboard\n",
			e.MCPURL, e.LoginURL, strings.TrimSuffix(e.MCPURL, "/mcp"))
		return nil
	})
}

// serveFleet serves MCP over HTTP with a private desktop per session
// (--desktop-per-session); the public package has one desktop per Agent.
func serveFleet(ctx context.Context, c config.Config, stderr io.Writer) error {
	a, err := app.NewFleet(c, app.Extra{Log: stderr, Version: guiagent.Version})
	if err != nil {
		return err
	}
	defer a.Close()
	return a.ListenAndServeFleet(ctx, func(addr net.Addr) error {
		if c.HTTPToken == "" {
			if err := publishToken(filepath.Join(filepath.Dir(c.RunsDir), "http-token"), a.Token(), stderr); err != nil {
				return err
			}
		}
		mcpURL, login := a.LoginURL(addr)
		fmt.Fprintf(stderr, "guiagent: MCP endpoint %s\nguiagent: dashboard (one-time login link): %s\n", mcpURL, login)
		return nil
	})
}

// tokenFile is where serve --http writes a generated bearer token: the file
// http-token beside the runs folder (by default
// $XDG_STATE_HOME/guiagent/http-token).
func tokenFile(o guiagent.Options) string {
	return filepath.Join(filepath.Dir(o.RunsDir), "http-token")
}

// publishToken writes a generated token to path (mode 0600) and shows it on
// the terminal (stderr), never in logs. serve calls it only once the listener
// is bound, so a second serve on a busy port leaves a running server's token
// file alone.
func publishToken(path, token string, stderr io.Writer) error {
	if err := hosting.WriteTokenFile(path, token); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	fmt.Fprintf(stderr, "guiagent: generated HTTP bearer token (also in %s, mode 0600):\n  %s\n", path, token)
	return nil
}
