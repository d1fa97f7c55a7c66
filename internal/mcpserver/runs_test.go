package mcpserver

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/trace"
)

type memRuns map[string]map[string]any

func (m memRuns) ListRuns() (any, error) {
	var out []map[string]any
	for _, r := range m {
		out = append(out, r)
	}
	return out, nil
}

func (m memRuns) GetRun(id string) (any, error) {
	if r, ok := m[id]; ok {
		return r, nil
	}
	return nil, errors.New("run not found")
}

func TestRunResources(t *testing.T) {
	runs := memRuns{"20261130-000000-abcdef": {"id": "20261130-000000-abcdef", "status": "completed", "task": "fill the form"}}
	e := newEnv(t, nil, Options{Runs: runs})
	ctx := context.Background()
	res, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; !strings.Contains(txt, `"fill the form"`) || !strings.Contains(txt, `"runs"`) {
		t.Fatalf("gui://runs = %s", txt)
	}
	res, err = e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI + "/20261130-000000-abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Contents[0].Text; !strings.Contains(txt, `"completed"`) {
		t.Fatalf("gui://runs/{id} = %s", txt)
	}
	if _, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: RunsURI + "/nope"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown run: err = %v", err)
	}
	tmpls, err := e.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != RunURITemplate {
		t.Fatalf("templates %+v, %v", tmpls, err)
	}
}

// TestEndedSessionClosesItsRecord: when an MCP session ends, its run record
// is closed (status "recorded", report written, no writer left running) and
// the server forgets its frames, instead of holding both until the process exits.
func TestEndedSessionClosesItsRecord(t *testing.T) {
	store := trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true})
	defer store.Close()
	e := newEnv(t, nil, Options{Records: func(id string) ToolRecorder { return store.Session(id) }})

	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "short-lived", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, cs, "gui_screenshot", map[string]any{"max_long_edge": 320})
	if _, has := e.srv.frames.get(ss, "0"); !has {
		t.Fatal("the screenshot's frame was not kept for the session")
	}
	if len(store.Active()) != 1 {
		t.Fatalf("active runs while the session lives = %v, want its session record", store.Active())
	}
	cs.Close()

	// The record is closed asynchronously once the session has ended.
	var runs []trace.RunInfo
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if runs, err = store.List(); err != nil || len(runs) != 1 {
			t.Fatalf("runs = %+v, %v", runs, err)
		}
		if _, err := os.Stat(runs[0].Report); err == nil && len(store.Active()) == 0 {
			break
		}
	}
	if runs[0].Status != trace.StatusRecorded || runs[0].Finished == nil {
		t.Fatalf("the ended session's record is %q (finished %v), want %q: it was never closed", runs[0].Status, runs[0].Finished, trace.StatusRecorded)
	}
	if _, err := os.Stat(runs[0].Report); err != nil {
		t.Fatalf("no report for the ended session: %v", err)
	}
	if _, has := e.srv.frames.get(ss, "0"); has {
		t.Fatal("the ended session's frames are still held")
	}
}
