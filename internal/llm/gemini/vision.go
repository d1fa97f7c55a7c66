package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// VisionModel answers plain-vision questions over generateContent: the
// screenshot and the prompt in one user turn, the answer constrained to the
// schema (responseMimeType application/json, responseJsonSchema). It is
// safe for concurrent use.
type VisionModel struct {
	c       *client
	profile geom.Profile
}

// NewVisionModel returns the plain-vision model for cfg. Boxes are in the
// model's convention (the "gemini" row: [ymin, xmin, ymax, xmax] on 0-1000)
// unless cfg.Profile says otherwise.
func NewVisionModel(cfg llm.Config) (*VisionModel, error) {
	c, err := newClient("gemini vision model", cfg)
	if err != nil {
		return nil, err
	}
	p := geom.ProfileFor(cfg.Model)
	if cfg.Profile != nil {
		p = *cfg.Profile
	}
	return &VisionModel{c: c, profile: p}, nil
}

// Profile returns the coordinate convention of the model's boxes.
func (m *VisionModel) Profile() geom.Profile { return m.profile }

// Ask implements the vision model: the answer is the JSON the model gave.
func (m *VisionModel) Ask(ctx context.Context, img llm.Image, system, prompt string, schema json.RawMessage) (json.RawMessage, llm.Usage, error) {
	if len(img.Data) == 0 {
		return nil, llm.Usage{}, errors.New("a plain-vision call needs a screenshot: the image is empty")
	}
	var sch any
	if err := json.Unmarshal(schema, &sch); err != nil {
		return nil, llm.Usage{}, fmt.Errorf("the answer schema is not JSON: %w", err)
	}
	gc := &genai.GenerateContentConfig{
		MaxOutputTokens:    int32(m.c.cfg.MaxTokens),
		ResponseMIMEType:   "application/json",
		ResponseJsonSchema: sch,
	}
	if system != "" {
		gc.SystemInstruction = genai.NewContentFromText(system, genai.RoleUser)
	}
	contents := []*genai.Content{genai.NewContentFromParts([]*genai.Part{
		{InlineData: &genai.Blob{MIMEType: cuwire.MIME(img), Data: img.Data}}, genai.NewPartFromText(prompt),
	}, genai.RoleUser)}
	res, _, err := m.c.generate(ctx, "gemini generateContent", contents, gc)
	if err != nil {
		return nil, llm.Usage{}, err
	}
	u := usage(res)
	cand, err := candidate(res)
	if err != nil {
		return nil, u, err
	}
	text := strings.TrimSpace(partsText(cand.Content))
	if !json.Valid([]byte(text)) {
		return nil, u, fmt.Errorf("%w: the answer is not JSON: %.200s", llm.ErrBadOutput, text)
	}
	return json.RawMessage(text), u, nil
}

// partsText joins a content's non-thought texts.
func partsText(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// TextModel completes plain text over generateContent (memory summaries).
type TextModel struct{ c *client }

// NewTextModel returns a text model for cfg.
func NewTextModel(cfg llm.Config) (*TextModel, error) {
	c, err := newClient("gemini text model", cfg)
	if err != nil {
		return nil, err
	}
	return &TextModel{c: c}, nil
}

// Complete sends system (when set) and prompt and returns the answer's text.
func (t *TextModel) Complete(ctx context.Context, system, prompt string) (string, llm.Usage, error) {
	if strings.TrimSpace(prompt) == "" {
		return "", llm.Usage{}, errors.New("gemini text model: the prompt is empty")
	}
	gc := &genai.GenerateContentConfig{MaxOutputTokens: int32(t.c.cfg.MaxTokens)}
	if system != "" {
		gc.SystemInstruction = genai.NewContentFromText(system, genai.RoleUser)
	}
	res, _, err := t.c.generate(ctx, "gemini generateContent", genai.Text(prompt), gc)
	if err != nil {
		return "", llm.Usage{}, err
	}
	u := usage(res)
	cand, err := candidate(res)
	if err != nil {
		return "", u, err
	}
	text := strings.TrimSpace(partsText(cand.Content))
	if text == "" {
		return "", u, fmt.Errorf("%w: the answer has no text", llm.ErrBadOutput)
	}
	return text, u, nil
}
