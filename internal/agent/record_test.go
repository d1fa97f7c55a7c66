package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/trace"
)

type twoSteps struct{ n int }

func (s *twoSteps) Name() string                  { return "two-steps" }
func (s *twoSteps) Profile() geom.Profile         { return geom.ProfileFor("gpt-4o") }
func (s *twoSteps) NewSession(string) llm.Session { return s }
func (s *twoSteps) Next(context.Context, llm.Observation) (*llm.Decision, error) {
	s.n++
	if s.n == 1 {
		return &llm.Decision{Status: llm.Continue, Actions: []action.Action{{Kind: action.Click, At: &action.Point{Space: geom.SpaceImage, X: 100, Y: 100}}, {Kind: action.TypeText, Text: "hi"}}}, nil
	}
	return &llm.Decision{Status: llm.Done, Result: "done"}, nil
}

// The run recorder plugs in through Options.NewRecorder: the result names its
// directory and report, which exist when Run returns.
func TestRunIsRecorded(t *testing.T) {
	store := trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true, Logger: slog.New(slog.DiscardHandler)})
	fb := fake.New(fake.Options{})
	r, err := agent.New(agent.Options{
		Input: desktop.NewInput(fb), Adapter: &twoSteps{}, Settle: agent.Settle{MaxWait: -1},
		Logger: slog.New(slog.DiscardHandler),
		NewRecorder: func(runID string, t agent.Task) (agent.Recorder, error) {
			return store.Begin(runID, t.Task, map[string]string{"model": "gpt-4o"})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), agent.Task{Task: "type hi"}, nil)
	if res.Status != agent.Completed {
		t.Fatalf("%s: %s", res.Status, res.Summary)
	}
	if res.RunDir == "" || res.Report == "" {
		t.Fatalf("result does not say where the record is: %+v", res)
	}
	if _, err := os.Stat(res.Report); err != nil {
		t.Fatalf("report missing when Run returned: %v", err)
	}
	f, err := os.Open(filepath.Join(res.RunDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ln struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ln); err != nil {
			t.Fatalf("events.jsonl line does not parse: %v", err)
		}
		kinds[ln.Kind]++
	}
	if kinds["screenshot"] != 2 || kinds["action"] != 2 || kinds["step"] != 2 || kinds["finish"] != 1 {
		t.Fatalf("recorded events %v", kinds)
	}
}
