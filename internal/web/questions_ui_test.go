package web

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

// questionPage serves a dashboard with broker b and signs a Chromium tab in.
func questionPage(t *testing.T, b *ask.Broker) *browsertest.Browser {
	t.Helper()
	d := New(Options{Token: token, Screen: func(context.Context) ([]byte, error) { return frameJPEG(1), nil }, Subscribe: (&hub{}).Subscribe,
		Current: func() any { return nil }, Audit: func() any { return safety.NewAudit(0, nil).Snapshot() },
		Runs: trace.NewStore(trace.Options{Dir: t.TempDir()}), Settings: settingsStub{}, Questions: b,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(d)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	br := browsertest.New(t)
	signIn(t, br, d, srv.URL)
	if err := browsertest.WaitFor(br, `document.getElementById("questions-note").textContent === "No question is waiting."`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return br
}

// card is the JavaScript expression of the card of the question asking text.
func card(text string) string {
	return `[...document.querySelectorAll("#questions-pending article.question")].find(c => c.querySelector("h3").textContent === ` + jsString(text) + `)`
}

// recentEntry is the text of the recent entry of the question asking text ("" when none).
func recentEntry(text string) string {
	return `([...document.querySelectorAll("#questions-recent li")].find(li => li.querySelector("strong").textContent === ` + jsString(text) + `) || {textContent: ""}).textContent`
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestQuestionAnsweredInChromium: a run asks "Which account should I use?";
// the page shows it on top with its task, step, screen and screenshot, the
// title and the header say a question waits, and a click on "the work one"
// is the answer Ask returns. A secret is then typed with the keyboard alone
// into a password field and shown only by its length.
func TestQuestionAnsweredInChromium(t *testing.T) {
	b := ask.NewBroker(true)
	br := questionPage(t, b)
	if hidden, err := browsertest.Eval[bool](br, `document.getElementById("questions-badge").hidden`); err != nil || !hidden {
		t.Errorf("the header says a question waits while none does (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q := accountQuestion()
	q.Screen = "The bank's sign-in page, two accounts listed <b>bold</b>"
	_, res := askAsync(t, ctx, b, q)

	const question = "Which account should I use?"
	if err := browsertest.WaitFor(br, card(question)+` && `+card(question)+`.querySelector("img.shot").naturalWidth === 320`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	text, err := browsertest.Eval[string](br, card(question)+`.innerText`)
	if err != nil || !strings.Contains(text, "Task: pay the invoice · step 3") || !strings.Contains(text, "Screen: The bank's sign-in page, two accounts listed <b>bold</b>") {
		t.Errorf("card text %q (%v): want the task, the step and the screen as plain text", text, err)
	}
	buttons, _ := browsertest.Eval[[]string](br, `[...`+card(question)+`.querySelectorAll("button")].map(b => b.textContent)`)
	if strings.Join(buttons, "|") != "the work one|the personal one|Decline" {
		t.Errorf("buttons %q: want one per option and Decline", buttons)
	}
	for expr, want := range map[string]bool{
		`document.title.startsWith("(1) question waiting")`: true,
		`!document.getElementById("questions-badge").hidden && document.getElementById("questions-badge").textContent === "1 question waiting"`:        true,
		`document.getElementById("questions-panel").getBoundingClientRect().top < document.getElementById("screen-panel").getBoundingClientRect().top`: true,
	} {
		if got, err := browsertest.Eval[bool](br, expr); err != nil || got != want {
			t.Errorf("%s: %v (%v)", expr, got, err)
		}
	}

	if err := br.Do(10*time.Second, chromedp.Click(chromedp.Search(`//article[contains(@class,"question")]//button[text()="the work one"]`))); err != nil {
		t.Fatal(err)
	}
	if r := waitAnswer(t, res); r.err != nil || r.a.Value != "the work one" || r.a.By != ask.ByDashboard {
		t.Fatalf("Ask returned %+v, %v; want the work one from the dashboard", r.a, r.err)
	}
	if err := browsertest.WaitFor(br, recentEntry(question)+`.includes("answered here: the work one") && !`+card(question)+
		` && document.getElementById("questions-badge").hidden && document.title === "guiagent dashboard"`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if below, err := browsertest.Eval[bool](br, `document.getElementById("questions-panel").getBoundingClientRect().top > document.getElementById("screen-panel").getBoundingClientRect().top`); err != nil || !below {
		t.Errorf("with no question waiting, the panel stays on top (%v)", err)
	}

	// A secret, by keyboard: the header badge focuses the field, Enter sends.
	const pw = "correct horse"
	_, res = askAsync(t, ctx, b, ask.Question{Text: "Your password for the bank?", Kind: action.AskText, Secret: true})
	if err := browsertest.WaitFor(br, card("Your password for the bank?"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if kind, err := browsertest.Eval[string](br, card("Your password for the bank?")+`.querySelector("input").type + " " + `+card("Your password for the bank?")+`.querySelector("input").autocomplete`); err != nil || kind != "password off" {
		t.Errorf("secret input is %q (%v), want a password field with autocomplete off", kind, err)
	}
	if err := br.Do(10*time.Second, chromedp.Focus(chromedp.CSS("#questions-badge")), chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.WaitFor(br, `document.activeElement === `+card("Your password for the bank?")+`.querySelector("input")`, 5*time.Second); err != nil {
		t.Fatal("the header badge does not move the focus to the answer: ", err)
	}
	if err := br.Do(10*time.Second, chromedp.KeyEvent(pw+"\r")); err != nil {
		t.Fatal(err)
	}
	if r := waitAnswer(t, res); r.err != nil || r.a.Value != pw {
		t.Fatalf("Ask returned %+v, %v; want the typed secret", r.a, r.err)
	}
	if err := browsertest.WaitFor(br, recentEntry("Your password for the bank?")+`.includes("answered here: <typed 13 chars>")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if page, err := browsertest.Eval[string](br, `document.documentElement.outerHTML + [...document.querySelectorAll("input")].map(i => i.value).join()`); err != nil || strings.Contains(page, pw) {
		t.Errorf("the page still holds the secret (%v)", err)
	}
	if errs := br.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestQuestionAnsweredElsewhereInChromium: the MCP client answers first; the
// page drops the question's controls and says it was answered from the
// client, with the answer. A question nobody answers shows as expired.
func TestQuestionAnsweredElsewhereInChromium(t *testing.T) {
	b := ask.NewBroker(true)
	br := questionPage(t, b)
	release := make(chan struct{})
	const question = "Which account should I use?"
	_, res := askAsync(t, context.Background(), b, accountQuestion(), clientChannel{ask.Answer{Outcome: ask.Accept, Value: "the personal one"}, release})
	if err := browsertest.WaitFor(br, card(question)+` && `+card(question)+`.querySelector("img.shot").naturalWidth === 320`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	close(release)
	if r := waitAnswer(t, res); r.err != nil || r.a.By != ask.ByClient {
		t.Fatalf("Ask returned %+v, %v", r.a, r.err)
	}
	if err := browsertest.WaitFor(br, recentEntry(question)+`.endsWith("answered from the MCP client: the personal one")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := browsertest.Eval[int](br, `document.querySelectorAll("#questions-pending button").length`); err != nil || n != 0 {
		t.Errorf("%d answer buttons remain after the client answered (%v)", n, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, res = askAsync(t, ctx, b, ask.Question{Text: "Close the unsaved document?", Kind: action.AskConfirm})
	if err := browsertest.WaitFor(br, card("Close the unsaved document?"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if buttons, _ := browsertest.Eval[[]string](br, `[...`+card("Close the unsaved document?")+`.querySelectorAll("button")].map(b => b.textContent)`); strings.Join(buttons, "|") != "Yes|No|Decline" {
		t.Errorf("confirm buttons %q", buttons)
	}
	waitAnswer(t, res)
	if err := browsertest.WaitFor(br, recentEntry("Close the unsaved document?")+`.includes("expired")`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if errs := br.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
