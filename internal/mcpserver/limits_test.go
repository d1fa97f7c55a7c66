package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"
)

// TestArgumentCapsRefuseBeforeAnyWork sends arguments one past their cap:
// each gets an error naming the property and the limit, and nothing reaches
// the desktop. Every string and array argument of every tool has a cap.
func TestArgumentCapsRefuseBeforeAnyWork(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	before := len(e.desk.Events())
	fails(t, e.cs, "gui_type", map[string]any{"text": strings.Repeat("é", MaxTypeChars+1)}, "text", "maxLength", "100000")
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": make([]string, maxListItems+1)}, "keys", "maxItems")
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "display": strings.Repeat("9", maxNameChars+1)}, "display", "maxLength")
	if got := e.desk.Events()[before:]; len(got) != 0 {
		t.Errorf("refused calls reached the desktop: %v", ops(got))
	}
	// Within the cap, text is accepted.
	ok(t, e.cs, "gui_type", map[string]any{"text": strings.Repeat("a", 2000)})
	// The multi-megabyte caps are enforced the same way (the SDK validates
	// against the schema); sending them would only slow the race detector down.
	tools, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"gui_clipboard.text": MaxClipboardChars, "gui_find_image.template": base64.StdEncoding.EncodedLen(MaxTemplateBytes) + dataURLPrefix, "gui_execute_task.task": MaxTaskChars}
	for _, tl := range tools.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		var sc struct {
			Properties map[string]struct {
				Type      any   `json:"type"`
				MaxLength *int  `json:"maxLength"`
				MaxItems  *int  `json:"maxItems"`
				Enum      []any `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatal(err)
		}
		for name, p := range sc.Properties {
			if n, ok := want[tl.Name+"."+name]; ok && (p.MaxLength == nil || *p.MaxLength != n) {
				t.Errorf("%s.%s: maxLength %v, want %d", tl.Name, name, p.MaxLength, n)
			}
			if ts := fmt.Sprint(p.Type); strings.Contains(ts, "string") && p.MaxLength == nil && p.Enum == nil || strings.Contains(ts, "array") && p.MaxItems == nil {
				t.Errorf("%s.%s (%s) has no cap", tl.Name, name, ts)
			}
		}
	}
}

// TestUnknownArgumentsRefused: the schemas leave out additionalProperties
// (the instructions say it once), so the server refuses an argument a tool
// does not name itself: a misspelt one is an error naming it and the tool's
// arguments, and the click does not happen with the argument ignored.
func TestUnknownArgumentsRefused(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	before := len(e.desk.Events())
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "buton": "right"}, `unknown argument "buton"`, "button, clicks, display")
	fails(t, e.cs, "gui_type", map[string]any{"text": "a", "mode": "replace", "zz": 1, "aa": 2}, `"aa", "zz"`)
	if got := e.desk.Events()[before:]; len(got) != 0 {
		t.Errorf("refused calls reached the desktop: %v", ops(got))
	}
	ok(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "button": "right"})
	if !strings.Contains(e.cs.InitializeResult().Instructions, "does not name is refused") {
		t.Error("the server's instructions do not say that unknown arguments are refused")
	}
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

// pngBomb returns a PNG announcing w x h gray pixels, with almost no pixel data.
func pngBomb(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8
	for _, c := range []struct {
		typ  string
		data []byte
	}{{"IHDR", ihdr}, {"IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}}, {"IEND", nil}} {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(c.data)))
		b.WriteString(c.typ)
		b.Write(c.data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(c.typ), c.data...)))
	}
	return b.Bytes()
}

// TestFindImageRefusesPNGBombFromItsHeader holds hole 3 of issue 9: a tiny
// PNG announcing 31000x31000 pixels is refused, naming its size and the
// screenshot's, without allocating its pixels (961 MB).
func TestFindImageRefusesPNGBombFromItsHeader(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	tmpl := base64.StdEncoding.EncodeToString(pngBomb(31000, 31000))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fails(t, e.cs, "gui_find_image", map[string]any{"template": tmpl}, "31000x31000", "larger than the screenshot", "crop")
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 100<<20 {
		t.Errorf("refusing the PNG bomb allocated %d MB", n>>20)
	}
	fails(t, e.cs, "gui_find_image", map[string]any{"template": base64.StdEncoding.EncodeToString([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))}, "not a PNG or JPEG")
}
