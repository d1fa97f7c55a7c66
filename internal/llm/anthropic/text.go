package anthropic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// TextModel completes plain text over the Messages API (memory summaries):
// one user message, an optional system prompt, no tools and no beta header.
// It is safe for concurrent use.
type TextModel struct {
	cfg llm.Config
	svc sdk.MessageService
}

var _ llm.TextModel = (*TextModel)(nil)

// NewTextModel returns a text model for cfg. It needs Model and APIKey;
// BaseURL is the host root (the SDK adds /v1/messages). Timeout bounds each
// attempt, Retry governs retries (the SDK's own are off) and MaxTokens caps
// the answer (zero = llm.DefaultMaxTokens); KeepImages, Profile and ToolVersion are unused.
func NewTextModel(cfg llm.Config) (*TextModel, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("anthropic text model: no model given: set %s to a Claude model such as claude-haiku-5-5", cfg.Vars.ModelVar())
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic text model: no API key: set %s to an Anthropic API key", cfg.Vars.APIKeyVar())
	}
	cfg, client := newClient(cfg)
	return &TextModel{cfg: cfg, svc: client.Messages}, nil
}

// Complete sends system (omitted when empty) and prompt as one user message and
// returns the answer's text blocks joined by newlines, trimmed, with the call's
// usage (cache reads and writes count as input). Provider errors are
// *llm.APIError (retried per Config.Retry when retryable); an answer without
// text, or a refusal, is an error wrapping llm.ErrBadOutput. An answer cut off
// at MaxTokens is returned as it is.
func (t *TextModel) Complete(ctx context.Context, system, prompt string) (string, llm.Usage, error) {
	if strings.TrimSpace(prompt) == "" {
		return "", llm.Usage{}, errors.New("anthropic text model: the prompt is empty: the Messages API refuses empty user messages")
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(t.cfg.Model),
		MaxTokens: int64(t.cfg.MaxTokens),
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(prompt))},
	}
	if strings.TrimSpace(system) != "" {
		params.System = []sdk.TextBlockParam{{Text: system}}
	}
	res, _, err := cuwire.Do(ctx, t.cfg, "anthropic", "anthropic messages", func(ctx context.Context, c *cuwire.Capture) (*sdk.Message, error) {
		return t.svc.New(ctx, params, option.WithMiddleware(c.Middleware))
	})
	if err != nil {
		return "", llm.Usage{}, err
	}
	u := llm.Usage{
		Calls:        1,
		InputTokens:  int(res.Usage.InputTokens + res.Usage.CacheCreationInputTokens + res.Usage.CacheReadInputTokens),
		OutputTokens: int(res.Usage.OutputTokens),
	}
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			if s := strings.TrimSpace(c.Text); s != "" {
				texts = append(texts, s)
			}
		}
	}
	text := strings.Join(texts, "\n")
	if res.StopReason == sdk.StopReasonRefusal {
		return "", u, fmt.Errorf("%w: the model declined to answer (stop_reason refusal): %s", llm.ErrBadOutput, clip(text, 200))
	}
	if text == "" {
		return "", u, fmt.Errorf("%w: the answer has no text (stop_reason %q)", llm.ErrBadOutput, res.StopReason)
	}
	return text, u, nil
}

// clip shortens s to at most n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
