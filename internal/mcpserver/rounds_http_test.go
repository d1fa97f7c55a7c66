package mcpserver

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/safety"
)

// A client that asks for 2026-07-28 in its initialize over Streamable HTTP
// is given 2025-11-25 (that protocol has no initialize). Its later requests
// are served even when they keep naming 2026-07-28 in Mcp-Protocol-Version
// (the SDK's stateful handler answered each with -32022), a confirmation
// included.
func TestHTTPSessionInitializedAt20260728IsServed(t *testing.T) {
	keys, err := safety.NewKeyPolicy(safety.KeyPolicyOptions{Confirm: []string{"ctrl+w"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Screen: fake.New(fake.Options{}), Keys: keys, Questions: ask.NewBroker(false), AskTimeout: 300 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.NewHTTPHandler(hosting.HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	auth := "Bearer " + testToken
	resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"1"}}}`, map[string]string{"Authorization": auth})
	b, _ := io.ReadAll(resp.Body)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize at 2026-07-28: %d %s (session %q); want 2025-11-25", resp.StatusCode, b, sid)
	}
	post(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	for i, v := range []string{"2026-07-28", "2025-11-25", "2026-07-28"} {
		resp = post(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gui_cursor_position","arguments":{}}}`,
			map[string]string{"Authorization": auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": v})
		b, _ = io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
			t.Errorf("request %d (Mcp-Protocol-Version %s) of a session initialized at 2026-07-28: %d %.300s; want it served", i, v, resp.StatusCode, b)
		}
	}
	resp = post(t, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"gui_hotkey","arguments":{"keys":["ctrl","w"]}}}`,
		map[string]string{"Authorization": auth, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2026-07-28"})
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
		t.Errorf("gui_hotkey ctrl+w (to confirm) of a session initialized at 2026-07-28: %d %.300s; want a result", resp.StatusCode, b)
	}
}
