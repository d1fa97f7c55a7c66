// Package providers links every model provider into the binary: each blank
// import registers a provider's adapters and rules with internal/llm (see
// llm.RegisterProvider). Adding a provider is its package plus one line here.
// Only internal/app, cmd and tests import this package.
package providers

import (
	_ "github.com/guiagent/guiagent/internal/llm/anthropic" // anthropic-computer; provider anthropic
	_ "github.com/guiagent/guiagent/internal/llm/gemini"    // gemini-computer; provider gemini
	_ "github.com/guiagent/guiagent/internal/llm/openai"    // generic, ui-tars; provider openai
	_ "github.com/guiagent/guiagent/internal/llm/responses" // openai-computer
)
