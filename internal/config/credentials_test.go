package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/llm"
)

// TestProviderVariablesComeFromTheRegistry: every registered provider has
// its own key and base URL variable, named after it.
func TestProviderVariablesComeFromTheRegistry(t *testing.T) {
	vars := config.ProviderVars()
	for _, p := range llm.ProviderNames() {
		key, base := "GUI_AGENT_"+strings.ToUpper(p)+"_API_KEY", "GUI_AGENT_"+strings.ToUpper(p)+"_BASE_URL"
		if config.ProviderKeyVar(p) != key || config.ProviderBaseURLVar(p) != base || !slices.Contains(vars, key) || !slices.Contains(vars, base) {
			t.Errorf("provider %s: variables %s, %s (listed: %v), want %s and %s", p, config.ProviderKeyVar(p), config.ProviderBaseURLVar(p), vars, key, base)
		}
	}
	for _, sdk := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"} {
		if !slices.Contains(vars, sdk) {
			t.Errorf("%s, the provider SDK's own variable, is not read (%v)", sdk, vars)
		}
	}
}

// TestEachProviderHasItsOwnKey: a provider's key comes from its own
// variable, else its SDK's; GUI_AGENT_API_KEY is the configured provider's
// only, and wins for it.
func TestEachProviderHasItsOwnKey(t *testing.T) {
	for _, c := range []struct {
		name      string
		env       map[string]string
		provider  string
		key, var_ string
	}{
		{"own variable over the SDK's", map[string]string{"GUI_AGENT_ANTHROPIC_API_KEY": "own", "ANTHROPIC_API_KEY": "sdk"}, "anthropic", "own", "GUI_AGENT_ANTHROPIC_API_KEY"},
		{"the SDK's variable", map[string]string{"OPENAI_API_KEY": "sdk"}, "openai", "sdk", "OPENAI_API_KEY"},
		{"genai's order", map[string]string{"GEMINI_API_KEY": "g2", "GOOGLE_API_KEY": "g1"}, "gemini", "g1", "GOOGLE_API_KEY"},
		{"GEMINI_API_KEY alone", map[string]string{"GEMINI_API_KEY": "g2"}, "gemini", "g2", "GEMINI_API_KEY"},
		{"the generic key is the configured provider's", map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-5.5",
			"GUI_AGENT_API_KEY": "generic", "GUI_AGENT_OPENAI_API_KEY": "own"}, "openai", "generic", "GUI_AGENT_API_KEY"},
		{"never another provider's", map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-5.5",
			"GUI_AGENT_API_KEY": "generic"}, "anthropic", "", ""},
		{"another provider's own key", map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-5.5",
			"GUI_AGENT_API_KEY": "generic", "GUI_AGENT_ANTHROPIC_API_KEY": "a"}, "anthropic", "a", "GUI_AGENT_ANTHROPIC_API_KEY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := config.Load("serve", nil, env(c.env))
			if err != nil {
				t.Fatal(err)
			}
			cr := cfg.CredentialFor(c.provider)
			if cr.APIKey != c.key || cr.KeyVar != c.var_ {
				t.Errorf("%s's key %q from %q, want %q from %q", c.provider, cr.APIKey, cr.KeyVar, c.key, c.var_)
			}
		})
	}
}

// TestProviderKeyServesTheConfiguredModel: GUI_AGENT_PROVIDER and
// GUI_AGENT_MODEL with the provider's own key (or its SDK's) is a complete
// configuration, the key and endpoint the main model's.
func TestProviderKeyServesTheConfiguredModel(t *testing.T) {
	c, _, err := config.Load("serve", nil, env(map[string]string{"GUI_AGENT_PROVIDER": "Anthropic", "GUI_AGENT_MODEL": "claude-sonnet-5-5",
		"ANTHROPIC_API_KEY": "sdk-key", "GUI_AGENT_ANTHROPIC_BASE_URL": "https://proxy.example/anthropic"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.APIKey != "sdk-key" || c.BaseURL != "https://proxy.example/anthropic" {
		t.Errorf("main model's key %q, base URL %q: want ANTHROPIC_API_KEY's and GUI_AGENT_ANTHROPIC_BASE_URL's", c.APIKey, c.BaseURL)
	}
	if red := c.Redacted(); red.APIKey == "sdk-key" {
		t.Error("Redacted keeps the key")
	}
}

// TestKeyWithoutProvider: GUI_AGENT_API_KEY without GUI_AGENT_PROVIDER is
// half a configuration for serve, and no error for eval, whose --model
// names provider and model; it then serves no provider.
func TestKeyWithoutProvider(t *testing.T) {
	e := env(map[string]string{"GUI_AGENT_API_KEY": "k", "GUI_AGENT_OPENAI_API_KEY": "o"})
	if _, _, err := config.Load("serve", nil, e); err == nil || !strings.Contains(err.Error(), "GUI_AGENT_PROVIDER") {
		t.Errorf("serve with a key and no provider: %v, want the error naming GUI_AGENT_PROVIDER", err)
	}
	c, _, err := config.LoadWithModels("eval", nil, e)
	if err != nil {
		t.Fatalf("eval with a key and no provider: %v", err)
	}
	for _, p := range llm.ProviderNames() {
		if cr := c.CredentialFor(p); cr.APIKey == "k" {
			t.Errorf("%s gets GUI_AGENT_API_KEY, which names no provider", p)
		}
	}
	if cr := c.CredentialFor("openai"); cr.APIKey != "o" {
		t.Errorf("openai's key %q, want GUI_AGENT_OPENAI_API_KEY's", cr.APIKey)
	}
}

// TestEveryProviderKeyIsASecret: the scrubber learns every key read, the
// per-provider ones and the SDKs' as well as GUI_AGENT_API_KEY.
func TestEveryProviderKeyIsASecret(t *testing.T) {
	c, _, err := config.Load("serve", nil, env(map[string]string{"GUI_AGENT_PROVIDER": "openai", "GUI_AGENT_MODEL": "gpt-5.5", "GUI_AGENT_API_KEY": "main-key",
		"GUI_AGENT_ANTHROPIC_API_KEY": "anthropic-key", "GEMINI_API_KEY": "gemini-key", "OPENAI_API_KEY": "openai-sdk-key"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"main-key", "anthropic-key", "gemini-key", "openai-sdk-key"} {
		if !slices.Contains(c.Secrets(), k) {
			t.Errorf("Secrets() lacks %q: %d secrets", k, len(c.Secrets()))
		}
	}
}

// TestBadProviderBaseURL names the variable and what it accepts.
func TestBadProviderBaseURL(t *testing.T) {
	_, _, err := config.Load("serve", nil, env(map[string]string{"GUI_AGENT_OPENAI_BASE_URL": "localhost:8000/v1"}))
	if err == nil || !strings.Contains(err.Error(), "GUI_AGENT_OPENAI_BASE_URL") || !strings.Contains(err.Error(), "http://") {
		t.Fatalf("a base URL without a scheme: %v, want an error naming GUI_AGENT_OPENAI_BASE_URL and http://", err)
	}
}
