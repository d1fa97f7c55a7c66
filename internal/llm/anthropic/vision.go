package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
	"github.com/guiagent/guiagent/internal/vision"
)

// answerTool is the name of the tool whose input is the answer.
const answerTool = "answer"

// VisionModel is vision.Model over the Messages API: one user message with
// the screenshot and the prompt, and a forced call of one tool, "answer",
// whose input_schema is the answer schema; the tool call's input is the
// answer. It is safe for concurrent use.
type VisionModel struct {
	cfg     llm.Config
	svc     sdk.MessageService
	profile geom.Profile
}

var _ vision.Model = (*VisionModel)(nil)

// NewVisionModel returns the plain-vision model for cfg. It needs Model and
// APIKey; BaseURL is the host root. Boxes are pixels of the image sent (the
// "anthropic" profile) unless cfg.Profile says otherwise.
func NewVisionModel(cfg llm.Config) (*VisionModel, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("anthropic vision model: no model given: set %s to a Claude model such as %s", cfg.Vars.ModelVar(), Example)
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic vision model: no API key: set %s to an Anthropic API key", cfg.Vars.APIKeyVar())
	}
	cfg, client := newClient(cfg)
	return &VisionModel{cfg: cfg, svc: client.Messages, profile: cfg.ProfileOf(Name)}, nil
}

// Profile returns the coordinate convention of the model's boxes.
func (m *VisionModel) Profile() geom.Profile { return m.profile }

// Ask implements vision.Model. An answer without the tool call is a
// *vision.AnswerError carrying the model's text.
func (m *VisionModel) Ask(ctx context.Context, img llm.Image, system, prompt string, schema json.RawMessage) (json.RawMessage, llm.Usage, error) {
	if len(img.Data) == 0 {
		return nil, llm.Usage{}, errors.New("a plain-vision call needs a screenshot: the image is empty")
	}
	in, err := inputSchema(schema)
	if err != nil {
		return nil, llm.Usage{}, err
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(m.cfg.Model),
		MaxTokens: int64(m.cfg.MaxTokens),
		Messages: []sdk.MessageParam{sdk.NewUserMessage(
			sdk.NewImageBlockBase64(cuwire.MIME(img), base64.StdEncoding.EncodeToString(img.Data)),
			sdk.NewTextBlock(prompt),
		)},
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{
			Name: answerTool, InputSchema: in,
			Description: sdk.String("Give your answer about the screenshot as this tool's input."),
		}}},
		ToolChoice: sdk.ToolChoiceParamOfTool(answerTool),
	}
	if strings.TrimSpace(system) != "" {
		params.System = []sdk.TextBlockParam{{Text: system}}
	}
	res, _, err := cuwire.Do(ctx, m.cfg, "anthropic", "anthropic messages", func(ctx context.Context, c *cuwire.Capture) (*sdk.Message, error) {
		return m.svc.New(ctx, params, option.WithMiddleware(c.Middleware))
	})
	if err != nil {
		return nil, llm.Usage{}, err
	}
	u := llm.Usage{
		Calls:        1,
		InputTokens:  int(res.Usage.InputTokens + res.Usage.CacheCreationInputTokens + res.Usage.CacheReadInputTokens),
		OutputTokens: int(res.Usage.OutputTokens),
	}
	var texts []string
	for _, c := range res.Content {
		switch c.Type {
		case "tool_use":
			if c.Name == answerTool && len(c.Input) > 0 {
				return c.Input, u, nil
			}
		case "text":
			texts = append(texts, c.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if raw, err := llm.ExtractJSON(text); err == nil && json.Valid(raw) {
		return raw, u, nil
	}
	return nil, u, &vision.AnswerError{Text: text, Problem: fmt.Sprintf("the answer did not call the %q tool (stop_reason %q)", answerTool, res.StopReason)}
}

// inputSchema turns an object schema into the tool's input_schema.
func inputSchema(schema json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return sdk.ToolInputSchemaParam{}, fmt.Errorf("the answer schema is not a JSON object: %w", err)
	}
	if t, _ := m["type"].(string); t != "object" {
		return sdk.ToolInputSchemaParam{}, fmt.Errorf("a tool's input_schema must be of type object, the answer schema is of type %v", m["type"])
	}
	in := sdk.ToolInputSchemaParam{Properties: m["properties"], ExtraFields: map[string]any{}}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range m {
		if k != "type" && k != "properties" && k != "required" {
			in.ExtraFields[k] = v
		}
	}
	return in, nil
}
