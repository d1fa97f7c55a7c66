package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

const (
	token  = "test-token-0123456789abcdef"
	canary = "sk-CANARY-web-0123456789"
)

// hub fans events out to subscribers, like the server's task runner does.
type hub struct {
	mu   sync.Mutex
	subs map[chan agent.Event]bool
}

func (h *hub) OnEvent(ev agent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- ev:
		default: // a slow page misses events rather than blocking the task
		}
	}
}

func (h *hub) Subscribe() (<-chan agent.Event, func()) {
	c := make(chan agent.Event, 256)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan agent.Event]bool{}
	}
	h.subs[c] = true
	h.mu.Unlock()
	return c, func() { h.mu.Lock(); delete(h.subs, c); h.mu.Unlock() }
}

type multi []agent.Observer

func (m multi) OnEvent(ev agent.Event) {
	for _, o := range m {
		o.OnEvent(ev)
	}
}

func frameJPEG(n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{30, 60, uint8(90 + n%100), 255}), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(10+n%250, 80, 40+n%250, 110), image.NewUniform(color.White), image.Point{}, draw.Src) // the "cursor"
	var b bytes.Buffer
	jpeg.Encode(&b, img, nil)
	return b.Bytes()
}

// fakeTask runs steps until cancelled, recording them and publishing events,
// and ends as cancelled.
type fakeTask struct {
	runID   string
	obs     agent.Observer
	cancel  context.CancelFunc
	done    chan struct{}
	steps   atomic.Int32
	cur     atomic.Int32 // the step under way
	ended   atomic.Bool
	stopped atomic.Bool
	status  atomic.Value
}

func startTask(t *testing.T, store *trace.Store, h *hub) *fakeTask {
	run, err := store.Begin("web-task", "find the invoice total", map[string]any{"model": "m", "api_key": canary})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ft := &fakeTask{runID: run.ID(), obs: multi{run, h}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ft.done)
		emit := func(ev agent.Event) { ev.RunID, ev.Time = ft.runID, time.Now(); ft.obs.OnEvent(ev) }
		emit(agent.Event{Kind: agent.EvStart, Message: "find the invoice total"})
		disp := geom.Display{ID: "0", Bounds: geom.Rect{W: 320, H: 200}, Primary: true}
		for s := 1; ; s++ {
			ft.cur.Store(int32(s)) // capturing step s starts now, as the agent does right after step s-1
			emit(agent.Event{Kind: agent.EvProgress, Step: s, Message: "Capturing the screen", Progress: float64(s - 1), Total: 50})
			select {
			case <-ctx.Done():
				res := &agent.Result{Status: agent.Cancelled, Summary: "stopped from the dashboard", Steps: s - 1, RunID: ft.runID}
				ft.status.Store(string(res.Status))
				ft.ended.Store(true)
				emit(agent.Event{Kind: agent.EvFinish, Result: res})
				run.Close()
				return
			case <-time.After(150 * time.Millisecond):
			}
			img := &llm.Image{MIME: "image/jpeg", Data: frameJPEG(s), Frame: geom.NewFrame(fmt.Sprintf("f%d", s), disp, disp.Bounds, geom.Size{W: 320, H: 200}), Step: s}
			emit(agent.Event{Kind: agent.EvScreenshot, Step: s, Image: img})
			act := action.Action{Kind: action.Click, At: &action.Point{Space: geom.SpaceImage, X: 500, Y: 500}}
			emit(agent.Event{Kind: agent.EvModel, Step: s, Decision: &llm.Decision{Observation: fmt.Sprintf("observation %d", s), Reasoning: "click the row", Actions: []action.Action{act}, Status: llm.Continue,
				Request: []byte(`{"auth":"` + canary + `"}`), Response: []byte(`{}`)}})
			ip, gp := geom.ImagePoint{X: 160, Y: 100}, geom.GlobalPoint{X: 160, Y: 100}
			at := action.Trace{Action: act, Image: &ip, Global: &gp, Outcome: "ok", Millis: 5}
			emit(agent.Event{Kind: agent.EvAction, Step: s, Action: &at})
			emit(agent.Event{Kind: agent.EvStep, Step: s, StepDone: &agent.StepTrace{Step: s, Actions: []action.Trace{at}, Outcome: "ok", FrameID: img.Frame.ID}})
			emit(agent.Event{Kind: agent.EvProgress, Step: s, Message: fmt.Sprintf("step %d done", s)})
			ft.steps.Store(int32(s))
		}
	}()
	return ft
}

type fixture struct {
	srv    *httptest.Server
	dash   *Dashboard
	store  *trace.Store
	task   *fakeTask
	frames atomic.Int32
}

func newFixture(t *testing.T) *fixture {
	scrub := secret.NewScrubber(canary)
	f := &fixture{store: trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true, Scrubber: scrub})}
	h := &hub{}
	f.task = startTask(t, f.store, h)
	t.Cleanup(func() { f.task.cancel(); <-f.task.done })
	f.dash = New(Options{
		Token: token,
		Screen: func(ctx context.Context) ([]byte, error) {
			return frameJPEG(int(f.frames.Add(1))), nil
		},
		Subscribe: h.Subscribe,
		Current: func() any {
			if f.task.ended.Load() {
				return nil
			}
			return map[string]any{"task": "find the invoice total", "run_id": f.task.runID, "step": f.task.cur.Load(), "max_steps": 50, "phase": "acting"}
		},
		Stop: func() error {
			if f.task.stopped.Swap(true) {
				return errors.New("no task is running")
			}
			f.task.cancel()
			return nil
		},
		Audit: func() any {
			return []map[string]any{{"tool": "click", "args": map[string]any{"x": 1}, "note": "key " + canary}}
		},
		Runs:     f.store,
		Settings: settingsStub{},
		Scrubber: scrub,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	f.srv = httptest.NewServer(f.dash)
	t.Cleanup(func() { f.srv.CloseClientConnections(); f.srv.Close() })
	return f
}

func do(t *testing.T, method, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	return doBody(t, method, url, "{}", hdr)
}

// doBody makes a request with body and headers and returns the response and its body.
func doBody(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestWithoutTokenEverythingIs401(t *testing.T) {
	f := newFixture(t)
	// Only the icon is public (browsers ask for it before logging in).
	if resp, body := do(t, "GET", f.srv.URL+"/favicon.ico", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<svg") {
		t.Errorf("GET /favicon.ico without auth: %d", resp.StatusCode)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/static/app.js"}, {"GET", "/api/screen.jpg"}, {"GET", "/api/events"}, {"GET", "/api/runs"},
		{"GET", "/api/audit"}, {"GET", "/api/current"}, {"POST", "/api/stop"}, {"GET", "/runs/web-task/"}, {"GET", "/login?code=guess"},
	} {
		for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong-token-0123456789"}, {"Cookie": CookieName + "=forged"}} {
			resp, body := do(t, c.method, f.srv.URL+c.path, hdr)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with %v: %d, want 401", c.method, c.path, hdr, resp.StatusCode)
			}
			if strings.Contains(body, canary) || strings.Contains(body, token) {
				t.Errorf("%s %s leaks a secret", c.method, c.path)
			}
		}
	}
	if f.task.stopped.Load() {
		t.Error("an unauthenticated POST stopped the task")
	}
}

func TestBearerAndSameOriginRules(t *testing.T) {
	f := newFixture(t)
	bearer := map[string]string{"Authorization": "Bearer " + token}
	resp, body := do(t, "GET", f.srv.URL+"/api/runs", bearer)
	if resp.StatusCode != 200 || !strings.Contains(body, `"report_url":"/runs/web-task/"`) {
		t.Fatalf("GET /api/runs with bearer: %d %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != DashboardCSP {
		t.Errorf("CSP = %q", csp)
	}
	// No state change on GET.
	if resp, _ := do(t, "GET", f.srv.URL+"/api/stop", bearer); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/stop: %d, want 405", resp.StatusCode)
	}
	// A cross-origin POST is refused even with the token.
	if resp, _ := do(t, "POST", f.srv.URL+"/api/stop", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST: %d, want 403", resp.StatusCode)
	}
	if f.task.stopped.Load() {
		t.Fatal("a cross-origin POST stopped the task")
	}

	// Cookie sessions: log in with a one-time link.
	login := f.dash.LoginURL(f.srv.URL)
	resp, _ = do(t, "GET", login, nil)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d cookie %+v", resp.StatusCode, cookie)
	}
	if resp, _ := do(t, "GET", login, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login link reused: %d, want 401", resp.StatusCode)
	}
	withCookie := map[string]string{"Cookie": CookieName + "=" + cookie.Value}
	if resp, _ := do(t, "GET", f.srv.URL+"/api/audit", withCookie); resp.StatusCode != 200 {
		t.Errorf("GET with session cookie: %d", resp.StatusCode)
	}
	// A cookie POST without Origin/Sec-Fetch-Site (not from a browser page) is refused.
	if resp, _ := do(t, "POST", f.srv.URL+"/api/stop", withCookie); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cookie POST without origin headers: %d, want 403", resp.StatusCode)
	}
	same := map[string]string{"Cookie": withCookie["Cookie"], "Origin": f.srv.URL, "Sec-Fetch-Site": "same-origin"}
	resp, body = do(t, "POST", f.srv.URL+"/api/stop", same)
	if resp.StatusCode != 200 || !f.task.stopped.Load() {
		t.Fatalf("same-origin POST: %d %s", resp.StatusCode, body)
	}
	<-f.task.done
	if f.task.status.Load() != string(agent.Cancelled) {
		t.Errorf("task ended %v, want cancelled", f.task.status.Load())
	}
	if resp, body := do(t, "POST", f.srv.URL+"/api/stop", same); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "no task is running") {
		t.Errorf("second stop: %d %s", resp.StatusCode, body)
	}
	// Run files are served, traversal is not.
	for path, want := range map[string]int{"/runs/web-task/": 200, "/runs/web-task/events.jsonl": 200, "/runs/web-task/../../etc/passwd": 404,
		"/runs/web-task/images/": 404, "/runs/nope/": 404, "/runs/web-task/%2e%2e/x": 404} {
		if resp, _ := do(t, "GET", f.srv.URL+path, bearer); resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, _ = do(t, "GET", f.srv.URL+"/runs/web-task/", bearer)
	if resp.Header.Get("Content-Security-Policy") != trace.ReportCSP {
		t.Errorf("report served with CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
}

func TestNoSecretInDashboardResponses(t *testing.T) {
	f := newFixture(t)
	for f.task.steps.Load() < 3 {
		time.Sleep(20 * time.Millisecond)
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	for _, p := range []string{"/", "/static/app.js", "/api/runs", "/api/audit", "/api/current", "/runs/web-task/", "/runs/web-task/events.jsonl",
		"/runs/web-task/config.json", "/runs/web-task/steps/001/request.json"} {
		resp, body := do(t, "GET", f.srv.URL+p, bearer)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
		if strings.Contains(body, canary) || strings.Contains(body, token) {
			t.Errorf("GET %s contains a secret", p)
		}
	}
	// The event stream (backfill and live) too.
	req, _ := http.NewRequest("GET", f.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	kinds := map[string]int{}
	for sc.Scan() && kinds["model"] < 6 {
		line := sc.Text()
		if strings.Contains(line, canary) {
			t.Fatal("event stream contains the API key")
		}
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kinds[k]++
		}
	}
	if kinds["ready"] != 1 || kinds["model"] < 6 || kinds["step"] < 5 {
		t.Errorf("stream kinds %v: want backfilled and live steps after one ready", kinds)
	}
}

func TestDashboardInChromium(t *testing.T) {
	f := newFixture(t)
	b := browsertest.New(t)

	// Without the token the browser gets 401.
	resp, err := chromedp.RunResponse(b.Ctx(), chromedp.Navigate(f.srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusUnauthorized {
		t.Fatalf("dashboard without login: HTTP %d, want 401", resp.Status)
	}
	b.ResetErrors()

	// The one-time link logs in and lands on the dashboard.
	if err := b.Do(30*time.Second, chromedp.Navigate(f.dash.LoginURL(f.srv.URL))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `location.pathname === "/" && document.getElementById("steps") !== null`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Live screen: frames load and keep coming.
	if err := browsertest.WaitFor(b, `document.getElementById("screen").width === 320 && +document.getElementById("screen").dataset.frames >= 1`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	n0 := f.frames.Load()
	if err := browsertest.WaitFor(b, `document.getElementById("conn").textContent === "live"`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Steps arrive as they happen.
	if err := browsertest.WaitFor(b, `document.querySelectorAll("#steps li.done").length >= 3`, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	// The step counter shows the step under way, never only the last finished
	// one. (Ahead by more than one when a slow page missed a step event under
	// load: the hub drops events rather than block the task.)
	const counter = `(() => { const m = document.getElementById("step-counter").textContent.match(/^step (\d+) of 50/); return m ? +m[1] - document.querySelectorAll("#steps li.done").length : -99; })()`
	if err := browsertest.WaitFor(b, counter+" >= 1", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if ahead, err := browsertest.Eval[int](b, counter); err != nil || ahead < 0 {
			t.Errorf("step counter is %d behind the finished steps (%v)", -ahead, err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	if dis, _ := browsertest.Eval[bool](b, `document.getElementById("stop").disabled`); dis {
		t.Error("Stop is disabled while a task runs")
	}
	text, err := browsertest.Eval[string](b, `document.getElementById("steps").textContent`)
	if err != nil || !strings.Contains(text, "observation 2") || !strings.Contains(text, "click") {
		t.Errorf("steps text %q, %v", text, err)
	}
	for deadline := time.Now().Add(time.Minute); f.frames.Load() < n0+3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if f.frames.Load() < n0+3 {
		t.Errorf("live screen did not refresh: %d -> %d frames in a minute", n0, f.frames.Load())
	}
	// Runs list and audit log.
	if err := browsertest.WaitFor(b, `document.querySelector('#runs tr[data-run="web-task"] a') !== null && document.getElementById("audit").textContent.includes("click")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	// Stop ends the task as cancelled, and the page shows it.
	if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS("#stop"))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `document.getElementById("task-status").textContent === "cancelled" && document.getElementById("stop").disabled`, 10*time.Second); err != nil {
		t.Fatal("after the task ended, Stop is still enabled or the status is wrong: ", err)
	}
	if !f.task.stopped.Load() || f.task.status.Load() != string(agent.Cancelled) {
		t.Errorf("Stop called %v, task status %v", f.task.stopped.Load(), f.task.status.Load())
	}
	page, err := browsertest.Eval[string](b, `document.documentElement.outerHTML`)
	if err != nil || strings.Contains(page, canary) {
		t.Errorf("page holds the API key (%v)", err)
	}

	// The run's report opens from the runs list under its own CSP.
	if err := browsertest.WaitFor(b, `document.querySelector('#runs tr[data-run="web-task"]').textContent.includes("cancelled")`, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(30*time.Second, chromedp.Navigate(f.srv.URL+"/runs/web-task/")); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `[...document.images].every(i => i.complete) && document.querySelectorAll("section.step").length >= 3 && [...document.querySelectorAll("img.overlay")].every(i => i.naturalWidth === 320)`, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestLogoutAndSignOutEverywhere: a dashboard session can be ended, by this
// browser (Sign out) or for every browser at once (Sign out everywhere, which
// also voids unused login links); login links and sessions are short-lived.
func TestLogoutAndSignOutEverywhere(t *testing.T) {
	f := newFixture(t)
	signIn := func() map[string]string {
		resp, _ := do(t, "GET", f.dash.LoginURL(f.srv.URL), nil)
		for _, c := range resp.Cookies() {
			if c.Name == CookieName {
				if c.MaxAge > int((24 * time.Hour).Seconds()) {
					t.Errorf("the session cookie lives %d s, more than a day", c.MaxAge)
				}
				return map[string]string{"Cookie": CookieName + "=" + c.Value, "Origin": f.srv.URL}
			}
		}
		t.Fatal("no session cookie")
		return nil
	}
	if LoginCodeTTL > 15*time.Minute {
		t.Errorf("an unused login link lives %v", LoginCodeTTL)
	}
	a, b := signIn(), signIn()
	if resp, _ := do(t, "POST", f.srv.URL+"/logout", a); resp.StatusCode != 200 {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", f.srv.URL+"/api/audit", a); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the signed-out cookie still works: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", f.srv.URL+"/api/audit", b); resp.StatusCode != 200 {
		t.Errorf("the other browser was signed out too: %d", resp.StatusCode)
	}
	unused := f.dash.LoginURL(f.srv.URL)
	if resp, body := do(t, "POST", f.srv.URL+"/api/logout-all", b); resp.StatusCode != 200 || !strings.Contains(body, `"signed_out":1`) {
		t.Fatalf("logout-all: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, "GET", f.srv.URL+"/api/audit", b); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a session survived sign-out everywhere: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", unused, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unused login link survived sign-out everywhere: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "POST", f.srv.URL+"/api/logout-all", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Authorization": "Bearer " + token}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin sign-out everywhere: %d, want 403", resp.StatusCode)
	}
}
