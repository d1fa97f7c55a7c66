package responses

import "github.com/guiagent/guiagent/internal/llm"

// Rules pick the computer tool of a model: the shut-down computer-use-preview
// keeps its own tool (and, speaking only that tool, answers no plain-vision
// question); every other model gets the GA tool.
var Rules = []llm.Rule{
	{Match: []string{"computer-use-preview*"}, ToolVersion: ToolPreview, NoVision: true},
	{Match: []string{"*"}, ToolVersion: ToolComputer},
}

func init() {
	llm.RegisterAdapter(llm.AdapterSpec{
		Name:    Name,
		Doc:     `OpenAI Responses with the GA computer tool ({"type": "computer"}: batched actions, keys held during pointer actions) for gpt-5.4 and later; computer_use_preview only for computer-use-preview, chosen explicitly`,
		New:     New,
		Profile: "openai-computer",
		Wire:    "responses",
		Rules:   Rules,
	})
}
