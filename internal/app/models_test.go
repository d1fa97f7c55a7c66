package app

import (
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/openai"
)

func TestMemoryModelFollowsItsProvider(t *testing.T) {
	c := config.Default()
	c.Provider, c.Model, c.APIKey = "anthropic", "claude-sonnet-4-5", "sk-ant-x"
	m, err := newMemoryModel(c)
	if _, ok := m.(*anthropic.TextModel); err != nil || !ok {
		t.Fatalf("anthropic memory model: %T, %v", m, err)
	}
	c.MemoryProvider, c.MemoryModel, c.MemoryAPIKey = "openai", "gpt-4o-mini", "sk-y"
	m, err = newMemoryModel(c)
	if _, ok := m.(*openai.TextModel); err != nil || !ok {
		t.Fatalf("openai memory model: %T, %v", m, err)
	}
}

// TestAdapterComesFromTheProvidersRules: the provider's rules pick the
// adapter and its tool from the model id.
func TestAdapterComesFromTheProvidersRules(t *testing.T) {
	type tooled interface{ ToolVersion() string }
	for _, tc := range []struct{ provider, model, adapter, tool string }{
		{"anthropic", "claude-sonnet-5-5", "anthropic-computer", "computer_toolset_20260801"},
		{"anthropic", "us.anthropic.claude-opus-5-5-v1:0", "anthropic-computer", "computer_toolset_20260801"},
		{"anthropic", "claude-sonnet-4-5", "anthropic-computer", "computer_20250124"},
		{"openai", "gpt-5.5", "openai-computer", "computer"},
		{"openai", "computer-use-preview", "openai-computer", "computer_use_preview"},
		{"openai", "gpt-4.1", "generic", ""},
		{"openai", "ui-tars-1.5-7b", "ui-tars", ""},
		{"gemini", "gemini-2.5-computer-use-preview-10-2025", "gemini-computer", ""},
		{"gemini", "gemini-2.5-flash", "generic", ""},
	} {
		c := config.Default()
		c.Provider, c.Model, c.APIKey = tc.provider, tc.model, "sk-test-0123456789"
		a, err := newAdapter(c)
		if err != nil || a.Name() != tc.adapter {
			t.Errorf("%s %s: adapter %v (%v), want %s", tc.provider, tc.model, a, err, tc.adapter)
			continue
		}
		if tc.tool != "" {
			if tv, ok := a.(tooled); !ok || tv.ToolVersion() != tc.tool {
				t.Errorf("%s %s: tool %v, want %s", tc.provider, tc.model, a, tc.tool)
			}
		}
	}
}

// TestVisionToolsFollowTheProvider: computer-use-preview answers no plain
// vision; gpt-5.5 and Gemini do, each through its provider.
func TestVisionToolsFollowTheProvider(t *testing.T) {
	c := config.Default()
	c.Provider, c.Model, c.APIKey = "openai", "computer-use-preview", "sk-test-0123456789"
	if _, err := newVision(c); err == nil {
		t.Fatal("computer-use-preview was given the vision tools")
	}
	for _, pm := range [][2]string{{"openai", "gpt-5.5"}, {"gemini", "gemini-2.5-computer-use-preview-10-2025"}, {"anthropic", "claude-sonnet-5-5"}} {
		c.Provider, c.Model = pm[0], pm[1]
		if vm, err := newVision(c); err != nil || vm.seer == nil {
			t.Errorf("%s %s: %v", pm[0], pm[1], err)
		}
	}
}

// TestModelCoordinatesAndTheDeprecatedCoordinateMode: the model convention
// of a model the profile table does not know comes from
// GUI_AGENT_MODEL_COORDINATES, else (deprecated, as before the split) from
// a normalized GUI_AGENT_COORDINATE_MODE; a model the table knows keeps its
// own, and the MCP default space alone changes nothing for the model.
func TestModelCoordinatesAndTheDeprecatedCoordinateMode(t *testing.T) {
	load := func(env map[string]string) config.Config {
		t.Helper()
		env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"] = "openai", "my-local-vlm"
		c, _, err := config.Load("serve", nil, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	divisor := func(c config.Config, model string) float64 {
		t.Helper()
		p, err := profileFor(c, adapterName(c), model)
		if err != nil {
			t.Fatal(err)
		}
		return p.Divisor
	}
	c := load(map[string]string{"GUI_AGENT_MODEL_COORDINATES": "normalized-1000", "GUI_AGENT_COORDINATE_MODE": "screen"})
	if d := divisor(c, c.Model); d != 1000 || len(c.Deprecations()) != 0 {
		t.Errorf("GUI_AGENT_MODEL_COORDINATES=normalized-1000: divisor %v, deprecations %q", d, c.Deprecations())
	}
	if d := divisor(c, "gpt-4.1"); d != divisor(config.Default(), "gpt-4.1") {
		t.Errorf("a model the table knows changed convention: divisor %v", d)
	}
	c = load(map[string]string{"GUI_AGENT_COORDINATE_MODE": "normalized-0-1"})
	if d := divisor(c, c.Model); d != 1 || len(c.Deprecations()) != 1 {
		t.Errorf("GUI_AGENT_COORDINATE_MODE=normalized-0-1 alone: divisor %v, deprecations %q", d, c.Deprecations())
	}
	c = load(map[string]string{"GUI_AGENT_COORDINATE_MODE": "screen"})
	if d := divisor(c, c.Model); d != 0 || len(c.Deprecations()) != 0 {
		t.Errorf("GUI_AGENT_COORDINATE_MODE=screen: divisor %v, deprecations %q", d, c.Deprecations())
	}
}

// TestModelErrorsNameTheirOwnVariables: a memory or grounding model that
// cannot be built names its own variables, not the main model's.
func TestModelErrorsNameTheirOwnVariables(t *testing.T) {
	c := config.Default()
	c.Provider, c.Model, c.BaseURL = "anthropic", "claude-sonnet-4-5", "http://127.0.0.1:9/" // a local server: no key
	c.MemoryModel = "claude-haiku-4-5"
	_, err := newMemoryModel(c)
	if err == nil || !strings.Contains(err.Error(), "GUI_AGENT_MEMORY_API_KEY") || strings.Contains(err.Error(), "GUI_AGENT_API_KEY") {
		t.Errorf("memory model without a key: %v, want it to name GUI_AGENT_MEMORY_API_KEY only", err)
	}
	gc, err := groundingConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if gc.Vars.APIKey != "GUI_AGENT_GROUNDING_API_KEY" || gc.Vars.BaseURL != "GUI_AGENT_GROUNDING_BASE_URL" || gc.Vars.Model != "GUI_AGENT_GROUNDING_MODEL" {
		t.Errorf("grounding model's variables: %+v", gc.Vars)
	}
	lc, err := llmConfig(c, adapterName(c), c.Provider, c.Model)
	if err != nil || lc.Vars.APIKey != "GUI_AGENT_API_KEY" || lc.Vars.Timeout != "GUI_AGENT_MODEL_TIMEOUT_S" {
		t.Errorf("main model's variables: %+v, %v", lc.Vars, err)
	}
}
