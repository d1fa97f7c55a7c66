package anthropic

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// Member is one member of the computer toolset: the action kind it performs
// (what Config.Disabled names; "" for the two that only look: screenshot and
// cursor_position) and where its configs entry lives.
type Member struct {
	Kind   action.Kind
	config func(*sdk.ComputerToolsetConfigsParam) *param.Opt[bool]
}

// Members are the 17 members of computer_toolset_20260801, by the name its
// tool_use blocks carry (the SDK's ComputerToolsetConfigsParam fields).
var Members = map[string]Member{
	"key":             {action.KeyPress, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.Key.Enabled }},
	"hold_key":        {action.HoldKey, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.HoldKey.Enabled }},
	"type":            {action.TypeText, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.Type.Enabled }},
	"cursor_position": {"", func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.CursorPosition.Enabled }},
	"mouse_move":      {action.Move, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.MouseMove.Enabled }},
	"left_mouse_down": {action.MouseDown, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.LeftMouseDown.Enabled }},
	"left_mouse_up":   {action.MouseUp, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.LeftMouseUp.Enabled }},
	"left_click":      {action.Click, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.LeftClick.Enabled }},
	"left_click_drag": {action.Drag, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.LeftClickDrag.Enabled }},
	"right_click":     {action.Click, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.RightClick.Enabled }},
	"middle_click":    {action.Click, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.MiddleClick.Enabled }},
	"double_click":    {action.DoubleClick, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.DoubleClick.Enabled }},
	"triple_click":    {action.TripleClick, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.TripleClick.Enabled }},
	"scroll":          {action.Scroll, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.Scroll.Enabled }},
	"wait":            {action.Wait, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.Wait.Enabled }},
	"screenshot":      {"", func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.Screenshot.Enabled }},
	"zoom":            {action.Zoom, func(c *sdk.ComputerToolsetConfigsParam) *param.Opt[bool] { return &c.Zoom.Enabled }},
}

// MemberNames returns the toolset's member names, sorted.
func MemberNames() []string {
	var out []string
	for n := range Members {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// disabledMembers returns the members whose action kind is in kinds (every
// click member for click).
func disabledMembers(kinds []action.Kind) (map[string]bool, error) {
	off := map[string]bool{}
	for _, k := range kinds {
		if !slices.Contains(action.Kinds, k) {
			return nil, fmt.Errorf("disabled action %q is not an action", k)
		}
		for name, m := range Members {
			if m.Kind == k {
				off[name] = true
			}
		}
	}
	return off, nil
}

// toolsetParam declares the toolset, with the disabled members switched off
// in its configs.
func (a *Adapter) toolsetParam() sdk.ToolUnionParam {
	t := &sdk.ComputerToolset20260801Param{}
	for _, name := range MemberNames() {
		if a.off[name] {
			*Members[name].config(&t.Configs) = param.NewOpt(false)
		}
	}
	return sdk.ToolUnionParam{OfComputerToolset20260801: t}
}

// callToolset sends turns with the computer toolset on the GA Messages API
// (no beta header).
func (s *Session) callToolset(ctx context.Context, turns []turn) (*answer, *cuwire.Capture, []cuwire.Elision, error) {
	kept, elide := s.prune(turns)
	msgs := make([]sdk.MessageParam, 0, len(kept))
	for _, t := range kept {
		role := sdk.MessageParamRoleUser
		if t.assistant {
			role = sdk.MessageParamRoleAssistant
		}
		msgs = append(msgs, sdk.MessageParam{Role: role, Content: gaBlocks(t.blocks)})
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(s.a.cfg.Model),
		MaxTokens: int64(s.a.cfg.MaxTokens),
		System:    []sdk.TextBlockParam{{Text: systemPrompt(s.a.zoom()) + llm.DeviceInstructions(s.a.cfg.Device)}},
		Messages:  msgs,
		Tools:     []sdk.ToolUnionParam{s.a.toolsetParam()},
	}
	res, capt, err := cuwire.Do(ctx, s.a.cfg, "anthropic", "anthropic messages", func(ctx context.Context, c *cuwire.Capture) (*sdk.Message, error) {
		return s.a.ga.New(ctx, params, option.WithMiddleware(c.Middleware))
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
		ans.content = append(ans.content, answerBlock{typ: c.Type, text: c.Text, id: c.ID, name: c.Name, toolset: c.ToolsetName, input: c.Input})
	}
	return ans, capt, elide, nil
}

// gaBlocks renders pruned blocks as GA content blocks: a toolset member's
// tool_use and its tool_result carry toolset_name.
func gaBlocks(bs []block) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, b := range bs {
		switch b.kind {
		case "text":
			if b.text != "" {
				out = append(out, sdk.NewTextBlock(b.text))
			}
		case "image":
			out = append(out, sdk.NewImageBlockBase64(cuwire.MIME(*b.img), b.data))
		case "tool_use":
			u := sdk.ToolUseBlockParam{ID: b.id, Input: b.input, Name: b.text}
			if b.toolset != "" {
				u.ToolsetName = param.NewOpt(b.toolset)
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolUse: &u})
		case "tool_result":
			r := sdk.ToolResultBlockParam{ToolUseID: b.id}
			if b.toolset != "" {
				r.ToolsetName = param.NewOpt(b.toolset)
			}
			if b.isError {
				r.IsError = param.NewOpt(true)
			}
			for _, c := range gaBlocks(b.content) {
				switch {
				case c.OfText != nil:
					r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: c.OfText})
				case c.OfImage != nil:
					r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: c.OfImage})
				}
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolResult: &r})
		}
	}
	return out
}
