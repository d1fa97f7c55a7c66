package atspitest

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAppDiesWithTheTest: a test binary that dies without running its
// cleanups (as on a -timeout panic) leaves no application behind. The
// child (this test run again) starts a program with Start, prints its
// pid and exits at once.
func TestAppDiesWithTheTest(t *testing.T) {
	if os.Getenv("ATSPITEST_CHILD") == "1" {
		a := Start(t, ":0", "unix:path=/nonexistent", "", "sleep", "600")
		os.Stdout.WriteString("pid " + strconv.Itoa(a.Cmd.Process.Pid) + "\n")
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
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil {
		t.Fatalf("the child printed %q, want its program's pid", line)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = killPid(pid)
			t.Fatalf("the program the test started (pid %d) outlived the test binary", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie, dead but not yet reaped, does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
