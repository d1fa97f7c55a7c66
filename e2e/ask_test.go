package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

const accountQuestion = "Which account should I use?"

// accountBrain asks which account to use until the request carries the
// answer, then finishes with it.
func accountBrain(t fakellm.Turn) fakellm.Reply {
	if a, ok := t.Answered(accountQuestion); ok {
		return fakellm.Reply{Status: llm.Done, Result: "logged in with " + a}
	}
	return fakellm.Reply{Observation: "an account picker", Ask: &fakellm.BrainAsk{
		Question: accountQuestion, Kind: action.AskChoice, Options: []string{"the work one", "the personal one"}}}
}

// elicitations answers every elicitation with res and keeps the requests.
type elicitations struct {
	mu   sync.Mutex
	msgs []string
	res  func(*mcp.ElicitParams) *mcp.ElicitResult
}

func (e *elicitations) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	e.msgs = append(e.msgs, req.Params.Message)
	e.mu.Unlock()
	return e.res(req.Params), nil
}

func (e *elicitations) messages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.msgs...)
}

// askTransports connects a client that speaks protocol 2026-07-28 over stdio
// (questions come back as input_required results) and one that speaks
// 2025-11-25 over HTTP (questions are nested elicitation/create requests).
var askTransports = []struct {
	name    string
	connect func(t *testing.T, c serverConfig, opts *mcp.ClientOptions) (*guiagent, *mcp.ClientSession)
}{
	{"stdio-2026-07-28", startStdio},
	{"http-2025-11-25", func(t *testing.T, c serverConfig, opts *mcp.ClientOptions) (*guiagent, *mcp.ClientSession) {
		c.httpToken = httpToken
		g := startHTTP(t, c)
		return g, g.connectAt(t, opts, "2025-11-25")
	}},
}

// TestTaskAsksTheClient: the model asks "Which account should I use?"; the
// client's user answers through elicitation and the task completes in the
// same run with the answer; a decline ends it blocked, a cancel cancelled.
func TestTaskAsksTheClient(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	for _, tr := range askTransports {
		t.Run(tr.name, func(t *testing.T) {
			model := startModel(t, accountBrain)
			el := &elicitations{res: func(p *mcp.ElicitParams) *mcp.ElicitResult {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "the work one"}}
			}}
			progress := &progressLog{}
			_, cs := tr.connect(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-")},
				&mcp.ClientOptions{ElicitationHandler: el.handler, ProgressNotificationHandler: progress.handler})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, r := executeTask(ctx, t, cs, "log in to the mail", "ask-1")
			if r.Status != agent.Completed || r.Result != "logged in with the work one" {
				t.Fatalf("status %s result %q, want completed with the work one: %s", r.Status, r.Result, textOf(res))
			}
			msgs := el.messages()
			if len(msgs) != 1 || !strings.Contains(msgs[0], accountQuestion) || !strings.Contains(msgs[0], "log in to the mail (step 1)") {
				t.Fatalf("elicitations %q, want one with the question and the task", msgs)
			}
			if r.Trace[0].Actions[0].Answer != "the work one" || r.Trace[0].Actions[0].AnsweredBy != "client" {
				t.Errorf("step 1 trace %+v, want the answer from the client", r.Trace[0].Actions)
			}
			if model.Calls() != 2 {
				t.Errorf("the model was called %d times, want 2 (ask, then done)", model.Calls())
			}
			msgsP, _ := progress.snapshot()
			if !containsPrefix(msgsP, "waiting for the user: "+accountQuestion) {
				t.Errorf("no 'waiting for the user' progress in %q", msgsP)
			}
			checkReport(t, r.Report, accountQuestion, "the work one")
		})
	}
	for _, c := range []struct {
		action string
		want   agent.Status
	}{{"decline", agent.Blocked}, {"cancel", agent.Cancelled}} {
		t.Run(c.action, func(t *testing.T) {
			model := startModel(t, accountBrain)
			el := &elicitations{res: func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: c.action} }}
			_, cs := startStdio(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-")},
				&mcp.ClientOptions{ElicitationHandler: el.handler})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, r := executeTask(ctx, t, cs, "log in to the mail", nil)
			if r.Status != c.want || model.Calls() != 1 {
				t.Fatalf("%s: status %s after %d model calls, want %s after 1 (%s)", c.action, r.Status, model.Calls(), c.want, r.Summary)
			}
			if c.want == agent.Blocked && (r.BlockReason != agent.ReasonUserDeclined || !strings.Contains(r.NextUserAction, accountQuestion)) {
				t.Errorf("declined: block reason %q, next %q", r.BlockReason, r.NextUserAction)
			}
		})
	}
}

// TestSafetyCheckApprovedInTheClient: OpenAI's computer tool flags the
// model's click; the client's user approves the check, the click runs, the
// next request acknowledges exactly that check, and the task completes.
func TestSafetyCheckApprovedInTheClient(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	name := widgetCentre(t, "name")
	clicked := false
	srv := fakellm.NewResponsesServer(func(tn fakellm.Turn) fakellm.Reply {
		if !clicked {
			clicked = true
			p := inImage(name, tn)
			return fakellm.Reply{Observation: "the sample form", Actions: []fakellm.BrainAction{{Kind: action.Click, At: &p}}}
		}
		return fakellm.Reply{Status: llm.Done, Result: "clicked the name field"}
	})
	srv.SafetyChecks = func(fakellm.Turn) []fakellm.SafetyCheck {
		return []fakellm.SafetyCheck{{ID: "cu_sc_e2e", Code: "malicious_instructions", Message: "The page may hold instructions for the agent."}}
	}
	t.Cleanup(srv.Close)
	el := &elicitations{res: func(p *mcp.ElicitParams) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	}}
	_, cs := startStdio(t, serverConfig{display: d.display, env: []string{"GUI_AGENT_PROVIDER=openai", "GUI_AGENT_ADAPTER=openai-computer",
		"GUI_AGENT_MODEL=computer-use-preview", "GUI_AGENT_BASE_URL=" + srv.URL, "GUI_AGENT_API_KEY=" + canary(t, "sk-e2e-")}},
		&mcp.ClientOptions{ElicitationHandler: el.handler})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, r := executeTask(ctx, t, cs, "click the name field", nil)
	if r.Status != agent.Completed {
		t.Fatalf("status %s, want completed: %s", r.Status, textOf(res))
	}
	msgs := el.messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0], "The page may hold instructions for the agent") {
		t.Fatalf("elicitations %q, want one naming the safety check", msgs)
	}
	waitEvent(t, d.app, "the click on the name field", func(e sampleapp.Event) bool { return e.Event == "click" && e.Target == "name" })
	checkReport(t, r.Report, "The page may hold instructions for the agent", "yes")
	if r.Usage.Calls != srv.Calls() || srv.Calls() != 2 {
		t.Errorf("usage says %d model calls, the provider received %d; want 2 (the flagged click, then done)", r.Usage.Calls, srv.Calls())
	}
}

// TestDashboardAnswersWhenTheClientCannot: a client without elicitation runs
// a task over HTTP; the question shows on the dashboard, a person clicks
// "the work one" in Chromium, and the task completes with it. A question
// nobody answers ends the task blocked after GUI_AGENT_ASK_TIMEOUT_S.
func TestDashboardAnswersWhenTheClientCannot(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	model := startModel(t, accountBrain)
	g := startHTTP(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-"), httpToken: httpToken})
	cs := g.connect(t, nil)

	br := browsertest.New(t)
	link := loginLink(t, g)
	if err := br.Do(30*time.Second, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	done := make(chan agent.Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		_, r := executeTask(ctx, t, cs, "log in to the mail", nil)
		done <- r
	}()
	button := `[...document.querySelectorAll("#questions-pending article.question button")].find(b => b.textContent === "the work one")`
	if err := browsertest.WaitFor(br, button+` !== undefined`, 30*time.Second); err != nil {
		t.Fatalf("the question never showed on the dashboard: %v\n%s", err, g.stderr)
	}
	if _, err := browsertest.Eval[any](br, button+`.click()`); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.Status != agent.Completed || r.Result != "logged in with the work one" || r.Trace[0].Actions[0].AnsweredBy != "dashboard" {
		t.Fatalf("status %s result %q trace %+v, want completed with the dashboard's answer", r.Status, r.Result, r.Trace[0].Actions)
	}
}

// TestUnansweredQuestionTimesOut: a question nobody answers within
// GUI_AGENT_ASK_TIMEOUT_S ends the task blocked, with the question as the
// next user action.
func TestUnansweredQuestionTimesOut(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	model := startModel(t, accountBrain)
	g := startHTTP(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-"), httpToken: httpToken,
		env: []string{"GUI_AGENT_ASK_TIMEOUT_S=1"}})
	cs := g.connect(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	_, r := executeTask(ctx, t, cs, "log in to the mail", nil)
	if r.Status != agent.Blocked || r.BlockReason != agent.ReasonNoAnswer || !strings.Contains(r.NextUserAction, accountQuestion) {
		t.Fatalf("status %s reason %q next %q, want blocked no_answer with the question", r.Status, r.BlockReason, r.NextUserAction)
	}
	if !strings.Contains(r.Summary, "GUI_AGENT_ASK_TIMEOUT_S") || time.Since(start) > 30*time.Second {
		t.Errorf("summary %q after %s", r.Summary, time.Since(start))
	}
}

// checkReport requires the run's report to show the question and the answer.
func checkReport(t *testing.T, path, question, answer string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	html := string(b)
	for _, w := range []string{question, answer} {
		if !strings.Contains(html, htmlEscape(w)) {
			t.Errorf("the report %s lacks %q", path, w)
		}
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// widgetCentre is the centre of the sample form's widget, in screen pixels.
func widgetCentre(t *testing.T, widget string) image.Point {
	t.Helper()
	widgets, err := sampleapp.Layout(sampleapp.SceneForm, screenW, screenH)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range widgets {
		if w.Name == widget {
			return image.Pt(w.Rect.Min.X+w.Rect.Dx()/2, w.Rect.Min.Y+w.Rect.Dy()/2)
		}
	}
	t.Fatalf("the form has no widget %q", widget)
	return image.Point{}
}

// inImage maps screen pixel p into the pixels of the image the model got.
func inImage(p image.Point, tn fakellm.Turn) image.Point {
	return image.Pt(p.X*tn.ImageSize.W/screenW, p.Y*tn.ImageSize.H/screenH)
}

// TestSecretTypedFromTheDashboard: the model clicks the name field and asks
// for a secret; a client that supports URL-mode elicitation gets a one-time
// link to the dashboard, the person types the secret there (Chromium), and
// guiagent types it into the focused field. The model, the result, the run
// record and the report never hold it; the application receives it.
func TestSecretTypedFromTheDashboard(t *testing.T) {
	const question = "Please type the password for this account"
	secret := canary(t, "pw-")
	d := startDesktop(t, sampleapp.SceneForm)
	name, submit := widgetCentre(t, "name"), widgetCentre(t, "submit")
	var prompts []string
	var pmu sync.Mutex
	model := startModel(t, func(tn fakellm.Turn) fakellm.Reply {
		pmu.Lock()
		prompts = append(prompts, tn.Prompt)
		pmu.Unlock()
		if _, ok := tn.Answered(question); ok {
			p := inImage(submit, tn)
			return fakellm.Reply{Status: llm.Done, Result: "submitted", Actions: []fakellm.BrainAction{{Kind: action.Click, At: &p}}}
		}
		p := inImage(name, tn)
		return fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: action.Click, At: &p}},
			Ask: &fakellm.BrainAsk{Question: question, Kind: action.AskText, Secret: true}}
	})
	g := startHTTP(t, serverConfig{display: d.display, model: model, apiKey: canary(t, "sk-e2e-"), httpToken: httpToken})
	links := make(chan string, 1)
	cs := g.connect(t, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				t.Errorf("a secret was asked in %q mode", req.Params.Mode)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			links <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	done := make(chan agent.Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		_, r := executeTask(ctx, t, cs, "sign in", nil)
		done <- r
	}()
	var link string
	select {
	case link = <-links:
	case r := <-done:
		t.Fatalf("the task ended before asking: %s %s", r.Status, r.Summary)
	case <-time.After(30 * time.Second):
		t.Fatalf("the client was never sent the dashboard link\n%s", g.stderr)
	}
	br := browsertest.New(t)
	if err := br.Do(30*time.Second, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	field := `document.querySelector("#questions-pending article.question input[type=password]")`
	if err := browsertest.WaitFor(br, field+` !== null`, 30*time.Second); err != nil {
		t.Fatalf("no password field on the dashboard: %v", err)
	}
	if err := br.Do(10*time.Second, chromedp.SendKeys(chromedp.CSS(`#questions-pending article.question input[type=password]`), secret+"\n")); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.Status != agent.Completed {
		t.Fatalf("status %s: %s", r.Status, r.Summary)
	}
	ev := waitEvent(t, d.app, "the form submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
	if ev.Fields["name"] != secret {
		t.Errorf("the application received name %q, want the secret typed into the focused field", ev.Fields["name"])
	}
	pmu.Lock()
	defer pmu.Unlock()
	for i, p := range prompts {
		if strings.Contains(p, secret) {
			t.Errorf("model request %d holds the secret", i+1)
		}
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), fmt.Sprintf("typed %d chars", len(secret))) {
		t.Errorf("the result holds the secret, or not its length: %s", b)
	}
	for _, f := range []string{r.Report, filepath.Join(r.RunDir, "events.jsonl")} {
		if data, err := os.ReadFile(f); err != nil || strings.Contains(string(data), secret) {
			t.Errorf("%s holds the secret (read error %v)", f, err)
		}
	}
}
