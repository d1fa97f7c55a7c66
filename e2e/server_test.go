package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/testenv"
	"github.com/guiagent/guiagent/internal/trace"
)

// testModel is the model name the server is configured with: unknown to the
// profile table, so its coordinates are pixels of the image sent, which is
// what fakellm.ChatServer answers by default.
const testModel = "e2e-vision-model"

// canary returns a random, recognisable secret such as "sk-e2e-canary-<32 hex>".
func canary(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// modelServer is a scripted OpenAI-compatible provider (fakellm) behind a
// proxy that remembers the Authorization headers it received, so a test can
// prove the configured key really reached the provider.
type modelServer struct {
	*fakellm.ChatServer
	// URL is the base URL to configure (up to and including /v1).
	URL string

	mu    sync.Mutex
	auths []string
}

func startModel(t *testing.T, brain fakellm.Brain) *modelServer {
	t.Helper()
	fs := fakellm.NewChatServer(brain, fakellm.ChatOptions{})
	t.Cleanup(fs.Close)
	root, err := url.Parse(fs.Root)
	if err != nil {
		t.Fatal(err)
	}
	m := &modelServer{ChatServer: fs}
	proxy := httputil.NewSingleHostReverseProxy(root)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.auths = append(m.auths, r.Header.Get("Authorization"))
		m.mu.Unlock()
		proxy.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	m.URL = "http://" + ln.Addr().String() + "/v1"
	return m
}

// Authorizations returns the Authorization headers the provider received.
func (m *modelServer) Authorizations() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.auths)
}

// serverConfig configures one guiagent process.
type serverConfig struct {
	display string
	// model, when set, is the provider gui_execute_task uses, with apiKey.
	model  *modelServer
	apiKey string
	// httpToken is GUI_AGENT_HTTP_TOKEN; "" lets serve --http generate one.
	httpToken string
	// logToFile sets GUI_AGENT_LOG_FILE to guiagent.logFile.
	logToFile bool
	// env holds more KEY=value settings.
	env []string
}

// guiagent is one guiagent process and the files it writes.
type guiagent struct {
	// state is $HOME and $XDG_STATE_HOME of the process; runsDir and logFile live in it.
	state, runsDir, logFile string
	env                     []string
	stdout, stderr          *testenv.Buffer
	// addr is the HTTP listener (serve --http) and token its bearer token.
	addr, token string
	// wire collects every byte of every HTTP response the MCP clients received.
	wire *testenv.Buffer

	cmd  *exec.Cmd
	done chan error
}

func newGuiagent(t *testing.T, c serverConfig) *guiagent {
	t.Helper()
	state := t.TempDir()
	g := &guiagent{state: state, runsDir: filepath.Join(state, "runs"), logFile: filepath.Join(state, "guiagent.log"),
		stdout: &testenv.Buffer{}, stderr: &testenv.Buffer{}, wire: &testenv.Buffer{}, token: c.httpToken}
	g.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state,
		"DISPLAY=" + c.display, "GUI_AGENT_LOG_LEVEL=debug", "GUI_AGENT_RUNS_DIR=" + g.runsDir}
	if c.model != nil {
		g.env = append(g.env, "GUI_AGENT_PROVIDER=openai", "GUI_AGENT_MODEL="+testModel,
			"GUI_AGENT_BASE_URL="+c.model.URL, "GUI_AGENT_API_KEY="+c.apiKey)
	}
	if c.httpToken != "" {
		g.env = append(g.env, "GUI_AGENT_HTTP_TOKEN="+c.httpToken)
	}
	if c.logToFile {
		g.env = append(g.env, "GUI_AGENT_LOG_FILE="+g.logFile)
	}
	g.env = append(g.env, c.env...)
	return g
}

// command returns the guiagent command with args in the process environment.
func (g *guiagent) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = g.env
	testenv.DieWithTest(cmd) // a server over HTTP would outlive a test that panicked
	return cmd
}

// run runs a short guiagent subcommand (doctor, runs, report) and returns its
// combined output; a non-zero exit is returned as err.
func (g *guiagent) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = g.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startStdio starts `guiagent serve` and connects an MCP client over stdio.
func startStdio(t *testing.T, c serverConfig, opts *mcp.ClientOptions) (*guiagent, *mcp.ClientSession) {
	t.Helper()
	g := newGuiagent(t, c)
	cmd := g.command("serve")
	cmd.Stderr = g.stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", g.stderr)
		}
	})
	return g, mustDial(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "e2e-stdio", opts: opts}, g.stderr)
}

// startHTTP starts `guiagent serve --http` and waits until it answers.
func startHTTP(t *testing.T, c serverConfig) *guiagent {
	t.Helper()
	g := newGuiagent(t, c)
	g.addr = freePort(t)
	g.cmd = g.command("serve", "--http", "--addr", g.addr)
	g.cmd.Stdout, g.cmd.Stderr = g.stdout, g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g.done = make(chan error, 1)
	go func() { g.done <- g.cmd.Wait() }()
	t.Cleanup(func() {
		g.stop(t)
		if t.Failed() {
			t.Logf("server stderr:\n%s\nserver stdout:\n%s", g.stderr, g.stdout)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + g.addr + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("GET / without a token: status %d, want 401", resp.StatusCode)
			}
			return g
		}
		select {
		case err := <-g.done:
			g.done <- err
			t.Fatalf("guiagent serve --http exited: %v\n%s", err, g.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("guiagent did not listen on %s within 30 s:\n%s", g.addr, g.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop interrupts an HTTP server and waits for it to exit (idempotent).
func (g *guiagent) stop(t *testing.T) {
	t.Helper()
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-g.done:
		g.done <- err
		if err != nil {
			t.Errorf("guiagent serve --http did not exit cleanly on interrupt: %v", err)
		}
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		t.Errorf("guiagent serve --http did not exit within 15 s of an interrupt")
		g.done <- <-g.done
	}
}

// teeTransport adds the bearer token and copies every response body into wire.
type teeTransport struct {
	token string
	wire  io.Writer
	// base makes the requests; nil means http.DefaultTransport.
	base http.RoundTripper
}

func (tt teeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if tt.token != "" {
		r.Header.Set("Authorization", "Bearer "+tt.token)
	}
	base := tt.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, tt.wire), resp.Body}
	return resp, nil
}

// connect opens an MCP session over Streamable HTTP with the server's token.
func (g *guiagent) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return g.connectAt(t, opts, "")
}

// connectAt opens an MCP session over Streamable HTTP speaking protocol
// version ("": the SDK's latest).
func (g *guiagent) connectAt(t *testing.T, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	return mustDial(t, g.transport(), client{name: "e2e-http", opts: opts, version: version}, g.stderr)
}

// transport is a Streamable HTTP client transport to the server, with its
// token, copying every response into g.wire.
func (g *guiagent) transport() *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{Endpoint: "http://" + g.addr + "/mcp",
		HTTPClient: &http.Client{Transport: teeTransport{token: g.token, wire: g.wire}}}
}

// transports run a test over each way a host connects: they start a guiagent
// configured by c and connect an MCP client to it, over stdio or Streamable HTTP.
var transports = []struct {
	name    string
	connect func(t *testing.T, c serverConfig, opts *mcp.ClientOptions) (*guiagent, *mcp.ClientSession)
}{
	{"stdio", startStdio},
	{"http", func(t *testing.T, c serverConfig, opts *mcp.ClientOptions) (*guiagent, *mcp.ClientSession) {
		if c.httpToken == "" {
			c.httpToken = httpToken
		}
		g := startHTTP(t, c)
		return g, g.connect(t, opts)
	}},
}

// client is how a test's MCP client introduces itself: its name, options
// and protocol version ("": the SDK's latest).
type client struct {
	name    string
	opts    *mcp.ClientOptions
	version string
}

// dial is the one construction of the tests' MCP clients: it connects c over
// tr within timeout (0 means 30 s). The caller closes the session.
func dial(tr mcp.Transport, c client, timeout time.Duration) (*mcp.ClientSession, error) {
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var so *mcp.ClientSessionOptions
	if c.version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: c.version}
	}
	return mcp.NewClient(&mcp.Implementation{Name: c.name, Version: "1"}, c.opts).Connect(ctx, tr, so)
}

// mustDial dials, failing the test with the server's log when it cannot
// connect; the session is closed when the test ends.
func mustDial(t testing.TB, tr mcp.Transport, c client, logs fmt.Stringer) *mcp.ClientSession {
	t.Helper()
	cs, err := dial(tr, c, 0)
	if err != nil {
		t.Fatalf("connecting %s: %v\nserver log:\n%s", c.name, err, logs)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// get fetches a dashboard path with the bearer token and returns status and body.
func (g *guiagent) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+g.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", path, err)
	}
	return resp.StatusCode, b
}

// progressLog collects the messages and values of progress notifications.
type progressLog struct {
	mu     sync.Mutex
	msgs   []string
	values []float64
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, req.Params.Message)
	p.values = append(p.values, req.Params.Progress)
}

func (p *progressLog) snapshot() ([]string, []float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.msgs), slices.Clone(p.values)
}

// waitFor polls until cond holds or timeout passes; it reports whether cond held.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// executeTask calls gui_execute_task and decodes its structured result.
func executeTask(ctx context.Context, t *testing.T, cs *mcp.ClientSession, task string, progressToken any) (*mcp.CallToolResult, agent.Result) {
	t.Helper()
	p := &mcp.CallToolParams{Name: "gui_execute_task", Arguments: map[string]any{"task": task, "timeout_s": 60}}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("gui_execute_task(%q): %v", task, err)
	}
	var r agent.Result
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("gui_execute_task returned no structured content (%v): %s", err, textOf(res))
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("gui_execute_task structured content %s: %v", b, err)
	}
	return res, r
}

// readResult reads result.json of a run directory.
func readResult(dir string) (agent.Result, error) {
	var r agent.Result
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

// readResource reads one MCP resource and returns its text.
func readResource(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.Text)
		b.Write(c.Blob)
	}
	return b.String()
}

// listRuns reads gui://runs.
// recordIDOf is the session's record id, as gui://status tells its reader:
// what names the session in run records, audit entries, logs and the
// dashboard (never its Mcp-Session-Id).
func recordIDOf(t testing.TB, cs *mcp.ClientSession) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "gui://status"})
	if err != nil || len(res.Contents) == 0 {
		t.Fatalf("reading gui://status: %v", err)
	}
	var st struct{ Session string }
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &st); err != nil || st.Session == "" {
		t.Fatalf("gui://status names no session record id (%v): %.300s", err, res.Contents[0].Text)
	}
	return st.Session
}

func listRuns(t *testing.T, cs *mcp.ClientSession) []trace.RunInfo {
	t.Helper()
	text := readResource(t, cs, "gui://runs")
	var runs []trace.RunInfo
	if err := json.Unmarshal([]byte(text), &runs); err != nil {
		var wrapped struct {
			Runs []trace.RunInfo `json:"runs"`
		}
		if err2 := json.Unmarshal([]byte(text), &wrapped); err2 != nil {
			t.Fatalf("gui://runs is neither a list of runs nor {runs: [...]}: %v\n%s", err, text)
		}
		runs = wrapped.Runs
	}
	return runs
}

// heldKeys asks the X server which keycodes are down right now.
func heldKeys(t *testing.T, x *xgb.Conn) []int {
	t.Helper()
	rep, err := xproto.QueryKeymap(x).Reply()
	if err != nil {
		t.Fatalf("QueryKeymap: %v", err)
	}
	var down []int
	for i, b := range rep.Keys {
		for bit := 0; bit < 8; bit++ {
			if b&(1<<bit) != 0 {
				down = append(down, i*8+bit)
			}
		}
	}
	return down
}

// xProbe opens a separate X connection to watch the keyboard state.
func xProbe(t *testing.T, display string) *xgb.Conn {
	t.Helper()
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connecting an X probe to %s: %v", display, err)
	}
	t.Cleanup(x.Close)
	return x
}

// containsAny returns the first needle found in hay, or "".
func containsAny(hay []byte, needles []string) string {
	for _, n := range needles {
		if bytes.Contains(hay, []byte(n)) {
			return n
		}
	}
	return ""
}
