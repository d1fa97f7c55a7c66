package testenv

import (
	"bufio"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// DBusDaemon starts a dbus-daemon of the test's own with args (beside
// --nofork, --print-address=1 and --nopidfile) in env (nil: this
// process's) and returns the address it prints. It stops when the test
// ends, and dies with the test binary.
func DBusDaemon(t testing.TB, env []string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatal("dbus-daemon is not installed: apt-get install dbus-daemon (scripts/debian-packages.sh install ci)")
	}
	cmd := exec.Command(bin, slices.Concat(args, []string{"--nofork", "--print-address=1", "--nopidfile"})...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &Buffer{}
	cmd.Stderr = stderr
	DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			t.Fatalf("dbus-daemon printed no address: %s", stderr)
		}
		return addr
	case <-time.After(10 * time.Second):
		t.Fatalf("dbus-daemon did not print its address within 10 s: %s", stderr)
	}
	return ""
}
