package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/platform"
)

// soakProtocol is the MCP protocol version the soak's client speaks.
const soakProtocol = "2025-06-18"

// soakCalls are the atomic calls a soak cycles through: pointer, keyboard,
// screen, clipboard and resources, as a client's own model would use them.
var soakCalls = []struct {
	tool string
	args map[string]any
}{
	{"gui_screenshot", map[string]any{}},
	{"gui_move", map[string]any{"x": 200, "y": 150}},
	{"gui_click", map[string]any{"x": 300, "y": 200}},
	{"gui_cursor_position", map[string]any{}},
	{"gui_type", map[string]any{"text": "soak test ✓"}},
	{"gui_press_key", map[string]any{"key": "Escape"}},
	{"gui_scroll", map[string]any{"x": 320, "y": 240, "direction": "down", "amount": 2}},
	{"gui_drag", map[string]any{"from_x": 100, "from_y": 100, "to_x": 400, "to_y": 300}},
	{"gui_list_displays", map[string]any{}},
	{"gui_hotkey", map[string]any{"keys": []string{"ctrl", "a"}}},
	{"gui_clipboard", map[string]any{"action": "set", "text": "soak clipboard"}},
	{"gui_clipboard", map[string]any{"action": "get"}},
	{"gui_zoom", map[string]any{"x1": 10, "y1": 10, "x2": 200, "y2": 150}},
	{"gui_click", map[string]any{"x": 1e15, "y": 10}},                     // refused: off every display
	{"gui_hotkey", map[string]any{"keys": []string{"ctrl", "alt", "\b"}}}, // refused: control character
}

// soakSample is one measurement of a server process.
type soakSample struct {
	At         string `json:"at"`
	Calls      int    `json:"calls"`
	RSSKB      int64  `json:"rss_kb"`
	Threads    int64  `json:"threads"`
	OpenFiles  int    `json:"open_files"`
	Goroutines int    `json:"goroutines"`
	HeapBytes  int64  `json:"heap_alloc_bytes"`
	RunsFiles  int    `json:"runs_files"`
	RunsBytes  int64  `json:"runs_bytes"`
}

// soakServer is one guiagent serve process and the client talking to it.
type soakServer struct {
	name   string
	cmd    *exec.Cmd
	state  string
	client mcpClient
	calls  int
	errors map[string]int // tool results with isError, by tool
	// firstErrors holds the first error text of each tool.
	firstErrors map[string]string
	samples     []soakSample
}

// mcpClient makes one JSON-RPC request and returns its result.
type mcpClient interface {
	request(ctx context.Context, method string, params any) (json.RawMessage, error)
	close() error
}

// cmdSoak runs `guiagent bench soak`: n mixed atomic calls, alternating over
// stdio and Streamable HTTP, against two guiagent servers on private Xvfbs;
// it prints each server's memory, goroutines and open files at the start,
// the middle and the end as JSON.
func cmdSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10000, "number of tool calls, split between stdio and HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 10 || *n > 1_000_000 {
		return fmt.Errorf("-n %d: want 10 to 1000000", *n)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Each server gets its own desktop: two servers on one display would
	// race over its clipboard and pointer.
	var displays []string
	for range 2 {
		vd, err := platform.StartXvfb(ctx, platform.XvfbOptions{Width: 1280, Height: 800})
		if err != nil {
			return fmt.Errorf("bench soak needs a private virtual desktop: %w", err)
		}
		defer vd.Close()
		displays = append(displays, vd.Display)
	}
	fmt.Fprintf(stderr, "soak: private virtual desktops %s, %d calls\n", strings.Join(displays, " "), *n)
	servers, err := startSoakServers(ctx, self, displays, stderr)
	for _, s := range servers {
		defer s.stop()
	}
	if err != nil {
		return err
	}
	start := time.Now()
	if err := soakLoop(ctx, servers, *n, stderr); err != nil {
		return err
	}
	out := map[string]any{"n": *n, "elapsed_s": time.Since(start).Seconds(), "servers": map[string]any{}}
	calls, hold := backpressureShape(*n)
	fmt.Fprintf(stderr, "soak: stdout backpressure: %d screenshot calls, answers unread for %v\n", calls, hold)
	bp, err := soakBackpressure(ctx, servers[0], calls, hold)
	if err != nil {
		return err
	}
	out["stdout_backpressure"] = bp
	perSession := fleetSessionCalls(*n)
	fmt.Fprintf(stderr, "soak: fleet: %d rounds of two sessions on private desktops, %d calls each\n", fleetRounds, perSession)
	fl, err := soakFleet(ctx, self, perSession, stderr)
	if err != nil {
		return err
	}
	out["fleet"] = fl
	for _, s := range servers {
		out["servers"].(map[string]any)[s.name] = map[string]any{"calls": s.calls, "tool_errors_by_tool": s.errors, "first_errors": s.firstErrors, "samples": s.samples}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(stdout, string(b))
	return nil
}

// soakLoop makes n calls alternating between the servers, sampling each at
// the start, the middle and the end. Every 500 HTTP calls the HTTP session
// is closed and a new one opened, as clients come and go.
func soakLoop(ctx context.Context, servers []*soakServer, n int, stderr io.Writer) error {
	// The start is sampled after a warm-up (two rounds of every call), so
	// that caches filled once do not read as growth.
	warm := min(2*len(soakCalls)*len(servers), n/4)
	for i := range n {
		s := servers[i%len(servers)]
		c := soakCalls[(i/len(servers))%len(soakCalls)]
		res, err := s.client.request(ctx, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
		if err != nil {
			return fmt.Errorf("%s call %d (%s): %w", s.name, i, c.tool, err)
		}
		s.calls++
		s.noteError(c.tool, res)
		if h, ok := s.client.(*httpClient); ok && s.calls%500 == 0 {
			if err := h.reconnect(ctx); err != nil {
				return err
			}
		}
		if at := map[int]string{warm - 1: "start", n / 2: "middle", n - 1: "end"}[i]; at != "" {
			for _, s := range servers {
				if err := s.sample(ctx, at); err != nil {
					return err
				}
			}
			fmt.Fprintf(stderr, "soak: %d calls done\n", i+1)
		}
	}
	return nil
}

// noteError counts a tool result flagged isError and keeps the first text of
// each tool's errors, so that a soak shows what failed.
func (s *soakServer) noteError(tool string, res json.RawMessage) {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(res, &r) != nil || !r.IsError {
		return
	}
	s.errors[tool]++
	if _, ok := s.firstErrors[tool]; !ok && len(r.Content) > 0 {
		s.firstErrors[tool] = r.Content[0].Text
	}
}

// startSoakServers starts `guiagent serve` over stdio and over HTTP, each
// on its own display with its own state directory, and connects a client to each.
func startSoakServers(ctx context.Context, self string, displays []string, stderr io.Writer) ([]*soakServer, error) {
	var out []*soakServer
	for i, name := range []string{"stdio", "http"} {
		display := displays[i]
		state, err := os.MkdirTemp("", "guiagent-soak-")
		if err != nil {
			return out, err
		}
		s := &soakServer{name: name, state: state, errors: map[string]int{}, firstErrors: map[string]string{}}
		out = append(out, s)
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state,
			config.Var("RunsDir") + "=" + filepath.Join(state, "runs"), config.Var("LogLevel") + "=warn"}
		if name == "stdio" {
			s.cmd = exec.Command(self, "serve", "--display", display)
			s.cmd.Env, s.cmd.Stderr = env, stderr
			s.client, err = startStdioClient(ctx, s.cmd)
		} else {
			s.client, err = startHTTPClient(ctx, self, display, env, stderr, &s.cmd)
		}
		if err != nil {
			return out, fmt.Errorf("starting guiagent serve (%s): %w", name, err)
		}
	}
	return out, nil
}

// stop ends the server and removes its state directory.
func (s *soakServer) stop() {
	if s.client != nil {
		_ = s.client.close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(hardStopAfter + 5*time.Second):
			_ = s.cmd.Process.Kill()
		}
	}
	os.RemoveAll(s.state)
}

// sample measures the server process: resident memory and threads
// (/proc/PID/status), open files (/proc/PID/fd), goroutines and heap
// (gui://status), and what its run records hold on disk.
func (s *soakServer) sample(ctx context.Context, at string) error {
	pid := s.cmd.Process.Pid
	sm := soakSample{At: at, Calls: s.calls}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return fmt.Errorf("bench soak reads /proc (Linux only): %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			sm.RSSKB, _ = strconv.ParseInt(f[0], 10, 64)
		case "Threads":
			sm.Threads, _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	sm.OpenFiles = len(fds)
	rt, err := statusRuntime(ctx, s.client)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	sm.Goroutines, sm.HeapBytes = rt.Goroutines, rt.Heap
	_ = filepath.WalkDir(filepath.Join(s.state, "runs"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				sm.RunsFiles++
				sm.RunsBytes += fi.Size()
			}
		}
		return nil
	})
	s.samples = append(s.samples, sm)
	return nil
}

// rpcResponse is a JSON-RPC response (or a notification, without id).
type rpcResponse struct {
	ID     *int64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r rpcResponse) value() (json.RawMessage, error) {
	if r.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	return r.Result, nil
}

var initializeParams = map[string]any{"protocolVersion": soakProtocol, "capabilities": map[string]any{},
	"clientInfo": map[string]any{"name": "guiagent-soak", "version": guiagent.Version}}

// stdioClient speaks MCP over a child's stdin and stdout.
type stdioClient struct {
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int64
}

func startStdioClient(ctx context.Context, cmd *exec.Cmd) (*stdioClient, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &stdioClient{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.request(ctx, "initialize", initializeParams); err != nil {
		return nil, err
	}
	return c, c.notify("notifications/initialized")
}

func (c *stdioClient) notify(method string) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	_, err := c.in.Write(append(b, '\n'))
	return err
}

func (c *stdioClient) request(_ context.Context, method string, params any) (json.RawMessage, error) {
	c.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the server's answer: %w", err)
		}
		var r rpcResponse
		if json.Unmarshal(line, &r) == nil && r.ID != nil && *r.ID == c.nextID {
			return r.value()
		}
	}
}

func (c *stdioClient) close() error { return c.in.Close() }

// httpClient speaks MCP over Streamable HTTP with one session at a time.
type httpClient struct {
	url, token, session string
	hc                  *http.Client
	nextID              int64
}

func startHTTPClient(ctx context.Context, self, display string, env []string, stderr io.Writer, cmd **exec.Cmd) (*httpClient, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	c := &httpClient{url: "http://" + addr + "/mcp", token: hex.EncodeToString(tok), hc: &http.Client{Timeout: time.Minute}}
	*cmd = exec.Command(self, "serve", "--http", "--addr", addr, "--display", display)
	(*cmd).Env, (*cmd).Stderr = append(env, config.Var("HTTPToken")+"="+c.token), stderr
	if err := (*cmd).Start(); err != nil {
		return nil, err
	}
	if err := waitListening(addr); err != nil {
		return nil, err
	}
	return c, c.reconnect(ctx)
}

// reconnect ends the current session (DELETE) and opens a new one.
func (c *httpClient) reconnect(ctx context.Context) error {
	if err := c.close(); err != nil {
		return err
	}
	c.session = ""
	if _, err := c.request(ctx, "initialize", initializeParams); err != nil {
		return err
	}
	_, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return err
}

func (c *httpClient) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.nextID++
	resp, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	var r rpcResponse
	if err := json.Unmarshal(resp, &r); err != nil || r.ID == nil || *r.ID != c.nextID {
		return nil, fmt.Errorf("%s: no answer to request %d in %.200q", method, c.nextID, resp)
	}
	return r.value()
}

// post sends one message and returns the JSON-RPC answer it carries (from a
// JSON body or the last data line of an event stream); nil for a notification.
func (c *httpClient) post(ctx context.Context, msg any) ([]byte, error) {
	b, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c.headers(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return body, nil
	}
	var last []byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			last = bytes.TrimSpace(d)
		}
	}
	return last, nil
}

func (c *httpClient) headers(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", soakProtocol)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
}

// close ends the session with DELETE, as a client that leaves does.
func (c *httpClient) close() error {
	if c.session == "" {
		return nil
	}
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	c.headers(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
		return errors.New("DELETE of the session: " + resp.Status)
	}
	return nil
}

// soakRuntime is the runtime part of gui://status.
type soakRuntime struct {
	Goroutines int   `json:"goroutines"`
	Heap       int64 `json:"heap_alloc_bytes"`
}

// statusRuntime reads gui://status through c and returns its runtime figures
// (the whole process's).
func statusRuntime(ctx context.Context, c mcpClient) (soakRuntime, error) {
	res, err := c.request(ctx, "resources/read", map[string]any{"uri": "gui://status"})
	if err != nil {
		return soakRuntime{}, fmt.Errorf("reading gui://status: %w", err)
	}
	var r struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	var st struct {
		Runtime soakRuntime `json:"runtime"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Contents) == 0 || json.Unmarshal([]byte(r.Contents[0].Text), &st) != nil {
		return soakRuntime{}, fmt.Errorf("gui://status is not the expected JSON: %s", res)
	}
	return st.Runtime, nil
}

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
