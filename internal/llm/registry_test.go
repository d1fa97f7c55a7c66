package llm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/llm"
	_ "github.com/guiagent/guiagent/internal/llm/providers"
)

func TestNormalizeModelReadsVendorIDs(t *testing.T) {
	for in, want := range map[string]string{
		"us.anthropic.claude-sonnet-5-5-20260901-v1:0": "claude-sonnet-5-5-20260901-v1:0",
		"global.anthropic.claude-opus-5":               "claude-opus-5",
		"anthropic.claude-haiku-5-5":                   "claude-haiku-5-5",
		"claude-sonnet-5-5@20260901":                   "claude-sonnet-5-5",
		"anthropic/claude-fable-5-1":                   "claude-fable-5-1",
		" GPT-5.5 ":                                    "gpt-5.5",
	} {
		if got := llm.NormalizeModel(in); got != want {
			t.Errorf("NormalizeModel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProfileComesFromTheRules(t *testing.T) {
	for _, tc := range []struct{ adapter, model, want string }{
		{llm.AdapterAnthropic, "claude-opus-4-7", "anthropic-2576"},
		{llm.AdapterAnthropic, "claude-sonnet-5-5", "anthropic"},
		{llm.AdapterOpenAIComputer, "gpt-5.5", "openai-computer"},
		{llm.AdapterGemini, "gemini-3-flash", "gemini-computer-use"},
		{llm.AdapterGeneric, "gemini-2.5-flash", "gemini"},
	} {
		p, err := llm.ProfileFor(tc.adapter, tc.model, "")
		if err != nil || p.Name != tc.want {
			t.Errorf("ProfileFor(%s, %s) = %s (%v), want %s", tc.adapter, tc.model, p.Name, err, tc.want)
		}
	}
	if p, _ := llm.ProfileFor(llm.AdapterAnthropic, "claude-opus-4-7", ""); p.MaxLongEdge != 2576 {
		t.Errorf("claude-opus-4-7 long edge %d, want the documented 2576", p.MaxLongEdge)
	}
}

func TestLifecycleOfRetiredModels(t *testing.T) {
	l, ok := llm.LifecycleOf("anthropic", "claude-sonnet-4-5")
	if !ok || l.Date != "2026-11-30" || l.Replacement != "claude-sonnet-5-5" {
		t.Fatalf("claude-sonnet-4-5: %+v %v", l, ok)
	}
	before, after := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if got := l.Describe(before); !strings.HasPrefix(got, "deprecated: shuts down on 2026-11-30; use claude-sonnet-5-5") {
		t.Errorf("before: %s", got)
	}
	if got := l.Describe(after); !strings.HasPrefix(got, "shut down on 2026-11-30") {
		t.Errorf("after: %s", got)
	}
	if l, ok := llm.LifecycleOf("openai", "computer-use-preview"); !ok || !l.ShutDown(after) {
		t.Errorf("computer-use-preview: %+v %v", l, ok)
	}
	if _, ok := llm.LifecycleOf("anthropic", "claude-sonnet-5-5"); ok {
		t.Error("the current claude-sonnet-5-5 is marked retired")
	}
}
