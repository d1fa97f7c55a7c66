package mcpserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/safety"
)

// TestKillSwitchReleasesAHeldButton: a button pressed with gui_mouse_down is
// let go as soon as the kill switch engages, without any further call; and
// while engaged, gui_mouse_down presses nothing.
func TestKillSwitchReleasesAHeldButton(t *testing.T) {
	path := filepath.Join(t.TempDir(), "STOP")
	e := newEnv(t, nil, Options{KillSwitch: safety.NewKillSwitch(path)})
	ok(t, e.cs, "gui_mouse_down", map[string]any{"x": 10, "y": 10, "space": "screen"})
	if _, buttons := e.desk.Pressed(); len(buttons) != 1 {
		t.Fatalf("gui_mouse_down holds %v, want the left button", buttons)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, buttons := e.desk.Pressed()
		if len(buttons) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kill switch engaged, but %v is still held 10 s later", buttons)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fails(t, e.cs, "gui_mouse_down", map[string]any{"x": 10, "y": 10, "space": "screen"}, "kill switch")
	if _, buttons := e.desk.Pressed(); len(buttons) != 0 {
		t.Errorf("gui_mouse_down pressed %v while the kill switch is engaged", buttons)
	}
}
