package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm"
)

// TestHugeModelAnswerIsCappedInTheRecord holds the record half of hole 7 of
// issue 9: a model call with a 30 MB response and a 10 MB reasoning adds a
// bounded amount to the run directory, and what is kept stays readable.
func TestHugeModelAnswerIsCappedInTheRecord(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("huge", "task", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := dirSizeOf(run.Dir())
	huge := strings.Repeat("x", 30<<20)
	resp, _ := json.Marshal(map[string]any{"id": "r1", "choices": []any{map[string]any{"message": map[string]string{"content": huge}}}})
	dec := &llm.Decision{Observation: "a screen", Reasoning: strings.Repeat("why ", 10<<20/4), Status: llm.Continue,
		Request: []byte(`{"model":"m"}`), Response: resp}
	run.OnEvent(agent.Event{Kind: agent.EvModel, Step: 1, Decision: dec})
	run.OnEvent(agent.Event{Kind: agent.EvModel, Step: 2, Decision: &llm.Decision{Status: llm.Continue, Response: []byte("not json " + huge)}})
	run.Flush()
	if n := dirSizeOf(run.Dir()) - before; n > 4*MaxRecordFileBytes {
		t.Errorf("two huge model calls added %d MB to the run record, want under %d MB", n>>20, 4*MaxRecordFileBytes>>20)
	}
	b, err := os.ReadFile(filepath.Join(run.Dir(), StepsDir, "001", "response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) || !bytes.Contains(b, []byte(`"id": "r1"`)) && !bytes.Contains(b, []byte(`"id":"r1"`)) || !bytes.Contains(b, []byte("more bytes not recorded")) {
		t.Errorf("the clipped response is not readable JSON keeping its small fields and saying what was cut: %.300s", b)
	}
	b, _ = os.ReadFile(filepath.Join(run.Dir(), StepsDir, "002", "response.json"))
	if !json.Valid(b) || !bytes.Contains(b, []byte("over the record's cap")) {
		t.Errorf("a huge non-JSON response is not replaced by a note: %.300s", b)
	}
	lines, skipped, err := ReadLines(run.Dir())
	if err != nil || skipped != 0 {
		t.Fatalf("ReadLines: %v, %d skipped", err, skipped)
	}
	for _, ln := range lines {
		if len(ln.Decision) > MaxRecordLineBytes {
			t.Errorf("an events.jsonl line carries a decision of %d bytes", len(ln.Decision))
		}
	}
}

// TestLongSessionRecordIsBounded: a session of 1200 calls is recorded in run
// directories of at most MaxSessionCallsPerRun calls each, and retention
// removes the full ones beyond MaxRuns, so the record does not grow with the
// session.
func TestLongSessionRecordIsBounded(t *testing.T) {
	st := newTestStore(t, func(o *Options) { o.MaxRuns = 2 })
	rec := st.Session("long")
	const calls = 1200
	for i := range calls {
		rec.RecordCall(Call{Tool: "gui_cursor_position", Args: map[string]any{"i": i}, Result: "at (1,2)"})
	}
	last := rec.RunID()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	runs, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) > 2 {
		t.Errorf("%d run directories after 1200 calls with MaxRuns 2", len(runs))
	}
	info, err := st.Get(last)
	if err != nil {
		for _, r := range runs {
			t.Logf("%s %s %d", r.ID, r.Status, r.Steps)
		}
		t.Fatal(err)
	}
	if !strings.HasSuffix(last, "-part3") || info.Steps != calls-2*MaxSessionCallsPerRun {
		t.Errorf("the last part is %s with %d calls, want part3 with %d", last, info.Steps, calls-2*MaxSessionCallsPerRun)
	}
	for _, r := range runs {
		if r.Status == StatusRunning {
			t.Errorf("run %s is still marked running after Close", r.ID)
		}
	}
}
