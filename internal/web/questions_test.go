package web

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/secret"

	"github.com/guiagent/guiagent/internal/testenv"
)

// questionServer serves a dashboard with broker b; its log goes to the returned buffer.
func questionServer(t *testing.T, b *ask.Broker) (*httptest.Server, *testenv.Buffer) {
	t.Helper()
	logs := &testenv.Buffer{}
	d := New(Options{Token: token, Questions: b, Scrubber: secret.NewScrubber(canary), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	srv := httptest.NewServer(d)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv, logs
}

var bearer = map[string]string{"Authorization": "Bearer " + token}

// send makes a request with body and headers and returns the status and body.
func send(t *testing.T, method, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	resp, b := doBody(t, method, url, body, hdr)
	return resp.StatusCode, b
}

// asked runs b.Ask(q, chs...) in a goroutine until ctx ends, and waits until
// the question is pending; it returns the question's id and the outcome.
type askResult struct {
	a   ask.Answer
	err error
}

func askAsync(t *testing.T, ctx context.Context, b *ask.Broker, q ask.Question, chs ...ask.Channel) (string, <-chan askResult) {
	t.Helper()
	before := map[string]bool{}
	for _, p := range b.Pending() {
		before[p.ID] = true
	}
	out := make(chan askResult, 1)
	go func() {
		a, err := b.Ask(ctx, q, chs...)
		out <- askResult{a, err}
	}()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, p := range b.Pending() {
			if !before[p.ID] {
				return p.ID, out
			}
		}
	}
	t.Fatal("the question never became pending")
	return "", nil
}

func waitAnswer(t *testing.T, res <-chan askResult) askResult {
	t.Helper()
	select {
	case r := <-res:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
		return askResult{}
	}
}

func accountQuestion() ask.Question {
	return ask.Question{RunID: "run-1", Task: "pay the invoice", Step: 3, Text: "Which account should I use?", Kind: action.AskChoice,
		Options: []string{"the work one", "the personal one"}, Screen: "The bank's sign-in page (key " + canary + ")", Image: frameJPEG(7), ImageMIME: "image/jpeg"}
}

// TestQuestionsAPI: the pending question is listed with its screenshot,
// answered once from the dashboard (a bad choice is refused with the reason,
// a second answer gets 409 saying who answered), all behind the token.
func TestQuestionsAPI(t *testing.T) {
	b := ask.NewBroker(true)
	srv, logs := questionServer(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, res := askAsync(t, ctx, b, accountQuestion())
	qURL := srv.URL + "/api/questions/" + id

	for _, c := range []struct{ method, url string }{{"GET", srv.URL + "/api/questions"}, {"GET", srv.URL + "/api/questions/events"},
		{"GET", qURL + "/image"}, {"POST", qURL}} {
		for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Cookie": CookieName + "=forged"}} {
			if code, _ := send(t, c.method, c.url, `{"action":"accept","value":"the work one"}`, hdr); code != http.StatusUnauthorized {
				t.Errorf("%s %s with %v: %d, want 401", c.method, c.url, hdr, code)
			}
		}
	}
	cross := map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
	if code, _ := send(t, "POST", qURL, `{"action":"accept","value":"the work one"}`, cross); code != http.StatusForbidden {
		t.Errorf("cross-origin answer: %d, want 403", code)
	}

	code, body := send(t, "GET", srv.URL+"/api/questions", "", bearer)
	var list struct {
		Available bool           `json:"available"`
		Pending   []ask.Question `json:"pending"`
		Recent    []ask.Event    `json:"recent"`
	}
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || !list.Available || len(list.Pending) != 1 {
		t.Fatalf("GET /api/questions: %d %s (%v)", code, body, err)
	}
	if q := list.Pending[0]; q.ID != id || q.Text != "Which account should I use?" || q.Task != "pay the invoice" || q.Step != 3 || !q.HasImage || len(q.Options) != 2 {
		t.Errorf("pending question %+v", q)
	}
	if strings.Contains(body, canary) || !strings.Contains(body, "sign-in page") {
		t.Errorf("GET /api/questions does not scrub the secret in the screen description: %s", body)
	}
	resp, img := do(t, "GET", qURL+"/image", bearer)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" || img != string(frameJPEG(7)) {
		t.Errorf("GET the screenshot: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(img))
	}
	if code, _ := send(t, "GET", srv.URL+"/api/questions/q-unknown/image", "", bearer); code != http.StatusNotFound {
		t.Errorf("screenshot of an unknown question: %d, want 404", code)
	}

	for body, want := range map[string]string{
		`{"action":"accept","value":"the other one"}`: `\"the other one\" is not one of the options (the work one, the personal one)`,
		`{"action":"maybe"}`:                          `unknown answer action \"maybe\"`,
		`not json`:                                    `send JSON {\"action\": \"accept\"`,
	} {
		if code, got := send(t, "POST", qURL, body, bearer); code != http.StatusBadRequest || !strings.Contains(got, want) {
			t.Errorf("POST %s: %d %s, want 400 with %s", body, code, got, want)
		}
	}
	if code, got := send(t, "POST", qURL, `{"action":"accept","value":"`+strings.Repeat("x", MaxAnswerBytes)+`"}`, bearer); code != http.StatusRequestEntityTooLarge || !strings.Contains(got, "larger than") {
		t.Errorf("oversized answer: %d %s, want 413", code, got)
	}

	if code, got := send(t, "POST", qURL, `{"action":"accept","value":" the work one ","by":"client"}`, bearer); code != 200 || !strings.Contains(got, `"value":"the work one"`) {
		t.Fatalf("answer: %d %s", code, got)
	}
	if r := waitAnswer(t, res); r.err != nil || r.a != (ask.Answer{Outcome: ask.Accept, Value: "the work one", By: ask.ByDashboard}) {
		t.Errorf("Ask returned %+v, %v; want the work one by the dashboard", r.a, r.err)
	}
	if code, got := send(t, "POST", qURL, `{"action":"accept","value":"the personal one"}`, bearer); code != http.StatusConflict ||
		!strings.Contains(got, "answered already from the dashboard: the work one") {
		t.Errorf("second answer: %d %s, want 409 naming the first", code, got)
	}
	if code, _ := send(t, "GET", qURL+"/image", "", bearer); code != http.StatusNotFound {
		t.Errorf("screenshot of an answered question: %d, want 404", code)
	}
	_, body = send(t, "GET", srv.URL+"/api/questions", "", bearer)
	if json.Unmarshal([]byte(body), &list) != nil || len(list.Pending) != 0 || len(list.Recent) != 1 || list.Recent[0].Answer == nil || list.Recent[0].Answer.Value != "the work one" {
		t.Errorf("after the answer: %s", body)
	}
	if !strings.Contains(logs.String(), "question answered from the dashboard") {
		t.Errorf("the answer is not logged: %s", logs.String())
	}
}

// clientChannel stands in for the MCP client's elicitation: it answers with
// a once release is closed.
type clientChannel struct {
	a       ask.Answer
	release chan struct{}
}

func (clientChannel) Name() string { return ask.ByClient }
func (c clientChannel) Ask(ctx context.Context, q ask.Question) (ask.Answer, error) {
	select {
	case <-c.release:
		return c.a, nil
	case <-ctx.Done():
		return ask.Answer{}, ctx.Err()
	}
}

// TestQuestionAnsweredByTheClientFirst: an answer from the dashboard after
// the MCP client's is refused with 409, naming the client and its answer;
// an expired question's with 409 saying it expired; without a broker the
// list says questions are not available.
func TestQuestionAnsweredByTheClientFirst(t *testing.T) {
	b := ask.NewBroker(true)
	srv, _ := questionServer(t, b)
	release := make(chan struct{})
	id, res := askAsync(t, context.Background(), b, accountQuestion(), clientChannel{ask.Answer{Outcome: ask.Accept, Value: "the personal one"}, release})
	close(release)
	if r := waitAnswer(t, res); r.err != nil || r.a.By != ask.ByClient || r.a.Value != "the personal one" {
		t.Fatalf("Ask returned %+v, %v", r.a, r.err)
	}
	if code, got := send(t, "POST", srv.URL+"/api/questions/"+id, `{"action":"accept","value":"the work one"}`, bearer); code != http.StatusConflict ||
		!strings.Contains(got, "answered already from the MCP client: the personal one") {
		t.Errorf("late dashboard answer: %d %s", code, got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	id, res = askAsync(t, ctx, b, ask.Question{Text: "Close the window?", Kind: action.AskConfirm})
	if r := waitAnswer(t, res); r.err == nil {
		t.Fatalf("an unanswered question returned %+v", r.a)
	}
	if code, got := send(t, "POST", srv.URL+"/api/questions/"+id, `{"action":"accept","value":"yes"}`, bearer); code != http.StatusConflict || !strings.Contains(got, "expired unanswered") {
		t.Errorf("answer to an expired question: %d %s", code, got)
	}

	none, _ := questionServer(t, nil)
	if code, got := send(t, "GET", none.URL+"/api/questions", "", bearer); code != 200 || !strings.Contains(got, `"available":false`) {
		t.Errorf("GET /api/questions without a broker: %d %s", code, got)
	}
	if code, got := send(t, "POST", none.URL+"/api/questions/q-1", `{"action":"decline"}`, bearer); code != http.StatusServiceUnavailable || !strings.Contains(got, "not available") {
		t.Errorf("POST without a broker: %d %s", code, got)
	}
}

// TestSecretAnswerNeverShown: a secret typed into the dashboard reaches the
// asker, and no response, streamed event, recent entry or log line holds it.
func TestSecretAnswerNeverShown(t *testing.T) {
	const pw = "hunter2-Sekret!"
	b := ask.NewBroker(true)
	srv, logs := questionServer(t, b)
	var seen strings.Builder
	streamed := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/questions/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /api/questions/events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	go func() {
		defer close(streamed)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if sc.Text() == "event: answered" {
				sc.Scan()
				seen.WriteString(sc.Text() + "\n")
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond) // the stream subscribes before the question is asked

	id, res := askAsync(t, ctx, b, ask.Question{Text: "Your password for the bank?", Kind: action.AskText, Secret: true})
	var bodies []string
	_, got := send(t, "POST", srv.URL+"/api/questions/"+id, `{"action":"accept","value":""}`, bearer)
	bodies = append(bodies, got)
	code, got := send(t, "POST", srv.URL+"/api/questions/"+id, `{"action":"accept","value":"`+pw+`"}`, bearer)
	bodies = append(bodies, got)
	if code != 200 || !strings.Contains(got, strings.Trim(ask.Masked(pw), "<>")) {
		t.Errorf("secret answer: %d %s, want 200 with its length only", code, got)
	}
	if r := waitAnswer(t, res); r.err != nil || r.a.Value != pw {
		t.Errorf("the asker got %q, %v; want the secret itself", r.a.Value, r.err)
	}
	_, got = send(t, "POST", srv.URL+"/api/questions/"+id, `{"action":"accept","value":"`+pw+`"}`, bearer)
	bodies = append(bodies, got)
	_, got = send(t, "GET", srv.URL+"/api/questions", "", bearer)
	bodies = append(bodies, got)
	if !strings.Contains(got, strings.Trim(ask.Masked(pw), "<>")) {
		t.Errorf("the recent entry does not show the secret's length: %s", got)
	}
	// A secret confirm refused as a bad answer does not echo it either.
	cid, cres := askAsync(t, ctx, b, ask.Question{Text: "Use this PIN?", Kind: action.AskConfirm, Secret: true})
	code, got = send(t, "POST", srv.URL+"/api/questions/"+cid, `{"action":"accept","value":"`+pw+`"}`, bearer)
	bodies = append(bodies, got)
	if code != http.StatusBadRequest {
		t.Errorf("a bad secret confirm: %d %s, want 400", code, got)
	}
	send(t, "POST", srv.URL+"/api/questions/"+cid, `{"action":"decline"}`, bearer)
	waitAnswer(t, cres)

	select {
	case <-streamed:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream did not send the answer")
	}
	for name, s := range map[string]string{"responses": strings.Join(bodies, "\n"), "event stream": seen.String(), "log": logs.String()} {
		if strings.Contains(s, pw) {
			t.Errorf("the %s hold the secret answer:\n%s", name, s)
		}
	}
	if !strings.Contains(seen.String(), "event: asked") || !strings.Contains(seen.String(), strings.Trim(ask.Masked(pw), "<>")) {
		t.Errorf("event stream %q: want the asked event and the answered one with the secret's length", seen.String())
	}
}
