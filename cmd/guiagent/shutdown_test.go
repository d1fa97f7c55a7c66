package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// stuckEnv makes the re-executed test binary a server stuck in a call that
// ignores its context, holding Shift and the left button, as serve would
// during mouse_down and hold_key.
const stuckEnv = "GUIAGENT_TEST_STUCK"

// stuckServer holds input through a ledgered Input with serve's shutdown
// limit armed on SIGTERM, then blocks forever like a call that ignores its
// context (a drawing loop of 1e15 steps once did).
func stuckServer(stateDir, display string) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	holdAndBlock(ctx, stateDir, display, func(in *desktop.Input) func() {
		_, disarm := limitShutdown(ctx, in.ReleaseAll, os.Stderr)
		return disarm
	})
}

// SIGTERM to a server stuck in a call that ignores its context releases the
// held input at once and ends the process within the hard limit.
func TestSIGTERMEndsAStuckServerWithInputReleased(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	c, err := xgb.NewConnDisplay(vd.Display)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stuckEnv+"="+t.TempDir()+"|"+vd.Display)
	var logs strings.Builder
	cmd.Stderr = &logs
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() { done <- cmd.Wait() }()
	if strings.TrimSpace(line) != "held" {
		cmd.Process.Kill()
		t.Fatalf("the stuck server did not hold input: %q", line)
	}
	if !held(t, c) {
		t.Fatal("nothing is held before SIGTERM; the test exercises nothing")
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	limit := hardStopAfter + 10*time.Second
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("the stuck server ended with %v, want exit code 1 from the hard limit", err)
		}
		t.Logf("exited %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("a server stuck in a call ignored SIGTERM for %s (it must exit within %s)", limit, hardStopAfter)
	}
	if held(t, c) {
		t.Error("after the stuck server exited, a key or button is still held")
	}
	if !strings.Contains(logs.String(), "shutdown did not finish in time") {
		t.Errorf("the server did not say why it exited:\n%s", logs.String())
	}
}

// TestHardLimitOutlastsHTTPGrace: serving over HTTP waits ShutdownGrace for
// open streams before closing them; the hard limit must leave room after it,
// or a client's open stream turns a clean stop into exit code 1.
func TestHardLimitOutlastsHTTPGrace(t *testing.T) {
	if hardStopAfter < hosting.ShutdownGrace+2*time.Second {
		t.Fatalf("hard shutdown limit %v leaves under 2 s after the HTTP grace of %v", hardStopAfter, hosting.ShutdownGrace)
	}
}
