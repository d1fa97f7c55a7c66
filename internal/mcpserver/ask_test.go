package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/testenv"
)

// askingRunner is a TaskRunner whose task asks its question through the
// task's own channel (the client's elicitation) and reports the answer.
type askingRunner struct{ q ask.Question }

func (r askingRunner) Run(ctx context.Context, t agent.Task, _ func(agent.Event)) agent.Result {
	if t.Ask == nil {
		return agent.Result{Status: agent.Blocked, Summary: "no channel"}
	}
	a, err := t.Ask.Ask(ctx, r.q)
	if err != nil {
		return agent.Result{Status: agent.Failed, Summary: err.Error()}
	}
	b, _ := json.Marshal(a)
	return agent.Result{Status: agent.Completed, Result: string(b)}
}

// elicitLog is a client elicitation handler answering with a fixed result
// and keeping the requests it got.
type elicitLog struct {
	mu   sync.Mutex
	reqs []*mcp.ElicitParams
	res  *mcp.ElicitResult
}

func (l *elicitLog) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, req.Params)
	return l.res, nil
}

func (l *elicitLog) requests() []*mcp.ElicitParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), l.reqs...)
}

func taskAnswer(t *testing.T, cs *mcp.ClientSession) (agent.Result, ask.Answer) {
	t.Helper()
	res := callTool(t, cs, "gui_execute_task", map[string]any{"task": "log in"})
	var r agent.Result
	if err := json.Unmarshal([]byte(text(res)), &r); err != nil {
		t.Fatalf("result %q: %v", text(res), err)
	}
	var a ask.Answer
	if r.Status == agent.Completed {
		if err := json.Unmarshal([]byte(r.Result), &a); err != nil {
			t.Fatal(err)
		}
	}
	return r, a
}

func TestElicitationCarriesTheQuestionAndItsAnswer(t *testing.T) {
	q := ask.Question{Text: "Which account should I use?", Kind: action.AskChoice, Options: []string{"the work one", "the personal one"},
		Task: "log in", Step: 2, Screen: "an account picker"}
	cases := []struct {
		name string
		res  *mcp.ElicitResult
		want ask.Answer
	}{
		{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "the work one"}}, ask.Answer{Outcome: ask.Accept, Value: "the work one"}},
		{"decline", &mcp.ElicitResult{Action: "decline"}, ask.Answer{Outcome: ask.Decline}},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, ask.Answer{Outcome: ask.Cancel}},
	}
	for _, c := range cases {
		for _, version := range protocols {
			t.Run(c.name+"/"+version, func(t *testing.T) {
				e := newEnv(t, nil, Options{Tasks: askingRunner{q}})
				l := &elicitLog{res: c.res}
				cs := e.connectAt(version, &mcp.ClientOptions{ElicitationHandler: l.handler})
				r, a := taskAnswer(t, cs)
				if r.Status != agent.Completed || a != c.want {
					t.Fatalf("result %+v answer %+v, want %+v", r, a, c.want)
				}
				reqs := l.requests()
				if len(reqs) != 1 {
					t.Fatalf("%d elicitations, want 1", len(reqs))
				}
				for _, w := range []string{"Which account should I use?", "log in (step 2)", "an account picker"} {
					if !strings.Contains(reqs[0].Message, w) {
						t.Errorf("message %q lacks %q", reqs[0].Message, w)
					}
				}
				b, _ := json.Marshal(reqs[0].RequestedSchema)
				if !strings.Contains(string(b), `"enum":["the work one","the personal one"]`) || !strings.Contains(string(b), `"required":["answer"]`) {
					t.Errorf("requested schema %s is not a required choice of the options", b)
				}
			})
		}
	}
}

// protocols are the two ways of asking a client: a nested elicitation/create
// (before 2026-07-28) and an input_required result the client answers by
// calling again (multi round-trip requests, 2026-07-28).
var protocols = []string{"2025-11-25", "2026-07-28"}

func TestNoElicitationCapabilityNoChannel(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: askingRunner{ask.Question{Text: "?", Kind: action.AskText}}})
	if r, _ := taskAnswer(t, e.cs); r.Status != agent.Blocked {
		t.Fatalf("a client without elicitation got a channel: %+v", r)
	}
}

func TestSecretIsNeverAskedThroughAForm(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: askingRunner{ask.Question{Text: "Your password?", Kind: action.AskText, Secret: true}}})
	l := &elicitLog{res: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "pw"}}}
	cs := e.connect(&mcp.ClientOptions{ElicitationHandler: l.handler})
	r, _ := taskAnswer(t, cs)
	if r.Status != agent.Failed || !strings.Contains(r.Summary, "cannot ask") || len(l.requests()) != 0 {
		t.Fatalf("secret: result %+v after %d elicitations; want the channel to refuse it", r, len(l.requests()))
	}
}

func confirmEnv(t *testing.T, dashboard bool) *testEnv {
	t.Helper()
	keys, err := safety.NewKeyPolicy(safety.KeyPolicyOptions{Confirm: []string{"ctrl+w"}})
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, nil, Options{Keys: keys, Questions: ask.NewBroker(dashboard), AskTimeout: 300 * time.Millisecond})
}

func pressedW(e *testEnv) bool {
	for _, ev := range e.desk.Events() {
		if ev.Op == fake.OpKeyDown && ev.Key == "w" {
			return true
		}
	}
	return false
}

func TestConfirmHotkeyThroughTheClient(t *testing.T) {
	for _, c := range []struct {
		name    string
		res     *mcp.ElicitResult
		pressed bool
		err     string
	}{
		{"yes", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true, ""},
		{"no", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, false, "did not allow"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, false, "declined"},
	} {
		for _, version := range protocols {
			t.Run(c.name+"/"+version, func(t *testing.T) {
				e := confirmEnv(t, false)
				l := &elicitLog{res: c.res}
				cs := e.connectAt(version, &mcp.ClientOptions{ElicitationHandler: l.handler})
				res := callTool(t, cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "w"}})
				if res.IsError != (c.err != "") || c.err != "" && !strings.Contains(text(res), c.err) {
					t.Fatalf("gui_hotkey: error %v %q, want error containing %q", res.IsError, text(res), c.err)
				}
				if pressedW(e) != c.pressed {
					t.Fatalf("w pressed = %v, want %v", pressedW(e), c.pressed)
				}
				if reqs := l.requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Message, "ctrl+w") {
					t.Fatalf("elicitations %+v, want one naming ctrl+w", reqs)
				}
				// Other combinations are not asked about.
				ok(t, cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "s"}})
				if len(l.requests()) != 1 {
					t.Fatal("ctrl+s was asked about")
				}
			})
		}
	}
}

func TestConfirmHotkeyWithNobodyToAsk(t *testing.T) {
	e := confirmEnv(t, false)
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "w"}}, "nobody can be asked", "GUI_AGENT_CONFIRM_HOTKEYS")
	e = confirmEnv(t, true) // a dashboard nobody answers: the wait times out
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "w"}}, "nobody confirmed it")
	if pressedW(e) {
		t.Fatal("ctrl+w pressed without a yes")
	}
}

// connectAt adds an in-memory client speaking protocol version ("" = the latest).
func (e *testEnv) connectAt(version string, copts *mcp.ClientOptions) *mcp.ClientSession {
	e.t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		e.t.Fatalf("negotiated protocol %s, want %s", got, version)
	}
	e.t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

// brokerRunner asks like the agent does: through the broker (the dashboard)
// and the task's own channel at once.
type brokerRunner struct {
	b *ask.Broker
	q ask.Question
}

func (r brokerRunner) Run(ctx context.Context, t agent.Task, _ func(agent.Event)) agent.Result {
	a, err := ask.Ask(ctx, r.b, r.q, t.Ask)
	if err != nil {
		return agent.Result{Status: agent.Failed, Summary: err.Error()}
	}
	b, _ := json.Marshal(a)
	return agent.Result{Status: agent.Completed, Result: string(b)}
}

// TestDashboardAnswersFirst: while the client's user looks at the question,
// the dashboard answers it; the task goes on with the dashboard's answer, and
// the client's late answer changes nothing. A client before 2026-07-28 sees
// its elicitation request cancelled.
func TestDashboardAnswersFirst(t *testing.T) {
	q := ask.Question{Text: "Which account should I use?", Kind: action.AskChoice, Options: []string{"the work one", "the personal one"}}
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			b := ask.NewBroker(true)
			entered := make(chan struct{})
			go func() { // the dashboard answers once the client's user has the question
				<-entered
				for _, p := range b.Pending() {
					_ = b.Answer(p.ID, ask.Answer{Outcome: ask.Accept, Value: "the work one", By: ask.ByDashboard})
				}
			}()
			cancelled := make(chan bool, 1)
			handler := func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				close(entered)
				// The person takes a while; the dashboard is quicker.
				if !testenv.WaitUntil(time.Minute, func() bool { return len(b.Recent()) == 1 }) {
					t.Error("the dashboard's answer never came")
				}
				// Before 2026-07-28 the request is cancelled once the dashboard
				// answered: wait for that event (a minute is only the bound of a
				// broken run). From 2026-07-28 nothing is cancelled, so do not wait.
				bound := time.Minute
				if version >= "2026-07-28" {
					bound = 0
				}
				select {
				case <-ctx.Done():
					cancelled <- true
				case <-time.After(bound):
					cancelled <- false
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "the personal one"}}, nil
			}
			e := newEnv(t, nil, Options{Tasks: brokerRunner{b, q}, Questions: b})
			cs := e.connectAt(version, &mcp.ClientOptions{ElicitationHandler: handler})
			r, a := taskAnswer(t, cs)
			if r.Status != agent.Completed || a.Value != "the work one" || a.By != ask.ByDashboard {
				t.Fatalf("result %+v answer %+v, want the dashboard's", r, a)
			}
			select {
			case got := <-cancelled:
				if version < "2026-07-28" && !got {
					t.Error("the client's elicitation request was not cancelled once the dashboard answered")
				}
			case <-time.After(5 * time.Second):
				t.Error("the client was never asked")
			}
		})
	}
}

// TestSecretGoesToTheDashboardByURL: a client that supports URL-mode
// elicitation gets a secret question as a link to the dashboard (never a
// form); its accept means the person went there, the dashboard's answer is
// the one the task gets, and the client is told the elicitation completed.
func TestSecretGoesToTheDashboardByURL(t *testing.T) {
	q := ask.Question{Text: "Please type the mail password", Kind: action.AskText, Secret: true}
	const link = "http://127.0.0.1:60008/login?code=one-time"
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			b := ask.NewBroker(true)
			var mu sync.Mutex
			var got []*mcp.ElicitParams
			opened := make(chan struct{})
			handler := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				got = append(got, req.Params)
				mu.Unlock()
				close(opened)
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			completed := make(chan string, 1)
			go func() { // the person types the secret on the dashboard
				<-opened
				for _, p := range b.Pending() {
					_ = b.Answer(p.ID, ask.Answer{Outcome: ask.Accept, Value: "hunter2", By: ask.ByDashboard})
				}
			}()
			e := newEnv(t, nil, Options{Tasks: brokerRunner{b, q}, Questions: b, DashboardURL: func() string { return link }})
			cs := e.connectAt(version, &mcp.ClientOptions{
				Capabilities:       &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
				ElicitationHandler: handler,
				ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
					completed <- req.Params.ElicitationID
				},
			})
			r, a := taskAnswer(t, cs)
			if r.Status != agent.Completed || a.Value != "hunter2" || a.By != ask.ByDashboard {
				t.Fatalf("result %+v answer %+v, want the dashboard's secret", r, a)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0].Mode != "url" || got[0].URL != link || got[0].RequestedSchema != nil ||
				!strings.Contains(got[0].Message, "Please type the mail password") {
				t.Fatalf("elicitations %+v, want one URL-mode link to the dashboard", got)
			}
			select {
			case id := <-completed:
				if id != got[0].ElicitationID || id == "" {
					t.Errorf("completed %q, want %q", id, got[0].ElicitationID)
				}
			case <-time.After(5 * time.Second):
				t.Error("the client was not told the elicitation completed")
			}
		})
	}
}
