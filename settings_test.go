package guiagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/testenv"
)

// startFromEnv starts an agent as `guiagent serve --http` would with env, on
// a private display, and serves its Handler.
func startFromEnv(t *testing.T, env map[string]string, logs io.Writer) (*guiagent.Agent, *httptest.Server) {
	t.Helper()
	testenv.NeedX(t)
	o, _, err := guiagent.LoadOptions(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o.VirtualDisplay, o.AlwaysVirtualDisplay, o.Log, o.LogLevel = guiagent.Size{Width: 800, Height: 600}, true, logs, "debug"
	a, err := guiagent.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	return a, srv
}

// call sends one request to the settings API with the agent's token.
func call(t *testing.T, a *guiagent.Agent, srv *httptest.Server, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.HTTPToken())
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// keyCheckingModel is a scripted model behind a proxy that records the
// Authorization header of every request.
type keyCheckingModel struct {
	*httptest.Server
	fake *fakellm.ChatServer
	mu   sync.Mutex
	auth []string
}

func newKeyCheckingModel(t *testing.T) *keyCheckingModel {
	m := &keyCheckingModel{fake: fakellm.NewChatServer(fakellm.Script(
		func(tu fakellm.Turn) fakellm.Reply {
			return fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Pt(tu.ImageSize.W/2, tu.ImageSize.H/2))}}
		},
		fakellm.Fixed(fakellm.Finish("done")),
	), fakellm.ChatOptions{})}
	target, _ := url.Parse(m.fake.Root)
	proxy := httputil.NewSingleHostReverseProxy(target)
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		m.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { m.Close(); m.fake.Close() })
	return m
}

// TestSettingsAPIGivesAServerWithNoModelOne is the issue's second "done
// when": a server started with no model is given one through PUT
// /api/settings; its next gui_execute_task uses that model and key; after a
// restart the settings are still there; the key appears in no response, log
// or run record.
func TestSettingsAPIGivesAServerWithNoModelOne(t *testing.T) {
	dir := t.TempDir()
	const canary = "sk-canary-settings-0123456789abcdef"
	env := map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": filepath.Join(dir, "runs")}
	var logs, responses bytes.Buffer
	a, srv := startFromEnv(t, env, &logs)
	if a.HasModel() {
		t.Fatal("the server has a model before any was set")
	}
	code, body := call(t, a, srv, "GET", "/api/settings", "")
	responses.WriteString(body)
	if code != 200 || !strings.Contains(body, `"model":""`) || !strings.Contains(body, `"api_key_set":false`) || !strings.Contains(body, `"model":"default"`) {
		t.Fatalf("GET /api/settings before: %d %s", code, body)
	}

	model := newKeyCheckingModel(t)
	code, body = call(t, a, srv, "PUT", "/api/settings",
		`{"provider":"openai","model":"vision-2","base_url":"`+model.URL+`/v1","api_key":"`+canary+`","adapter":"generic"}`)
	responses.WriteString(body)
	if code != 200 || !strings.Contains(body, `"model":"vision-2"`) || !strings.Contains(body, `"api_key_set":true`) || !strings.Contains(body, `"model":"settings file"`) {
		t.Fatalf("PUT /api/settings: %d %s", code, body)
	}

	// The next gui_execute_task, over /mcp with the same token, uses it.
	res := executeOverHTTP(t, a, srv, "click the middle")
	responses.WriteString(res)
	if !strings.Contains(res, `"status":"completed"`) {
		t.Fatalf("gui_execute_task after the settings change: %s", res)
	}
	reqs := model.fake.Requests()
	if len(reqs) == 0 || !bytes.Contains(reqs[0].Body, []byte(`"model":"vision-2"`)) {
		t.Fatalf("the task did not call the model set over the API: %d requests", len(reqs))
	}
	model.mu.Lock()
	if len(model.auth) == 0 || model.auth[0] != "Bearer "+canary {
		t.Errorf("the model was not called with the key set over the API: %q", model.auth)
	}
	model.mu.Unlock()

	// Restart: the settings file (0600) brings them back.
	srv.Close()
	a.Close()
	file := filepath.Join(dir, ".config", "guiagent", "settings.json")
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("settings file %s: %v, mode %v (want 0600)", file, err, st.Mode())
	}
	a2, srv2 := startFromEnv(t, env, &logs)
	if !a2.HasModel() {
		t.Fatal("after a restart the model set over the API is gone")
	}
	code, body = call(t, a2, srv2, "GET", "/api/settings", "")
	responses.WriteString(body)
	if code != 200 || !strings.Contains(body, `"model":"vision-2"`) || !strings.Contains(body, `"api_key_set":true`) {
		t.Fatalf("GET /api/settings after a restart: %d %s", code, body)
	}
	srv2.Close()
	a2.Close()

	if strings.Contains(responses.String(), canary) {
		t.Errorf("a response carries the key:\n%s", responses.String())
	}
	if strings.Contains(logs.String(), canary) {
		t.Errorf("the log carries the key:\n%s", logs.String())
	}
	var recorded int
	filepath.WalkDir(filepath.Join(dir, "runs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			recorded++
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(canary)) {
				t.Errorf("the run record %s carries the key", p)
			}
		}
		return nil
	})
	if recorded == 0 {
		t.Error("the task left no run record to check")
	}
}

// executeOverHTTP calls gui_execute_task over Streamable HTTP.
func executeOverHTTP(t *testing.T, a *guiagent.Agent, srv *httptest.Server, task string) string {
	t.Helper()
	ctx := context.Background()
	hc := &http.Client{Transport: bearer{a.HTTPToken()}}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "gui_execute_task", Arguments: map[string]any{"task": task}})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Name, "setting") || strings.Contains(tool.Name, "config") {
			t.Errorf("MCP tool %s exposes the settings: a model must not reconfigure its supervisor", tool.Name)
		}
	}
	return res.Content[0].(*mcp.TextContent).Text
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSettingsAPIRefusesBadChanges: each refused change gets a status and a
// message naming the field and what it accepts, and changes nothing.
func TestSettingsAPIRefusesBadChanges(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": filepath.Join(dir, "runs"), "GUI_AGENT_ADAPTER": "generic"}
	a, srv := startFromEnv(t, env, io.Discard)
	cases := []struct {
		body string
		code int
		want []string
	}{
		{`{"modle":"gpt-4o"}`, 400, []string{`unknown field \"modle\"`, "model"}},
		{`{"provider":"opnai"}`, 400, []string{"provider", "anthropic, gemini, openai"}},
		{`{"model":42}`, 400, []string{"model must be a string"}},
		{`{"coordinate_mode":"sideways"}`, 400, []string{"coordinate_mode"}},
		{`{"display":"7"}`, 400, []string{"display", "/api/displays"}},
		{`{"base_url":"ftp://x"}`, 400, []string{"base_url", "http://"}},
		{`{"provider":"openai","model":"gpt-4o"}`, 400, []string{"api_key"}},
		{`{"adapter":"ui-tars"}`, 409, []string{"adapter", "environment"}},
		{`[1,2]`, 400, []string{"JSON object"}},
	}
	for _, c := range cases {
		code, body := call(t, a, srv, "PUT", "/api/settings", c.body)
		if code != c.code {
			t.Errorf("PUT %s: status %d, want %d (%s)", c.body, code, c.code, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("PUT %s: %s does not name %q", c.body, body, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".config", "guiagent", "settings.json")); err == nil {
		t.Error("a refused change wrote the settings file")
	}
	if code, body := call(t, a, srv, "GET", "/api/settings", ""); code != 200 || !strings.Contains(body, `"provider":""`) || !strings.Contains(body, `"adapter":"environment"`) {
		t.Errorf("after refused changes: %d %s", code, body)
	}
	// Same authentication as /mcp; a browser on another origin cannot write.
	if code, _ := call(t, a, srv, "GET", "/api/settings", "", "Authorization", ""); code != 401 {
		t.Errorf("GET without the token: %d, want 401", code)
	}
	if code, _ := call(t, a, srv, "PUT", "/api/settings", `{"model":"x"}`, "Authorization", "Bearer wrong-token-0123456789"); code != 401 {
		t.Errorf("PUT with a wrong token: %d, want 401", code)
	}
	if code, _ := call(t, a, srv, "PUT", "/api/settings", `{"display":"0"}`, "Origin", "http://evil.example"); code != 403 {
		t.Errorf("cross-origin PUT: %d, want 403", code)
	}
	code, body := call(t, a, srv, "GET", "/api/displays", "")
	var ds struct {
		Displays []struct {
			ID            string
			Width, Height int
		}
	}
	if json.Unmarshal([]byte(body), &ds); code != 200 || len(ds.Displays) != 1 || ds.Displays[0].Width != 800 {
		t.Errorf("GET /api/displays: %d %s", code, body)
	}
	// A valid display change applies and persists.
	if code, body := call(t, a, srv, "PUT", "/api/settings", `{"display":"`+ds.Displays[0].ID+`"}`); code != 200 || !strings.Contains(body, `"display":"`+ds.Displays[0].ID+`"`) {
		t.Errorf("PUT display: %d %s", code, body)
	}
}

// TestSettingsChangeWhileATaskRuns: a task running when the model changes
// finishes on its model; the next task waits for it (one desktop task at a
// time) and runs on the new one.
func TestSettingsChangeWhileATaskRuns(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	slow := fakellm.NewChatServer(fakellm.Script(
		func(fakellm.Turn) fakellm.Reply { <-release; return fakellm.Finish("old model done") },
	), fakellm.ChatOptions{})
	defer slow.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	fresh := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Finish("new model done"))), fakellm.ChatOptions{})
	defer fresh.Close()
	env := map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": filepath.Join(dir, "runs")}
	a, srv := startFromEnv(t, env, io.Discard)
	if code, body := call(t, a, srv, "PUT", "/api/settings", `{"provider":"openai","model":"old","base_url":"`+slow.URL+`","api_key":"sk-old-0123456789","adapter":"generic"}`); code != 200 {
		t.Fatalf("PUT old: %d %s", code, body)
	}
	ctx := context.Background()
	first := make(chan guiagent.Result, 1)
	go func() {
		r, err := a.Execute(ctx, "first")
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	for slow.Calls() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := call(t, a, srv, "PUT", "/api/settings", `{"model":"new","base_url":"`+fresh.URL+`"}`); code != 200 {
		t.Fatalf("PUT new while a task runs: %d %s", code, body)
	}
	second := make(chan guiagent.Result, 1)
	go func() {
		r, err := a.Execute(ctx, "second")
		if err != nil {
			t.Error(err)
		}
		second <- r
	}()
	time.Sleep(300 * time.Millisecond)
	if fresh.Calls() != 0 {
		t.Fatal("the second task started while the first still ran")
	}
	close(release)
	r1, r2 := <-first, <-second
	if r1.Status != guiagent.Completed || r1.Result != "old model done" {
		t.Errorf("first task: %s %q, want it finished on the old model", r1.Status, r1.Result)
	}
	if r2.Status != guiagent.Completed || r2.Result != "new model done" {
		t.Errorf("second task: %s %q %s, want it run on the new model", r2.Status, r2.Result, r2.Summary)
	}
	if reqs := fresh.Requests(); len(reqs) == 0 || !bytes.Contains(reqs[0].Body, []byte(`"model":"new"`)) {
		t.Errorf("the new model server got %d requests", len(reqs))
	}
}

// TestOptionsBuiltInGoRankAboveTheSettingsFile: for Options a program builds
// itself, the settings file fills what it leaves empty, and what it sets
// cannot be changed over the API (409), like a flag.
func TestOptionsBuiltInGoRankAboveTheSettingsFile(t *testing.T) {
	testenv.NeedX(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"model":"from-file","provider":"openai","base_url":"http://127.0.0.1:9/v1","memory_model":"small"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := guiagent.New(context.Background(), guiagent.Options{
		Model: "from-go", SettingsFile: file, RunsDir: filepath.Join(dir, "runs"), StateDir: dir,
		VirtualDisplay: guiagent.Size{Width: 640, Height: 480}, AlwaysVirtualDisplay: true, Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	code, body := call(t, a, srv, "GET", "/api/settings", "")
	for _, want := range []string{`"model":"from-go"`, `"provider":"openai"`, `"memory_model":"small"`, `"model":"Go options"`, `"provider":"settings file"`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET /api/settings lacks %s: %d %s", want, code, body)
		}
	}
	if code, body := call(t, a, srv, "PUT", "/api/settings", `{"model":"other"}`); code != 409 || !strings.Contains(body, "Go options") {
		t.Errorf("PUT a model the program set: %d %s, want 409", code, body)
	}
	if code, body := call(t, a, srv, "PUT", "/api/settings", `{"memory_model":"tiny"}`); code != 200 {
		t.Errorf("PUT a setting from the file: %d %s", code, body)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `"memory_model": "tiny"`) || !strings.Contains(string(b), `"model": "from-file"`) {
		t.Errorf("the settings file after the change: %s", b)
	}
}

// TestARefusedKeyIsNotLearned: a PUT whose api_key is refused (a word, or a
// key sent with an invalid change) teaches the secret scrubber nothing: tool
// results still decode, log words stay, and a refusal does not echo the key.
func TestARefusedKeyIsNotLearned(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "GUI_AGENT_RUNS_DIR": filepath.Join(dir, "runs"), "GUI_AGENT_ADAPTER": "generic"}
	var logs testenv.Buffer
	a, srv := startFromEnv(t, env, &logs)
	for _, c := range []struct{ body, want string }{
		{`{"api_key":"true"}`, "too short"},
		{`{"api_key":"information"}`, "plain word"},
		{`{"api_key":"sk live 0123456789"}`, "spaces"},
		{`{"api_key":"sk-refused-0123456789","base_url":"ftp://x"}`, "base_url"},
	} {
		code, body := call(t, a, srv, "PUT", "/api/settings", c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("PUT %s: %d %s, want 400 naming %q", c.body, code, body, c.want)
		}
		if strings.Contains(body, "sk-refused") || strings.Contains(body, "information") {
			t.Errorf("PUT %s: the refusal echoes the key: %s", c.body, body)
		}
	}
	session := connectHTTP(t, a, srv, io.Discard)
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_list_displays", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("gui_list_displays after refused keys: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"primary":true`) {
		t.Errorf("gui_list_displays answered %s", b)
	}
	set, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_clipboard", Arguments: map[string]any{"action": "set", "text": "information sk-refused-0123456789"}})
	if err != nil || set.IsError {
		t.Fatalf("gui_clipboard set: %v %+v", err, set)
	}
	got, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_clipboard", Arguments: map[string]any{"action": "get"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "information sk-refused-0123456789") {
		t.Errorf("a refused key was learned as a secret: the clipboard reads back %q", text)
	}
	if strings.Contains(logs.String(), "[REDACTED]") {
		t.Errorf("log words were redacted after refused keys:\n%s", logs.String())
	}
}
