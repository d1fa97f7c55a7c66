package safety

import (
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
)

// TestBlockedChordSpellings holds the bypasses an adversarial pass found: a
// key name that is a control character (U+0008, which X receives as
// BackSpace) or any other spelling of a blocked chord is refused.
func TestBlockedChordSpellings(t *testing.T) {
	p := MustKeyPolicy(KeyPolicyOptions{Platform: "linux"})
	for _, names := range [][]string{
		{"ctrl", "alt", "\b"},
		{"ctrl+alt+\b"},
		{"ctrl", "alt", "\x7f"},
		{"alt", "f4\n"},
		{"alt\t", "F4"},
		{"\x1b"},
		{"ctrl", "alt", "\xff"},
	} {
		if err := p.CheckNames(names); err == nil {
			t.Errorf("%q was allowed", names)
		}
	}
	// Keys built without ParseKey (a model's answer) are judged as sent.
	for _, keys := range [][]desktop.Key{
		{desktop.Ctrl, desktop.Alt, "\b"},
		{"Control_R", "Alt_R", "BackSpace"},
		{"ISO_Level3_Shift", "F4"}, // AltGr is right Alt on Windows and macOS
		{"Meta_L", "F4"},           // Meta is on Mod1 with Alt in X keymaps
		{"Meta_L", "L"},
	} {
		if err := p.Check(keys); err == nil {
			t.Errorf("%q was allowed", keys)
		}
	}
	err := p.CheckNames([]string{"ctrl", "alt", "\b"})
	if err == nil || !strings.Contains(err.Error(), "U+0008") || !strings.Contains(err.Error(), "BackSpace") {
		t.Errorf("error %v does not name the control character and the key name to use", err)
	}
}

// sentKeysyms returns the set of X keysyms keys are sent as, with left and
// right modifiers (and the keys that act as them) folded onto one keysym.
// It is the oracle of FuzzKeyPolicy: what the X server will receive.
func sentKeysyms(keys []desktop.Key) []uint32 {
	fold := map[uint32][]uint32{
		0xffe4: {0xffe3},         // Control_R -> Control_L
		0xffe2: {0xffe1},         // Shift_R -> Shift_L
		0xffea: {0xffe9},         // Alt_R -> Alt_L
		0xfe03: {0xffe9},         // ISO_Level3_Shift -> Alt_L
		0xffec: {0xffeb},         // Super_R -> Super_L
		0xffe7: {0xffeb, 0xffe9}, // Meta_L -> Super_L and Alt_L
		0xff8d: {0xff0d},         // KP_Enter -> Return
	}
	var out []uint32
	for _, k := range keys {
		s, ok := keysym.OfKey(k)
		if !ok {
			continue // the backend refuses it: nothing is sent
		}
		if r, ok := keysym.Rune(s); ok && r >= 0x20 { // letters in either case are one key
			if lk, ok := keysym.OfRune([]rune(strings.ToLower(string(r)))[0]); ok {
				s = lk
			}
		}
		if f, ok := fold[s]; ok {
			out = append(out, f...)
			continue
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func containsAllSyms(a, b []uint32) bool {
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// FuzzKeyPolicy checks the policy's property: a chord it accepts, as sent to
// the X server, never contains a blocked chord. The input is key names
// separated by NUL (a separator no valid key name holds).
func FuzzKeyPolicy(f *testing.F) {
	for _, s := range []string{
		"ctrl\x00alt\x00\b", "alt\x00f4", "Alt_R\x00F4", "super\x00L", "ctrl+alt+\b",
		"ctrl\x00alt\x00BackSpace", "meta\x00f4", "altgr\x00f4", "ctrl\x00alt\x00F1",
		"ctrl\x00c", "shift\x00\x00", "ctrl\x00alt\x00del", "\u212a", "ctrl++", "KP_Enter",
	} {
		f.Add(s)
	}
	blocked := map[string][][]uint32{}
	for _, platform := range []string{"linux", "windows", "darwin"} {
		for _, c := range DefaultBlocked(platform) {
			keys, err := desktop.ParseCombo(c)
			if err != nil {
				f.Fatal(err)
			}
			blocked[platform] = append(blocked[platform], sentKeysyms(keys))
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		names := strings.Split(in, "\x00")
		keys, perr := desktop.ParseKeys(names)
		raw := make([]desktop.Key, len(names))
		for i, n := range names {
			raw[i] = desktop.Key(n)
		}
		for platform, combos := range blocked {
			p := MustKeyPolicy(KeyPolicyOptions{Platform: platform})
			for _, chord := range [][]desktop.Key{keys, raw} {
				if chord == nil && perr != nil {
					continue
				}
				if err := p.Check(chord); err != nil {
					continue
				}
				sent := sentKeysyms(chord)
				for _, b := range combos {
					if containsAllSyms(sent, b) {
						t.Fatalf("%s: %q accepted, but it is sent as keysyms %x, which hold the blocked %x", platform, chord, sent, b)
					}
				}
			}
		}
	})
}
