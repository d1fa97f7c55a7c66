package cuwire

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
)

func TestClassifyFinal(t *testing.T) {
	for text, want := range map[string]llm.Status{
		"DONE: the total is 42": llm.Done,
		"The total is 42.":      llm.Done,
		"I have filled the form. Would you like me to do anything else?": llm.Done,
		"Done. Is there anything further I can help with?":               llm.Done,
		"I opened the page.\n\n**DONE:** the title is \"Why Go?\"":       llm.Done,
		"BLOCKED: log in to continue":                                    llm.Blocked,
		"blocked: needs a password":                                      llm.Blocked,
		"The login page is shown.\nBLOCKED: log in to continue":          llm.Blocked,
		"FAILED: the file does not exist":                                llm.Failed,
	} {
		f := ClassifyFinal(text)
		if f.Status != want || f.Question != "" {
			t.Errorf("%q: %s (question %q), want %s", text, f.Status, f.Question, want)
		}
		if f.Result == "" || strings.Contains(f.Result, "DONE") || strings.HasPrefix(strings.ToUpper(f.Result), "BLOCKED") {
			t.Errorf("%q: result %q keeps the marker or is empty", text, f.Result)
		}
		if want == llm.Blocked && (f.BlockReason == "" || f.NextUserAction == "") {
			t.Errorf("%q: blocked without reason or next user action", text)
		}
	}
}

func TestClassifyFinalReadsQuestions(t *testing.T) {
	for text, want := range map[string]string{
		"QUESTION: Which account should I use?":                           "Which account should I use?",
		"question: which account?":                                        "which account?",
		"Two accounts are listed.\nQUESTION: Which account should I use?": "Which account should I use?",
		"QUESTION:":                   llm.HelpQuestion,
		"Which account should I use?": "Which account should I use?",
		"Two accounts are listed: work and personal.\nWhich one should I use?": "Two accounts are listed: work and personal.\nWhich one should I use?",
		"The page shows a CAPTCHA that I cannot solve.":                        "The page shows a CAPTCHA that I cannot solve.",
		"Could you please provide the password for this account?":              "Could you please provide the password for this account?",
		"I need you to approve the payment on your phone.":                     "I need you to approve the payment on your phone.",
		"I cannot continue without your verification code.":                    "I cannot continue without your verification code.",
		"Please log in, then ask me again.":                                    "Please log in, then ask me again.",
	} {
		f := ClassifyFinal(text)
		if f.Status != llm.Continue || f.Question != want {
			t.Errorf("%q: status %s question %q, want continue with question %q", text, f.Status, f.Question, want)
		}
	}
}

func TestNotesCarryAnswersFirst(t *testing.T) {
	obs := llm.Observation{Feedback: "clicked", Answers: []llm.Answer{
		{Ask: action.Action{Kind: action.AskUser, Question: "Which account should I use?"}, Text: "the work one"},
		{Ask: action.Action{Kind: action.AskUser, Question: "Send it now?", Ask: action.AskConfirm}, Text: "no"},
	}}
	got := Notes(obs, "", true)
	want := []string{`The user answered your question "Which account should I use?": "the work one"`,
		`The user answered your question "Send it now?": no`, "clicked"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Notes = %q, want %q", got, want)
	}
}

func TestSplitCombo(t *testing.T) {
	for in, want := range map[string]string{
		"ctrl+s": "ctrl|s", "Return": "Return", "ctrl+shift+t": "ctrl|shift|t", "ctrl++": "ctrl|+", "+": "+", " alt + F4 ": "alt|F4", "": "",
	} {
		if got := strings.Join(SplitCombo(in), "|"); got != want {
			t.Errorf("SplitCombo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestElideKeepsEachImageItsOwnRef(t *testing.T) {
	body := []byte(`{"a":"QUJD","b":"QUJD","c":"WFla"}`)
	got := Elide(body, []Elision{{Data: "QUJD", Ref: "img1"}, {Data: "QUJD", Ref: "img2"}, {Data: "WFla", Ref: "img3"}})
	if string(got) != `{"a":"img1","b":"img2","c":"img3"}` {
		t.Fatalf("Elide = %s", got)
	}
}

func TestAPIError(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
	e := APIError("anthropic", 529, h, []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), "secret-key")
	if e.Type != "overloaded_error" || e.Message != "Overloaded" || e.RetryAfter < 80*time.Second || !e.Retryable() {
		t.Fatalf("anthropic 529: %+v", e)
	}
	e = APIError("openai", 401, nil, []byte(`{"error":{"message":"Incorrect API key provided: secret-key","type":"invalid_request_error","code":"invalid_api_key"}}`), "secret-key")
	if e.Type != "invalid_api_key" || strings.Contains(e.Error(), "secret-key") || e.Retryable() {
		t.Fatalf("openai 401: %+v / %v", e, e.Error())
	}
	e = APIError("openai", 502, nil, []byte("<html>Bad Gateway</html>"), "")
	if e.Message != "<html>Bad Gateway</html>" || !e.Retryable() {
		t.Fatalf("non-JSON 502: %+v", e)
	}
	// A key straddling the 300-character cut of a non-JSON body must not be
	// left half shown.
	key := "local-vllm-secret-0123456789"
	e = APIError("openai", 500, nil, []byte(strings.Repeat("x", 290)+key), key)
	if strings.Contains(e.Error(), key[:8]) {
		t.Fatalf("non-JSON 500 shows part of the key: %v", e)
	}
	e = APIError("anthropic", 529, nil, nil, "")
	if e.Type != "overloaded_error" || e.Message == "" {
		t.Fatalf("empty 529: %+v", e)
	}
}

func TestCaptureKeepsBodiesForTheSDK(t *testing.T) {
	var c Capture
	req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(`{"q":1}`))
	resp, err := c.Middleware(req, func(r *http.Request) (*http.Response, error) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		if b.String() != `{"q":1}` {
			t.Errorf("next saw body %q", b.String())
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"X": {"y"}}, Body: http.NoBody}, nil
	})
	if err != nil || resp.StatusCode != 200 || string(c.Request) != `{"q":1}` || c.Status != 200 || c.Header.Get("X") != "y" {
		t.Fatalf("capture %+v err %v", c, err)
	}
	if got := Redact([]byte("key=abcd1234 more abcd1234"), "abcd1234"); string(got) != "key=[REDACTED] more [REDACTED]" {
		t.Fatalf("Redact = %s", got)
	}
}

func TestRequestErrorNamesATimeoutAndKeepsTheCause(t *testing.T) {
	ctx := context.Background()
	vars := llm.Vars{Timeout: "MY_TIMEOUT", BaseURL: "MY_BASE_URL"}
	cfg := func(d time.Duration) llm.Config { return llm.Config{Timeout: d, APIKey: "k", Vars: vars} }
	err := RequestError(ctx, &Capture{}, "anthropic", "anthropic messages", cfg(300*time.Millisecond), context.DeadlineExceeded)
	if !strings.Contains(err.Error(), "timed out after 300ms") || !strings.Contains(err.Error(), "raise MY_TIMEOUT") || strings.Contains(err.Error(), "network") ||
		!errors.Is(err, context.DeadlineExceeded) || !llm.Retryable(err) {
		t.Fatalf("attempt deadline: %v", err)
	}
	// When the caller's own context ended, it is not the attempt's timeout.
	done, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	<-done.Done()
	err = RequestError(done, &Capture{}, "anthropic", "anthropic messages", cfg(time.Second), context.DeadlineExceeded)
	if strings.Contains(err.Error(), "timed out after") {
		t.Fatalf("caller's deadline reported as the attempt's: %v", err)
	}
	err = RequestError(ctx, &Capture{}, "openai", "openai responses", cfg(time.Second), errors.New("connection refused"))
	if !strings.Contains(err.Error(), "check MY_BASE_URL") {
		t.Fatalf("transport failure: %v", err)
	}
	var ae *llm.APIError
	err = RequestError(ctx, &Capture{Status: 429, Response: []byte(`{"error":{"type":"rate_limit_error","message":"slow down"}}`)}, "anthropic", "anthropic messages", cfg(time.Second), errors.New("x"))
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Message != "slow down" {
		t.Fatalf("error status: %v", err)
	}
}
