package anthropic_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/internal/golden"
)

func newTextModel(t *testing.T, baseURL string, mutate ...func(*llm.Config)) *anthropic.TextModel {
	t.Helper()
	cfg := llm.Config{
		Provider: "anthropic", Model: "claude-haiku-4-5", APIKey: testKey, BaseURL: baseURL,
		Timeout: 10 * time.Second, MaxTokens: 512, Retry: llm.RetryPolicy{Attempts: 1},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	tm, err := anthropic.NewTextModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

const (
	memSystem = "You condense the history of a desktop task into short notes."
	memPrompt = "Steps 1-6: opened the invoice folder, found invoice 2024-113, total 42.10 EUR."
)

func TestTextModelSendsAPlainMessagesRequest(t *testing.T) {
	var prompt string
	srv := fakellm.NewAnthropicServer(func(tn fakellm.Turn) fakellm.Reply {
		prompt = tn.Prompt
		return fakellm.Reply{Result: "Invoice 2024-113 found; total 42.10 EUR."}
	})
	defer srv.Close()
	tm := newTextModel(t, srv.URL)
	text, u, err := tm.Complete(context.Background(), memSystem, memPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if text != "Invoice 2024-113 found; total 42.10 EUR." {
		t.Errorf("text = %q, want the model's answer", text)
	}
	if !strings.Contains(prompt, memSystem) || !strings.Contains(prompt, memPrompt) {
		t.Errorf("the model did not receive the system prompt and the prompt: %q", prompt)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/messages" || r.Header.Get("Anthropic-Beta") != "" || r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("request %s with anthropic-beta %q, anthropic-version %q: want /v1/messages, no beta, a version",
			r.Path, r.Header.Get("Anthropic-Beta"), r.Header.Get("Anthropic-Version"))
	}
	if bytes.Contains(r.Body, []byte(`"tools"`)) {
		t.Errorf("a text request declares tools: %s", r.Body)
	}
	golden.JSON(t, "text_request.json", r.Body, *update)
	if u.Calls != 1 || u.InputTokens != r.InputTokens || u.InputTokens == 0 || u.OutputTokens == 0 {
		t.Errorf("usage %+v, want 1 call, %d input tokens (as the server reported) and some output", u, r.InputTokens)
	}

	// Without a system prompt the field is left out.
	if _, _, err := tm.Complete(context.Background(), "", memPrompt); err != nil {
		t.Fatal(err)
	}
	if b := srv.Requests()[1].Body; bytes.Contains(b, []byte(`"system"`)) {
		t.Errorf("an empty system prompt was sent: %s", b)
	}
}

func TestTextModelJoinsTextBlocksAndCountsCachedInput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5",
"content":[{"type":"text","text":"Opened the folder."},{"type":"text","text":"  "},{"type":"text","text":"Total is 42.10 EUR.\n"}],
"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":12}}`))
	}))
	defer srv.Close()
	text, u, err := newTextModel(t, srv.URL).Complete(context.Background(), memSystem, memPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if text != "Opened the folder.\nTotal is 42.10 EUR." {
		t.Errorf("text = %q, want the non-empty text blocks joined by a newline", text)
	}
	if u != (llm.Usage{Calls: 1, InputTokens: 150, OutputTokens: 12}) {
		t.Errorf("usage = %+v, want 1 call, 150 input (cache included), 12 output", u)
	}
}

func TestTextModelRetriesARateLimit(t *testing.T) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 429, RetryAfter: "0", Result: "rate limited"}),
		fakellm.Fixed(fakellm.Reply{Result: "summary"}),
	))
	defer srv.Close()
	var retried []int
	tm := newTextModel(t, srv.URL, func(c *llm.Config) {
		c.Retry = llm.RetryPolicy{Attempts: 3, Base: time.Millisecond, Max: 5 * time.Millisecond,
			OnRetry: func(attempt int, err error, _ time.Duration) {
				var ae *llm.APIError
				if errors.As(err, &ae) && ae.StatusCode == 429 {
					retried = append(retried, attempt)
				}
			}}
	})
	text, u, err := tm.Complete(context.Background(), memSystem, memPrompt)
	if err != nil {
		t.Fatal(err)
	}
	if text != "summary" || u.Calls != 1 {
		t.Errorf("text %q usage %+v, want the second answer from one successful call", text, u)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(retried) != 1 || retried[0] != 1 {
		t.Fatalf("%d requests, retries after attempts %v: want 2 requests, one retry after a 429", len(reqs), retried)
	}
	if !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Error("the retried request differs from the first")
	}
}

func TestTextModelAuthErrorIsNotRetriedAndHidesTheKey(t *testing.T) {
	// The server echoes the key, as some proxies do; the error must not.
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{HTTPStatus: 401, Result: "invalid x-api-key " + testKey})))
	defer srv.Close()
	tm := newTextModel(t, srv.URL, func(c *llm.Config) {
		c.Retry = llm.RetryPolicy{Attempts: 4, Base: time.Millisecond, Max: 5 * time.Millisecond}
	})
	_, _, err := tm.Complete(context.Background(), memSystem, memPrompt)
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *llm.APIError", err)
	}
	if ae.StatusCode != 401 || ae.Type != "authentication_error" || ae.Retryable() {
		t.Errorf("got %+v (retryable %v), want a non-retryable 401 authentication_error", ae, ae.Retryable())
	}
	if n := srv.Calls(); n != 1 {
		t.Errorf("%d requests for a 401, want 1 (not retried)", n)
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(ae.Message, testKey) {
		t.Errorf("the error shows the API key: %v", err)
	}
	if !strings.Contains(ae.Message, "invalid x-api-key") {
		t.Errorf("message %q lost the server's explanation", ae.Message)
	}
}

func TestTextModelEmptyAnswerIsBadOutput(t *testing.T) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{})))
	defer srv.Close()
	_, u, err := newTextModel(t, srv.URL).Complete(context.Background(), memSystem, memPrompt)
	if !errors.Is(err, llm.ErrBadOutput) {
		t.Fatalf("err = %v, want llm.ErrBadOutput for an answer without text", err)
	}
	if u.Calls != 1 {
		t.Errorf("usage %+v: the answered call is not counted", u)
	}
}

func TestTextModelHungRequestTimesOut(t *testing.T) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Delay: time.Minute})))
	defer srv.Close()
	tm := newTextModel(t, srv.URL, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond })
	_, _, err := tm.Complete(context.Background(), memSystem, memPrompt)
	if err == nil || !llm.Retryable(err) || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("hung server: err = %v, want a retryable timeout naming the 300ms limit", err)
	}
}

// TestNewTextModelNeedsModelAndKey: the errors name the variables the
// model was configured by (a memory model's own, from internal/app).
func TestNewTextModelNeedsModelAndKey(t *testing.T) {
	vars := llm.Vars{Model: "GUI_AGENT_MEMORY_MODEL", APIKey: "GUI_AGENT_MEMORY_API_KEY"}
	if _, err := anthropic.NewTextModel(llm.Config{APIKey: testKey, Vars: vars}); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_MEMORY_MODEL") {
		t.Errorf("no model: err = %v, want one naming GUI_AGENT_MEMORY_MODEL", err)
	}
	if _, err := anthropic.NewTextModel(llm.Config{Model: "claude-haiku-4-5", Vars: vars}); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_MEMORY_API_KEY") {
		t.Errorf("no key: err = %v, want one naming GUI_AGENT_MEMORY_API_KEY", err)
	}
}
