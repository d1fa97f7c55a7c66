package app

import (
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
