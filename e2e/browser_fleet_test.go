package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/testenv"
)

// TestBrowserContextPerSession: `serve --http --desktop-per-session WxH
// --backend browser` gives each MCP session a browser context of its own
// in one Chromium: two sessions set different cookies on the same site and
// each reads back only its own, each sees its own viewport size, and no
// Xvfb is started for them.
func TestBrowserContextPerSession(t *testing.T) {
	testenv.NeedChromium(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "nobody"
		if c, err := r.Cookie("who"); err == nil {
			who = c.Value
		}
		if v := r.URL.Query().Get("set"); v != "" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: v, Path: "/"})
			who = v
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>cookie %s</title><p>%s</p>", who, who)
	}))
	t.Cleanup(site.Close)
	xvfbBefore := countProcesses("Xvfb")
	g := startHTTP(t, serverConfig{httpToken: httpToken, env: []string{
		"GUI_AGENT_BACKEND=browser", "GUI_AGENT_DESKTOP_PER_SESSION=1024x700", "GUI_AGENT_MAX_DESKTOPS=2"}})

	navigate := func(cs *mcp.ClientSession, url string) string {
		t.Helper()
		var page struct{ Title string }
		b, _ := json.Marshal(call(t, cs, "gui_navigate", map[string]any{"url": url}).StructuredContent)
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		return page.Title
	}
	a := connectFleet(t, g, &killableClient{})
	b := connectFleet(t, g, &killableClient{})
	if got := navigate(a, site.URL+"/?set=alice"); got != "cookie alice" {
		t.Fatalf("session a's first page: %q", got)
	}
	if got := navigate(b, site.URL+"/"); got != "cookie nobody" {
		t.Errorf("session b sees session a's cookie: %q", got)
	}
	navigate(b, site.URL+"/?set=bob")
	if got := navigate(a, site.URL+"/"); got != "cookie alice" {
		t.Errorf("session a reads %q after b set its own cookie, want its own (alice)", got)
	}
	if got := navigate(b, site.URL+"/"); got != "cookie bob" {
		t.Errorf("session b reads %q, want bob", got)
	}
	for _, cs := range []*mcp.ClientSession{a, b} {
		text := textOf(call(t, cs, "gui_list_displays", nil))
		if !strings.Contains(text, "1024") || !strings.Contains(text, "700") {
			t.Errorf("a session's display is not the 1024x700 viewport asked for: %s", text)
		}
	}
	if n := countProcesses("Xvfb"); n > xvfbBefore {
		t.Errorf("%d Xvfb servers were started for browser sessions", n-xvfbBefore)
	}
}

// countProcesses counts the running processes named name.
func countProcesses(name string) int {
	out, _ := exec.Command("pgrep", "-x", name).Output()
	return len(strings.Fields(string(out)))
}
