package app

import (
	"slices"
	"testing"

	"github.com/guiagent/guiagent/internal/config"
)

// The phones are offered gui_apps and gui_snapshot; a desktop is not offered gui_apps.
func TestPhonesOfferApps(t *testing.T) {
	for backend, want := range map[string]bool{"android": true, "ios": true, "harmony": true, "vnc": false} {
		env := map[string]string{config.Var("Backend"): backend, config.Var("VNC"): "127.0.0.1:5900"}
		c, _, err := config.Load("serve", nil, func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		tools, err := OfferedTools(c)
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		if got := slices.Contains(tools, "gui_apps"); got != want {
			t.Errorf("--backend %s offers gui_apps: %v, want %v (%v)", backend, got, want, tools)
		}
		if want && !slices.Contains(tools, "gui_snapshot") {
			t.Errorf("--backend %s does not offer gui_snapshot: %v", backend, tools)
		}
	}
}
