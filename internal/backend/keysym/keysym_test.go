package keysym

import (
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

func TestKeysRoundTrip(t *testing.T) {
	for _, k := range []desktop.Key{"Return", "F1", "F24", "Control_L", "space", "XF86AudioMute", "a", "!", "é", "世", "😀"} {
		s, ok := OfKey(k)
		if !ok {
			t.Fatalf("OfKey(%q) found no keysym", k)
		}
		if back, ok := Key(s); !ok || back != k {
			t.Errorf("Key(OfKey(%q) = %#x) = %q, %v", k, s, back, ok)
		}
	}
	if s, ok := OfKey("NoSuchKey"); ok {
		t.Errorf("OfKey accepted an unknown key name as %#x", s)
	}
}

func TestRunesRoundTrip(t *testing.T) {
	for _, r := range []rune{'a', 'Z', '~', 'ß', 'ÿ', 'Ā', '€', '世', '😀', '\n', '\t'} {
		s, ok := OfRune(r)
		if !ok {
			t.Fatalf("OfRune(%q) found no keysym", r)
		}
		if back, ok := Rune(s); !ok || back != r {
			t.Errorf("Rune(OfRune(%q) = %#x) = %q, %v", r, s, back, ok)
		}
	}
	for _, r := range []rune{0x01, 0x7f, 0x85} {
		if s, ok := OfRune(r); ok {
			t.Errorf("OfRune(%U) = %#x, want none for a control character", r, s)
		}
	}
}

// TestEvdevButton: the codes of linux/input-event-codes.h (BTN_LEFT 0x110,
// BTN_RIGHT 0x111, BTN_MIDDLE 0x112); another button is an error naming the
// ones there are.
func TestEvdevButton(t *testing.T) {
	for b, want := range map[desktop.Button]uint32{desktop.Left: 0x110, desktop.Right: 0x111, desktop.Middle: 0x112} {
		if got, err := EvdevButton(b); err != nil || got != want {
			t.Errorf("EvdevButton(%v) = %#x, %v; want %#x", b, got, err, want)
		}
	}
	if _, err := EvdevButton(desktop.Button(9)); err == nil || !strings.Contains(err.Error(), "use left, right or middle") {
		t.Errorf("EvdevButton(9): %v, want an error naming the buttons", err)
	}
}
