package fleet

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/testenv"
)

// readText is the text of resource uri as cs reads it.
func readText(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
	}
	return b.String()
}

// In a desktop-per-session fleet, what session B can read (gui://runs, a run
// record, gui://audit, gui://status, its own tool results) shows nothing of
// session A: not A's calls, not A's runs, not A's Mcp-Session-Id (which would
// let B drive A's desktop); and a session id B was never given is refused.
func TestFleetSessionsCannotSeeOrTakeOverEachOther(t *testing.T) {
	ff := newFakeFleet(t, 2, hosting.HTTPOptions{})
	a, err := ff.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := ff.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for _, c := range []struct {
		cs   *mcp.ClientSession
		tool string
		args map[string]any
	}{
		{a, "gui_click", map[string]any{"x": 10, "y": 10, "space": "screen"}},
		{a, "gui_type", map[string]any{"text": "secret of A"}},
		{b, "gui_cursor_position", nil},
	} {
		if res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.tool, err, res)
		}
	}

	var stA, stB struct{ Session string }
	_ = json.Unmarshal([]byte(readText(t, a, mcpserver.StatusURI)), &stA)
	status := readText(t, b, mcpserver.StatusURI)
	_ = json.Unmarshal([]byte(status), &stB)
	if stA.Session == "" || stB.Session == "" || stA.Session == stB.Session || strings.Contains(a.ID(), stA.Session) || strings.Contains(stA.Session, a.ID()) {
		t.Fatalf("record ids A %q, B %q (session ids %s, %s): want two distinct ids unrelated to the session ids", stA.Session, stB.Session, a.ID(), b.ID())
	}
	if raw, _ := hex.DecodeString(a.ID()); len(raw) < 16 {
		t.Errorf("session id %q: want at least 128 random bits (32 hex digits)", a.ID())
	}

	var runs struct {
		Runs []struct {
			ID        string
			SessionID string `json:"session_id"`
		}
	}
	if !testenv.WaitUntil(5*time.Second, func() bool {
		_ = json.Unmarshal([]byte(readText(t, b, mcpserver.RunsURI)), &runs)
		return len(runs.Runs) > 0
	}) {
		t.Fatal("gui://runs never listed B's own session run")
	}
	runsText := readText(t, b, mcpserver.RunsURI)
	for _, r := range runs.Runs {
		if r.SessionID != stB.Session {
			t.Errorf("B's gui://runs lists run %s of session %q: %s", r.ID, r.SessionID, runsText)
		}
	}
	var audit struct {
		Entries []struct{ Tool, Session string }
	}
	auditText := readText(t, b, mcpserver.AuditURI)
	if err := json.Unmarshal([]byte(auditText), &audit); err != nil || len(audit.Entries) != 1 || audit.Entries[0].Tool != "gui_cursor_position" {
		t.Errorf("B's gui://audit: want its one call only, got %s", auditText)
	}

	// A's run record, by the id A sees, is not B's to read.
	var runsA struct{ Runs []struct{ ID string } }
	_ = json.Unmarshal([]byte(readText(t, a, mcpserver.RunsURI)), &runsA)
	if len(runsA.Runs) != 1 {
		t.Fatalf("A's gui://runs: want its session run, got %+v", runsA)
	}
	if _, err := b.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.RunsURI + "/" + runsA.Runs[0].ID}); err == nil {
		t.Errorf("B read A's run record %s", runsA.Runs[0].ID)
	}

	dash, _ := json.Marshal(ff.f.Desktops())
	for what, text := range map[string]string{"gui://status": status, "gui://runs": runsText, "gui://audit": auditText, "the dashboard's desktops": string(dash), "A's run ids": readText(t, a, mcpserver.RunsURI)} {
		if strings.Contains(text, a.ID()) || strings.Contains(text, b.ID()) {
			t.Errorf("%s shows a session id: %s", what, text)
		}
		if what != "A's run ids" && strings.Contains(text, stA.Session) && what != "the dashboard's desktops" {
			t.Errorf("%s as B reads it names session A's record %s: %s", what, stA.Session, text)
		}
	}

	// A session id B was never given gets nothing.
	made := strings.Repeat("0", 32)
	for _, id := range []string{made, strings.ToUpper(a.ID())} {
		req, _ := http.NewRequest(http.MethodPost, ff.url+hosting.MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gui_clipboard","arguments":{}}}`))
		req.Header.Set("Authorization", "Bearer "+fleetToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if status, body := fleetDo(t, req); status != http.StatusNotFound {
			t.Errorf("a request with the session id %q no one was given: %d %q, want 404", id, status, body)
		}
	}
}
