package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/trace"
)

// sessionRun waits until gui://runs lists a session run whose events hold at
// least n tool calls, and returns it with those calls.
func sessionRun(t *testing.T, cs *mcp.ClientSession, sessionID string, n int) (trace.RunInfo, []trace.Line) {
	t.Helper()
	var found trace.RunInfo
	var calls []trace.Line
	ok := waitFor(10*time.Second, func() bool {
		for _, ri := range listRuns(t, cs) {
			if ri.Kind != trace.KindSession || (sessionID != "" && ri.SessionID != sessionID) {
				continue
			}
			lines, _, err := trace.ReadLines(ri.Dir)
			if err != nil {
				continue
			}
			calls = calls[:0]
			for _, ln := range lines {
				if ln.Kind == trace.KindTool {
					calls = append(calls, ln)
				}
			}
			found = ri
			if len(calls) >= n {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no session run (session %q) with %d tool calls; last seen %+v with %d calls", sessionID, n, found, len(calls))
	}
	return found, calls
}

func toolNames(lines []trace.Line) []string {
	var names []string
	for _, ln := range lines {
		names = append(names, ln.Tool)
	}
	return names
}

// An outer agent's own tool calls are recorded as a run of kind "session",
// one per MCP session, with the calls in order and a report.
func TestAtomicCallsRecordedPerSession(t *testing.T) {
	for _, tr := range taskTransports {
		t.Run(tr.name, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			g, cs := tr.connect(t, serverConfig{display: d.display}, nil)

			_, img := screenshot(t, cs, nil)
			x, y := centre(findColor(t, img, sampleapp.NameFieldColor, 6))
			call(t, cs, "gui_click", map[string]any{"x": x, "y": y})
			call(t, cs, "gui_type", map[string]any{"text": "recorded"})
			waitEvent(t, d.app, "the typed text", func(e sampleapp.Event) bool {
				return e.Event == "change" && e.Field == "name" && e.Value == "recorded"
			})
			want := []string{"gui_screenshot", "gui_click", "gui_type"}

			sid := ""
			if tr.name == "http" {
				sid = cs.ID()
				if sid == "" {
					t.Fatal("the HTTP client session has no id")
				}
			}
			ri, calls := sessionRun(t, cs, sid, len(want))
			if got := toolNames(calls); !slices.Equal(got, want) {
				t.Errorf("session run %s records %v, want %v", ri.ID, got, want)
			}
			if !strings.HasPrefix(ri.Dir, g.runsDir) {
				t.Errorf("session run dir %s is not under GUI_AGENT_RUNS_DIR %s", ri.Dir, g.runsDir)
			}
			var args struct{ X, Y float64 }
			if err := json.Unmarshal(calls[1].Args, &args); err != nil || args.X != x || args.Y != y {
				t.Errorf("the recorded click has args %s, want x=%v y=%v", calls[1].Args, x, y)
			}
			if calls[0].Image == nil || calls[0].Image.Ref == "" {
				t.Errorf("the recorded screenshot call has no stored image: %+v", calls[0].Image)
			} else if _, err := os.Stat(filepath.Join(ri.Dir, calls[0].Image.Ref)); err != nil {
				t.Errorf("the recorded screenshot image: %v", err)
			}

			// The report is refreshed once the session goes idle.
			report := filepath.Join(ri.Dir, trace.ReportFile)
			if !waitFor(trace.SessionReportDelay+5*time.Second, func() bool {
				b, err := os.ReadFile(report)
				return err == nil && strings.Contains(string(b), "gui_type")
			}) {
				b, err := os.ReadFile(report)
				t.Fatalf("the session report %s does not show the calls (%v):\n%.1500s", report, err, b)
			}
		})
	}
}

// Two MCP sessions on one HTTP server are recorded as two runs, each with only
// its own calls.
func TestAtomicCallsGroupedBySession(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneButtons)
	g := startHTTP(t, serverConfig{display: d.display, httpToken: httpToken})
	a, b := g.connect(t, nil), g.connect(t, nil)
	if a.ID() == b.ID() {
		t.Fatalf("two sessions share the id %q", a.ID())
	}
	call(t, a, "gui_move", map[string]any{"x": 100, "y": 100, "space": "screen"})
	call(t, b, "gui_cursor_position", nil)
	call(t, a, "gui_move", map[string]any{"x": 200, "y": 120, "space": "screen"})
	call(t, b, "gui_list_displays", nil)

	_, ca := sessionRun(t, a, a.ID(), 2)
	_, cb := sessionRun(t, b, b.ID(), 2)
	if got := toolNames(ca); !slices.Equal(got, []string{"gui_move", "gui_move"}) {
		t.Errorf("session A recorded %v, want its two gui_move calls", got)
	}
	if got := toolNames(cb); !slices.Equal(got, []string{"gui_cursor_position", "gui_list_displays"}) {
		t.Errorf("session B recorded %v, want gui_cursor_position, gui_list_displays", got)
	}
}
