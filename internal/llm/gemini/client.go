// Package gemini is the gemini-computer adapter and Gemini's plain-vision and
// text models, on Google's official Go SDK (google.golang.org/genai) and the
// native generateContent API: the computerUse tool with the desktop
// environment, its predefined functions mapped to the action vocabulary (the
// browser-only ones excluded), x and y on the 0-999 grid resolved by geom,
// function responses carrying the screenshot as an inline image, and
// safety_decision require_confirmation put to the person. The SDK (v1.68)
// has no Interactions API, so generateContent is the path for every model.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// DefaultBaseURL is the Gemini API's host, where requests go when
// Config.BaseURL is empty (the SDK adds /v1beta/models/...).
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// client is one configured generateContent endpoint.
type client struct {
	cfg    llm.Config
	models *genai.Models
}

// captureKey carries a call's cuwire.Capture to the transport.
type captureKey struct{}

// captureTransport hands each request to the Capture its context carries,
// so records keep the bodies the SDK sent and received.
type captureTransport struct{ next http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, ok := req.Context().Value(captureKey{}).(*cuwire.Capture)
	if !ok {
		return t.next.RoundTrip(req)
	}
	return c.Middleware(req, t.next.RoundTrip)
}

// newClient builds the SDK client for cfg: the Gemini API backend, the key
// and base URL given (never GOOGLE_* or GEMINI_* environment variables: every
// field they would fill is set), the SDK's own retries off (llm.Do retries),
// each attempt bounded by cfg.Timeout.
func newClient(what string, cfg llm.Config) (*client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("%s: no model given: set %s to a Gemini model such as %s", what, cfg.Vars.ModelVar(), Example)
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("%s: no API key: set %s to a Gemini API key", what, cfg.Vars.APIKeyVar())
	}
	cfg = cfg.WithDefaults()
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("%s: base URL %q must start with http:// or https:// (the Gemini API's host root)", what, base)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: cfg.Timeout + 10*time.Second}
	}
	hc = llm.LimitResponses(hc, llm.MaxResponseBytes)
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	wrapped := *hc
	wrapped.Transport = captureTransport{next: next}
	timeout := cfg.Timeout
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &wrapped,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: "v1beta", Timeout: &timeout},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &client{cfg: cfg, models: c.Models}, nil
}

// generate makes one generateContent call under cfg.Retry, returning the
// response and the exchange's capture.
func (c *client) generate(ctx context.Context, what string, contents []*genai.Content, gc *genai.GenerateContentConfig) (*genai.GenerateContentResponse, *cuwire.Capture, error) {
	return cuwire.Do(ctx, c.cfg, "gemini", what, func(ctx context.Context, capt *cuwire.Capture) (*genai.GenerateContentResponse, error) {
		return c.models.GenerateContent(context.WithValue(ctx, captureKey{}, capt), c.cfg.Model, contents, gc)
	})
}

// usage reads a response's token counts.
func usage(res *genai.GenerateContentResponse) llm.Usage {
	u := llm.Usage{Calls: 1}
	if m := res.UsageMetadata; m != nil {
		u.InputTokens = int(m.PromptTokenCount)
		u.OutputTokens = int(m.CandidatesTokenCount + m.ThoughtsTokenCount)
	}
	return u
}

// candidate returns the first candidate's content, or why there is none
// (a blocked prompt, an empty answer).
func candidate(res *genai.GenerateContentResponse) (*genai.Candidate, error) {
	if len(res.Candidates) == 0 || res.Candidates[0] == nil {
		if pf := res.PromptFeedback; pf != nil && pf.BlockReason != "" {
			return nil, fmt.Errorf("%w: the prompt was blocked (%s): %s", llm.ErrBadOutput, pf.BlockReason, pf.BlockReasonMessage)
		}
		return nil, fmt.Errorf("%w: the answer has no candidate", llm.ErrBadOutput)
	}
	cand := res.Candidates[0]
	if cand.Content == nil {
		cand.Content = &genai.Content{Role: genai.RoleModel}
	}
	return cand, nil
}

// errNoImage is returned for an observation without a screenshot.
var errNoImage = errors.New("the observation has no screenshot: the loop must capture one before asking the model")
