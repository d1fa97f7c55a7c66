// Command guiagent is an MCP server for computer use: atomic desktop tools and a
// vision agent loop (gui_execute_task). Nothing but JSON-RPC is written to
// stdout in stdio mode; logs go to stderr or a file.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/secret"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `guiagent: an MCP server that lets AI agents see and operate a desktop.

Usage:
  guiagent [serve] [flags]      serve MCP over stdio (default)
  guiagent serve --http [flags] serve MCP over Streamable HTTP on 127.0.0.1:60008 (/mcp) + dashboard (/)
  guiagent demo [flags]         run a task on a sample app in a private virtual desktop (offline)
  guiagent doctor               check display, input, clipboard and model configuration
  guiagent release [--display :N]  release keys and buttons a killed guiagent left held
  guiagent bench capture [--size WxH] [--max-long-edge N] [--format jpeg|png] [-n N]
  guiagent runs                 list recorded task runs
  guiagent report ID            print the path of a run's HTML report
  guiagent version

Serve flags: --http --addr HOST:PORT --allow-remote --display :N --virtual-display WxH
             --log-level LEVEL --log-file PATH --runs-dir DIR --provider P --model M
Configuration also comes from GUI_AGENT_* environment variables (see README).
`

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches a subcommand and returns the process exit code.
func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := "serve"
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-') {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = cmdServe(ctx, args, getenv, stdin, stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args, getenv, stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, args, getenv, stdout)
	case "release":
		err = cmdRelease(ctx, args, getenv, stdout, stderr)
	case "bench":
		err = cmdBench(ctx, args, getenv, stdout, stderr)
	case "runs":
		err = cmdRuns(args, getenv, stdout)
	case "report":
		err = cmdReport(args, getenv, stdout)
	case "sample-app":
		err = cmdSampleApp(ctx, args, getenv, stdout)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "guiagent", version)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "guiagent: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "guiagent:", err)
		return 1
	}
	return 0
}

// newLogger writes to the configured file or stderr, never stdout.
func newLogger(c config.Config, stderr io.Writer) (*slog.Logger, func(), error) {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel))
	w, closeFn := stderr, func() {}
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("open log file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	w = secret.NewScrubber(c.Secrets()...).Writer(w) // a key a log line carries shows as secret.Marker
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), closeFn, nil
}
