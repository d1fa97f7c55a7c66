package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/hosting"
)

// A 401 names the bearer scheme without inviting OAuth discovery (no realm,
// no resource_metadata), and the paths an MCP client probes for OAuth answer
// a definitive 404 whose OAuth-style JSON says to use the static token, even
// with the dashboard mounted at "/".
func TestHTTP401DoesNotInviteOAuth(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dashboard") })
	ts, _ := newHTTPServer(t, hosting.HTTPOptions{Dashboard: dash})
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong-token-0123456789"}} {
		resp := post(t, ts.URL, initBody, hdr)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
		ch := resp.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(ch, "Bearer ") || strings.Contains(ch, "realm") || strings.Contains(ch, "resource_metadata") || !strings.Contains(ch, "no OAuth") {
			t.Errorf("WWW-Authenticate %q: want a Bearer challenge that says no OAuth and names no realm or resource metadata", ch)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), "http-token file") {
			t.Errorf("401 body %q does not say where the token is", body)
		}
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/register", "/authorize", "/token"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || err != nil || body.Description != hosting.NoOAuthMessage {
			t.Errorf("GET %s: %d %+v (%v), want 404 with the no-OAuth message", path, resp.StatusCode, body, err)
		}
	}
}

// An OnListen error stops ListenAndServe before it serves.
func TestOnListenErrorStopsTheServer(t *testing.T) {
	srv, err := New(Options{Screen: fake.New(fake.Options{}), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var bound net.Addr
	want := errors.New("cannot publish the token")
	err = srv.ListenAndServe(context.Background(), hosting.HTTPOptions{Addr: "127.0.0.1:0", Token: testToken,
		OnListen: func(a net.Addr) error { bound = a; return want }})
	if !errors.Is(err, want) {
		t.Fatalf("ListenAndServe = %v, want the OnListen error", err)
	}
	if c, err := net.Dial("tcp", bound.String()); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after OnListen failed", bound)
	}
}
