package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
)

const testToken = "test-token-0123456789abcdef"

// bearer adds the token to every request of an http.Client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func newHTTPServer(t *testing.T, o hosting.HTTPOptions) (*httptest.Server, *fake.Backend) {
	t.Helper()
	desk := fake.New(fake.Options{})
	srv, err := New(Options{Screen: desk, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Token == "" {
		o.Token = testToken
	}
	h, err := srv.NewHTTPHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ReadHeaderTimeout = time.Second
	ts.Config.ReadTimeout = o.ReadTimeout
	ts.Start()
	t.Cleanup(ts.Close)
	return ts, desk
}

func httpClientSession(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + hosting.MCPPath,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connecting over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends a raw JSON-RPC POST to /mcp with the given headers.
func post(t *testing.T, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+hosting.MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHTTPClientWorks(t *testing.T) {
	ts, desk := newHTTPServer(t, hosting.HTTPOptions{})
	cs := httpClientSession(t, ts.URL, testToken)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != len(issueTools) {
		t.Fatalf("list tools over HTTP: %v %v", err, res)
	}
	ok(t, cs, "gui_click", map[string]any{"x": 12, "y": 34})
	if ev := lastEvent(t, desk, fake.OpButtonDown); ev.At != (geom.GlobalPoint{X: 12, Y: 34}) {
		t.Fatalf("HTTP click landed at %v", ev.At)
	}
}

func TestHTTPAuthAndOriginChecks(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dashboard") })
	ts, desk := newHTTPServer(t, hosting.HTTPOptions{Dashboard: dash, MaxBodyBytes: 4096})
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range auth {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	cases := []struct {
		name string
		body string
		hdr  map[string]string
		code int
	}{
		{"no token", initBody, nil, http.StatusUnauthorized},
		{"bad token", initBody, map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, http.StatusUnauthorized},
		{"token of another scheme", initBody, map[string]string{"Authorization": "Basic " + testToken}, http.StatusUnauthorized},
		{"token prefix", initBody, map[string]string{"Authorization": "Bearer " + testToken[:10]}, http.StatusUnauthorized},
		{"foreign origin", initBody, with(map[string]string{"Origin": "https://evil.example"}), http.StatusForbidden},
		{"cross-site fetch", initBody, with(map[string]string{"Sec-Fetch-Site": "cross-site"}), http.StatusForbidden},
		{"rebinding host", initBody, with(map[string]string{"Host": fmt.Sprintf("evil.example:%d", port)}), http.StatusForbidden},
		{"rebinding host without token", initBody, map[string]string{"Host": "attacker.test"}, http.StatusForbidden},
		{"oversized body", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, auth, http.StatusRequestEntityTooLarge},
		{"good", initBody, auth, http.StatusOK},
		{"localhost name", initBody, with(map[string]string{"Host": fmt.Sprintf("localhost:%d", port)}), http.StatusOK},
		{"same origin", initBody, with(map[string]string{"Origin": ts.URL}), http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := post(t, ts.URL, c.body, c.hdr)
			if resp.StatusCode != c.code {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.code, b)
			}
			if c.code == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a WWW-Authenticate: Bearer challenge")
			}
		})
	}
	// A chunked body of unknown length is cut at the limit too.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+hosting.MCPPath, io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`),
		strings.NewReader(strings.Repeat("y", 9000)), strings.NewReader(`"}}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.ContentLength != 0 || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked oversized body (length %d): status %d, want 413", req.ContentLength, resp.StatusCode)
	}
	// The dashboard sits behind the same Host/Origin checks but not the token.
	get := func(host, origin string) int {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/", nil)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("", ""); code != http.StatusOK {
		t.Errorf("dashboard: %d", code)
	}
	if code := get("rebind.example", ""); code != http.StatusForbidden {
		t.Errorf("dashboard with a rebinding Host: %d, want 403", code)
	}
	if code := get("", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("dashboard from a foreign origin: %d, want 403", code)
	}
	if len(desk.Events()) != 0 {
		t.Fatal("refused requests caused input")
	}
}

func TestHTTPIdleSessionExpires(t *testing.T) {
	ts, _ := newHTTPServer(t, hosting.HTTPOptions{SessionTimeout: 300 * time.Millisecond})
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	resp := post(t, ts.URL, initBody, auth)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	io.Copy(io.Discard, resp.Body)
	withSession := map[string]string{"Authorization": auth["Authorization"], "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	resp = post(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, withSession)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if resp = post(t, ts.URL, ping, withSession); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping on a live session: %d", resp.StatusCode)
	}
	io.Copy(io.Discard, resp.Body)
	time.Sleep(700 * time.Millisecond)
	if resp = post(t, ts.URL, ping, withSession); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("ping after the idle timeout: %d, want 404 (session gone)", resp.StatusCode)
	}
}

// A tool call longer than ReadTimeout is not cut: the timeout bounds reading the request only.
func TestHTTPLongCallOutlivesReadTimeout(t *testing.T) {
	ts, _ := newHTTPServer(t, hosting.HTTPOptions{ReadTimeout: 300 * time.Millisecond})
	cs := httpClientSession(t, ts.URL, testToken)
	start := time.Now()
	out := ok(t, cs, "gui_wait", map[string]any{"ms": 900})
	if time.Since(start) < 900*time.Millisecond || !strings.Contains(out, "900") {
		t.Fatalf("wait returned %q after %v", out, time.Since(start))
	}
	ok(t, cs, "gui_cursor_position", nil) // the session still works
}

func TestHTTPManyClients(t *testing.T) {
	ts, desk := newHTTPServer(t, hosting.HTTPOptions{})
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := httpClientSession(t, ts.URL, testToken)
			for j := range 5 {
				ok(t, cs, "gui_click", map[string]any{"x": i, "y": j})
			}
		}()
	}
	wg.Wait()
	downs := 0
	for _, ev := range desk.Events() {
		if ev.Op == fake.OpButtonDown {
			downs++
		}
	}
	if downs != 25 {
		t.Fatalf("%d clicks arrived, want 25", downs)
	}
}

func TestListenAndServe(t *testing.T) {
	desk := fake.New(fake.Options{})
	srv, err := New(Options{Screen: desk, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := srv.ListenAndServe(ctx, hosting.HTTPOptions{Addr: "0.0.0.0:0", Token: testToken}); err == nil ||
		!strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("non-loopback address without AllowRemote: %v", err)
	}
	if _, err := srv.NewHTTPHandler(hosting.HTTPOptions{}); err != hosting.ErrNoToken {
		t.Fatalf("no token: %v", err)
	}
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- srv.ListenAndServe(ctx, hosting.HTTPOptions{Addr: "127.0.0.1:0", Token: testToken, OnListen: func(a net.Addr) error { addrc <- a; return nil }})
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	cs := httpClientSession(t, "http://"+addr.String(), testToken)
	ok(t, cs, "gui_mouse_down", map[string]any{"x": 5, "y": 5})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
	// Shutting down released the button held by gui_mouse_down.
	if _, buttons := desk.Pressed(); len(buttons) != 0 {
		t.Fatalf("buttons still pressed after shutdown: %v", buttons)
	}
}

func TestTokenFile(t *testing.T) {
	tok, err := hosting.GenerateToken()
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q, %v", tok, err)
	}
	if tok2, _ := hosting.GenerateToken(); tok2 == tok {
		t.Fatal("two generated tokens are equal")
	}
	path := filepath.Join(t.TempDir(), "state", "http-token")
	if err := hosting.WriteTokenFile(path, tok); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != tok {
		t.Fatal("token file content differs")
	}

	// A world-readable leftover temporary file is not reused.
	if err := os.WriteFile(path+".tmp", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path+".tmp", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := hosting.WriteTokenFile(path, tok); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file after a leftover temporary file: %v, %v", st.Mode(), err)
	}

	// A failed write leaves no copy of the token behind.
	dirPath := filepath.Join(t.TempDir(), "taken")
	if err := os.MkdirAll(filepath.Join(dirPath, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := hosting.WriteTokenFile(dirPath, tok); err == nil {
		t.Fatal("writing the token over a non-empty directory succeeded")
	}
	if _, err := os.Stat(dirPath + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("a failed write left the token in %s.tmp (stat err %v)", dirPath, err)
	}
}
