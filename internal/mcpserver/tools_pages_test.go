package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
)

// pageScreen is the fake desktop with a browser's capabilities: pages, tabs,
// a file input, page events; or, with phone set, a phone's apps.
type pageScreen struct {
	*fake.Backend
	mu       sync.Mutex
	url      string
	history  []string
	tabs     []desktop.Tab
	uploaded map[string][]string
	events   []string
}

func (p *pageScreen) Navigate(ctx context.Context, n desktop.Navigation) (desktop.Page, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case strings.Contains(n.URL, "refused"):
		return desktop.Page{}, fmt.Errorf("navigating to %s: net::ERR_CONNECTION_REFUSED", n.URL)
	case n.Action == desktop.NavBack && len(p.history) > 1:
		p.history = p.history[:len(p.history)-1]
		p.url = p.history[len(p.history)-1]
	case n.URL != "":
		p.url = n.URL
		p.history = append(p.history, n.URL)
	}
	p.events = append(p.events, `dialog alert "hello" accepted`)
	return desktop.Page{URL: p.url, Title: "T " + p.url, Status: 200}, nil
}

func (p *pageScreen) Tabs(context.Context) ([]desktop.Tab, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tabs), nil
}

func (p *pageScreen) NewTab(_ context.Context, url string) (desktop.Tab, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := desktop.Tab{ID: fmt.Sprintf("T%d", len(p.tabs)+1), URL: url, Active: true, Ours: true}
	for i := range p.tabs {
		p.tabs[i].Active = false
	}
	p.tabs = append(p.tabs, t)
	return t, nil
}

func (p *pageScreen) SelectTab(_ context.Context, id string) (desktop.Tab, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.tabs {
		p.tabs[i].Active = p.tabs[i].ID == id
	}
	for _, t := range p.tabs {
		if t.ID == id {
			return t, nil
		}
	}
	return desktop.Tab{}, fmt.Errorf("no tab %s", id)
}

func (p *pageScreen) CloseTab(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tabs = slices.DeleteFunc(p.tabs, func(t desktop.Tab) bool { return t.ID == id })
	return nil
}

func (p *pageScreen) Upload(_ context.Context, handle string, paths []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.uploaded[handle] = paths
	return nil
}

func (p *pageScreen) TakeEvents() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events
	p.events = nil
	return ev
}

func (p *pageScreen) Downloads() []desktop.Download {
	return []desktop.Download{{Name: "report.csv", Path: "/runs/x/report.csv", URL: "http://127.0.0.1/report.csv", Bytes: 12, State: "completed"}}
}

// phoneScreen is the fake desktop with a phone's apps.
type phoneScreen struct {
	*fake.Backend
	mu      sync.Mutex
	running []string
}

func (p *phoneScreen) ListApps(context.Context) ([]desktop.App, error) {
	return []desktop.App{{ID: "com.example.notes", Label: "Notes"}}, nil
}

func (p *phoneScreen) LaunchApp(_ context.Context, id string) error {
	if id != "com.example.notes" {
		return fmt.Errorf("no app %s is installed", id)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, id)
	return nil
}

func (p *phoneScreen) StopApp(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = slices.DeleteFunc(p.running, func(s string) bool { return s == id })
	return nil
}

func (p *phoneScreen) OpenURL(context.Context, string) error { return nil }

func serverOn(t *testing.T, scr desktop.Screen) *mcp.ClientSession {
	t.Helper()
	srv, err := New(Options{Screen: scr, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, srv: srv}
	return e.connect(nil)
}

func toolNamesOf(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestBrowserToolsOnlyOnABrowser: gui_navigate, gui_tabs and gui_upload are
// offered where the backend has pages, gui_apps where it has apps, and none
// of them on a desktop.
func TestBrowserToolsOnlyOnABrowser(t *testing.T) {
	desk := fake.New(fake.Options{Displays: twoDisplays})
	page := &pageScreen{Backend: fake.New(fake.Options{Displays: twoDisplays}), uploaded: map[string][]string{}}
	phone := &phoneScreen{Backend: fake.New(fake.Options{Displays: twoDisplays})}
	for _, c := range []struct {
		name      string
		scr       desktop.Screen
		want, not []string
	}{
		{"desktop", desk, nil, []string{"gui_navigate", "gui_tabs", "gui_upload", "gui_apps"}},
		{"browser", page, []string{"gui_navigate", "gui_tabs", "gui_upload"}, []string{"gui_apps"}},
		{"phone", phone, []string{"gui_apps"}, []string{"gui_navigate", "gui_tabs", "gui_upload"}},
	} {
		names := toolNamesOf(t, serverOn(t, c.scr))
		for _, w := range c.want {
			if !slices.Contains(names, w) {
				t.Errorf("%s: %s is not offered: %v", c.name, w, names)
			}
		}
		for _, n := range c.not {
			if slices.Contains(names, n) {
				t.Errorf("%s: %s is offered, but the backend cannot do it", c.name, n)
			}
		}
	}
}

func TestNavigateAndTabs(t *testing.T) {
	page := &pageScreen{Backend: fake.New(fake.Options{Displays: twoDisplays}), uploaded: map[string][]string{}}
	cs := serverOn(t, page)

	res := callTool(t, cs, "gui_navigate", map[string]any{"url": "http://127.0.0.1:1/a"})
	if res.IsError {
		t.Fatalf("navigate: %s", text(res))
	}
	var got desktop.Page
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil || got.URL != "http://127.0.0.1:1/a" || got.Status != 200 || got.Title == "" {
		t.Fatalf("navigate's result is %s (%v), want the final URL, title and status", b, err)
	}
	all := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			all += tc.Text + "\n"
		}
	}
	if !strings.Contains(all, `page events: dialog alert "hello" accepted`) {
		t.Errorf("the dialog the navigation raised is not in its result:\n%s", all)
	}
	ok(t, cs, "gui_navigate", map[string]any{"url": "http://127.0.0.1:1/b"})
	ok(t, cs, "gui_navigate", map[string]any{"action": "back"})
	if page.url != "http://127.0.0.1:1/a" {
		t.Errorf("back went to %s", page.url)
	}
	for args, want := range map[string]string{
		`{}`:                                    "needs a url, or an action",
		`{"url":"http://x","action":"back"}`:    "not both",
		`{"url":"http://127.0.0.1:9/refused"}`:  "net::ERR_CONNECTION_REFUSED",
		`{"url":"http://x","timeout_s":100000}`: "timeout_s",
	} {
		var a map[string]any
		_ = json.Unmarshal([]byte(args), &a)
		res := callTool(t, cs, "gui_navigate", a)
		if !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("gui_navigate %s: error %v %q, want one saying %q", args, res.IsError, text(res), want)
		}
	}

	ok(t, cs, "gui_tabs", map[string]any{"action": "new", "url": "http://127.0.0.1:1/c"})
	ok(t, cs, "gui_tabs", map[string]any{"action": "new", "url": "http://127.0.0.1:1/d"})
	ok(t, cs, "gui_tabs", map[string]any{"action": "select", "tab": "T1"})
	list := ok(t, cs, "gui_tabs", map[string]any{"action": "list"})
	var tabs struct{ Tabs []desktop.Tab }
	if err := json.Unmarshal([]byte(list), &tabs); err != nil || len(tabs.Tabs) != 2 || !tabs.Tabs[0].Active || tabs.Tabs[1].Active {
		t.Fatalf("tabs after select T1: %s (%v)", list, err)
	}
	if res := callTool(t, cs, "gui_tabs", map[string]any{"action": "close"}); !res.IsError || !strings.Contains(text(res), "needs tab") {
		t.Errorf("close without a tab: %q", text(res))
	}
	ok(t, cs, "gui_tabs", map[string]any{"action": "close", "tab": "T2"})
	if n := len(page.tabs); n != 1 {
		t.Errorf("%d tabs after closing one of two", n)
	}
}

func TestUploadByRef(t *testing.T) {
	desk := fake.New(fake.Options{Displays: twoDisplays})
	desk.SetElements([]desktop.Element{
		{Role: desktop.RoleWindow, Name: "Form", Box: geom.Rect{X: 0, Y: 0, W: 800, H: 600}},
		{Role: desktop.RoleButton, Name: "Choose file", Box: geom.Rect{X: 10, Y: 10, W: 100, H: 30}, Depth: 1, Handle: "node-7"},
	})
	page := &pageScreen{Backend: desk, uploaded: map[string][]string{}}
	cs := serverOn(t, page)
	if res := callTool(t, cs, "gui_upload", map[string]any{"ref": "e2", "paths": []string{"/tmp/a.txt"}}); !res.IsError || !strings.Contains(text(res), "gui_snapshot") {
		t.Fatalf("upload before a snapshot: %q", text(res))
	}
	snap := ok(t, cs, "gui_snapshot", nil)
	ref := ""
	for _, line := range strings.Split(snap, "\n") {
		if strings.Contains(line, "Choose file") {
			if f := strings.Fields(strings.TrimSpace(line)); len(f) > 0 {
				ref = strings.Trim(f[0], "[]")
			}
		}
	}
	if ref == "" {
		// The outline's format belongs to uitree; take the ref from the structured elements.
		var sn struct {
			Elements []struct{ Ref, Name string }
		}
		_ = json.Unmarshal([]byte(snap), &sn)
		for _, e := range sn.Elements {
			if e.Name == "Choose file" {
				ref = e.Ref
			}
		}
	}
	if ref == "" {
		t.Fatalf("no ref for the file input in:\n%s", snap)
	}
	ok(t, cs, "gui_upload", map[string]any{"ref": ref, "paths": []string{"/tmp/a.txt", "/tmp/b.txt"}})
	if got := page.uploaded["node-7"]; len(got) != 2 {
		t.Errorf("the backend got files %v for the input's handle", page.uploaded)
	}
	if res := callTool(t, cs, "gui_upload", map[string]any{"ref": ref}); !res.IsError || !strings.Contains(text(res), "paths") {
		t.Errorf("upload without paths: %q", text(res))
	}
}

func TestApps(t *testing.T) {
	phone := &phoneScreen{Backend: fake.New(fake.Options{Displays: twoDisplays})}
	cs := serverOn(t, phone)
	if list := ok(t, cs, "gui_apps", map[string]any{"action": "list"}); !strings.Contains(list, "com.example.notes") {
		t.Errorf("list: %s", list)
	}
	ok(t, cs, "gui_apps", map[string]any{"action": "launch", "package": "com.example.notes"})
	if len(phone.running) != 1 {
		t.Errorf("running after launch: %v", phone.running)
	}
	if res := callTool(t, cs, "gui_apps", map[string]any{"action": "launch", "package": "com.nope"}); !res.IsError || !strings.Contains(text(res), "com.nope") {
		t.Errorf("launching an app that is not installed: %q", text(res))
	}
	if res := callTool(t, cs, "gui_apps", map[string]any{"action": "launch"}); !res.IsError || !strings.Contains(text(res), "needs package") {
		t.Errorf("launch without a package: %q", text(res))
	}
	ok(t, cs, "gui_apps", map[string]any{"action": "stop", "package": "com.example.notes"})
	if len(phone.running) != 0 {
		t.Errorf("running after stop: %v", phone.running)
	}
}
