package darwin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Every key name a model or user can give through desktop.ParseKey must
// resolve to a Mac key (or to Unicode text), except keys Macs lack.
func TestEveryCommonKeyNameHasAMacKey(t *testing.T) {
	names := []string{
		"ctrl", "control_r", "shift", "shift_r", "alt", "option", "alt_r", "altgr", "super", "cmd", "command", "win", "meta", "super_r",
		"return", "enter", "kp_enter", "tab", "escape", "esc", "space", "backspace", "delete", "insert",
		"home", "end", "pageup", "pagedown", "left", "right", "up", "down", "capslock", "numlock",
		"plus", "minus", "equal", "comma", "period", "slash", "backslash", "semicolon", "apostrophe", "grave",
		"bracketleft", "bracketright", "asterisk", "underscore", "question", "exclam", "at", "numbersign",
		"dollar", "percent", "ampersand", "parenleft", "parenright", "colon", "less", "greater",
	}
	for c := 'a'; c <= 'z'; c++ {
		names = append(names, string(c))
	}
	for c := '0'; c <= '9'; c++ {
		names = append(names, string(c))
	}
	for n := 1; n <= 20; n++ {
		names = append(names, fmt.Sprintf("F%d", n))
	}
	for _, name := range names {
		k, err := desktop.ParseKey(name)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", name, err)
		}
		if _, ok, err := lookupKey(k); !ok || err != nil {
			t.Errorf("key %q (%s) has no Mac key: ok=%v err=%v", name, k, ok, err)
		}
	}
}

func TestKeysMacsLackAreExplained(t *testing.T) {
	for _, name := range []string{"F21", "F24", "print", "menu", "pause", "scroll_lock", "volumeup"} {
		k, err := desktop.ParseKey(name)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", name, err)
		}
		_, ok, err := lookupKey(k)
		if ok || err == nil {
			t.Errorf("key %q: want an error, got ok=%v err=%v", name, ok, err)
			continue
		}
		if !strings.Contains(err.Error(), "macOS") || !(strings.Contains(err.Error(), "F1-F20") || strings.Contains(err.Error(), "use ")) {
			t.Errorf("key %q: error %q does not say what to use instead", name, err)
		}
	}
}

// Codes checked against Carbon's Events.h (kVK_*).
func TestKeyCodesMatchAppleVirtualKeyCodes(t *testing.T) {
	want := map[desktop.Key]uint16{
		"a": 0x00, "s": 0x01, "z": 0x06, "c": 0x08, "v": 0x09, "q": 0x0C, "w": 0x0D, "t": 0x11,
		"1": 0x12, "5": 0x17, "0": 0x1D, "=": 0x18, "-": 0x1B, "]": 0x1E, "[": 0x21, "'": 0x27,
		";": 0x29, "\\": 0x2A, ",": 0x2B, "/": 0x2C, ".": 0x2F, "`": 0x32, "m": 0x2E,
		"Return": 0x24, "Tab": 0x30, "space": 0x31, "BackSpace": 0x33, "Escape": 0x35, "Delete": 0x75,
		desktop.Super: 0x37, desktop.Shift: 0x38, desktop.Alt: 0x3A, desktop.Ctrl: 0x3B, "Super_R": 0x36,
		"Shift_R": 0x3C, "Alt_R": 0x3D, "Control_R": 0x3E, "Caps_Lock": 0x39,
		"F1": 0x7A, "F2": 0x78, "F3": 0x63, "F4": 0x76, "F5": 0x60, "F10": 0x6D, "F12": 0x6F, "F13": 0x69, "F20": 0x5A,
		"Home": 0x73, "End": 0x77, "Page_Up": 0x74, "Page_Down": 0x79,
		"Left": 0x7B, "Right": 0x7C, "Down": 0x7D, "Up": 0x7E, "KP_Enter": 0x4C,
	}
	for k, code := range want {
		spec, ok, err := lookupKey(k)
		if !ok || err != nil {
			t.Errorf("%s: not found (%v)", k, err)
			continue
		}
		if spec.code != code {
			t.Errorf("%s: code %#x, want %#x", k, spec.code, code)
		}
	}
}

func TestKeyTablesHaveNoCollisions(t *testing.T) {
	seen := map[uint16]rune{}
	for r, c := range ansiKeys {
		if o, dup := seen[c]; dup {
			t.Errorf("characters %q and %q share key code %#x", r, o, c)
		}
		seen[c] = r
	}
	for i, c := range functionKeys {
		if r, dup := seen[c]; dup {
			t.Errorf("F%d shares key code %#x with %q", i+1, c, r)
		}
		seen[c] = 'F'
	}
	for k, s := range namedKeys {
		if r, dup := seen[s.code]; dup && s.code != vkSpace {
			t.Errorf("%s shares key code %#x with %q", k, s.code, r)
		}
	}
	for shifted, base := range shiftedANSI {
		if _, ok := ansiKeys[base]; !ok {
			t.Errorf("shifted %q is based on %q, which has no key", shifted, base)
		}
	}
}

func TestShiftedCharactersPressShift(t *testing.T) {
	cases := map[desktop.Key]desktop.Key{"+": "=", "A": "a", "\"": "'", "?": "/", "~": "`", "(": "9", "_": "-"}
	for k, base := range cases {
		spec, ok, err := lookupKey(k)
		if !ok || err != nil {
			t.Fatalf("%q: not found (%v)", k, err)
		}
		b, _, _ := lookupKey(base)
		if spec.code != b.code || spec.flags&flagShift == 0 {
			t.Errorf("%q: code %#x flags %#x, want %q's code %#x with shift", k, spec.code, spec.flags, base, b.code)
		}
	}
	if spec, _, _ := lookupKey("a"); spec.flags&flagShift != 0 {
		t.Error("lower-case a must not press shift")
	}
}

func TestCharactersOffTheUSLayoutAreTypedAsText(t *testing.T) {
	for _, k := range []desktop.Key{"é", "ß", "你", "€"} {
		if _, ok, err := lookupKey(k); ok || err != nil {
			t.Errorf("%q: want ok=false and no error (sent as Unicode), got ok=%v err=%v", k, ok, err)
		}
	}
}

func TestNavigationKeysCarryTheFlagsRealKeyboardsSend(t *testing.T) {
	for _, k := range []desktop.Key{"Left", "Right", "Up", "Down"} {
		spec, _, _ := lookupKey(k)
		if spec.flags&flagNumericPad == 0 || spec.flags&flagSecondaryFn == 0 {
			t.Errorf("%s: flags %#x lack numeric-pad and fn", k, spec.flags)
		}
	}
	for _, k := range []desktop.Key{"Home", "End", "Page_Up", "Page_Down", "Delete", "F1", "F12"} {
		if spec, _, _ := lookupKey(k); spec.flags&flagSecondaryFn == 0 {
			t.Errorf("%s: flags %#x lack fn", k, spec.flags)
		}
	}
}

func TestModifierFlagsFollowHeldKeys(t *testing.T) {
	var m modifierState
	press := func(k desktop.Key) {
		spec, _, _ := lookupKey(k)
		if !m.press(k, spec) {
			t.Fatalf("%s is not treated as a modifier", k)
		}
	}
	release := func(k desktop.Key) {
		spec, _, _ := lookupKey(k)
		m.release(k, spec)
	}
	if m.flags() != 0 {
		t.Fatal("fresh state has flags")
	}
	cmd, err := desktop.ParseKey("cmd")
	if err != nil {
		t.Fatal(err)
	}
	press(cmd)
	press(desktop.Shift)
	if f := m.flags(); f&flagCommand == 0 || f&flagShift == 0 || f&flagControl != 0 {
		t.Fatalf("cmd+shift held: flags %#x", f)
	}
	press("Shift_R")
	release(desktop.Shift)
	if f := m.flags(); f&flagShift == 0 || f&devRightShift == 0 || f&devLeftShift != 0 {
		t.Fatalf("right shift still held: flags %#x", f)
	}
	release("Shift_R")
	release(cmd)
	if f := m.flags(); f != 0 {
		t.Fatalf("all released: flags %#x", f)
	}
	if spec, _, _ := lookupKey("a"); m.press("a", spec) {
		t.Fatal("a is not a modifier")
	}
	press(desktop.Ctrl)
	m.reset()
	if m.flags() != 0 {
		t.Fatal("reset left flags")
	}
}
