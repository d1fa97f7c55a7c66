package guiagent_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent"
)

// TestGoHotkeyAsksAboutConfirmHotkeys: a combination GUI_AGENT_CONFIRM_HOTKEYS
// lists goes through the same confirmation from the Go API as from the MCP
// tools, flows and tasks: with nobody answering, it is not sent and the
// error says why; other combinations are pressed.
func TestGoHotkeyAsksAboutConfirmHotkeys(t *testing.T) {
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 320, Height: 240}, AlwaysVirtualDisplay: true,
		RunsDir: t.TempDir(), StateDir: t.TempDir(), Log: io.Discard, ConfirmHotkeys: []string{"ctrl+w"},
		AskTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	err = a.Hotkey(ctx, "ctrl", "w")
	if err == nil || !strings.Contains(err.Error(), "ctrl+w") || !strings.Contains(err.Error(), "GUI_AGENT_") {
		t.Fatalf("Hotkey(ctrl, w), listed in ConfirmHotkeys, with nobody answering: %v, want a refusal saying why", err)
	}
	if err := a.Hotkey(ctx, "ctrl", "s"); err != nil {
		t.Fatalf("Hotkey(ctrl, s), which needs no yes: %v", err)
	}
}
