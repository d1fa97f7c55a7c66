package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestAndroidOverMCP: `guiagent serve --backend android` drives the fake
// phone through Debian's real adb server over MCP: a screenshot of the
// phone's size, the UI tree with refs (never the password's value), a tap
// by ref that the app counts, Unicode typed into a field by ref, a phone
// key, and the apps tool.
func TestAndroidOverMCP(t *testing.T) {
	dev := androidtest.Start(t)
	phone := dev.Phone
	_, cs := startStdio(t, serverConfig{env: []string{"GUI_AGENT_BACKEND=android", "GUI_AGENT_ADB=" + dev.Server, "GUI_AGENT_DEVICE=" + dev.Serial}}, nil)

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	if !names["gui_apps"] || !names["gui_snapshot"] || names["gui_navigate"] {
		t.Errorf("tools on a phone: gui_apps %v, gui_snapshot %v, gui_navigate %v; want the first two and not the browser's", names["gui_apps"], names["gui_snapshot"], names["gui_navigate"])
	}

	var ds struct {
		Displays []struct {
			Width, Height int
			Scale         float64 `json:"scale_factor"`
		} `json:"displays"`
	}
	b, _ := json.Marshal(call(t, cs, "gui_list_displays", nil).StructuredContent)
	if err := json.Unmarshal(b, &ds); err != nil || len(ds.Displays) != 1 {
		t.Fatalf("gui_list_displays: %s (%v)", b, err)
	}
	// A Pixel 7: 1080x2400 pixels at density 420, a scale of 2.625.
	if d := ds.Displays[0]; d.Scale < 2.6 || d.Scale > 2.65 || d.Width < 400 || d.Width > 420 {
		t.Errorf("the phone's display is %+v, want about 411x914 at scale 2.625", d)
	}
	shot := call(t, cs, "gui_screenshot", nil)
	found := false
	for _, c := range shot.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			found = true
		}
	}
	if !found {
		t.Fatalf("gui_screenshot returned no image: %s", textOf(shot))
	}

	snap := snapshotOf(t, cs)
	inc := refOf(t, snap, "button", "Increment")
	for _, e := range snap.Elements {
		if slices.Contains(e.States, "protected") && e.Value != "" {
			t.Errorf("the snapshot shows a password field's value: %+v", e)
		}
	}
	before := phone.Counter()
	call(t, cs, "gui_click", map[string]any{"ref": inc})
	if !testenv.WaitUntil(5*time.Second, func() bool { return phone.Counter() == before+1 }) {
		t.Fatalf("the counter is %d after a tap by ref on Increment, want %d", phone.Counter(), before+1)
	}

	var field string
	for _, e := range snap.Elements {
		if string(e.Role) == "textbox" && !slices.Contains(e.States, "protected") {
			field = e.Ref
		}
	}
	if field == "" {
		t.Fatalf("no text field in the snapshot: %+v", snap.Elements)
	}
	call(t, cs, "gui_type", map[string]any{"ref": field, "text": "שלום 世界 🙂", "mode": "replace"})
	if got := phone.FieldText("name"); got != "שלום 世界 🙂" {
		t.Errorf("the name field holds %q after gui_type by ref", got)
	}
	// Into the focused field, no ref: replace selects all (Home would be
	// the phone's Home button) and the app stays in front.
	call(t, cs, "gui_type", map[string]any{"text": "Ada", "mode": "replace"})
	if got := phone.FieldText("name"); got != "Ada" {
		t.Errorf("the name field holds %q after gui_type mode replace into the focused field, want Ada", got)
	}
	if fg, _ := phone.Foreground(); fg != androidtest.CounterApp {
		t.Errorf("in front after typing: %s, want the app typed into", fg)
	}

	// The phone turns to landscape: the next screenshot has its new shape
	// (the image is wider than tall), and a tap placed in it lands.
	phone.SetRotation(1)
	info, img := screenshot(t, cs, nil)
	if img.Bounds().Dx() <= img.Bounds().Dy() {
		t.Fatalf("the screenshot after the phone turned is %v (frame %s), want landscape", img.Bounds(), info.FrameID)
	}
	snap = snapshotOf(t, cs)
	inc = refOf(t, snap, "button", "Increment")
	before = phone.Counter()
	call(t, cs, "gui_click", map[string]any{"ref": inc})
	if !testenv.WaitUntil(5*time.Second, func() bool { return phone.Counter() == before+1 }) {
		t.Fatalf("in landscape the counter is %d after a tap by ref on Increment, want %d", phone.Counter(), before+1)
	}
	// A tap is one adb command: the size of the screenshot the caller saw
	// places it, with no capture of its own.
	phone.Commands() // forget the commands so far
	call(t, cs, "gui_click", map[string]any{"ref": inc})
	if cmds := phone.Commands(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "input tap") {
		t.Errorf("a tap ran %d commands %q, want one input tap", len(cmds), cmds)
	}
	// Back to portrait, and a snapshot with no screenshot first: its boxes
	// are not placed in the landscape screenshot's frame, and a tap by ref
	// lands.
	phone.SetRotation(0)
	snap = snapshotOf(t, cs)
	inc = refOf(t, snap, "button", "Increment")
	before = phone.Counter()
	call(t, cs, "gui_click", map[string]any{"ref": inc})
	if !testenv.WaitUntil(5*time.Second, func() bool { return phone.Counter() == before+1 }) {
		t.Fatalf("back in portrait the counter is %d after a tap by ref on Increment, want %d", phone.Counter(), before+1)
	}

	apps := textOf(call(t, cs, "gui_apps", map[string]any{"action": "list"}))
	if !strings.Contains(apps, androidtest.CounterApp) {
		t.Errorf("gui_apps list does not name %s: %s", androidtest.CounterApp, apps)
	}
	call(t, cs, "gui_apps", map[string]any{"action": "launch", "package": androidtest.SettingsApp})
	if fg, _ := phone.Foreground(); fg != androidtest.SettingsApp {
		t.Errorf("in front after launching %s: %s", androidtest.SettingsApp, fg)
	}
	for _, home := range []string{"home", "home_screen"} {
		call(t, cs, "gui_apps", map[string]any{"action": "launch", "package": androidtest.SettingsApp})
		call(t, cs, "gui_press_key", map[string]any{"key": home})
		if fg, _ := phone.Foreground(); fg != androidtest.LauncherApp {
			t.Errorf("in front after the key %q: %s, want the launcher", home, fg)
		}
	}
}
