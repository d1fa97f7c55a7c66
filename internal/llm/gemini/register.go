package gemini

import "github.com/guiagent/guiagent/internal/llm"

// Example is the model the README and errors show.
const Example = "gemini-2.5-computer-use-preview-10-2025"

// Rules pick the adapter of a Gemini model id; the first match wins. The
// computer-use models (the preview, and the 3.x models that offer the
// computerUse tool) speak it natively; UI-TARS-style names their text
// actions; other Gemini models the generic JSON adapter on Gemini's
// OpenAI-compatible endpoint.
var Rules = []llm.Rule{
	{Match: []string{"gemini-*computer-use*", "gemini-3*"}, Adapter: Name},
	{Match: []string{"*ui-tars*", "*uitars*"}, Adapter: llm.AdapterUITARS},
	{Match: []string{"*"}, Adapter: llm.AdapterGeneric},
}

func init() {
	llm.RegisterAdapter(llm.AdapterSpec{
		Name:    Name,
		Doc:     "Gemini generateContent (google.golang.org/genai) with the computerUse tool, desktop environment: click_at, type_text_at, key_combination, ... on the 0-999 grid; safety confirmations asked of the person",
		New:     New,
		Profile: "gemini-computer-use",
		Wire:    "gemini",
	})
	llm.RegisterProvider(llm.Provider{
		Name:     "gemini",
		Doc:      "Google's Gemini API: native generateContent for computer use, vision and text; the OpenAI-compatible endpoint for the generic adapter",
		Adapters: []string{Name, llm.AdapterGeneric, llm.AdapterUITARS},
		Rules:    Rules,
		Example:  Example,
		KeyEnv:   []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, // genai's order: GOOGLE_API_KEY wins
		Text:     func(c llm.Config) (llm.TextModel, error) { return NewTextModel(c) },
		Vision:   func(c llm.Config) (llm.VisionModel, error) { return NewVisionModel(c) },
	})
}
