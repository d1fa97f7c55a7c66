package openai

import (
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/llm"
)

//go:generate go run ../internal/sdkmodels/gen -module github.com/openai/openai-go/v3 -file shared/shared.go -types AllModels,ChatModel,ResponsesModel -pkg openai -var sdkLifecycle -out lifecycle_gen.go

// Rules pick the adapter of an OpenAI model id; the first match wins.
//
//   - computer-use-preview: the Responses computer tool it was made for (shut
//     down on 2026-07-23; kept for whoever still names it).
//   - gpt-5.4 and later: the Responses GA computer tool.
//   - UI-TARS models served over the compatible wire: their text actions.
//   - everything else: the generic JSON adapter over Chat Completions.
var Rules = []llm.Rule{
	{Match: []string{"computer-use-preview*"}, Adapter: llm.AdapterOpenAIComputer},
	{Match: []string{"gpt-5.[4-9]*", "gpt-5.1[0-9]*", "gpt-[6-9]*", "gpt-[1-9][0-9]*"}, Adapter: llm.AdapterOpenAIComputer},
	{Match: []string{"*ui-tars*", "*uitars*"}, Adapter: llm.AdapterUITARS},
	{Match: []string{"*"}, Adapter: llm.AdapterGeneric},
}

// Example is the model the README and errors show.
const Example = "gpt-5.5"

func init() {
	llm.RegisterAdapter(llm.AdapterSpec{
		Name: llm.AdapterGeneric,
		Doc:  "Chat Completions with image parts and a JSON answer (OpenAI, Gemini's compatible endpoint, vLLM, Ollama, OpenRouter...); coordinates in the model's own convention",
		New:  NewGeneric,
		Wire: "chat",
	})
	llm.RegisterAdapter(llm.AdapterSpec{
		Name: llm.AdapterUITARS,
		Doc:  "Chat Completions with UI-TARS text actions (click(start_box=...)), UI-TARS 1.0/1.5 and Doubao",
		New:  NewUITARS,
		Wire: "uitars",
	})
	llm.RegisterProvider(llm.Provider{
		Name:       "openai",
		Doc:        "OpenAI, or any OpenAI-compatible server (a base URL up to and including /v1)",
		Adapters:   []string{llm.AdapterOpenAIComputer, llm.AdapterGeneric, llm.AdapterUITARS},
		Rules:      Rules,
		Models:     sdkLifecycle,
		Example:    Example,
		KeyEnv:     []string{"OPENAI_API_KEY"},
		BaseURLEnv: []string{"OPENAI_BASE_URL"},
		Text:       func(c llm.Config) (llm.TextModel, error) { return NewTextModel(c) },
		Vision:     func(c llm.Config) (llm.VisionModel, error) { return NewVisionModel(c) },
		Grounder:   func(c llm.Config) (llm.Grounder, error) { return NewGrounder(c) },
		Doctor:     doctor,
	})
}

// doctor explains the shut-down computer-use-preview.
func doctor(c llm.Config) []llm.Check {
	r, _ := llm.Provider{Rules: Rules}.Choose(c.Model)
	if r.Adapter != llm.AdapterOpenAIComputer || llm.RuleFor(llm.AdapterOpenAIComputer, c.Model).ToolVersion != "computer_use_preview" {
		return nil
	}
	if l, ok := llm.LifecycleOf("openai", c.Model); ok && l.ShutDown(time.Now()) {
		return []llm.Check{{Level: "warn", Name: "computer tool",
			Detail: fmt.Sprintf("%s and its computer_use_preview tool were shut down on %s: requests will fail", c.Model, l.Date),
			Fix:    "set " + c.Vars.ModelVar() + " to " + Example + " (the GA computer tool)"}}
	}
	return nil
}
