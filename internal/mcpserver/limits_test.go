package mcpserver

import (
	"strings"
	"testing"
)

// TestArgumentCapsRefuseBeforeAnyWork sends arguments one past each cap:
// each gets an error naming the property and the limit, and nothing reaches
// the desktop.
func TestArgumentCapsRefuseBeforeAnyWork(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	before := len(e.desk.Events())
	fails(t, e.cs, "gui_type", map[string]any{"text": strings.Repeat("é", MaxTypeChars+1)}, "text", "maxLength", "100000")
	fails(t, e.cs, "gui_clipboard", map[string]any{"action": "set", "text": strings.Repeat("a", MaxClipboardChars+1)}, "text", "maxLength")
	fails(t, e.cs, "gui_find_image", map[string]any{"template": strings.Repeat("A", 6<<20)}, "template", "maxLength")
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": make([]string, maxListItems+1)}, "keys", "maxItems")
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "display": strings.Repeat("9", maxNameChars+1)}, "display", "maxLength")
	if got := e.desk.Events()[before:]; len(got) != 0 {
		t.Errorf("refused calls reached the desktop: %v", ops(got))
	}
	// At the cap, text is accepted.
	ok(t, e.cs, "gui_type", map[string]any{"text": strings.Repeat("a", 2000)})
}

// TestControlCharacterKeysRefusedByEveryTool holds hole 1 of issue 9 at the
// MCP surface: ctrl+alt+U+0008 (BackSpace as X receives it) is refused by
// gui_hotkey, gui_press_key and as a click or scroll modifier.
func TestControlCharacterKeysRefusedByEveryTool(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	before := len(e.desk.Events())
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "alt", "\b"}}, "U+0008")
	fails(t, e.cs, "gui_press_key", map[string]any{"key": "\b", "modifiers": []string{"ctrl", "alt"}}, "U+0008")
	fails(t, e.cs, "gui_press_key", map[string]any{"key": "ctrl+alt+\b"}, "U+0008")
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "modifiers": []string{"alt", "\x7f"}}, "U+007F")
	fails(t, e.cs, "gui_scroll", map[string]any{"x": 1, "y": 1, "direction": "down", "modifiers": []string{"\b"}}, "U+0008")
	fails(t, e.cs, "gui_press_key", map[string]any{"key": "F4", "modifiers": []string{"altgr"}}, "blocked")
	if got := e.desk.Events()[before:]; len(got) != 0 {
		t.Errorf("refused calls reached the desktop: %v", ops(got))
	}
}
