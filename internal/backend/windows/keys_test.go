package windows

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

// keyNames are the names a user or model can give, through desktop.ParseKey.
var keyNames = []string{
	"ctrl", "control_r", "shift", "shift_r", "alt", "alt_r", "altgr", "super", "super_r", "win", "cmd", "meta",
	"return", "enter", "kp_enter", "tab", "escape", "space", "backspace", "delete", "insert", "home", "end",
	"page_up", "page_down", "left", "right", "up", "down", "caps_lock", "num_lock", "scroll_lock",
	"print", "menu", "pause", "volumeup", "volumedown", "volumemute",
}

func TestEveryNamedKeyHasAVirtualKey(t *testing.T) {
	names := slices.Clone(keyNames)
	for i := 1; i <= 24; i++ {
		names = append(names, fmt.Sprintf("f%d", i))
	}
	for _, n := range names {
		k, err := desktop.ParseKey(n)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", n, err)
		}
		if _, isChar := k.Rune(); isChar && k != "space" {
			continue
		}
		v, ok := namedVK(k)
		if !ok || v.VK == 0 {
			t.Errorf("key %q (%s) has no virtual-key code", n, k)
		}
	}
}

func TestVirtualKeyCodes(t *testing.T) {
	for k, want := range map[desktop.Key]vkKey{
		"Return": {0x0D, false}, "KP_Enter": {0x0D, true}, "Tab": {0x09, false}, "Escape": {0x1B, false},
		"BackSpace": {0x08, false}, "space": {0x20, false}, "Delete": {0x2E, true}, "Insert": {0x2D, true},
		"Left": {0x25, true}, "Up": {0x26, true}, "Right": {0x27, true}, "Down": {0x28, true},
		"Home": {0x24, true}, "End": {0x23, true}, "Page_Up": {0x21, true}, "Page_Down": {0x22, true},
		"F1": {0x70, false}, "F12": {0x7B, false}, "F13": {0x7C, false}, "F24": {0x87, false},
		desktop.Ctrl: {0xA2, false}, "Control_R": {0xA3, true}, desktop.Shift: {0xA0, false}, "Shift_R": {0xA1, false},
		desktop.Alt: {0xA4, false}, "Alt_R": {0xA5, true}, desktop.Super: {0x5B, true}, "Super_R": {0x5C, true},
		"Menu": {0x5D, true}, "Print": {0x2C, true}, "Caps_Lock": {0x14, false},
	} {
		if got, ok := namedVK(k); !ok || got != want {
			t.Errorf("namedVK(%q) = %+v, %v; want %+v", k, got, ok, want)
		}
	}
	if _, ok := namedVK("F25"); ok {
		t.Error("F25 has a virtual key")
	}
	if _, ok := namedVK("a"); ok {
		t.Error(`character key "a" is in the named table; characters must go through the active layout`)
	}
}

func TestDecodeVkKeyScan(t *testing.T) {
	for _, tc := range []struct {
		ret  uint16
		vk   uint16
		mods uint8
		ok   bool
	}{
		{0x0041, 0x41, 0, true},                  // 'a' on US
		{0x0141, 0x41, scanShift, true},          // 'A'
		{0x0632, 0x32, scanCtrl | scanAlt, true}, // AltGr+2, e.g. '@' on some layouts
		{0xFFFF, 0, 0, false},                    // not on the layout
		{0x0841, 0, 0, false},                    // Hankaku shift state
	} {
		vk, mods, ok := decodeVkKeyScan(tc.ret)
		if vk != tc.vk || mods != tc.mods || ok != tc.ok {
			t.Errorf("decodeVkKeyScan(0x%04x) = 0x%x, %d, %v; want 0x%x, %d, %v", tc.ret, vk, mods, ok, tc.vk, tc.mods, tc.ok)
		}
	}
	if got := modifierVKs(scanCtrl | scanAlt | scanShift); !slices.Equal(got, []vkKey{{0xA2, false}, {0xA5, true}, {0xA0, false}}) {
		t.Errorf("modifierVKs(AltGr+Shift) = %+v, want left Ctrl, right Alt (extended), left Shift", got)
	}
	if got := modifierVKs(scanAlt); !slices.Equal(got, []vkKey{{0xA4, false}}) {
		t.Errorf("modifierVKs(Alt) = %+v, want left Alt", got)
	}
	if got := modifierVKs(0); len(got) != 0 {
		t.Errorf("modifierVKs(0) = %+v, want none", got)
	}
}

func TestTypingPlan(t *testing.T) {
	plan, err := typingPlan("aÉ\r\nb\n\t😀中\r")
	if err != nil {
		t.Fatal(err)
	}
	ret, tab := stroke{VK: vkKey{VK: vkReturn}}, stroke{VK: vkKey{VK: vkTab}}
	want := []stroke{{Unit: 'a'}, {Unit: 'É'}, ret, {Unit: 'b'}, ret, tab, {Unit: 0xD83D}, {Unit: 0xDE00}, {Unit: '中'}, ret}
	if !slices.Equal(plan, want) {
		t.Fatalf("plan = %+v\nwant   %+v", plan, want)
	}
	for _, bad := range []string{"a\x00b", "bell\a", "esc\x1b[", "c1\u0085", "\xff"} {
		if _, err := typingPlan(bad); err == nil {
			t.Errorf("typingPlan(%q) accepted a character that cannot be typed", bad)
		} else if !strings.Contains(err.Error(), "windows type") {
			t.Errorf("typingPlan(%q) error %q does not say where it comes from", bad, err)
		}
	}
	if plan, err := typingPlan(""); err != nil || len(plan) != 0 {
		t.Errorf("typingPlan(\"\") = %v, %v; want nothing", plan, err)
	}
}

func TestChunkEndKeepsSurrogatePairsTogether(t *testing.T) {
	plan, err := typingPlan("ab😀cd")
	if err != nil {
		t.Fatal(err)
	}
	// a b D83D DE00 c d: a batch of 3 would end after the high surrogate.
	if end := chunkEnd(plan, 0, 3); end != 4 {
		t.Fatalf("chunkEnd(0, 3) = %d, want 4 (the pair stays in one batch)", end)
	}
	if end := chunkEnd(plan, 0, 2); end != 2 {
		t.Fatalf("chunkEnd(0, 2) = %d, want 2", end)
	}
	if end := chunkEnd(plan, 4, 128); end != 6 {
		t.Fatalf("chunkEnd(4, 128) = %d, want 6 (the end of the plan)", end)
	}
	// Walking the plan in batches covers every stroke once.
	n := 0
	for start := 0; start < len(plan); start = chunkEnd(plan, start, 3) {
		n++
	}
	if n != 2 {
		t.Fatalf("plan of 6 strokes in batches of 3 took %d batches, want 2", n)
	}
}
