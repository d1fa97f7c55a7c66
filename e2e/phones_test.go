package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
	"github.com/guiagent/guiagent/internal/backend/ios/iostest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestIOSOverMCP: `guiagent serve --backend ios` drives the fake
// WebDriverAgent over MCP: the display in points at scale 2, a tap by ref
// that the app counts, Unicode typed into the field by ref, the apps tool
// and the home button.
func TestIOSOverMCP(t *testing.T) {
	w := iostest.Start(t)
	_, cs := startStdio(t, serverConfig{env: []string{"GUI_AGENT_BACKEND=ios", "GUI_AGENT_WDA_URL=" + w.URL}}, nil)

	var ds struct {
		Displays []struct {
			Width, Height int
			Scale         float64 `json:"scale_factor"`
		} `json:"displays"`
	}
	b, _ := json.Marshal(call(t, cs, "gui_list_displays", nil).StructuredContent)
	if err := json.Unmarshal(b, &ds); err != nil || len(ds.Displays) != 1 || ds.Displays[0].Width != 375 || ds.Displays[0].Scale != 2 {
		t.Fatalf("gui_list_displays: %s (%v), want 375x667 points at scale 2", b, err)
	}
	snap := snapshotOf(t, cs)
	call(t, cs, "gui_click", map[string]any{"ref": refOf(t, snap, "button", "Increment")})
	if !testenv.WaitUntil(5*time.Second, func() bool { return w.Counter() == 1 }) {
		t.Fatalf("the counter is %d after a tap by ref on Increment, want 1", w.Counter())
	}
	call(t, cs, "gui_type", map[string]any{"ref": refOf(t, snap, "textbox", "Name"), "text": "שלום 世界 🙂", "mode": "replace"})
	if got := w.Field(); got != "שלום 世界 🙂" {
		t.Errorf("the field holds %q after gui_type by ref", got)
	}
	call(t, cs, "gui_apps", map[string]any{"action": "launch", "package": "com.apple.Preferences"})
	if w.Front() != "com.apple.Preferences" {
		t.Errorf("in front after launching com.apple.Preferences: %s", w.Front())
	}
	if apps := textOf(call(t, cs, "gui_apps", map[string]any{"action": "list"})); !strings.Contains(apps, "com.apple.Preferences") {
		t.Errorf("gui_apps list: %s", apps)
	}
	call(t, cs, "gui_press_key", map[string]any{"key": "home_screen"})
	if w.Front() != "com.apple.springboard" {
		t.Errorf("in front after the home button: %s", w.Front())
	}
}

// TestHarmonyOverMCP: `guiagent serve --backend harmony` drives the fake
// hdc (this test binary, linked as hdc) over MCP: a tap by ref that the
// app counts, Unicode typed into the field by ref, the apps tool.
func TestHarmonyOverMCP(t *testing.T) {
	p := harmonytest.Start(t)
	_, cs := startStdio(t, serverConfig{env: []string{"GUI_AGENT_BACKEND=harmony", "GUI_AGENT_HDC=" + p.HDC, "GUI_AGENT_DEVICE=" + p.Key}}, nil)
	snap := snapshotOf(t, cs)
	call(t, cs, "gui_click", map[string]any{"ref": refOf(t, snap, "button", "Increment")})
	if got := p.Read().Counter; got != 1 {
		t.Fatalf("the counter is %d after a tap by ref on Increment, want 1", got)
	}
	call(t, cs, "gui_type", map[string]any{"ref": refOf(t, snap, "textbox", "Your name"), "text": "Grüße 世界", "mode": "replace"})
	if got := p.Read().Field; got != "Grüße 世界" {
		t.Errorf("the field holds %q after gui_type by ref", got)
	}
	if apps := textOf(call(t, cs, "gui_apps", map[string]any{"action": "list"})); !strings.Contains(apps, "com.huawei.hmos.settings") {
		t.Errorf("gui_apps list: %s", apps)
	}
	call(t, cs, "gui_apps", map[string]any{"action": "launch", "package": "com.huawei.hmos.settings"})
	if got := p.Read().Front; got != "com.huawei.hmos.settings" {
		t.Errorf("in front after launching settings: %s", got)
	}
}
