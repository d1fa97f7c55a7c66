package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSettingsPrecedence: flags, then the environment, then the settings
// file, then defaults; Sources says which set each value.
func TestSettingsPrecedence(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, ".config", "guiagent", "settings.json")
	if err := WriteSettingsFile(file, map[string]string{"provider": "openai", "model": "from-file", "base_url": "http://file.example/v1", "display": "1"}); err != nil {
		t.Fatal(err)
	}
	c, _, err := Load("serve", []string{"--provider", "anthropic"}, env(map[string]string{"HOME": home, "GUI_AGENT_MODEL": "from-env"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SettingsFile != file || c.Provider != "anthropic" || c.Model != "from-env" || c.BaseURL != "http://file.example/v1" || c.DisplayIndex != "1" || c.MaxSteps != 50 {
		t.Fatalf("precedence: file %q provider %q model %q base %q display %q", c.SettingsFile, c.Provider, c.Model, c.BaseURL, c.DisplayIndex)
	}
	for name, want := range map[string]Source{"PROVIDER": SourceFlag, "MODEL": SourceEnv, "BASE_URL": SourceFile, "DISPLAY_INDEX": SourceFile, "MAX_STEPS": SourceDefault, "ADAPTER": SourceDefault} {
		if got := c.Sources.Of(name); got != want {
			t.Errorf("source of %s: %q, want %q", name, got, want)
		}
	}
	// XDG_CONFIG_HOME and GUI_AGENT_SETTINGS_FILE move the file; with no
	// home at all there is none (a test's getenv never reads the user's).
	if runtime.GOOS == "linux" {
		if got := DefaultSettingsFile(env(map[string]string{"HOME": home, "XDG_CONFIG_HOME": "/cfg"})); got != "/cfg/guiagent/settings.json" {
			t.Errorf("with XDG_CONFIG_HOME: %q", got)
		}
	}
	if got := DefaultSettingsFile(env(map[string]string{"GUI_AGENT_SETTINGS_FILE": "/x/s.json"})); got != "/x/s.json" {
		t.Errorf("GUI_AGENT_SETTINGS_FILE: %q", got)
	}
	if got := DefaultSettingsFile(env(nil)); got != "" {
		t.Errorf("no home: %q, want none", got)
	}
}

// TestSettingsFileIsPrivateAndChecked: written 0600 with nothing left behind,
// and a bad file stops start-up naming the file and the setting.
func TestSettingsFileIsPrivateAndChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sub", "settings.json")
	if err := WriteSettingsFile(file, map[string]string{"api_key": "sk-1", "model": ""}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSettingsFile(file, map[string]string{"api_key": "sk-2"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the settings file alone (no temporary left)", len(entries))
	}
	got, err := ReadSettingsFile(file)
	if err != nil || len(got) != 1 || got["api_key"] != "sk-2" {
		t.Errorf("read back %v, %v", got, err)
	}
	if err := WriteSettingsFile(file, map[string]string{"colour": "blue"}); err == nil {
		t.Error("an unknown setting was written")
	}
	for body, want := range map[string]string{`{"modle":"x"}`: `unknown setting "modle"`, `{"model":3}`: `"model" must be a string`, `not json`: "not a JSON object"} {
		os.WriteFile(file, []byte(body), 0o600)
		_, _, err := Load("serve", nil, env(map[string]string{"GUI_AGENT_SETTINGS_FILE": file}))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("settings file %s: %v, want an error naming the file and %q", body, err, want)
		}
	}
}

// The temp files a guiagent killed mid-write left beside the settings file
// (holding old keys) are removed at the next start; a fresh one (a write
// under way) is left alone.
func TestStaleSettingsTempsAreRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	stale, fresh := filepath.Join(dir, ".settings-123.json"), filepath.Join(dir, ".settings-456.json")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte(`{"api_key":"sk-old-0123456789"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTempAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load("serve", nil, env(map[string]string{"GUI_AGENT_SETTINGS_FILE": path})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale temp file holding an old key is still there")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temp file (a write under way) was removed: %v", err)
	}
}
