package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg"
	"math"
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

// clickOverlay finds the overlay of the session's click (call 2), checks it
// was drawn on the screenshot shot the click's coordinates x, y refer to with
// the red marker on that point, and returns its reference.
func clickOverlay(t *testing.T, ri trace.RunInfo, shot *trace.ImageRecord, x, y float64) string {
	t.Helper()
	var ov *trace.ImageRecord
	waitFor(5*time.Second, func() bool {
		lines, _, _ := trace.ReadLines(ri.Dir)
		for _, ln := range lines {
			if ln.Kind == trace.KindOverlay && ln.Step == 2 {
				ov = ln.Image
			}
		}
		return ov != nil
	})
	if ov == nil || shot == nil {
		t.Fatalf("no overlay recorded for the click (screenshot %+v)", shot)
	}
	if ov.SentAs != shot.Ref || ov.Frame.ID != shot.Frame.ID {
		t.Errorf("the click's overlay was drawn on %s (frame %s), want the screenshot %s (frame %s)", ov.SentAs, ov.Frame.ID, shot.Ref, shot.Frame.ID)
	}
	f, err := os.Open(filepath.Join(ri.Dir, filepath.FromSlash(ov.Ref)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Overlays of large screenshots are scaled down; pixel centres map to pixel centres.
	k := float64(img.Bounds().Dx()) / float64(shot.Width)
	px, py := int(math.Round((x+0.5)*k-0.5)), int(math.Round((y+0.5)*k-0.5))
	if r, g, _, _ := img.At(px, py).RGBA(); r>>8 < 180 || g>>8 > 90 {
		t.Errorf("overlay pixel at the click (%v,%v) -> (%d,%d) is not the red marker: r=%d g=%d", x, y, px, py, r>>8, g>>8)
	}
	return ov.Ref
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
	for _, tr := range transports {
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
			// A refused call: recorded, and marked as failed.
			if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_hotkey",
				Arguments: map[string]any{"keys": []string{"ctrl", "alt", "delete"}}}); err != nil || !res.IsError {
				t.Fatalf("ctrl+alt+delete was not refused: %v %v", err, res)
			}
			want := []string{"gui_screenshot", "gui_click", "gui_type", "gui_hotkey"}

			sid := ""
			if tr.name == "http" {
				sid = recordIDOf(t, cs)
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

			if calls[0].IsError || calls[1].IsError || calls[2].IsError || !calls[3].IsError {
				t.Errorf("error flags of the recorded calls: %v %v %v %v, want only the refused hotkey marked",
					calls[0].IsError, calls[1].IsError, calls[2].IsError, calls[3].IsError)
			}
			overlay := clickOverlay(t, ri, calls[0].Image, x, y)

			// The report is refreshed once the session goes idle.
			report := filepath.Join(ri.Dir, trace.ReportFile)
			if !waitFor(trace.SessionReportDelay+5*time.Second, func() bool {
				b, err := os.ReadFile(report)
				return err == nil && strings.Contains(string(b), "gui_hotkey")
			}) {
				b, err := os.ReadFile(report)
				t.Fatalf("the session report %s does not show the calls (%v):\n%.1500s", report, err, b)
			}
			b, _ := os.ReadFile(report)
			ov, err := os.ReadFile(filepath.Join(ri.Dir, filepath.FromSlash(overlay)))
			if err != nil {
				t.Fatal(err)
			}
			// The report embeds the overlay (it is self-contained) and links its file.
			embedded := `src="data:image/jpeg;base64,` + base64.StdEncoding.EncodeToString(ov) + `"`
			if !strings.Contains(string(b), embedded) || !strings.Contains(string(b), `href="`+overlay+`"`) || !strings.Contains(string(b), `b-bad">error<`) {
				t.Errorf("the session report lacks the click's overlay %s or the refused call's error mark", overlay)
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

	_, ca := sessionRun(t, a, recordIDOf(t, a), 2)
	_, cb := sessionRun(t, b, recordIDOf(t, b), 2)
	if got := toolNames(ca); !slices.Equal(got, []string{"gui_move", "gui_move"}) {
		t.Errorf("session A recorded %v, want its two gui_move calls", got)
	}
	if got := toolNames(cb); !slices.Equal(got, []string{"gui_cursor_position", "gui_list_displays"}) {
		t.Errorf("session B recorded %v, want gui_cursor_position, gui_list_displays", got)
	}
}
