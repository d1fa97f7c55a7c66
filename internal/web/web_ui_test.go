package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

// signIn opens a one-time login link in b.
func signIn(t *testing.T, b *browsertest.Browser, d *Dashboard, base string) {
	t.Helper()
	if err := b.Do(30*time.Second, chromedp.Navigate(d.LoginURL(base))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `location.pathname === "/" && document.getElementById("runs") !== null`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// oneLine is true when every element matching sel shows its text on one line.
const oneLine = `(sel => [...document.querySelectorAll(sel)].every(e => { const r = document.createRange(); r.selectNodeContents(e); return r.getClientRects().length === 1; }))`

// TestIdleDashboardInChromium: with no task running and no calls yet, the
// audit card says so (never "null") and Stop cannot be clicked; calls then
// show as readable rows, a session's row says "open" and, once the session
// ends, "recorded"; timestamps stay on one line.
func TestIdleDashboardInChromium(t *testing.T) {
	store := trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true})
	audit := safety.NewAudit(0, nil)
	d := New(Options{Token: token, Screen: func(context.Context) ([]byte, error) { return frameJPEG(1), nil }, Subscribe: (&hub{}).Subscribe, Current: func() any { return nil },
		Stop:  func() error { t.Error("Stop was called while idle"); return nil },
		Audit: func() any { return audit.Snapshot() }, Runs: store, Settings: settingsStub{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(d)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	b := browsertest.New(t)
	signIn(t, b, d, srv.URL)

	if err := browsertest.WaitFor(b, `!document.getElementById("audit-empty").hidden && document.getElementById("audit-empty").textContent.includes("No tool calls yet")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if txt, _ := browsertest.Eval[string](b, `document.getElementById("audit-panel").innerText`); strings.Contains(txt, "null") {
		t.Errorf("empty audit card shows %q", txt)
	}
	if dis, err := browsertest.Eval[bool](b, `document.getElementById("stop").disabled`); err != nil || !dis {
		t.Errorf("Stop is enabled while no task runs (%v)", err)
	}
	b.Do(5*time.Second, chromedp.Click(chromedp.CSS("#stop"))) // a disabled button ignores the click

	// Calls arrive: arguments and results read as text, without JSON escapes.
	audit.Record(safety.AuditEntry{Tool: "gui_click", Result: `clicked at image (120,80) = global (240,160)`, Millis: 31},
		map[string]any{"x": 120, "y": 80, "button": "left"})
	audit.Record(safety.AuditEntry{Tool: "gui_get_clipboard", Result: `{"text":"\"Ada\" <b>","format":"text/plain"}`, Millis: 4}, struct{}{})
	audit.Record(safety.AuditEntry{Tool: "gui_type_text", Error: "blocked: the kill switch is on", Millis: 1}, map[string]string{"text": "Ada"})
	rec := store.Session("sess-ui")
	rec.RecordCall(trace.Call{Tool: "gui_click", Result: "clicked"})
	if err := browsertest.WaitFor(b, `document.querySelectorAll("#audit tbody tr").length === 3 && document.querySelector('#runs tr[data-run] .pill') !== null`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	rows, err := browsertest.Eval[[]string](b, `[...document.querySelectorAll("#audit tbody tr")].map(r => r.innerText)`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rows[0], "gui_type_text") || !strings.Contains(rows[0], "text: <redacted 3 chars>") || !strings.Contains(rows[0], "kill switch") {
		t.Errorf("newest audit row %q: want the failed type call with its masked text and error", rows[0])
	}
	if !strings.Contains(rows[1], `text: "Ada" <b> · format: text/plain`) || strings.Contains(strings.Join(rows, ""), `\`) {
		t.Errorf("audit rows %q: want the JSON result as readable pairs, no escapes", rows)
	}
	if !strings.Contains(rows[2], "x: 120") || !strings.Contains(rows[2], "31 ms") {
		t.Errorf("oldest audit row %q", rows[2])
	}
	if err := browsertest.WaitFor(b, `document.querySelector('#runs tr[data-run] .pill').textContent === "open"`, 10*time.Second); err != nil {
		t.Error(err)
	}
	rec.Close()
	if err := browsertest.WaitFor(b, `document.querySelector('#runs tr[data-run] .pill').textContent === "recorded"`, 10*time.Second); err != nil {
		t.Error("an ended session's row does not say recorded: ", err)
	}
	if ok, err := browsertest.Eval[bool](b, oneLine+`("td.time")`); err != nil || !ok {
		t.Errorf("a timestamp wraps onto two lines (%v)", err)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestLoginRenewalInChromium: a used login link leads to the sign-in form,
// which takes the bearer token pasted in; a signed-in page makes new
// one-time links.
func TestLoginRenewalInChromium(t *testing.T) {
	f := newFixture(t)
	link := f.dash.LoginURL(f.srv.URL)
	if resp, _ := do(t, "GET", link, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("first use of the link: %d", resp.StatusCode)
	}
	b := browsertest.New(t)
	resp, err := chromedp.RunResponse(b.Ctx(), chromedp.Navigate(link))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusUnauthorized {
		t.Errorf("used link: HTTP %d, want 401", resp.Status)
	}
	msg, err := browsertest.Eval[string](b, `document.getElementById("login-message").textContent`)
	if err != nil || !strings.Contains(msg, "already used") {
		t.Errorf("used link message %q, %v", msg, err)
	}
	b.ResetErrors()

	// A wrong token is refused with a message; the right one signs in.
	if err := b.Do(10*time.Second, chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token"), chromedp.Submit(chromedp.CSS("#login-form"))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `document.getElementById("login-message") && document.getElementById("login-message").textContent.includes("not this server's bearer token")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	b.ResetErrors() // the refused sign-in answered 401, as it should
	if err := b.Do(10*time.Second, chromedp.SendKeys(chromedp.CSS("#token"), "  "+token+" "), chromedp.Submit(chromedp.CSS("#login-form"))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `location.pathname === "/" && document.getElementById("runs") !== null`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `document.getElementById("screen").width === 320 && +document.getElementById("screen").dataset.frames >= 1`, 10*time.Second); err != nil {
		t.Fatal("signed in with the token, the live screen does not load: ", err)
	}

	// "New login link" makes a working one-time link, shown only once asked for.
	if h, err := browsertest.Eval[int](b, `document.getElementById("login-link-box").offsetHeight`); err != nil || h != 0 {
		t.Errorf("the login link box shows (%d px high) before a link was asked for (%v)", h, err)
	}
	if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS("#login-link"))); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(b, `document.getElementById("login-link-url").value.includes("/login?code=")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	fresh, _ := browsertest.Eval[string](b, `document.getElementById("login-link-url").value`)
	if !strings.HasPrefix(fresh, f.srv.URL+"/login?code=") {
		t.Errorf("new link %q is not on this server", fresh)
	}
	resp2, _ := do(t, "GET", fresh, nil)
	if resp2.StatusCode != http.StatusOK || len(resp2.Cookies()) == 0 {
		t.Errorf("new link: %d, cookies %v", resp2.StatusCode, resp2.Cookies())
	}
	if resp3, _ := do(t, "GET", fresh, nil); resp3.StatusCode != http.StatusUnauthorized {
		t.Errorf("new link reused: %d, want 401", resp3.StatusCode)
	}
	// Minting a link needs a signed-in, same-origin request.
	if resp, _ := do(t, "POST", f.srv.URL+"/api/login-link", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /api/login-link without auth: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "POST", f.srv.URL+"/api/login-link", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST /api/login-link: %d", resp.StatusCode)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
