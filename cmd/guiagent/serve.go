package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/mcpserver"
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
	a, err := guiagent.New(ctx, o)
	if err != nil {
		return err
	}
	defer a.Close()
	if !o.HTTP {
		return a.ServeStdio(ctx)
	}
	if o.HTTPToken == "" {
		path := filepath.Join(filepath.Dir(o.RunsDir), "http-token")
		if err := mcpserver.WriteTokenFile(path, a.HTTPToken()); err != nil {
			return fmt.Errorf("write token file: %w", err)
		}
		// The token goes to the terminal (stderr), never into logs.
		fmt.Fprintf(stderr, "guiagent: generated HTTP bearer token (also in %s, mode 0600):\n  %s\n", path, a.HTTPToken())
	}
	return a.ListenAndServe(ctx, func(e guiagent.Endpoint) {
		fmt.Fprintf(stderr, "guiagent: MCP endpoint %s\nguiagent: dashboard (one-time login link): %s\n", e.MCPURL, e.LoginURL)
	})
}
