package atspitest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
)

// TestAppDiesWithTheTest: a test binary that dies without running its
// cleanups (as on a -timeout panic) leaves neither its bus nor its
// applications behind. The child (this test run again) starts a bus with
// Bus and a program with Start, prints the pids of its children and exits
// at once.
func TestAppDiesWithTheTest(t *testing.T) {
	if os.Getenv("ATSPITEST_CHILD") == "1" {
		Start(t, ":0", Bus(t, ":0"), "", "sleep", "600")
		tasks, _ := filepath.Glob("/proc/self/task/*/children")
		var pids []string
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			pids = append(pids, strings.Fields(string(b))...)
		}
		os.Stdout.WriteString("pids " + strings.Join(pids, " ") + "\n")
		os.Exit(3) // no cleanup runs
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppDiesWithTheTest$")
	cmd.Env = append(os.Environ(), "ATSPITEST_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Wait()
	fields := strings.Fields(strings.TrimPrefix(line, "pids "))
	if len(fields) < 2 {
		t.Fatalf("the child printed %q, want the pids of its bus and its program", line)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the child printed %q, want pids", line)
		}
		for desktop.ProcessAlive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("a program the test started (pid %d) outlived the test binary", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
