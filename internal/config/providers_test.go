package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/llm"
	_ "github.com/guiagent/guiagent/internal/llm/providers" // the binary's providers, as app links them
)

// TestProviderAndAdapterListsComeFromTheRegistry: validation accepts exactly
// the registered providers and adapters, and names them when refusing.
func TestProviderAndAdapterListsComeFromTheRegistry(t *testing.T) {
	if !slices.Equal(config.Providers(), llm.ProviderNames()) || !slices.Equal(config.Adapters(), llm.AdapterNames()) {
		t.Fatalf("Providers %v / Adapters %v are not the registry's %v / %v", config.Providers(), config.Adapters(), llm.ProviderNames(), llm.AdapterNames())
	}
	for _, p := range llm.ProviderNames() {
		c, _, err := config.Load("serve", nil, env(map[string]string{"GUI_AGENT_PROVIDER": p, "GUI_AGENT_MODEL": "m", "GUI_AGENT_API_KEY": "k"}))
		if err != nil || c.Provider != p {
			t.Errorf("provider %s: %v", p, err)
		}
	}
	_, _, err := config.Load("serve", nil, env(map[string]string{"GUI_AGENT_PROVIDER": "mistery", "GUI_AGENT_MODEL": "m", "GUI_AGENT_API_KEY": "k"}))
	if err == nil || !strings.Contains(err.Error(), strings.Join(llm.ProviderNames(), ", ")) {
		t.Fatalf("an unknown provider: %v, want the registered list", err)
	}
	_, _, err = config.Load("serve", nil, env(map[string]string{"GUI_AGENT_DISABLE_ACTIONS": "zoom,teleport"}))
	if err == nil || !strings.Contains(err.Error(), `"teleport" is not an action`) {
		t.Fatalf("an unknown action to disable: %v", err)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
