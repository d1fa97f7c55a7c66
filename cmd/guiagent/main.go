// Command guiagent is an MCP server for computer use: atomic desktop tools and a
// vision agent loop (gui_execute_task). Nothing but JSON-RPC is written to
// stdout in stdio mode; logs go to stderr or a file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches a subcommand and returns the process exit code.
func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := "serve"
	switch {
	case len(args) > 0 && (args[0] == "--version" || args[0] == "-v"):
		cmd, args = "version", args[1:]
	case len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "-help"):
		cmd, args = "help", args[1:]
	case len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-'):
		cmd, args = args[0], args[1:]
	}
	if code, done := help(cmd, args, stdout, stderr); done {
		return code
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
		err = cmdRuns(args, getenv, stdout, stderr)
	case "report":
		err = cmdReport(args, getenv, stdout)
	case "run":
		err = cmdRun(ctx, args, getenv, stdout, stderr)
	case "eval":
		err = cmdEval(ctx, args, getenv, stdout, stderr)
	case "sample-app":
		err = cmdSampleApp(ctx, args, getenv, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "guiagent", versionString())
	}
	if err != nil {
		fmt.Fprintln(stderr, "guiagent:", err)
		return 1
	}
	return 0
}

// help answers `guiagent help [CMD]`, `CMD --help` and unknown commands;
// done reports whether it did (with the exit code).
func help(cmd string, args []string, stdout, stderr io.Writer) (code int, done bool) {
	if cmd == "help" && !wantsHelp(args) {
		if len(args) == 0 {
			printUsage(stdout)
			return 0, true
		}
		cmd, args = args[0], []string{"--help"}
	}
	c, ok := findCommand(cmd)
	if !ok {
		fmt.Fprintf(stderr, "guiagent: unknown command %q\n\n", cmd)
		printUsage(stderr)
		return 2, true
	}
	if wantsHelp(args) {
		printCommandHelp(stdout, c)
		return 0, true
	}
	return 0, false
}
