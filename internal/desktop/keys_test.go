package desktop_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

func TestParseKeyAliasesAndCase(t *testing.T) {
	cases := map[string]desktop.Key{
		"ctrl": desktop.Ctrl, "CTRL": desktop.Ctrl, "Control": desktop.Ctrl, "ctl": desktop.Ctrl, "Control_L": desktop.Ctrl,
		"rctrl": "Control_R", "shift": desktop.Shift, "SHIFT": desktop.Shift, "alt": desktop.Alt, "Option": desktop.Alt,
		"altgr": "ISO_Level3_Shift", "super": desktop.Super, "win": desktop.Super, "cmd": desktop.Super, "Meta": desktop.Super,
		"enter": "Return", "Return": "Return", "RETURN": "Return", "esc": "Escape", "Escape": "Escape",
		"backspace": "BackSpace", "BackSpace": "BackSpace", "del": "Delete", "pgup": "Page_Up", "Page_Down": "Page_Down",
		"next": "Page_Down", "ArrowLeft": "Left", "up": "Up", "space": "space", "Space": "space", "tab": "Tab",
		"KP_Enter": "KP_Enter", "kp_enter": "KP_Enter", "capslock": "Caps_Lock", "PrintScreen": "Print",
		"plus": "+", "minus": "-", "comma": ",", "a": "a", "A": "a", "7": "7", "+": "+", "é": "é", "Ö": "ö",
		"  tab  ": "Tab", "volumeup": "XF86AudioRaiseVolume",
	}
	for in, want := range cases {
		got, err := desktop.ParseKey(in)
		if err != nil || got != want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestParseKeyFunctionKeys(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for _, name := range []string{"F" + itoa(n), "f" + itoa(n)} {
			got, err := desktop.ParseKey(name)
			if err != nil || string(got) != "F"+itoa(n) {
				t.Errorf("ParseKey(%q) = %q, %v; want F%d", name, got, err, n)
			}
		}
	}
	for _, bad := range []string{"F0", "F25", "f99", "F-1", "Fx"} {
		if k, err := desktop.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) = %q, want an error: only F1-F24 exist", bad, k)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestParseKeyUnknownNamesExplainTheFix(t *testing.T) {
	for _, bad := range []string{"ctrlx", "hyperkey", "Retrun", "pagedwn"} {
		_, err := desktop.ParseKey(bad)
		if err == nil {
			t.Fatalf("ParseKey(%q) succeeded, want an error", bad)
		}
		msg := err.Error()
		if !strings.Contains(msg, bad) || !strings.Contains(msg, "F1-F24") || !strings.Contains(msg, "Return") {
			t.Errorf("ParseKey(%q) error %q should name the key and list valid names", bad, msg)
		}
	}
	_, err := desktop.ParseKey("   ")
	if err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("ParseKey(blank) error = %v, want one saying the name is empty", err)
	}
}

func TestParseCombo(t *testing.T) {
	cases := map[string][]desktop.Key{
		"ctrl+shift+t":     {desktop.Ctrl, desktop.Shift, "t"},
		"Ctrl+Shift+T":     {desktop.Ctrl, desktop.Shift, "t"},
		"ctrl++":           {desktop.Ctrl, "+"},
		"ctrl+shift++":     {desktop.Ctrl, desktop.Shift, "+"},
		"+":                {"+"},
		"alt+F4":           {desktop.Alt, "F4"},
		"super+Page_Down":  {desktop.Super, "Page_Down"},
		"ctrl+alt+delete":  {desktop.Ctrl, desktop.Alt, "Delete"},
		"Return":           {"Return"},
		" cmd + shift + 4": {desktop.Super, desktop.Shift, "4"},
	}
	for in, want := range cases {
		got, err := desktop.ParseCombo(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseCombo(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ctrl+", "ctrl+nosuchkey", "ctrl+F25"} {
		if got, err := desktop.ParseCombo(bad); err == nil {
			t.Errorf("ParseCombo(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseKeysListAndNestedCombos(t *testing.T) {
	got, err := desktop.ParseKeys([]string{"ctrl", "shift+t"})
	if want := []desktop.Key{desktop.Ctrl, desktop.Shift, "t"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseKeys = %q, %v; want %q", got, err, want)
	}
	got, err = desktop.ParseKeys([]string{"ctrl", "+"})
	if want := []desktop.Key{desktop.Ctrl, "+"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseKeys(ctrl, +) = %q, %v; want %q", got, err, want)
	}
	if _, err := desktop.ParseKeys(nil); err == nil {
		t.Error("ParseKeys(nil) succeeded, want an error asking for keys")
	}
	if _, err := desktop.ParseKeys([]string{"ctrl", "bogus"}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("ParseKeys with an unknown key: error %v, want one naming it", err)
	}
}

func TestComboStringRoundTrip(t *testing.T) {
	for _, combo := range []string{"ctrl+shift+t", "alt+f4", "super+return", "ctrl+a"} {
		keys, err := desktop.ParseCombo(combo)
		if err != nil {
			t.Fatal(err)
		}
		if got := desktop.ComboString(keys); got != combo {
			t.Errorf("ComboString(ParseCombo(%q)) = %q", combo, got)
		}
	}
}

func TestKeyProperties(t *testing.T) {
	for _, k := range []desktop.Key{desktop.Ctrl, desktop.Shift, desktop.Alt, desktop.Super, "Control_R", "ISO_Level3_Shift"} {
		if !k.IsModifier() {
			t.Errorf("%q.IsModifier() = false", k)
		}
	}
	for _, k := range []desktop.Key{"a", "Return", "F5", "+"} {
		if k.IsModifier() {
			t.Errorf("%q.IsModifier() = true", k)
		}
	}
	if r, ok := desktop.Key("ü").Rune(); !ok || r != 'ü' {
		t.Errorf("Key(ü).Rune() = %q, %v", r, ok)
	}
	if _, ok := desktop.Key("Return").Rune(); ok {
		t.Error("Key(Return).Rune() reported a character")
	}
}

func TestParseButtonAndDirection(t *testing.T) {
	for in, want := range map[string]desktop.Button{"": desktop.Left, "LEFT": desktop.Left, "right": desktop.Right, "Middle": desktop.Middle, "3": desktop.Right} {
		if got, err := desktop.ParseButton(in); err != nil || got != want {
			t.Errorf("ParseButton(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := desktop.ParseButton("side"); err == nil || !strings.Contains(err.Error(), "left, right or middle") {
		t.Errorf("ParseButton(side) error %v, want one listing the buttons", err)
	}
	for in, want := range map[string]desktop.Direction{"up": desktop.Up, "DOWN": desktop.Down, "Left": desktop.LeftD, "right": desktop.RightD} {
		if got, err := desktop.ParseDirection(in); err != nil || got != want {
			t.Errorf("ParseDirection(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := desktop.ParseDirection("sideways"); err == nil {
		t.Error("ParseDirection(sideways) succeeded")
	}
}

func TestParseKeyRefusesControlCharacters(t *testing.T) {
	for _, name := range []string{"\b", "\n", "\t", "\x1b", "\x7f", "\u0085", "alt\x00", "f4\n", "\xff"} {
		if k, err := desktop.ParseKey(name); err == nil {
			t.Errorf("desktop.ParseKey(%q) = %q, want an error", name, k)
		}
	}
	if _, err := desktop.ParseKeys([]string{"ctrl", "alt", "\b"}); err == nil || !strings.Contains(err.Error(), "U+0008") {
		t.Errorf("ParseKeys with U+0008: error %v does not name the character", err)
	}
	if err := desktop.Key("\b").Validate(); err == nil {
		t.Error(`desktop.Key("\b").Validate() = nil`)
	}
	if err := desktop.Key("BackSpace").Validate(); err != nil {
		t.Errorf("BackSpace: %v", err)
	}
}
