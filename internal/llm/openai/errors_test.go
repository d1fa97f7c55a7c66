package openai

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

const testKey = "sk-secret-test-key-0123456789"

func clickReply(turn fakellm.Turn) fakellm.Reply {
	at := image.Pt(turn.ImageSize.W/2, turn.ImageSize.H/2)
	return fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(at)}}
}

func step(t *testing.T, brain fakellm.Brain, cfg llm.Config) (*llm.Decision, *fakellm.ChatServer, error) {
	t.Helper()
	srv := fakellm.NewChatServer(brain, fakellm.ChatOptions{Profile: geom.ProfileFor("gpt-4o")})
	t.Cleanup(srv.Close)
	cfg.Model, cfg.APIKey, cfg.BaseURL = "gpt-4o", testKey, srv.URL
	ad, err := NewGeneric(cfg)
	if err != nil {
		t.Fatal(err)
	}
	img := shot(t, ad.Profile(), screen, 1280, 1)
	d, err := ad.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Task: "task", Screenshot: img})
	return d, srv, err
}

func TestMalformedAnswers(t *testing.T) {
	cases := []struct {
		name, raw string
		want      []string // fragments the error must contain
	}{
		{"prose only", "I will click the OK button now.", []string{"no JSON object"}},
		{"cut off", `{"observation": "x", "actions": [{"action": "click", "x": 1`, []string{"not closed", "token limit"}},
		{"missing y", `{"actions":[{"action":"click","x":10}],"status":"continue"}`, []string{`actions[0]`, `"x" and "y"`}},
		{"unknown kind", `{"actions":[{"action":"teleport","x":1,"y":2}],"status":"continue"}`, []string{"unknown action \"teleport\"", "double_click"}},
		{"bad key", `{"actions":[{"action":"key","keys":["ctrl","bogus_key"]}],"status":"continue"}`, []string{"actions[0]", "unknown key \"bogus_key\""}},
		{"three numbers", `{"actions":[{"action":"click","box":[1,2,3]}],"status":"continue"}`, []string{"2 numbers (a point) or 4 (a box), got 3"}},
		{"bad button", `{"actions":[{"action":"click","x":1,"y":2,"button":"fourth"}],"status":"continue"}`, []string{"unknown mouse button \"fourth\""}},
		{"partly valid", `{"actions":[{"action":"type","text":"ok"},{"action":"scroll","x":3,"y":4}],"status":"continue"}`, []string{"actions[1]", "direction"}},
		{"bad status", `{"actions":[],"status":"maybe"}`, []string{`status "maybe"`}},
		{"continue without actions", `{"actions":[],"status":"continue"}`, []string{"no actions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := step(t, fakellm.Script(fakellm.Fixed(fakellm.Reply{Raw: tc.raw})), llm.Config{})
			if !errors.Is(err, llm.ErrBadOutput) {
				t.Fatalf("err = %v, want ErrBadOutput", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
			if d == nil || len(d.Actions) != 0 {
				t.Fatalf("a malformed answer must yield no actions, got %+v", d)
			}
			if d.Usage.Calls != 1 || string(d.Response) == "" || len(d.Request) == 0 {
				t.Fatalf("malformed answer lost its usage or record: %+v", d)
			}
		})
	}
}

func TestReAskShowsPreviousAnswer(t *testing.T) {
	var prompts []string
	brain := fakellm.Script(
		func(turn fakellm.Turn) fakellm.Reply {
			prompts = append(prompts, turn.Prompt)
			return fakellm.Reply{Raw: `{"actions":[{"action":"click","x":"left"}]}`}
		},
		func(turn fakellm.Turn) fakellm.Reply { prompts = append(prompts, turn.Prompt); return clickReply(turn) },
	)
	srv := fakellm.NewChatServer(brain, fakellm.ChatOptions{})
	defer srv.Close()
	ad, _ := NewGeneric(llm.Config{Model: "gpt-4o", BaseURL: srv.URL})
	sess := ad.NewSession("task")
	img := shot(t, ad.Profile(), screen, 1280, 1)
	_, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: img})
	if !errors.Is(err, llm.ErrBadOutput) {
		t.Fatalf("first answer: err = %v", err)
	}
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Screenshot: img, Feedback: err.Error(), ReAsk: true})
	if err != nil || len(d.Actions) != 1 {
		t.Fatalf("re-ask: %v %+v", err, d)
	}
	if !strings.Contains(prompts[1], `"x":"left"`) || !strings.Contains(prompts[1], "could not be used") {
		t.Fatalf("re-ask prompt does not show the previous answer and the error:\n%s", prompts[1])
	}
}

func TestRetryAfter429ThenSuccess(t *testing.T) {
	var waits []time.Duration
	d, srv, err := step(t, fakellm.Script(
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 429, RetryAfter: "1", ErrorType: "rate_limit_exceeded", Result: "Rate limit reached"}),
		clickReply,
	), llm.Config{Retry: llm.RetryPolicy{Base: time.Millisecond, Max: 5 * time.Second,
		OnRetry: func(_ int, _ error, w time.Duration) { waits = append(waits, w) }}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 1 || srv.Calls() != 2 {
		t.Fatalf("calls = %d, actions = %+v; want success on the second call", srv.Calls(), d.Actions)
	}
	if len(waits) != 1 || waits[0] != time.Second {
		t.Fatalf("waits = %v, want the server's Retry-After of 1s", waits)
	}
}

func TestOverloadedIsRetried(t *testing.T) {
	_, srv, err := step(t, fakellm.Script(
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 529}),
		fakellm.Fixed(fakellm.Reply{HTTPStatus: 503}),
		clickReply,
	), llm.Config{Retry: llm.RetryPolicy{Base: time.Millisecond, Max: 10 * time.Millisecond}})
	if err != nil || srv.Calls() != 3 {
		t.Fatalf("err = %v after %d calls, want success on the third", err, srv.Calls())
	}
}

func TestAuthAndQuotaAreNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  fakellm.Reply
		status int
	}{
		{"401", fakellm.Reply{HTTPStatus: 401, ErrorType: "invalid_request_error",
			Result: "Incorrect API key provided: " + testKey + ". You can find your API key at https://platform.openai.com."}, 401},
		{"quota", fakellm.Reply{HTTPStatus: 429, ErrorType: "insufficient_quota", Result: "You exceeded your current quota"}, 429},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv, err := step(t, fakellm.Script(fakellm.Fixed(tc.reply), clickReply),
				llm.Config{Retry: llm.RetryPolicy{Base: time.Millisecond}})
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.StatusCode != tc.status || ae.Retryable() {
				t.Fatalf("err = %v, want a non-retryable APIError %d", err, tc.status)
			}
			if srv.Calls() != 1 {
				t.Fatalf("server saw %d calls, want 1 (no retry)", srv.Calls())
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "sk-secret") {
				t.Fatalf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestLongErrorMessageHidesAClippedKey(t *testing.T) {
	const key = "local-vllm-secret-0123456789" // no sk- prefix: only the configured key can match it
	srv := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{HTTPStatus: 400,
		Result: strings.Repeat("x", 490) + key})), fakellm.ChatOptions{})
	defer srv.Close()
	ad, err := NewGeneric(llm.Config{Model: "gpt-4o", APIKey: key, BaseURL: srv.URL, Retry: llm.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ad.NewSession("task").Next(context.Background(), llm.Observation{Step: 1, Screenshot: shot(t, ad.Profile(), screen, 1280, 1)})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 {
		t.Fatalf("err = %v, want an APIError 400", err)
	}
	if strings.Contains(err.Error(), key[:8]) {
		t.Fatalf("error shows part of the API key: %v", err)
	}
}

func TestHungServerTimesOut(t *testing.T) {
	start := time.Now()
	_, srv, err := step(t, fakellm.Script(fakellm.Fixed(fakellm.Reply{Delay: time.Minute})),
		llm.Config{Timeout: 150 * time.Millisecond, Retry: llm.RetryPolicy{Attempts: 2, Base: time.Millisecond, Max: time.Millisecond}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 150ms") {
		t.Fatalf("err = %v, want a timeout naming the limit", err)
	}
	if srv.Calls() != 2 {
		t.Fatalf("server saw %d calls, want 2 (a timed-out attempt is retried)", srv.Calls())
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("the hung request was not bounded by the timeout")
	}
}

func TestCancelInterruptsBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := fakellm.NewChatServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{HTTPStatus: 500, RetryAfter: "60"})), fakellm.ChatOptions{})
	defer srv.Close()
	ad, _ := NewGeneric(llm.Config{Model: "gpt-4o", BaseURL: srv.URL, Retry: llm.RetryPolicy{Max: time.Minute,
		OnRetry: func(int, error, time.Duration) { time.AfterFunc(50*time.Millisecond, cancel) }}})
	img := shot(t, ad.Profile(), screen, 1280, 1)
	start := time.Now()
	_, err := ad.NewSession("task").Next(ctx, llm.Observation{Step: 1, Screenshot: img})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.RetryAfter != time.Minute {
		t.Fatalf("err = %v, want it to carry the 500 with its Retry-After", err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("cancellation did not interrupt the 60 s backoff (returned after %v)", el)
	}
}

func TestUsageStaysFlat(t *testing.T) {
	srv := fakellm.NewChatServer(clickReply, fakellm.ChatOptions{})
	defer srv.Close()
	ad, _ := NewGeneric(llm.Config{Model: "gpt-4o", BaseURL: srv.URL, KeepImages: 3})
	sess := ad.NewSession("task")
	var recent []llm.Image
	var inputs []int
	for st := 1; st <= 12; st++ {
		img := shot(t, ad.Profile(), screen, 640, st)
		d, err := sess.Next(context.Background(), llm.Observation{Step: st, Screenshot: img, Recent: recent, History: "step n: clicked"})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, d.Usage.InputTokens)
		recent = append(recent, img)
		if len(recent) > 3 {
			recent = recent[1:]
		}
	}
	if inputs[0] >= inputs[2] {
		t.Fatalf("input tokens %v: step 3 carries 3 images and must cost more than step 1", inputs)
	}
	for _, v := range inputs[3:] {
		if d := v - inputs[3]; d < -5 || d > 5 {
			t.Fatalf("input tokens per step grow: %v", inputs)
		}
	}
}
