package trace

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// statusIn lists store's runs and returns the status and steps of run id.
func statusIn(t *testing.T, s *Store, id string) (string, int) {
	t.Helper()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.ID == id {
			return r.Status, r.Steps
		}
	}
	t.Fatalf("run %s not listed in %s", id, s.Dir())
	return "", 0
}

// TestAnotherStoreSeesRunsBeingRecorded: a store over the same folder (what
// `guiagent runs` opens beside a running server) lists a session being
// recorded as open and a task as running, with their steps, as the
// recording store does; once closed, as recorded.
func TestAnotherStoreSeesRunsBeingRecorded(t *testing.T) {
	st := newTestStore(t, nil)
	rec := st.Session("live-elsewhere")
	rec.RecordCall(Call{Tool: "gui_click", Result: "clicked"})
	rec.RecordCall(Call{Tool: "gui_type", Result: "typed"})
	rec.Flush()
	task, err := st.Begin("live-task", "read the total", nil)
	if err != nil {
		t.Fatal(err)
	}
	play(t, task, task.ID(), script{steps: 2, w: 320, h: 200})
	task.Flush()

	other := NewStore(Options{Dir: st.Dir()})
	for _, c := range []struct {
		id, status string
		steps      int
	}{{rec.RunID(), StatusOpen, 2}, {task.ID(), StatusRunning, 2}} {
		here, hereSteps := statusIn(t, st, c.id)
		there, thereSteps := statusIn(t, other, c.id)
		if here != c.status || there != here || thereSteps != hereSteps || thereSteps != c.steps {
			t.Errorf("run %s: %s with %d steps in the recording store, %s with %d in another: want %s with %d in both",
				c.id, here, hereSteps, there, thereSteps, c.status, c.steps)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if there, _ := statusIn(t, other, rec.RunID()); there != StatusRecorded {
		t.Errorf("a closed session is %s in another store, want %s", there, StatusRecorded)
	}
	task.Close()
}

// TestMain runs the test binary as the recording process that
// TestARunWhoseRecorderDiedIsIncomplete kills, when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv("GUIAGENT_TRACE_HELPER_DIR"); dir != "" {
		recordAndWait(dir)
		return
	}
	os.Exit(m.Run())
}

// recordAndWait records one call of a session in dir, says so on stdout and
// waits to be killed.
func recordAndWait(dir string) {
	st := NewStore(Options{Dir: dir})
	rec := st.Session("helper")
	rec.RecordCall(Call{Tool: "gui_click", Result: "clicked"})
	rec.Flush()
	os.Stdout.WriteString("recording " + rec.RunID() + "\n")
	time.Sleep(time.Minute)
}

// TestARunWhoseRecorderDiedIsIncomplete: a session recorded by another
// process is open while that process lives and incomplete once it is killed.
func TestARunWhoseRecorderDiedIsIncomplete(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "GUIAGENT_TRACE_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	var id string
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "recording "); ok {
			id = v
			break
		}
	}
	if id == "" {
		t.Fatal("the helper process recorded nothing")
	}
	st := NewStore(Options{Dir: dir})
	if status, steps := statusIn(t, st, id); status != StatusOpen || steps != 1 {
		t.Errorf("a session another process records: %s with %d calls, want open with 1", status, steps)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if status, _ := statusIn(t, st, id); status != StatusIncomplete {
		t.Errorf("a session whose recorder was killed: %s, want incomplete", status)
	}
}
