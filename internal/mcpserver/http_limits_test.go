package mcpserver

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/hosting"
)

// TestHTTPSessionCap: abandoned sessions stop at MaxSessions; the next one
// gets 503 naming the limit, existing sessions go on working, and closing
// one makes room for a new one.
func TestHTTPSessionCap(t *testing.T) {
	ts, _ := newHTTPServer(t, hosting.HTTPOptions{MaxSessions: 5})
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	var sids []string
	for range 5 {
		resp := post(t, ts.URL, initBody, auth)
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("session %d: %d", len(sids)+1, resp.StatusCode)
		}
		sids = append(sids, resp.Header.Get("Mcp-Session-Id"))
	}
	resp := post(t, ts.URL, initBody, auth)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "limit is 5") {
		t.Fatalf("session 6: %d %q, want 503 naming the limit", resp.StatusCode, body)
	}
	withSession := map[string]string{"Authorization": auth["Authorization"], "Mcp-Session-Id": sids[0], "MCP-Protocol-Version": "2025-06-18"}
	if resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, withSession); resp.StatusCode != http.StatusOK {
		t.Errorf("an open session's ping got %d at the cap", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+hosting.MCPPath, nil)
	req.Header.Set("Authorization", auth["Authorization"])
	req.Header.Set("Mcp-Session-Id", sids[1])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE session: %v %v", resp, err)
	}
	if resp := post(t, ts.URL, initBody, auth); resp.StatusCode != http.StatusOK {
		t.Errorf("after closing one session a new one got %d", resp.StatusCode)
	}
}
