package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/hosting"
)

// A Streamable HTTP client whose connection drops during a call cancels that
// call, and only that call: another call of the same session carries on.
func TestHTTPClientGoneCancelsOnlyItsCall(t *testing.T) {
	srv, err := New(Options{Screen: fake.New(fake.Options{}), Logger: testLogger(t), MaxWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.NewHTTPHandler(hosting.HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after the client session's own cleanup
	cs := httpClientSession(t, ts.URL, testToken)

	// The abandoned call: a raw POST in the same session whose client gives up after 300 ms.
	abandoned := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"gui_wait","arguments":{"ms":5000}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+hosting.MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		abandoned <- err
	}()
	// Meanwhile a call of the same session that must complete.
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_wait", Arguments: map[string]any{"ms": 1200}})
	if err != nil || res.IsError {
		t.Fatalf("the other call of the session failed: %v %+v", err, res)
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("the other call returned after %v, before its 1.2 s wait", el)
	}
	if err := <-abandoned; err == nil {
		t.Fatal("the abandoned request did not time out on the client side")
	}
	var entry *struct{ ms int64 }
	for _, e := range srv.Audit().Snapshot() {
		if e.Tool == "gui_wait" && e.Error != "" {
			entry = &struct{ ms int64 }{e.Millis}
		}
	}
	if entry == nil {
		t.Fatalf("the abandoned 5 s wait was not cancelled: audit %+v", srv.Audit().Snapshot())
	}
	if entry.ms > 2000 {
		t.Fatalf("the abandoned wait ran %d ms after its client left", entry.ms)
	}
}
