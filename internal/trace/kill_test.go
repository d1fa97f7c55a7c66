package trace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const childEnv = "GUIAGENT_TRACE_KILL_CHILD_DIR"

// TestKillChildProcess is the recording process of TestKilledProcessLeavesReadableEvents;
// it only records when that test starts it (with childEnv set) and runs until killed.
func TestKillChildProcess(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return // not started as the child
	}
	st := NewStore(Options{Dir: dir, DebugImages: true})
	run, err := st.Begin("killed", "a task that never ends", testConfig{APIKey: canary})
	if err != nil {
		t.Fatal(err)
	}
	for {
		play(t, run, run.ID(), script{steps: 3, w: 320, h: 200})
	}
}

func TestKilledProcessLeavesReadableEvents(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(dir, "killed", EventsFile)
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(events)
		if bytes.Count(b, []byte("\n")) >= 200 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child wrote no events in time; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL mid-run
		t.Fatal(err)
	}
	cmd.Wait()

	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Error("events.jsonl does not end with a whole line")
	}
	lines, skipped, err := ReadLines(filepath.Dir(events))
	if err != nil || skipped != 0 || len(lines) < 200 {
		t.Fatalf("after SIGKILL: %d lines parsed, %d damaged, %v", len(lines), skipped, err)
	}
	for i, ln := range lines {
		if ln.Kind == "" || ln.Time.IsZero() {
			t.Fatalf("line %d has no kind or time: %+v", i+1, ln)
		}
	}

	// Another process finds the run as incomplete and can still produce its report.
	st := NewStore(Options{Dir: dir})
	info, err := st.Get("killed")
	if err != nil || info.Status != StatusIncomplete || info.Result != nil {
		t.Fatalf("Get after kill = %+v, %v", info, err)
	}
	p, err := st.EnsureReport("killed")
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := os.ReadFile(p)
	if !strings.Contains(string(rep), `id="step-1"`) || !strings.Contains(string(rep), "ended without a result") {
		t.Error("report of the killed run lacks its steps or the note that it did not finish")
	}
	assertNoCanary(t, filepath.Dir(events))
}
