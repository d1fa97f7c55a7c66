package windows

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Virtual-key codes used by the backend (WinUser.h).
const (
	vkBack     = 0x08
	vkTab      = 0x09
	vkReturn   = 0x0D
	vkLShift   = 0xA0
	vkLControl = 0xA2
	vkRMenu    = 0xA5
	vkF1       = 0x70
)

// vkKey is a key as SendInput takes it: a virtual-key code and whether the
// key sits in the extended block (KEYEVENTF_EXTENDEDKEY), which tells e.g.
// the arrow keys from the numeric keypad's.
type vkKey struct {
	VK       uint16
	Extended bool
}

// namedVKs maps canonical desktop.Key names of non-character keys to their
// virtual keys. F1-F24 are added by init.
var namedVKs = map[desktop.Key]vkKey{
	"BackSpace": {vkBack, false}, "Tab": {vkTab, false}, "Return": {vkReturn, false}, "KP_Enter": {vkReturn, true},
	"Pause": {0x13, false}, "Caps_Lock": {0x14, false}, "Escape": {0x1B, false}, "space": {0x20, false},
	"Page_Up": {0x21, true}, "Page_Down": {0x22, true}, "End": {0x23, true}, "Home": {0x24, true},
	"Left": {0x25, true}, "Up": {0x26, true}, "Right": {0x27, true}, "Down": {0x28, true},
	"Print": {0x2C, true}, "Insert": {0x2D, true}, "Delete": {0x2E, true},
	"Super_L": {0x5B, true}, "Meta_L": {0x5B, true}, "Super_R": {0x5C, true}, "Menu": {0x5D, true},
	"Num_Lock": {0x90, true}, "Scroll_Lock": {0x91, false},
	"Shift_L": {vkLShift, false}, "Shift_R": {0xA1, false},
	"Control_L": {vkLControl, false}, "Control_R": {0xA3, true},
	"Alt_L": {0xA4, false}, "Alt_R": {vkRMenu, true}, "ISO_Level3_Shift": {vkRMenu, true},
	"XF86AudioMute": {0xAD, true}, "XF86AudioLowerVolume": {0xAE, true}, "XF86AudioRaiseVolume": {0xAF, true},
}

func init() {
	for i := 1; i <= 24; i++ {
		namedVKs[desktop.Key(fmt.Sprintf("F%d", i))] = vkKey{VK: uint16(vkF1 + i - 1)}
	}
}

// namedVK returns the virtual key of a named (non-character) key.
func namedVK(k desktop.Key) (vkKey, bool) {
	v, ok := namedVKs[k]
	return v, ok
}

// Modifier bits in the high byte of VkKeyScanW's result.
const (
	scanShift = 1
	scanCtrl  = 2
	scanAlt   = 4
)

// decodeVkKeyScan splits a VkKeyScanW result into the virtual key and the
// modifiers (scanShift|scanCtrl|scanAlt) the active layout needs to type the
// character. ok is false when the layout has no key for it (low and high byte
// both 0xFF), or when it needs modifiers beyond Shift, Ctrl and Alt (Hankaku
// and other layout-specific shift states).
func decodeVkKeyScan(ret uint16) (vk uint16, mods uint8, ok bool) {
	lo, hi := uint8(ret), uint8(ret>>8)
	if lo == 0xFF && hi == 0xFF {
		return 0, 0, false
	}
	if hi&^(scanShift|scanCtrl|scanAlt) != 0 {
		return 0, 0, false
	}
	return uint16(lo), hi, true
}

// modifierVKs returns the modifier keys to hold, in press order, for the
// VkKeyScanW modifier bits. Ctrl+Alt is AltGr: it is pressed as left Control
// and right Alt, which is what layouts with AltGr generate.
func modifierVKs(mods uint8) []vkKey {
	var out []vkKey
	if mods&scanCtrl != 0 && mods&scanAlt != 0 {
		out = append(out, vkKey{VK: vkLControl}, vkKey{VK: vkRMenu, Extended: true})
	} else {
		if mods&scanCtrl != 0 {
			out = append(out, vkKey{VK: vkLControl})
		}
		if mods&scanAlt != 0 {
			out = append(out, vkKey{VK: 0xA4})
		}
	}
	if mods&scanShift != 0 {
		out = append(out, vkKey{VK: vkLShift})
	}
	return out
}

// stroke is one step of typing: a virtual key pressed and released (VK != 0),
// or one UTF-16 code unit sent with KEYEVENTF_UNICODE.
type stroke struct {
	VK   vkKey
	Unit uint16
}

// typingPlan turns text into strokes: line breaks ("\n", "\r\n", "\r") become
// Return, "\t" Tab, and every other character its UTF-16 code units (a
// surrogate pair for characters outside the Basic Multilingual Plane, such as
// emoji), typed with KEYEVENTF_UNICODE so that the keyboard layout does not
// matter. Other control characters are rejected.
func typingPlan(text string) ([]stroke, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("windows type: the text is not valid UTF-8: send UTF-8 text")
	}
	var out []stroke
	runes := []rune(text)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == '\r':
			if i+1 < len(runes) && runes[i+1] == '\n' {
				i++
			}
			out = append(out, stroke{VK: vkKey{VK: vkReturn}})
		case r == '\n':
			out = append(out, stroke{VK: vkKey{VK: vkReturn}})
		case r == '\t':
			out = append(out, stroke{VK: vkKey{VK: vkTab}})
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return nil, fmt.Errorf("windows type: character %U at position %d cannot be typed (control character): remove it or press the key by name", r, i)
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				out = append(out, stroke{Unit: u})
			}
		}
	}
	return out, nil
}

// chunkEnd returns the end of the batch of at most n strokes (n >= 2) that
// starts at start, extended by one stroke so that a surrogate pair is never
// split between two batches.
func chunkEnd(plan []stroke, start, n int) int {
	end := min(start+max(n, 1), len(plan))
	if end < len(plan) && plan[end-1].VK.VK == 0 && plan[end-1].Unit >= 0xD800 && plan[end-1].Unit < 0xDC00 {
		end++
	}
	return end
}
