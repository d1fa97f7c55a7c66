package guiagent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/secret"

	"github.com/guiagent/guiagent/internal/testenv"
)

// echoingModel is a fake provider that repeats key: a task asking to
// "provoke" it gets a 401 quoting the key; any other task gets an observation,
// a memory and typed text holding the key, then a summary holding it.
func echoingModel(t *testing.T, key string) *fakellm.ChatServer {
	var mu sync.Mutex
	steps := 0
	m := fakellm.NewChatServer(func(tu fakellm.Turn) fakellm.Reply {
		if strings.Contains(tu.Prompt, "provoke") {
			return fakellm.Reply{HTTPStatus: http.StatusUnauthorized, ErrorType: "invalid_api_key", Result: "Incorrect API key provided: " + key}
		}
		mu.Lock()
		defer mu.Unlock()
		if steps++; steps == 1 {
			return fakellm.Reply{Observation: "the form shows " + key, Memory: []string{"the key is " + key},
				Actions: []fakellm.BrainAction{fakellm.TypeText(key)}}
		}
		return fakellm.Reply{Status: llm.Done, Result: "typed " + key}
	}, fakellm.ChatOptions{})
	t.Cleanup(m.Close)
	return m
}

// TestAKeySetAtRunTimeLeaksNowhere: a server started without a key is given
// one through PUT /api/settings; then the key flows through every path that
// echoes what it is given (the clipboard, a bad key name, a provider error, a
// model repeating it) and it appears in no MCP tool result, error, progress
// message or resource, no dashboard response or event, no run or session
// record file and no log line, each of which shows secret.Marker instead.
func TestAKeySetAtRunTimeLeaksNowhere(t *testing.T) {
	dir := t.TempDir()
	const key = "sk-live-canary-RT-0123456789abcdef"
	runs := filepath.Join(dir, "runs")
	var logs testenv.Buffer
	a, srv := startFromEnv(t, map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": runs}, &logs)
	model := echoingModel(t, key)
	var seen testenv.Buffer // everything a client or the dashboard was sent
	code, body := call(t, a, srv, "PUT", "/api/settings",
		`{"provider":"openai","model":"vision-2","base_url":"`+model.URL+`","api_key":"`+key+`","adapter":"generic"}`)
	seen.Write([]byte(body))
	if code != 200 || !strings.Contains(body, `"api_key_set":true`) {
		t.Fatalf("PUT /api/settings: %d %s", code, body)
	}

	ctx, cancelEvents := context.WithCancel(context.Background())
	events := streamEvents(t, ctx, a, srv)
	session := connectHTTP(t, a, srv, &seen)
	mcpText := func(name string, args map[string]any) string {
		t.Helper()
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		params.SetProgressToken(name)
		res, err := session.CallTool(context.Background(), params)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				out.WriteString(tc.Text)
			}
		}
		sc, _ := json.Marshal(res.StructuredContent)
		seen.Write([]byte(out.String() + string(sc) + "\n"))
		return out.String()
	}
	mcpText("gui_clipboard", map[string]any{"action": "set", "text": "note " + key})
	if got := mcpText("gui_clipboard", map[string]any{"action": "get"}); got != "note "+secret.Marker {
		t.Errorf("gui_clipboard get = %q; want the key read back shown as %s", got, secret.Marker)
	}
	mcpText("gui_type", map[string]any{"text": key})
	if got := mcpText("gui_press_key", map[string]any{"key": key}); !strings.Contains(got, secret.Marker) {
		t.Errorf("gui_press_key of the key = %q; want an error naming it as %s", got, secret.Marker)
	}
	if got := mcpText("gui_execute_task", map[string]any{"task": "provoke the provider"}); !strings.Contains(got, `"status":"failed"`) {
		t.Errorf("task against a provider refusing the key: %s", got)
	}
	if got := mcpText("gui_execute_task", map[string]any{"task": "type the key"}); !strings.Contains(got, `"result":"typed `+secret.Marker+`"`) {
		t.Errorf("task whose model repeats the key: %s; want its summary to show %s", got, secret.Marker)
	}
	for _, uri := range []string{"gui://audit", "gui://runs", "gui://status"} {
		res, err := session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		seen.Write([]byte(res.Contents[0].Text))
		if uri == "gui://audit" && !strings.Contains(res.Contents[0].Text, secret.Marker) {
			t.Errorf("gui://audit shows no %s: the key never reached it\n%s", secret.Marker, res.Contents[0].Text)
		}
	}
	session.Close()
	for _, path := range dashboardPaths(t, a, srv, &seen) {
		_, body := call(t, a, srv, "GET", path, "")
		seen.Write([]byte(body))
	}
	cancelEvents()
	stream := <-events
	if !strings.Contains(stream, secret.Marker) {
		t.Errorf("the dashboard event stream shows no %s: the key never reached it\n%s", secret.Marker, stream)
	}
	seen.Write([]byte(stream))
	srv.Close()
	a.Close()

	if i := strings.Index(seen.String(), key); i >= 0 {
		t.Errorf("a response carries the key: ...%s...", seen.String()[max(0, i-300):i+len(key)])
	}
	if strings.Contains(logs.String(), key) || !strings.Contains(logs.String(), "settings changed") {
		t.Errorf("the log carries the key (or logged nothing):\n%s", logs.String())
	}
	checkRecords(t, runs, key)
}

// checkRecords fails when a file under runs holds key, or when the task
// records and the MCP session record show no secret.Marker (the key never
// reached them).
func checkRecords(t *testing.T, runs, key string) {
	t.Helper()
	dirs, err := os.ReadDir(runs)
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, d := range dirs {
		var meta struct{ Kind string }
		b, err := os.ReadFile(filepath.Join(runs, d.Name(), "run.json"))
		if err != nil || json.Unmarshal(b, &meta) != nil {
			continue
		}
		filepath.WalkDir(filepath.Join(runs, d.Name()), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(key)) {
				t.Errorf("the %s record file %s carries the key", meta.Kind, p)
			}
			if bytes.Contains(b, []byte(secret.Marker)) {
				marked[meta.Kind] = true
			}
			return nil
		})
	}
	if !marked["task"] || !marked["session"] {
		t.Errorf("records showing %s: %v; want the task records and the MCP session record", secret.Marker, marked)
	}
}

// dashboardPaths are the dashboard's JSON APIs and every file of every run
// it lists.
func dashboardPaths(t *testing.T, a *guiagent.Agent, srv *httptest.Server, seen io.Writer) []string {
	t.Helper()
	code, body := call(t, a, srv, "GET", "/api/runs", "")
	seen.Write([]byte(body))
	var list []struct {
		Kind      string `json:"kind"`
		ReportURL string `json:"report_url"`
	}
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list) < 3 {
		t.Fatalf("GET /api/runs: %d %s; want two task runs and a session", code, body)
	}
	paths := []string{"/api/audit", "/api/current", "/api/settings", "/api/displays"}
	for _, r := range list {
		for _, f := range []string{"", "events.jsonl", "result.json", "run.json", "task.txt", "config.json"} {
			paths = append(paths, r.ReportURL+f)
		}
	}
	return paths
}

// streamEvents reads the dashboard's event stream until ctx ends and then
// sends what it read.
func streamEvents(t *testing.T, ctx context.Context, a *guiagent.Agent, srv *httptest.Server) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+a.HTTPToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /api/events: %v %v", err, resp)
	}
	out := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		out <- b.String()
	}()
	return out
}

// connectHTTP opens an MCP session over Streamable HTTP with the agent's
// token; progress messages go to seen.
func connectHTTP(t *testing.T, a *guiagent.Agent, srv *httptest.Server, seen io.Writer) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{a.HTTPToken()}}
	c := mcp.NewClient(&mcp.Implementation{Name: "scrub-test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			seen.Write([]byte("progress: " + req.Params.Message + "\n"))
		}})
	session, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}
