package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/testenv"
)

// fleetForm is session k's form: every session types values of its own, so an
// event in the wrong application shows whose it was.
func fleetForm(k int) scripted.DemoForm {
	return scripted.DemoForm{Name: fmt.Sprintf("user%d", k), Email: fmt.Sprintf("user%d@example.org", k), City: fmt.Sprintf("city%d", k)}
}

var fleetTaskRE = regexp.MustCompile(`with name (\S+), email (\S+) and city (\S+),`)

// fleetBrain fills the sample form with the values the task names.
func fleetBrain(t fakellm.Turn) fakellm.Reply {
	m := fleetTaskRE.FindStringSubmatch(t.Prompt)
	if m == nil {
		return fakellm.Reply{Status: llm.Failed, Result: "the task names no form values"}
	}
	return scripted.DemoFormBrain(scripted.DemoForm{Name: m[1], Email: m[2], City: m[3]})(t)
}

// killableClient is an HTTP client whose connections can all be cut at once,
// as when the client's process is killed: no DELETE, the sockets just close.
type killableClient struct {
	mu     sync.Mutex
	conns  []net.Conn
	killed bool
}

func (k *killableClient) httpClient(token string) *http.Client {
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.killed {
			return nil, errors.New("this client was killed")
		}
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			k.conns = append(k.conns, c)
		}
		return c, err
	}}
	return &http.Client{Transport: teeTransport{token: token, wire: io.Discard, base: tr}}
}

func (k *killableClient) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killed = true
	for _, c := range k.conns {
		c.Close()
	}
}

// commandLog is what a session's command (the sample app) printed.
type commandLog struct {
	display string // DISPLAY the command saw
	pid     int    // the sample app's process id
	events  []sampleapp.Event
}

// readCommandLog parses desktops/<id>/session-command.log: a first line
// "display=:N pid=P" from the shell, then the sample app's JSON events.
func readCommandLog(t *testing.T, g *guiagent, sessionID string) (commandLog, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(g.state, "desktops", sessionID, "session-command.log"))
	if err != nil {
		return commandLog{}, false
	}
	var cl commandLog
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "display=") {
			if _, err := fmt.Sscanf(line, "display=%s pid=%d", &cl.display, &cl.pid); err != nil {
				t.Fatalf("session command log line %q: %v", line, err)
			}
			continue
		}
		var ev sampleapp.Event
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event != "" {
			cl.events = append(cl.events, ev)
		}
	}
	return cl, true
}

func waitReady(t *testing.T, g *guiagent, sessionID string) commandLog {
	t.Helper()
	var cl commandLog
	ok := waitFor(30*time.Second, func() bool {
		var found bool
		cl, found = readCommandLog(t, g, sessionID)
		for _, ev := range cl.events {
			if ev.Event == "ready" {
				return found
			}
		}
		return false
	})
	if !ok || cl.display == "" || cl.pid == 0 {
		t.Fatalf("session %s: the sample app did not report ready on its desktop within 30 s (log: %+v)\n%s", sessionID, cl, g.stderr)
	}
	return cl
}

func processAlive(pid int) bool {
	// A reaped process is gone from /proc; a zombie would be a leak too.
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// Four MCP sessions each get a private desktop with the sample app on it and
// run a task there at the same time: every application receives the clicks
// and the values of its own session only. A fifth session is refused with an
// error naming the limit. Killing a client ends its session: its Xvfb, its
// application, the display's lock file and socket are gone, and the freed
// slot takes a new session.
func TestDesktopPerSession(t *testing.T) {
	testenv.NeedX(t)
	const sessions = 4
	model := startModel(t, fleetBrain)
	stopFile := filepath.Join(t.TempDir(), "stop")
	// The shell prints the display and, after exec, the sample app's pid.
	cmdline := fmt.Sprintf(`echo "display=$DISPLAY pid=$$"; exec %s sample-app --scene form`, binary)
	g := startHTTP(t, serverConfig{model: model, apiKey: canary(t, "sk-fleet-"), httpToken: httpToken, env: []string{
		"GUI_AGENT_DESKTOP_PER_SESSION=1280x800", "GUI_AGENT_SESSION_COMMAND=" + cmdline,
		"GUI_AGENT_MAX_DESKTOPS=" + strconv.Itoa(sessions), "GUI_AGENT_SESSION_KEEPALIVE_S=1", "GUI_AGENT_LOG_FORMAT=json",
		"GUI_AGENT_KILL_SWITCH_FILE=" + stopFile,
	}})

	clients := make([]*killableClient, sessions)
	css := make([]*mcp.ClientSession, sessions)
	logs := make([]commandLog, sessions)
	recs := make([]string, sessions) // each session's record id
	for k := range sessions {
		clients[k] = &killableClient{}
		css[k] = connectFleet(t, g, clients[k])
		recs[k] = recordIDOf(t, css[k])
		logs[k] = waitReady(t, g, recs[k])
		for j := range k {
			if logs[j].display == logs[k].display {
				t.Fatalf("sessions %d and %d share display %s", j, k, logs[k].display)
			}
		}
	}
	checkFifthRefused(t, g, sessions)
	checkDashboardDesktops(t, g, recs)

	results := make([]agent.Result, sessions)
	var wg sync.WaitGroup
	for k := range sessions {
		wg.Go(func() {
			f := fleetForm(k)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			_, results[k] = executeTask(ctx, t, css[k], fmt.Sprintf("Fill the form with name %s, email %s and city %s, then press Submit", f.Name, f.Email, f.City), nil)
		})
	}
	wg.Wait()
	for k := range sessions {
		checkOwnEvents(t, g, k, recs[k], results[k])
	}
	checkFleetLogs(t, g, css, recs, results)
	checkKillSwitchStopsAll(t, stopFile, css, logs)
	checkFleetMetrics(t, g, sessions)

	// Kill session 0's client: no DELETE, its connections just close.
	victim := logs[0]
	clients[0].kill()
	n := strings.TrimPrefix(victim.display, ":")
	gone := waitFor(30*time.Second, func() bool {
		return !exists("/tmp/.X"+n+"-lock") && !exists("/tmp/.X11-unix/X"+n) && !processAlive(victim.pid) && !xvfbRunning(victim.display)
	})
	if !gone {
		t.Fatalf("30 s after its client was killed, session 0's desktop %s is still there: lock file %v, socket %v, sample app alive %v, Xvfb running %v",
			victim.display, exists("/tmp/.X"+n+"-lock"), exists("/tmp/.X11-unix/X"+n), processAlive(victim.pid), xvfbRunning(victim.display))
	}
	for k := 1; k < sessions; k++ {
		if !exists("/tmp/.X11-unix/X" + strings.TrimPrefix(logs[k].display, ":")) {
			t.Errorf("session %d's desktop %s went away with session 0's", k, logs[k].display)
		}
	}
	// The freed slot takes a new session, on a new desktop.
	cs := connectFleet(t, g, &killableClient{})
	waitReady(t, g, recordIDOf(t, cs))
}

// connectFleet opens an MCP session through a killable client.
func connectFleet(t *testing.T, g *guiagent, kc *killableClient) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: "http://" + g.addr + "/mcp", HTTPClient: kc.httpClient(g.token)}
	return mustDial(t, tr, client{name: "e2e-fleet"}, g.stderr)
}

// checkFifthRefused: a session over the cap gets a clear error, not a hang.
func checkFifthRefused(t *testing.T, g *guiagent, limit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: "http://" + g.addr + "/mcp", HTTPClient: (&killableClient{}).httpClient(g.token)}
	cs, err := dial(tr, client{name: "e2e-fifth"}, 10*time.Second)
	if err == nil {
		cs.Close()
		t.Fatalf("a session over the cap of %d desktops was accepted", limit)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+g.addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	want := fmt.Sprintf("--max-desktops %d", limit)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), want) {
		t.Errorf("a fifth initialize got %d %q; want 503 naming %q", resp.StatusCode, b, want)
	}
}

// checkOwnEvents: session k's task completed, and its application saw exactly
// the clicks of its own task and only its own values.
func checkOwnEvents(t *testing.T, g *guiagent, k int, sessionID string, r agent.Result) {
	t.Helper()
	if r.Status != agent.Completed {
		t.Errorf("session %d: task status %s (%s), want completed", k, r.Status, r.Summary)
		return
	}
	cl, _ := readCommandLog(t, g, sessionID)
	want := fleetForm(k)
	var submits, clicks int
	for _, ev := range cl.events {
		switch ev.Event {
		case "submit":
			submits++
			if ev.Fields["name"] != want.Name || ev.Fields["email"] != want.Email || ev.Fields["city"] != want.City {
				t.Errorf("session %d's app got the submit %v, want %+v", k, ev.Fields, want)
			}
		case "click":
			clicks++
		case "change":
			if ev.Value != "" && !strings.HasPrefix(want.Name, ev.Value) && !strings.HasPrefix(want.Email, ev.Value) && !strings.HasPrefix(want.City, ev.Value) {
				t.Errorf("session %d's app got text %q of another session (its own: %+v)", k, ev.Value, want)
			}
		}
	}
	taskClicks := 0
	for _, st := range r.Trace {
		for _, a := range st.Actions {
			if a.Action.Kind == action.Click {
				taskClicks++
			}
		}
	}
	if submits != 1 || taskClicks == 0 || clicks != taskClicks {
		t.Errorf("session %d's app saw %d submits and %d clicks; its task made 1 submit and %d clicks", k, submits, clicks, taskClicks)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// xvfbRunning reports whether a live Xvfb process serves display.
func xvfbRunning(display string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && filepath.Base(args[0]) == "Xvfb" && args[1] == display {
			if st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
				return true
			}
		}
	}
	return false
}

// checkFleetLogs: the JSON log has one object per line, and each task's
// lines carry its run id with its own session's record id, and no line
// carries a session's Mcp-Session-Id but the SDK's own.
func checkFleetLogs(t *testing.T, g *guiagent, css []*mcp.ClientSession, recs []string, results []agent.Result) {
	t.Helper()
	// The server logs a run's end before its result goes out, but its stderr
	// reaches us through a pipe and a copying goroutine: wait (briefly) until
	// every run's line has arrived.
	var runSession map[string]string
	var bad []string
	waitFor(5*time.Second, func() bool {
		runSession, bad = finishedRuns(g.stderr.String())
		for _, r := range results {
			if _, ok := runSession[r.RunID]; !ok {
				return false
			}
		}
		return true
	})
	for _, line := range bad {
		t.Errorf("log line is not JSON: %q", line)
	}
	for k, r := range results {
		if got := runSession[r.RunID]; got != recs[k] || got == css[k].ID() {
			t.Errorf("the log's task finished line of run %s names session %q, want its record id %q", r.RunID, got, recs[k])
		}
	}
}

// finishedRuns maps each run in a JSON log to the session its "task finished"
// line names, and lists the complete lines that are not JSON (the last line
// may still be arriving).
func finishedRuns(log string) (runSession map[string]string, bad []string) {
	runSession = map[string]string{}
	log = log[:strings.LastIndex(log, "\n")+1]
	for _, line := range strings.Split(log, "\n") {
		if line == "" || strings.HasPrefix(line, "guiagent: ") || strings.HasPrefix(line, "  ") {
			continue // what serve prints for the person at the terminal
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			bad = append(bad, line)
			continue
		}
		if m["msg"] == "task finished" {
			run, _ := m["run_id"].(string)
			sess, _ := m["session_id"].(string)
			runSession[run] = sess
		}
	}
	return runSession, bad
}

// checkFleetMetrics: /metrics (with the token) counts the live desktops and
// the finished tasks.
func checkFleetMetrics(t *testing.T, g *guiagent, sessions int) {
	t.Helper()
	status, body := g.get(t, "/metrics")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", status)
	}
	for _, want := range []string{
		fmt.Sprintf("guiagent_desktops %d", sessions),
		fmt.Sprintf(`guiagent_tasks_total{status="completed"} %d`, sessions),
		`guiagent_tool_calls_total{outcome="ok",tool="gui_execute_task"} ` + strconv.Itoa(sessions),
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// checkDashboardDesktops: the dashboard lists every live desktop and shows
// each one's screen, with the sample form on it.
func checkDashboardDesktops(t *testing.T, g *guiagent, recs []string) {
	t.Helper()
	status, body := g.get(t, "/api/desktops")
	var list []struct {
		ID      string `json:"id"`
		Display string `json:"display"`
		Ready   bool   `json:"ready"`
	}
	if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil {
		t.Fatalf("GET /api/desktops: %d %v %s", status, err, body)
	}
	listed := map[string]bool{}
	for _, d := range list {
		listed[d.ID] = d.Ready && d.Display != ""
	}
	for _, rec := range recs {
		if !listed[rec] {
			t.Errorf("the dashboard does not list session %s's desktop as ready: %s", rec, body)
			continue
		}
		status, jpg := g.get(t, "/api/desktops/"+rec+"/screen.jpg")
		img, err := jpeg.Decode(bytes.NewReader(jpg))
		if status != http.StatusOK || err != nil {
			t.Errorf("session %s's screen: %d %v", rec, status, err)
			continue
		}
		findColor(t, img, sampleapp.SubmitColor, 12)
	}
}

// checkKillSwitchStopsAll: while the kill switch file exists, no session's
// input reaches its desktop; once it is gone, input works again.
func checkKillSwitchStopsAll(t *testing.T, stopFile string, css []*mcp.ClientSession, logs []commandLog) {
	t.Helper()
	if err := os.WriteFile(stopFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	click := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_click", Arguments: map[string]any{"x": 5, "y": 5, "space": "screen"}})
		if err != nil {
			t.Fatalf("gui_click: %v", err)
		}
		return res
	}
	for k, cs := range css {
		if res := click(cs); !res.IsError || !strings.Contains(strings.ToLower(textOf(res)), "kill switch") {
			t.Errorf("session %d clicked while the kill switch was on: %s", k, textOf(res))
		}
	}
	if err := os.Remove(stopFile); err != nil {
		t.Fatal(err)
	}
	// The kill switch notices the file is gone within its polling interval.
	var res *mcp.CallToolResult
	if !waitFor(10*time.Second, func() bool { res = click(css[len(css)-1]); return !res.IsError }) {
		t.Errorf("a click 10 s after the kill switch file was removed: %s", textOf(res))
	}
}
