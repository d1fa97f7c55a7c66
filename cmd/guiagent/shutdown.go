package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// hardStopAfter is how long shutdown may take, once it begins, before the
// process exits whatever is still running.
const hardStopAfter = 5 * time.Second

// exitProcess ends the process when shutdown overruns hardStopAfter.
var exitProcess = os.Exit

// limitShutdown bounds shutdown. Once ctx is done (SIGTERM, SIGINT) or begin
// is called (serving has ended), release is called at once to let go of held
// input; if the process is still running hardStopAfter later (a call that
// ignores its context, a close that blocks), it says so on w and exits with
// code 1. What could not be released then stays in the input ledger, for the
// next start (or `guiagent release`) to release. disarm ends the watch: call
// it as the command returns.
func limitShutdown(ctx context.Context, release func() error, w io.Writer) (begin, disarm func()) {
	started, disarmed := make(chan struct{}), make(chan struct{})
	var beginOnce, disarmOnce sync.Once
	begin = func() { beginOnce.Do(func() { close(started) }) }
	disarm = func() { disarmOnce.Do(func() { close(disarmed) }) }
	go func() {
		select {
		case <-ctx.Done():
		case <-started:
		case <-disarmed:
			return
		}
		released := make(chan struct{})
		go func() {
			defer close(released)
			if err := release(); err != nil {
				fmt.Fprintln(w, "guiagent: releasing held input at shutdown failed:", err)
			}
		}()
		select {
		case <-disarmed:
		case <-time.After(hardStopAfter):
			msg := "shutdown did not finish in time; exiting with work still running"
			select {
			case <-released:
			default:
				msg += " and held input not released (the next start releases it)"
			}
			fmt.Fprintf(w, "guiagent: %s (limit %s)\n", msg, hardStopAfter)
			exitProcess(1)
		}
	}()
	return begin, disarm
}
