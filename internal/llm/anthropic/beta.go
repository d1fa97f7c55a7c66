package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// callBeta sends turns with a legacy computer tool (computer_20250124 or
// computer_20251124) on the beta client, with the tool's beta header.
func (s *Session) callBeta(ctx context.Context, turns []turn) (*answer, *cuwire.Capture, []cuwire.Elision, error) {
	kept, elide := s.prune(turns)
	msgs := make([]sdk.BetaMessageParam, 0, len(kept))
	for _, t := range kept {
		role := sdk.BetaMessageParamRoleUser
		if t.assistant {
			role = sdk.BetaMessageParamRoleAssistant
		}
		msgs = append(msgs, sdk.BetaMessageParam{Role: role, Content: betaBlocks(t.blocks)})
	}
	params := sdk.BetaMessageNewParams{
		Model:     sdk.Model(s.a.cfg.Model),
		MaxTokens: int64(s.a.cfg.MaxTokens),
		System:    []sdk.BetaTextBlockParam{{Text: systemPrompt(s.a.zoom()) + llm.DeviceInstructions(s.a.cfg.Device)}},
		Messages:  msgs,
		Tools:     []sdk.BetaToolUnionParam{s.betaTool()},
		Betas:     []sdk.AnthropicBeta{sdk.AnthropicBeta(s.a.beta)},
	}
	res, capt, err := cuwire.Do(ctx, s.a.cfg, "anthropic", "anthropic messages", func(ctx context.Context, c *cuwire.Capture) (*sdk.BetaMessage, error) {
		return s.a.svc.New(ctx, params, option.WithMiddleware(c.Middleware))
	})
	if err != nil {
		return nil, nil, nil, err
	}
	ans := &answer{stop: string(res.StopReason), usage: llm.Usage{
		Calls:        1,
		InputTokens:  int(res.Usage.InputTokens + res.Usage.CacheCreationInputTokens + res.Usage.CacheReadInputTokens),
		OutputTokens: int(res.Usage.OutputTokens),
	}}
	for _, c := range res.Content {
		ans.content = append(ans.content, answerBlock{typ: c.Type, text: c.Text, id: c.ID, name: c.Name, input: c.Input})
	}
	return ans, capt, elide, nil
}

// betaTool declares the legacy computer tool with the display size sent.
func (s *Session) betaTool() sdk.BetaToolUnionParam {
	w, h := int64(s.display.W), int64(s.display.H)
	if s.a.tool == Tool20251124 {
		t := sdk.BetaToolUnionParamOfComputerUseTool20251124(h, w)
		t.OfComputerUseTool20251124.EnableZoom = sdk.Bool(s.a.zoom())
		return t
	}
	return sdk.BetaToolUnionParamOfComputerUseTool20250124(h, w)
}

// betaBlocks renders pruned blocks as beta content blocks.
func betaBlocks(bs []block) []sdk.BetaContentBlockParamUnion {
	var out []sdk.BetaContentBlockParamUnion
	for _, b := range bs {
		switch b.kind {
		case "text":
			if b.text != "" {
				out = append(out, sdk.NewBetaTextBlock(b.text))
			}
		case "image":
			out = append(out, sdk.NewBetaImageBlock(sdk.BetaBase64ImageSourceParam{
				Data: b.data, MediaType: sdk.BetaBase64ImageSourceMediaType(cuwire.MIME(*b.img)),
			}))
		case "tool_use":
			out = append(out, sdk.NewBetaToolUseBlock(b.id, b.input, b.text))
		case "tool_result":
			r := sdk.BetaToolResultBlockParam{ToolUseID: b.id}
			if b.isError {
				r.IsError = sdk.Bool(true)
			}
			for _, c := range betaBlocks(b.content) {
				switch {
				case c.OfText != nil:
					r.Content = append(r.Content, sdk.BetaToolResultBlockParamContentUnion{OfText: c.OfText})
				case c.OfImage != nil:
					r.Content = append(r.Content, sdk.BetaToolResultBlockParamContentUnion{OfImage: c.OfImage})
				}
			}
			out = append(out, sdk.BetaContentBlockParamUnion{OfToolResult: &r})
		}
	}
	return out
}
