package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
)

// gui_execute_task fills the sample form through the whole loop: the scripted
// model looks at the real screenshots, guiagent clicks and types into the real
// X application, and the application reports the submitted values.
func TestExecuteTaskFillsForm(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			form := scripted.DefaultDemoForm
			model := startModel(t, scripted.DemoFormBrain(form))
			progress := &progressLog{}
			_, cs := tr.connect(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-")},
				&mcp.ClientOptions{ProgressNotificationHandler: progress.handler})

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			task := fmt.Sprintf("Fill the form with name %s, email %s and city %s, then press Submit", form.Name, form.Email, form.City)
			res, r := executeTask(ctx, t, cs, task, "form-1")
			if res.IsError || r.Status != agent.Completed {
				t.Fatalf("status %s (error result %v), want completed: %s", r.Status, res.IsError, textOf(res))
			}

			// The application received exactly the values.
			ev := waitEvent(t, d.app, "the form submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
			want := map[string]string{"name": form.Name, "email": form.Email, "city": form.City}
			for k, v := range want {
				if ev.Fields[k] != v {
					t.Errorf("the app received %s=%q, want %q (all fields: %v)", k, ev.Fields[k], v, ev.Fields)
				}
			}
			if len(ev.Fields) != len(want) {
				t.Errorf("the app received fields %v, want exactly %v", ev.Fields, want)
			}
			if !strings.Contains(r.Result, form.Name) {
				t.Errorf("result %q does not carry the entered values", r.Result)
			}

			// Usage, steps and the model's real call count agree.
			if r.Usage.Calls < 1 || r.Usage.Calls > 2 {
				t.Errorf("usage: %d model calls, want 1 or 2 (one act, one confirm)", r.Usage.Calls)
			}
			if got := model.Calls(); got != r.Usage.Calls {
				t.Errorf("usage says %d model calls, the provider received %d", r.Usage.Calls, got)
			}
			if r.Usage.InputTokens <= 0 || r.Usage.WallMillis <= 0 {
				t.Errorf("usage without tokens or wall time: %+v", r.Usage)
			}
			if r.Steps != len(r.Trace) || r.Steps < 1 {
				t.Errorf("steps %d but trace has %d steps", r.Steps, len(r.Trace))
			}
			checkFormTrace(t, r)

			// The run record: run id and a report on disk.
			if r.RunID == "" || r.Report == "" {
				t.Fatalf("result without run_id or report: run_id=%q report=%q", r.RunID, r.Report)
			}
			if fi, err := os.Stat(r.Report); err != nil || fi.Size() == 0 {
				t.Errorf("report %s: %v (size %v)", r.Report, err, fi)
			}
			if rec, err := readResult(r.RunDir); err != nil || rec.Status != agent.Completed || rec.RunID != r.RunID {
				t.Errorf("result.json of %s: %v, status %q run %q; want completed %q", r.RunDir, err, rec.Status, rec.RunID, r.RunID)
			}

			checkProgress(t, progress, len(r.Trace[0].Actions))
		})
	}
}

// checkFormTrace checks the first step's actions: each click has its point in
// the model's convention (pixels of the image sent here) and in global screen
// pixels, and the global point lies on the widget the brain aimed at.
func checkFormTrace(t *testing.T, r agent.Result) {
	t.Helper()
	widgets, err := sampleapp.Layout(sampleapp.SceneForm, screenW, screenH)
	if err != nil {
		t.Fatal(err)
	}
	acts := r.Trace[0].Actions
	targets := []string{"name", "email", "city", "submit"}
	var clicks []action.Trace
	for _, a := range acts {
		if a.Outcome != "ok" {
			t.Errorf("action %s: outcome %q (%s)", a.Action.Kind, a.Outcome, a.Error)
		}
		if a.Action.Kind == action.Click {
			clicks = append(clicks, a)
		}
	}
	if len(clicks) != len(targets) {
		t.Fatalf("first step has %d clicks, want %d (trace: %+v)", len(clicks), len(targets), acts)
	}
	for i, c := range clicks {
		if c.Action.At == nil || c.Image == nil || c.Global == nil {
			t.Fatalf("click %d lacks model (%v), image (%v) or global (%v) coordinates", i, c.Action.At, c.Image, c.Global)
		}
		var rect image.Rectangle
		for _, w := range widgets {
			if w.Name == targets[i] {
				rect = w.Rect
			}
		}
		g := image.Pt(c.Global.X, c.Global.Y)
		if !g.In(rect) {
			t.Errorf("click %d went to global %v, outside the %s widget %v (model point %v)", i, g, targets[i], rect, c.Action.At)
		}
		// The screenshot was sent at full size, so model pixels are screen pixels.
		if dx, dy := c.Action.At.X-float64(g.X), c.Action.At.Y-float64(g.Y); dx*dx+dy*dy > 2 {
			t.Errorf("click %d: model point %v but global %v on an unscaled screenshot", i, c.Action.At, g)
		}
	}
}

// checkProgress checks the progress notifications: capturing, asking the
// model, every action i/k of the first step in order, and finished last, with
// increasing progress values.
func checkProgress(t *testing.T, p *progressLog, k int) {
	t.Helper()
	// Notifications are handled asynchronously: wait for the last one.
	waitFor(5*time.Second, func() bool {
		msgs, _ := p.snapshot()
		return len(msgs) > 0 && strings.HasPrefix(msgs[len(msgs)-1], "Finished")
	})
	msgs, values := p.snapshot()
	want := []string{"Capturing", "Asking the model for step 1"}
	for i := 1; i <= k; i++ {
		want = append(want, fmt.Sprintf("Step 1 action %d/%d", i, k))
	}
	want = append(want, "Asking the model for step 2", "Finished: completed")
	at := 0
	for _, w := range want {
		for at < len(msgs) && !strings.Contains(msgs[at], w) {
			at++
		}
		if at == len(msgs) {
			t.Fatalf("progress notification %q missing or out of order; got:\n%s", w, strings.Join(msgs, "\n"))
		}
		at++
	}
	if last := msgs[len(msgs)-1]; !strings.HasPrefix(last, "Finished") {
		t.Errorf("last progress notification is %q, want Finished", last)
	}
	for i := 1; i < len(values); i++ {
		if values[i] <= values[i-1] {
			t.Errorf("progress went from %v to %v at %q", values[i-1], values[i], msgs[i])
		}
	}
}

// holdShift answers every request with a ten-second hold of shift.
func holdShift(t fakellm.Turn) fakellm.Reply {
	ans := map[string]any{
		"observation": "the screen", "reasoning": "hold shift", "status": "continue",
		"actions":     []any{map[string]any{"action": "hold_key", "keys": []string{"shift"}, "duration_ms": 10000}},
		"image_width": t.ImageSize.W, "image_height": t.ImageSize.H,
	}
	b, _ := json.Marshal(ans)
	return fakellm.Reply{Raw: string(b)}
}

// cancelMidHold cancels a gui_execute_task call (its error comes on
// callErr) whose model holds input down for 10 s, seen held just now. The
// call must return, and released report everything up, before the hold
// would have ended it: within 9 s of the cancel (a tighter bound measures
// the machine's load, not the release). It returns how long after the
// cancel it stopped waiting, and whether the input came up.
func cancelMidHold(t *testing.T, cancel context.CancelFunc, callErr <-chan error, released func() bool) (time.Duration, bool) {
	t.Helper()
	cancelled := time.Now()
	cancel()
	holdEnds := cancelled.Add(9 * time.Second)
	select {
	case <-callErr:
	case <-time.After(time.Until(holdEnds)):
		t.Fatalf("gui_execute_task did not return within 9 s of cancelling a 10 s hold")
	}
	ok := waitFor(time.Until(holdEnds), released)
	return time.Since(cancelled).Round(time.Millisecond), ok
}

// Cancelling gui_execute_task while the agent holds a key down ends the run as
// cancelled and releases the key, well before the hold would have ended.
func TestExecuteTaskCancelReleasesKeys(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			model := startModel(t, holdShift)
			g, cs := tr.connect(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-")}, nil)
			x := xProbe(t, d.display)
			if down := heldKeys(t, x); len(down) != 0 {
				t.Fatalf("keys %v are down before the task", down)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			callErr := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_execute_task",
					Arguments: map[string]any{"task": "hold shift for a while", "timeout_s": 60}})
				callErr <- err
			}()
			if !waitFor(20*time.Second, func() bool { return len(heldKeys(t, x)) > 0 }) {
				t.Fatalf("the agent never pressed a key (model calls: %d)", model.Calls())
			}
			took, released := cancelMidHold(t, cancel, callErr, func() bool { return len(heldKeys(t, x)) == 0 })
			if !released {
				t.Fatalf("keys %v still down %v after cancelling", heldKeys(t, x), took)
			}
			t.Logf("key released %v after cancelling", took)

			// The run is recorded as cancelled.
			var runDir string
			var rec agent.Result
			ok := waitFor(30*time.Second, func() bool {
				for _, ri := range listRuns(t, cs) {
					if ri.Kind == "task" && ri.Dir != "" {
						runDir = ri.Dir
						var err error
						rec, err = readResult(ri.Dir)
						return err == nil
					}
				}
				return false
			})
			if !ok {
				t.Fatalf("no task run with a result.json under %s", g.runsDir)
			}
			if rec.Status != agent.Cancelled {
				t.Errorf("result.json of %s says %q (%s), want cancelled", runDir, rec.Status, rec.Summary)
			}
			if model.Calls() != 1 {
				t.Errorf("the provider got %d calls, want 1 (no call after cancelling)", model.Calls())
			}

			// The server's own ledger agrees that nothing is held, and it still works.
			var st struct {
				Held []string `json:"held"`
			}
			if err := json.Unmarshal([]byte(readResource(t, cs, "gui://status")), &st); err != nil {
				t.Fatal(err)
			}
			if st.Held == nil || len(st.Held) != 0 {
				t.Errorf("gui://status held = %v after cancelling, want []", st.Held)
			}
		})
	}
}

// A stdio client that goes away while the agent holds a key down: guiagent
// releases the key, records the run as cancelled and exits.
func TestExecuteTaskStdioClientGoneReleasesKeys(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	model := startModel(t, holdShift)
	g := newGuiagent(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-")})
	cmd := g.command("serve")
	cmd.Stderr = g.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server log:\n%s", g.stderr)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := dial(&mcp.IOTransport{Reader: stdout, Writer: stdin}, client{name: "e2e-gone"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_execute_task", Arguments: map[string]any{"task": "hold shift"}})
	x := xProbe(t, d.display)
	if !waitFor(20*time.Second, func() bool { return len(heldKeys(t, x)) > 0 }) {
		t.Fatalf("the agent never pressed a key")
	}
	gone := time.Now()
	stdin.Close() // the client is gone
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("guiagent exited with %v after its stdio client went away, want a clean exit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("guiagent still runs 10 s after its stdio client went away")
	}
	t.Logf("exited %v after the client went away", time.Since(gone).Round(time.Millisecond))
	if down := heldKeys(t, x); len(down) != 0 {
		t.Errorf("keys %v still down after guiagent exited", down)
	}
	out, err := g.run(t, "runs")
	if err != nil {
		t.Fatalf("guiagent runs: %v\n%s", err, out)
	}
	var cancelledRun bool
	for _, line := range strings.Split(out, "\n") {
		cancelledRun = cancelledRun || (strings.Contains(line, "hold shift") && strings.Contains(line, "cancelled"))
	}
	if !cancelledRun {
		t.Errorf("guiagent runs does not list the task as cancelled:\n%s", out)
	}
}

// A Streamable HTTP client that goes away while the model is thinking (its
// connections drop, or it ends its session with DELETE) ends the run: the
// hung model request is abandoned and the run is recorded as cancelled
// (issue 4: "Cancelling the request (or the client disconnecting) stops the
// loop within a second").
func TestExecuteTaskHTTPClientGone(t *testing.T) {
	for _, how := range []string{"connections dropped", "session deleted"} {
		t.Run(how, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			const modelDelay = 20 * time.Second
			model := startModel(t, func(fakellm.Turn) fakellm.Reply {
				return fakellm.Reply{Delay: modelDelay, Status: llm.Done, Result: "too late"}
			})
			g := startHTTP(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-"), httpToken: httpToken})
			conns := &connTracker{}
			tr := &mcp.StreamableClientTransport{Endpoint: "http://" + g.addr + "/mcp", MaxRetries: -1,
				HTTPClient: &http.Client{Transport: teeTransport{token: httpToken, wire: io.Discard, base: conns.transport()}}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := dial(tr, client{name: "e2e-gone"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			go cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_execute_task",
				Arguments: map[string]any{"task": "wait for a slow model", "timeout_s": 120}})
			if !waitFor(20*time.Second, func() bool { return model.Calls() == 1 }) {
				t.Fatalf("the model was never asked")
			}
			gone := time.Now()
			if how == "session deleted" {
				go func() {
					del, _ := http.NewRequest(http.MethodDelete, "http://"+g.addr+"/mcp", nil)
					del.Header.Set("Authorization", "Bearer "+httpToken)
					del.Header.Set("Mcp-Session-Id", cs.ID())
					if resp, err := http.DefaultClient.Do(del); err == nil {
						resp.Body.Close()
					}
				}()
			}
			conns.closeAll()

			// Another session sees the run end as cancelled long before the model answers.
			other := g.connect(t, nil)
			var rec agent.Result
			ended := waitFor(5*time.Second, func() bool {
				for _, ri := range listRuns(t, other) {
					if ri.Kind == "task" {
						r, err := readResult(ri.Dir)
						rec = r
						return err == nil
					}
				}
				return false
			})
			if !ended {
				t.Fatalf("the run still runs 5 s after its client went away (%s); the model would answer after %v", how, modelDelay)
			}
			t.Logf("run ended %v after the client went away: %s", time.Since(gone).Round(time.Millisecond), rec.Summary)
			if rec.Status != agent.Cancelled {
				t.Errorf("result.json says %q (%s), want cancelled", rec.Status, rec.Summary)
			}
		})
	}
}

// connTracker dials TCP connections and can close them all, as if the client died.
type connTracker struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *connTracker) transport() http.RoundTripper {
	d := &net.Dialer{}
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil {
			c.mu.Lock()
			c.conns = append(c.conns, conn)
			c.mu.Unlock()
		}
		return conn, err
	}}
}

func (c *connTracker) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
}

// A model that answers a drag to x = 1e15 is asked again (its numbers are
// refused when the answer is parsed), and the task ends well within its
// timeout: such an answer once hung the task, and every later one, forever.
func TestExecuteTaskAbsurdCoordinatesAreReAsked(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	absurd := `{"status": "continue", "observation": "a form", "actions": [{"action": "drag", "x": 10, "y": 10, "to": [1e15, 10]}]}`
	model := startModel(t, fakellm.Script(
		func(fakellm.Turn) fakellm.Reply { return fakellm.Reply{Raw: absurd} },
		func(fakellm.Turn) fakellm.Reply { return fakellm.Reply{Status: llm.Done, Result: "nothing to do"} },
	))
	_, cs := startStdio(t, serverConfig{display: d.display, model: model, apiKey: "sk-e2e-absurd"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, r := executeTask(ctx, t, cs, "Look at the form", nil)
	if res.IsError || r.Status != agent.Completed {
		t.Fatalf("status %s (error result %v), want completed after one re-ask: %s", r.Status, res.IsError, textOf(res))
	}
	if model.Calls() != 2 {
		t.Errorf("the provider received %d calls, want 2 (the absurd answer, then the re-ask)", model.Calls())
	}
	events, err := os.ReadFile(filepath.Join(r.RunDir, "events.jsonl"))
	if err != nil || !strings.Contains(string(events), "beyond 100000") {
		t.Errorf("the run record does not say why the answer was refused (%v):\n%s", err, events)
	}
}
