// Package openai speaks the OpenAI Chat Completions wire (OpenAI and every
// compatible server: vLLM, Ollama, DashScope, Ark, OpenRouter, Gemini's
// OpenAI-compatible endpoint) for guiagent's model adapters: the generic JSON
// adapter, the UI-TARS text-action adapter, a plain text model (memory
// summaries) and a grounder. It uses the official SDK with its retries off;
// retries follow llm.Do.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

// Default base URLs per provider, given the way the SDK takes them.
const (
	OpenAIBaseURL = "https://api.openai.com/v1"
	GeminiBaseURL = "https://generativelanguage.googleapis.com/v1beta/openai/"
)

// client is one configured Chat Completions endpoint.
type client struct {
	cfg      llm.Config
	provider string
	baseURL  string
	svc      oai.ChatCompletionService
	// official is set for api.openai.com, which wants max_completion_tokens
	// (compatible servers widely accept only max_tokens) and image detail.
	official bool
}

func newClient(cfg llm.Config) (*client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("no model name: set %s (for example gpt-5.5 or ui-tars-1.5-7b)", cfg.Vars.ModelVar())
	}
	provider := strings.ToLower(strings.TrimSpace(cfg.Provider))
	if provider == "" {
		provider = "openai"
	}
	base := strings.TrimSpace(cfg.BaseURL)
	official := false
	if base == "" {
		switch provider {
		case "openai":
			base, official = OpenAIBaseURL, true
		case "gemini":
			base = GeminiBaseURL
		default:
			return nil, fmt.Errorf("provider %q has no default endpoint for the OpenAI-compatible wire: set %s to the server's URL up to and including /v1", cfg.Provider, cfg.Vars.BaseURLVar())
		}
	}
	if strings.HasPrefix(base, "https://api.openai.com/") || base == "https://api.openai.com" {
		official = true
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("base URL %q must start with http:// or https:// (OpenAI-compatible servers: up to and including /v1)", base)
	}
	cfg = cfg.WithDefaults()
	hc := cfg.HTTPClient
	if hc == nil {
		// Each attempt is bounded by a context deadline of cfg.Timeout (see do),
		// which gives the clear "timed out after" error; the client's own
		// timeout is only a backstop and must not race it.
		hc = &http.Client{Timeout: cfg.Timeout + 10*time.Second}
	}
	hc = llm.LimitResponses(hc, llm.MaxResponseBytes)
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // retries are llm.Do's
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		// Local servers (vLLM, Ollama) need no key; send a placeholder so the SDK
		// does not look for one elsewhere.
		opts = append(opts, option.WithAPIKey("none"))
	}
	// NewChatCompletionService, unlike NewClient, does not read OPENAI_* variables:
	// guiagent's configuration is its own.
	return &client{
		cfg: cfg, provider: provider, baseURL: base,
		svc:      oai.NewChatCompletionService(opts...),
		official: official,
	}, nil
}

// profile returns the profile adapter uses (see llm.Config.ProfileOf).
func (c *client) profile(adapter string) geom.Profile { return c.cfg.ProfileOf(adapter) }

// exchange is one completed call.
type exchange struct {
	Text     string
	Usage    llm.Usage
	Request  []byte // body with image data replaced by refs
	Response []byte
}

// imageRefs lists the record names of a request's images in the order their
// parts appear in the body.
type imageRefs struct{ refs []string }

func (r *imageRefs) add(ref string) {
	if r != nil {
		r.refs = append(r.refs, ref)
	}
}

var dataURLPattern = regexp.MustCompile(`"data:[a-z]+/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]*"`)

// withRefs returns body with the n-th data URL replaced by the n-th ref.
func (r *imageRefs) withRefs(body []byte) []byte {
	i := 0
	return dataURLPattern.ReplaceAllFunc(body, func(m []byte) []byte {
		ref := "image"
		if r != nil && i < len(r.refs) {
			ref = r.refs[i]
		}
		i++
		q, _ := json.Marshal(ref)
		return q
	})
}

// call sends messages and returns the assistant text. refs names the images
// for the recorded request. Retryable failures are retried per cfg.Retry; each
// attempt is bounded by cfg.Timeout.
func (c *client) call(ctx context.Context, msgs []oai.ChatCompletionMessageParamUnion, refs *imageRefs) (exchange, error) {
	return c.callFormat(ctx, msgs, refs, oai.ChatCompletionNewParamsResponseFormatUnion{})
}

// callFormat is call with a response_format (the zero value sends none).
func (c *client) callFormat(ctx context.Context, msgs []oai.ChatCompletionMessageParamUnion, refs *imageRefs,
	format oai.ChatCompletionNewParamsResponseFormatUnion) (exchange, error) {
	params := oai.ChatCompletionNewParams{Model: c.cfg.Model, Messages: msgs, ResponseFormat: format}
	if c.official {
		params.MaxCompletionTokens = oai.Int(int64(c.cfg.MaxTokens))
	} else {
		params.MaxTokens = oai.Int(int64(c.cfg.MaxTokens))
	}
	var ex exchange
	if body, err := json.Marshal(params); err == nil {
		ex.Request = refs.withRefs(body)
	}
	var res *oai.ChatCompletion
	err := llm.Do(ctx, c.cfg.Retry, func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		r, err := c.svc.New(actx, params)
		if err != nil {
			if ctx.Err() == nil && actx.Err() != nil {
				return fmt.Errorf("%s request to %s timed out after %v (raise %s if the model is slow): %w",
					c.provider, c.redactedBase(), c.cfg.Timeout, c.cfg.Vars.TimeoutVar(), context.DeadlineExceeded)
			}
			return c.translate(err)
		}
		res = r
		return nil
	})
	if err != nil {
		return ex, err
	}
	ex.Response = []byte(res.RawJSON())
	ex.Usage = llm.Usage{Calls: 1, InputTokens: int(res.Usage.PromptTokens), OutputTokens: int(res.Usage.CompletionTokens)}
	if len(res.Choices) == 0 {
		return ex, fmt.Errorf("%w: the %s response has no choices", llm.ErrBadOutput, c.provider)
	}
	ch := res.Choices[0]
	ex.Text = ch.Message.Content
	if ex.Text == "" && ch.Message.Refusal != "" {
		return ex, fmt.Errorf("%w: the model refused: %s", llm.ErrBadOutput, clip(ch.Message.Refusal, 300))
	}
	if ex.Text == "" {
		return ex, fmt.Errorf("%w: the model's answer is empty (finish_reason %q)", llm.ErrBadOutput, ch.FinishReason)
	}
	return ex, nil
}

// imageDetail is the image_url detail to send: "high" for OpenAI itself (full
// resolution matters for pointing), omitted for compatible servers.
func (c *client) imageDetail() string {
	if c.official {
		return "high"
	}
	return ""
}

// redactedBase is the base URL without query or credentials, for messages.
func (c *client) redactedBase() string {
	s := c.baseURL
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			s = s[:j+3] + s[i+1:]
		}
	}
	return s
}

var secretish = regexp.MustCompile(`(?i)(sk-|key-|AIza|Bearer\s+)[A-Za-z0-9_\-\*\.]+`)

// scrub removes the configured key and anything shaped like a credential from s.
func (c *client) scrub(s string) string {
	s = secret.NewScrubber(c.cfg.APIKey).String(s)
	s = secretish.ReplaceAllString(s, secret.Marker)
	if i := strings.Index(strings.ToLower(s), "incorrect api key provided:"); i >= 0 {
		s = s[:i] + "Incorrect API key provided (check " + c.cfg.Vars.APIKeyVar() + ")."
	}
	return s
}

// translate turns an SDK error into *llm.APIError (or a scrubbed transport error).
func (c *client) translate(err error) error {
	var e *oai.Error
	if !errors.As(err, &e) {
		// Transport errors name the URL; the SDK never puts the key in them,
		// but scrub anyway. Keep the chain for llm.Retryable.
		return &transportError{msg: c.scrub(err.Error()), err: err}
	}
	ae := &llm.APIError{Provider: c.provider, StatusCode: e.StatusCode, Type: e.Type, Message: e.Message}
	if code := e.Code; code != "" && (ae.Type == "" || code == "insufficient_quota" || code == "invalid_api_key") {
		ae.Type = code
	}
	if ae.Message == "" {
		ae.Type, ae.Message = otherErrorBody(c.scrub(e.RawJSON()), ae.Type)
	}
	if ae.Message == "" {
		ae.Message = http.StatusText(e.StatusCode)
	}
	// Scrub before clipping, so a key cut in two is not left half shown.
	ae.Message = clip(c.scrub(ae.Message), 500)
	if e.Response != nil {
		ae.RetryAfter = llm.RetryAfterFrom(e.Response.Header, time.Now())
	}
	return ae
}

// otherErrorBody reads error bodies in the shapes compatible servers use:
// Gemini's [{"error":{"code","message","status"}}] and {"error":"text"}.
func otherErrorBody(raw, typ string) (string, string) {
	raw = strings.TrimSpace(raw)
	var arr []struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &arr) == nil && len(arr) > 0 {
		if typ == "" {
			typ = arr[0].Error.Status
		}
		return typ, arr[0].Error.Message
	}
	var obj struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(raw), &obj) == nil {
		if s, ok := obj.Error.(string); ok {
			return typ, s
		}
		return typ, obj.Message
	}
	return typ, clip(raw, 300)
}

// transportError is a failed request that got no HTTP response. Its message is
// scrubbed; Unwrap keeps the cause for retry decisions.
type transportError struct {
	msg string
	err error
}

func (t *transportError) Error() string { return "model request failed: " + t.msg }
func (t *transportError) Unwrap() error { return t.err }

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
