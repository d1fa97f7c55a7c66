package anthropic

import (
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/llm"
)

//go:generate go run ../internal/sdkmodels/gen -module github.com/anthropics/anthropic-sdk-go -file message.go -types Model -pkg anthropic -var sdkLifecycle -out lifecycle_gen.go

// Rules pick the computer tool version and coordinate profile of a Claude
// model id (normalized by llm.NormalizeModel, so "us.anthropic.claude-..."
// and "claude-...@date" read as their Claude id); the first match wins.
//
//   - Claude 5.x (sonnet, opus, haiku, fable, mythos): the GA
//     computer_toolset_20260801 on the Messages API, no beta header.
//   - Claude Opus 4.7: computer_20251124, images up to 2576 px (the limit
//     Anthropic's vision docs give it).
//   - Opus 4.5 and the 4.6-and-later generation: computer_20251124 (zoom).
//   - Everything else (earlier Claude 4 and 3.7): computer_20250124.
var Rules = []llm.Rule{
	{Match: []string{"claude-sonnet-5*", "claude-opus-5*", "claude-haiku-5*", "claude-fable-*", "claude-mythos-*"}, ToolVersion: Toolset20260801},
	{Match: []string{"claude-opus-4-7*"}, ToolVersion: Tool20251124, Profile: "anthropic-2576"},
	{Match: []string{"claude-opus-4-5*", "claude-*-4-6*", "claude-*-4-8*", "claude-*-4-9*"}, ToolVersion: Tool20251124},
	{Match: []string{"*"}, ToolVersion: Tool20250124},
}

// Example is the model the README and errors show.
const Example = "claude-sonnet-5-5"

func init() {
	llm.RegisterAdapter(llm.AdapterSpec{
		Name:    Name,
		Doc:     "Anthropic Messages with the native computer tool: the GA computer_toolset_20260801 for Claude 5.x, the beta computer_20251124/computer_20250124 for 4.x",
		New:     New,
		Profile: "anthropic",
		Wire:    "anthropic",
		Rules:   Rules,
	})
	llm.RegisterProvider(llm.Provider{
		Name:       "anthropic",
		Doc:        "Anthropic's Messages API (Claude); BaseURL is the host root",
		Adapters:   []string{Name},
		Rules:      []llm.Rule{{Match: []string{"*"}, Adapter: Name}},
		Models:     sdkLifecycle,
		Example:    Example,
		KeyEnv:     []string{"ANTHROPIC_API_KEY"},
		BaseURLEnv: []string{"ANTHROPIC_BASE_URL"},
		Text:       func(c llm.Config) (llm.TextModel, error) { return NewTextModel(c) },
		Vision:     func(c llm.Config) (llm.VisionModel, error) { return NewVisionModel(c) },
		Doctor:     doctor,
	})
}

// doctor says which computer tool a configuration speaks, and warns about a
// tool version that does not suit the model.
func doctor(c llm.Config) []llm.Check {
	tool := c.ToolVersion
	by := "chosen by model"
	if tool != "" {
		by = "set by " + c.Vars.ToolVersionVar()
	} else {
		tool = ToolVersionFor(c.Model)
	}
	var out []llm.Check
	detail := fmt.Sprintf("%s (%s)", tool, by)
	if tool == Toolset20260801 {
		detail += ", GA Messages API without a beta header"
	} else if b, err := BetaFor(tool); err == nil {
		detail += ", beta header " + b
	}
	out = append(out, llm.Check{Level: "ok", Name: "computer tool", Detail: detail})
	want := ToolVersionFor(c.Model)
	if c.ToolVersion != "" && (want == Toolset20260801) != (c.ToolVersion == Toolset20260801) {
		out = append(out, llm.Check{Level: "warn", Name: "computer tool",
			Detail: fmt.Sprintf("%s=%s for %s, whose tool is %s: the API refuses a legacy tool for Claude 5.x and the toolset for 4.x", c.Vars.ToolVersionVar(), c.ToolVersion, c.Model, want),
			Fix:    "unset " + c.Vars.ToolVersionVar()})
	}
	if strings.Contains(c.Model, ".anthropic.") || strings.Contains(c.Model, "@") {
		out = append(out, llm.Check{Level: "ok", Name: "model id", Detail: fmt.Sprintf("%s reads as %s", c.Model, llm.NormalizeModel(c.Model))})
	}
	return out
}
