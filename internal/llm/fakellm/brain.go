// Package fakellm serves scripted model providers from httptest servers, each
// speaking one real wire format (OpenAI Chat Completions, Anthropic Messages,
// OpenAI Responses). A Brain decides every answer; brains may really look at
// the screenshot they receive (FindColor), so agent tests run end to end
// without a network or a real model. Servers record every request body they
// receive and report token usage estimated from it.
package fakellm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// DecodeImage decodes a screenshot given as a data: URL ("data:image/jpeg;base64,...")
// or as bare base64.
func DecodeImage(s string) (image.Image, error) {
	if strings.HasPrefix(s, "data:") {
		i := strings.Index(s, ",")
		if i < 0 || !strings.Contains(s[:i], ";base64") {
			return nil, errors.New("image data URL is not base64 encoded: expected data:<mime>;base64,<data>")
		}
		s = s[i+1:]
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("image data is not valid base64: %w", err)
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("image data does not decode as JPEG or PNG: %w", err)
	}
	return img, nil
}

// EstimateInputTokens estimates the input tokens of a request from its text
// characters (4 per token) and its images (about 800 tokens each).
func EstimateInputTokens(textChars, images int) int { return textChars/4 + 800*images }

// EstimateOutputTokens estimates the tokens of an answer text (4 characters per token, at least 1).
func EstimateOutputTokens(text string) int { return max(1, len(text)/4) }

// Request is one HTTP request a fake server received. Credentials are not kept.
type Request struct {
	Method string
	Path   string
	// Header is the request's header without Authorization, x-api-key and api-key.
	Header http.Header
	// Body is the request body as received.
	Body []byte
	// InputTokens is the usage the server reported for it (zero for scripted errors).
	InputTokens int
}

// Parsed is what a wire extracts from a request body for the brain.
type Parsed struct {
	// Image is the latest screenshot (nil when there is none).
	Image image.Image
	// Prompt is all text of the request.
	Prompt string
	// Images counts every image in the request (for usage estimates).
	Images int
	// Schema is the answer schema of a plain-vision request (see Turn.Schema).
	Schema json.RawMessage
}

// Wire is one provider wire format served by Core.
type Wire interface {
	// Parse extracts the latest image and the text from a request body.
	Parse(body []byte) (Parsed, error)
	// WriteError writes rep's scripted HTTP error (rep.HTTPStatus, rep.ErrorType,
	// rep.Result as the message) in the wire's error format. Core has already set
	// Retry-After.
	WriteError(w http.ResponseWriter, rep Reply)
	// WriteReply writes a successful answer; inputTokens is the estimated input usage.
	WriteReply(w http.ResponseWriter, t Turn, rep Reply, inputTokens int)
}

// Core is the provider-independent part of a fake server: it records requests,
// counts calls and steps, asks the brain, and scripts delays and HTTP errors.
// It is safe for concurrent use; the brain is called by one request at a time.
type Core struct {
	brain   Brain
	brainMu sync.Mutex // serializes brain calls

	mu    sync.Mutex
	calls int
	steps int
	reqs  []Request
}

// NewCore returns a Core asking brain.
func NewCore(brain Brain) *Core { return &Core{brain: brain} }

// Requests returns a copy of every request received so far, oldest first.
func (c *Core) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.reqs...)
}

// Calls returns how many requests were received.
func (c *Core) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// Handler serves wire: every POST is recorded, parsed, answered by the brain.
// A body the wire cannot parse gets HTTP 400 with the parse error.
func (c *Core) Handler(wire Wire) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		h := r.Header.Clone()
		for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"} {
			h.Del(k)
		}
		c.mu.Lock()
		c.calls++
		idx := len(c.reqs)
		c.reqs = append(c.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: h, Body: body})
		c.mu.Unlock()

		p, err := wire.Parse(body)
		if err != nil {
			wire.WriteError(w, Reply{HTTPStatus: http.StatusBadRequest, ErrorType: "invalid_request_error",
				Result: "fakellm could not parse the request: " + err.Error()})
			return
		}
		t, rep := c.think(p)
		if rep.Delay > 0 && !sleepCtx(r.Context(), rep.Delay) {
			return // the client gave up
		}
		if rep.HTTPStatus != 0 {
			if rep.RetryAfter != "" {
				w.Header().Set("Retry-After", rep.RetryAfter)
			}
			wire.WriteError(w, rep)
			return
		}
		in := EstimateInputTokens(len(p.Prompt), p.Images)
		c.mu.Lock()
		c.reqs[idx].InputTokens = in
		c.mu.Unlock()
		wire.WriteReply(w, t, rep, in)
	})
}

// think asks the brain, under the lock that serializes brain calls.
func (c *Core) think(p Parsed) (Turn, Reply) {
	c.brainMu.Lock()
	defer c.brainMu.Unlock()
	c.mu.Lock()
	t := Turn{Step: c.steps + 1, Image: p.Image, Prompt: p.Prompt, Calls: c.calls, Schema: p.Schema}
	c.mu.Unlock()
	if p.Image != nil {
		b := p.Image.Bounds()
		t.ImageSize = geom.Size{W: b.Dx(), H: b.Dy()}
	}
	var rep Reply
	if c.brain != nil {
		rep = c.brain(t)
	} else {
		rep = Reply{Status: llm.Failed, Result: "fakellm server has no brain"}
	}
	if rep.HTTPStatus == 0 {
		c.mu.Lock()
		c.steps++
		c.mu.Unlock()
	}
	return t, rep
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
