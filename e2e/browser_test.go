package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/testenv"
)

// formSite is a local page with a labelled field, a password field and a
// button that posts the form; the server keeps what it received.
type formSite struct {
	*httptest.Server
	mu    sync.Mutex
	posts []map[string]string
}

const formPage = `<!doctype html><title>Sign up</title>
<style>body{font:16px sans-serif;margin:40px} input,button{font-size:18px;margin:8px}</style>
<form method="post" action="/submit">
<label for="name">Name</label> <input id="name" name="name" value="old text"><br>
<label for="pw">Password</label> <input id="pw" name="pw" type="password" value="hunter2"><br>
<button type="submit">Send</button>
</form>`

func startFormSite(t *testing.T) *formSite {
	t.Helper()
	s := &formSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, formPage)
	})
	mux.HandleFunc("/submit", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		s.posts = append(s.posts, map[string]string{"name": r.PostForm.Get("name"), "pw": r.PostForm.Get("pw")})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Thanks</title><p>Thanks</p>")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *formSite) received() []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]string(nil), s.posts...)
}

// snapshotOf calls gui_snapshot and decodes its structured result.
func snapshotOf(t *testing.T, cs *mcp.ClientSession) mcpserver.SnapshotResult {
	t.Helper()
	res := call(t, cs, "gui_snapshot", nil)
	var snap mcpserver.SnapshotResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatalf("gui_snapshot's structured content: %v: %s", err, b)
	}
	return snap
}

func refOf(t *testing.T, snap mcpserver.SnapshotResult, role, name string) string {
	t.Helper()
	for _, e := range snap.Elements {
		if string(e.Role) == role && e.Name == name {
			return e.Ref
		}
	}
	t.Fatalf("no %s %q in the snapshot: %+v", role, name, snap.Elements)
	return ""
}

// TestBrowserOverMCP: `guiagent serve --backend browser` drives a page in
// its own headless Chromium over MCP: it navigates, screenshots, sees the
// page's elements with refs (never the password's value), replaces a
// field's text with Unicode by ref, and a click by ref posts the form to
// the server.
func TestBrowserOverMCP(t *testing.T) {
	testenv.NeedChromium(t)
	site := startFormSite(t)
	_, cs := startStdio(t, serverConfig{env: []string{"GUI_AGENT_BACKEND=browser", "GUI_AGENT_BROWSER_ISOLATED=true"}}, nil)

	names := map[string]bool{}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"gui_navigate", "gui_tabs", "gui_upload", "gui_snapshot", "gui_click"} {
		if !names[want] {
			t.Errorf("the browser backend does not offer %s", want)
		}
	}
	if names["gui_apps"] {
		t.Errorf("the browser backend offers gui_apps, a phone's tool")
	}

	res := call(t, cs, "gui_navigate", map[string]any{"url": site.URL + "/"})
	var page struct {
		URL    string `json:"url"`
		Title  string `json:"title"`
		Status int    `json:"status"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &page); err != nil || page.Title != "Sign up" || page.Status != 200 {
		t.Fatalf("gui_navigate answered %s (%v), want the title Sign up and status 200", b, err)
	}

	shot := call(t, cs, "gui_screenshot", nil)
	var img *mcp.ImageContent
	for _, c := range shot.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil || len(img.Data) < 1000 {
		t.Fatalf("gui_screenshot returned no image: %s", textOf(shot))
	}

	snap := snapshotOf(t, cs)
	name := refOf(t, snap, "textbox", "Name")
	send := refOf(t, snap, "button", "Send")
	for _, e := range snap.Elements {
		if strings.Contains(e.Value, "hunter2") {
			t.Errorf("the snapshot shows the password's value: %+v", e)
		}
	}

	call(t, cs, "gui_type", map[string]any{"ref": name, "text": "Grüße 世界 ✓", "mode": "replace"})
	call(t, cs, "gui_click", map[string]any{"ref": send})
	if !testenv.WaitUntil(10*time.Second, func() bool { return len(site.received()) > 0 }) {
		t.Fatal("the form was never posted after the click on Send")
	}
	got := site.received()[0]
	if got["name"] != "Grüße 世界 ✓" || got["pw"] != "hunter2" {
		t.Errorf("the server received %v, want name replaced by the typed text and the password kept", got)
	}

	// The tab list shows the page the click led to.
	var tabs string
	if !testenv.WaitUntil(10*time.Second, func() bool {
		tabs = textOf(call(t, cs, "gui_tabs", map[string]any{"action": "list"}))
		return strings.Contains(tabs, "/submit")
	}) {
		t.Errorf("gui_tabs list does not show the submitted page: %s", tabs)
	}
	// A failed navigation is an error with the browser's reason.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "gui_navigate", Arguments: map[string]any{"url": "http://" + freePort(t) + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(res), "net::ERR_") {
		t.Errorf("navigating to a closed port: error %v, %q; want the browser's net::ERR_ reason", res.IsError, textOf(res))
	}
}
