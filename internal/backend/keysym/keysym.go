// Package keysym maps canonical desktop.Key names and characters to X11
// keysyms and back. The x11 backend and the RFB protocol of the vnc backend
// both name keys by keysym, and so do the Wayland keyboard's keymap and the
// RemoteDesktop portal. EvdevButton gives the Linux input event codes of
// the mouse buttons, by which the last two name buttons.
package keysym

import (
	"fmt"
	"unicode"

	"github.com/guiagent/guiagent/internal/desktop"
)

// named maps canonical desktop.Key names of non-character keys to keysyms.
var named = map[desktop.Key]uint32{
	"BackSpace": 0xff08, "Tab": 0xff09, "Return": 0xff0d, "Pause": 0xff13, "Scroll_Lock": 0xff14,
	"Escape": 0xff1b, "Delete": 0xffff, "Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53,
	"Down": 0xff54, "Page_Up": 0xff55, "Page_Down": 0xff56, "End": 0xff57, "Print": 0xff61,
	"Insert": 0xff63, "Menu": 0xff67, "Num_Lock": 0xff7f, "KP_Enter": 0xff8d,
	"Shift_L": 0xffe1, "Shift_R": 0xffe2, "Control_L": 0xffe3, "Control_R": 0xffe4, "Caps_Lock": 0xffe5,
	"Meta_L": 0xffe7, "Alt_L": 0xffe9, "Alt_R": 0xffea, "Super_L": 0xffeb, "Super_R": 0xffec,
	"ISO_Level3_Shift": 0xfe03, "space": 0x20,
	"XF86AudioRaiseVolume": 0x1008ff13, "XF86AudioLowerVolume": 0x1008ff11, "XF86AudioMute": 0x1008ff12,
}

// names is the reverse of named (plus F-keys).
var names = map[uint32]desktop.Key{}

func init() {
	for i := 1; i <= 24; i++ {
		named[desktop.Key(fmt.Sprintf("F%d", i))] = uint32(0xffbe + i - 1)
	}
	for k, s := range named {
		if s != 0x20 {
			names[s] = k
		}
	}
}

// OfRune returns the keysym of a character: Latin-1 characters are their own
// keysym, others use the Unicode keysym range 0x01000000+code point; newline
// and carriage return are Return, tab Tab and backspace BackSpace. Other
// control characters have none.
func OfRune(r rune) (uint32, bool) {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d, true
	case r == '\t':
		return 0xff09, true
	case r == '\b':
		return 0xff08, true
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r > unicode.MaxRune:
		return 0, false
	case r < 0x100:
		return uint32(r), true
	}
	return uint32(0x01000000 + r), true
}

// OfKey returns the keysym of k: a named key's, or a single character's.
func OfKey(k desktop.Key) (uint32, bool) {
	if s, ok := named[k]; ok {
		return s, true
	}
	if r, ok := k.Rune(); ok {
		return OfRune(r)
	}
	return 0, false
}

// Rune returns the character a keysym types, if any: Latin-1 and
// Unicode-range keysyms, the euro sign, Return/KP_Enter as '\n' and Tab as '\t'.
func Rune(s uint32) (rune, bool) {
	switch {
	case s >= 0x20 && s < 0x7f, s >= 0xa0 && s < 0x100:
		return rune(s), true
	case s >= 0x01000100 && s <= 0x0110ffff:
		return rune(s - 0x01000000), true
	case s == 0x20ac:
		return '€', true
	case s == 0xff0d, s == 0xff8d:
		return '\n', true
	case s == 0xff09:
		return '\t', true
	}
	return 0, false
}

// Key returns the canonical desktop.Key for a keysym: the name of a named
// key, or the (lower-case) character of a printable one.
func Key(s uint32) (desktop.Key, bool) {
	if k, ok := names[s]; ok {
		return k, true
	}
	if s == 0x20 {
		return "space", true
	}
	if r, ok := Rune(s); ok && r >= 0x20 {
		return desktop.Key(string(unicode.ToLower(r))), true
	}
	return "", false
}
