package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/testenv"
	"github.com/guiagent/guiagent/internal/trace"
)

// authErrorMarker in a task makes the scripted provider refuse the request with
// a 401 whose message echoes the API key, as some providers do.
const authErrorMarker = "PROVOKE-AUTH-ERROR"

// secretNeedles returns what must not appear for one secret: the secret itself
// and every 12-character piece of its random part (a truncated leak such as
// "sk-...<last 12>" is still a leak).
func secretNeedles(secret, prefix string) []string {
	needles := []string{secret}
	random := strings.TrimPrefix(secret, prefix)
	for i := 0; i+12 <= len(random); i++ {
		needles = append(needles, random[i:i+12])
	}
	return needles
}

// leakChecker collects every output of the product and reports any that
// contains a secret.
type leakChecker struct {
	t       *testing.T
	needles []string
	checked int
}

func (lc *leakChecker) check(where string, b []byte) {
	lc.t.Helper()
	lc.checked++
	if n := containsAny(b, lc.needles); n != "" {
		i := strings.Index(string(b), n)
		lo, hi := max(0, i-120), min(len(b), i+len(n)+120)
		lc.t.Errorf("secret %q leaked in %s: ...%s...", n, where, b[lo:hi])
	}
	// One marker: no writer has a scrubber of its own with another marker.
	if n := containsAny(b, []string{"[redacted]", "<set>"}); n != "" {
		lc.t.Errorf("%s shows a secret as %q; every secret is shown as %s", where, n, secret.Marker)
	}
}

// markedIn fails unless the secret marker appears in b: the key reached that
// output and was replaced there, rather than never reaching it.
func markedIn(t *testing.T, where string, b []byte) {
	t.Helper()
	if !bytes.Contains(b, []byte(secret.Marker)) {
		t.Errorf("%s does not show the key as %s, though the key reached it:\n%.3000s", where, secret.Marker, b)
	}
}

// The canary API key and HTTP token given in the configuration appear nowhere
// the product writes: server stdout/stderr, the debug log file, every file of
// every run record, every MCP response, every dashboard response, errors
// (including a provider 401 that echoes the key), doctor, runs and report.
func TestSecretsNeverLeak(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneDialog)
	// Neither secret looks like a credential ("sk-...", "Bearer ..."), so only
	// removing the configured values themselves can keep them out.
	const keyPrefix, tokenPrefix = "e2ecanarykey", "e2ecanarytoken"
	key, token := canary(t, keyPrefix), canary(t, tokenPrefix)

	dialog := scripted.DemoDialogBrain()
	model := startModel(t, func(turn fakellm.Turn) fakellm.Reply {
		if strings.Contains(turn.Prompt, authErrorMarker) {
			return fakellm.Reply{HTTPStatus: http.StatusUnauthorized, ErrorType: "invalid_api_key",
				Result: "The key " + key + " is not valid for this project"}
		}
		// A model that repeats the key (a prompt injection could make it) must
		// not carry it into the run record either.
		rep := dialog(turn)
		rep.Observation += " (the page mentions " + key + ")"
		rep.Memory = append(rep.Memory, "credential seen: "+key)
		return rep
	})
	g := startHTTP(t, serverConfig{display: d.display, model: model, apiKey: key, httpToken: token, logToFile: true})

	lc := &leakChecker{t: t, needles: append(secretNeedles(key, keyPrefix), secretNeedles(token, tokenPrefix)...)}
	progress := &progressLog{}
	cs := g.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: progress.handler})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The live event stream of the dashboard, read while the tasks run.
	events := &testenv.Buffer{}
	evCtx, stopEvents := context.WithCancel(ctx)
	evDone := make(chan struct{})
	go func() {
		defer close(evDone)
		req, _ := http.NewRequestWithContext(evCtx, http.MethodGet, "http://"+g.addr+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		io.Copy(events, resp.Body)
	}()

	// A task whose provider answers 401 with the key in its message.
	res, r := executeTask(ctx, t, cs, "Open the settings "+authErrorMarker, "auth-1")
	if r.Status != agent.Failed || !res.IsError {
		t.Errorf("a 401 from the provider: status %q (error result %v), want failed: %s", r.Status, res.IsError, textOf(res))
	}
	t.Logf("401 task summary: %s", r.Summary)

	// A task that works: the dialog's Next, then OK.
	res, r = executeTask(ctx, t, cs, "Click Next, then OK in the dialog", "dialog-1")
	if r.Status != agent.Completed {
		t.Fatalf("dialog task: status %q, want completed: %s", r.Status, textOf(res))
	}
	waitEvent(t, d.app, "the dialog confirmed", func(e sampleapp.Event) bool { return e.Event == "confirmed" })

	// The fake provider really received the key: it was configured.
	gotKey := false
	for _, a := range model.Authorizations() {
		gotKey = gotKey || a == "Bearer "+key
	}
	if !gotKey {
		t.Fatalf("the provider never received the configured key (Authorization headers: %d)", len(model.Authorizations()))
	}

	// Atomic tools, including failing calls.
	call(t, cs, "gui_list_displays", nil)
	screenshot(t, cs, nil)
	call(t, cs, "gui_cursor_position", nil)
	call(t, cs, "gui_click", map[string]any{"x": 20, "y": 20})
	call(t, cs, "gui_type", map[string]any{"text": "hello"})
	call(t, cs, "gui_clipboard", map[string]any{"action": "set", "text": "clip"})
	call(t, cs, "gui_clipboard", map[string]any{"action": "get"})
	for _, bad := range []struct {
		name string
		args map[string]any
	}{
		{"gui_click", map[string]any{"x": 10, "y": 10, "display": "no-such-display"}},
		{"gui_hotkey", map[string]any{"keys": []string{"ctrl", "alt", "backspace"}}},
		{"gui_press_key", map[string]any{"key": "NoSuchKeyName"}},
		// A client that sends the key where a key name belongs: the error
		// echoes it into the result, the audit, the log and the session record.
		{"gui_press_key", map[string]any{"key": key}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bad.name, Arguments: bad.args})
		if err == nil && !res.IsError {
			t.Errorf("%s(%v) succeeded, want an error", bad.name, bad.args)
		}
	}

	audit := readResource(t, cs, "gui://audit")
	// Every resource and every run's resource.
	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources.Resources) < 5 {
		t.Errorf("only %d resources listed", len(resources.Resources))
	}
	for _, rs := range resources.Resources {
		readResource(t, cs, rs.URI)
	}
	runs := listRuns(t, cs)
	kinds := map[string]int{}
	for _, ri := range runs {
		kinds[ri.Kind]++
		readResource(t, cs, "gui://runs/"+ri.ID)
	}
	if kinds["task"] != 2 {
		t.Errorf("gui://runs lists %d task runs, want 2: %+v", kinds["task"], runs)
	}

	// Every dashboard endpoint and every file of every run.
	stopEvents()
	<-evDone
	lc.check("the dashboard event stream", []byte(events.String()))
	if !strings.Contains(events.String(), "event: finish") {
		t.Errorf("the dashboard event stream carried no finish event:\n%.2000s", events.String())
	}
	for _, p := range []string{"/", "/api/current", "/api/audit", "/api/runs", "/api/screen.jpg", "/favicon.ico", "/runs/no-such-run/"} {
		status, body := g.get(t, p)
		if status >= 500 {
			t.Errorf("GET %s: status %d: %s", p, status, body)
		}
		lc.check("dashboard "+p, body)
	}
	for _, ri := range runs {
		status, body := g.get(t, "/runs/"+url.PathEscape(ri.ID)+"/")
		if status != http.StatusOK {
			t.Errorf("GET /runs/%s/: status %d", ri.ID, status)
		}
		lc.check("dashboard report of "+ri.ID, body)
		filepath.WalkDir(ri.Dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			if strings.HasPrefix(e.Name(), ".") {
				return nil // hidden files (the recorder's .recording lock) are never served
			}
			rel, _ := filepath.Rel(ri.Dir, p)
			status, body := g.get(t, "/runs/"+url.PathEscape(ri.ID)+"/"+filepath.ToSlash(rel))
			if status != http.StatusOK {
				t.Errorf("GET run %s file %s: status %d", ri.ID, rel, status)
			}
			lc.check(fmt.Sprintf("dashboard file %s of run %s", rel, ri.ID), body)
			return nil
		})
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/api/stop", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lc.check("dashboard POST /api/stop", b)
	}

	// The command line tools with the same configuration.
	for _, args := range [][]string{{"doctor"}, {"runs"}, {"report", runs[0].ID}, {"report", "no-such-run"}} {
		out, _ := g.run(t, args...)
		lc.check("guiagent "+strings.Join(args, " "), []byte(out))
	}
	for _, bad := range []string{"GUI_AGENT_MAX_STEPS=many", "GUI_AGENT_PROVIDER=nosuchprovider", "GUI_AGENT_BASE_URL=::not a url::"} {
		bg := *g
		bg.env = append(append([]string(nil), g.env...), bad)
		for _, args := range [][]string{{"doctor"}, {"serve", "--http", "--addr", freePort(t)}} {
			out, _ := bg.run(t, args...)
			lc.check(fmt.Sprintf("guiagent %s with %s", strings.Join(args, " "), bad), []byte(out))
		}
	}

	// Stop the server so that every record and the log are complete, then
	// check everything it wrote.
	cs.Close()
	g.stop(t)
	lc.check("the MCP responses", []byte(g.wire.String()))
	msgs, _ := progress.snapshot()
	lc.check("the progress notifications", []byte(strings.Join(msgs, "\n")))
	lc.check("server stdout", []byte(g.stdout.String()))
	lc.check("server stderr", []byte(g.stderr.String()))
	logs, err := os.ReadFile(g.logFile)
	if err != nil {
		t.Fatalf("GUI_AGENT_LOG_FILE %s was not written: %v", g.logFile, err)
	}
	if !strings.Contains(string(logs), "level=DEBUG") {
		t.Errorf("the log file has no debug lines; was GUI_AGENT_LOG_LEVEL=debug applied?\n%.2000s", logs)
	}
	lc.check("the log file", logs)
	markedIn(t, "the log file", logs)
	markedIn(t, "the MCP responses (task result, gui://audit)", []byte(g.wire.String()))
	markedIn(t, "the dashboard event stream", []byte(events.String()))
	markedIn(t, "the audit (gui://audit)", []byte(audit))
	for kind, b := range recordEvents(t, runs) {
		markedIn(t, "the "+kind+" run records (events.jsonl)", b)
	}
	files := 0
	err = filepath.WalkDir(g.state, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		lc.check(p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Errorf("only %d files under %s: the run records are missing", files, g.state)
	}
	// The MCP wire really carried the task results (the check above saw them).
	if !strings.Contains(g.wire.String(), `"status":"completed"`) {
		t.Errorf("the captured MCP responses lack the task result; the wire capture is broken")
	}
	t.Logf("checked %d outputs, %d files on disk, %d bytes of MCP responses", lc.checked, files, len(g.wire.String()))
}

// recordEvents returns the events.jsonl of every run, joined by run kind
// ("task", "session").
func recordEvents(t *testing.T, runs []trace.RunInfo) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, ri := range runs {
		b, err := os.ReadFile(filepath.Join(ri.Dir, "events.jsonl"))
		if err != nil {
			t.Errorf("run %s: %v", ri.ID, err)
			continue
		}
		out[ri.Kind] = append(out[ri.Kind], b...)
	}
	if len(out["task"]) == 0 || len(out["session"]) == 0 {
		t.Errorf("want task and session records, got kinds %v", slices.Collect(maps.Keys(out)))
	}
	return out
}
