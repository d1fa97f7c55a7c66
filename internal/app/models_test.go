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
