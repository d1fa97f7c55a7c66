package wayland

import (
	"fmt"
	"sort"
	"strings"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
)

// The virtual keyboard's keymap is guiagent's own: every keycode carries one
// keysym at one level, so any character is typed by giving it a keycode of
// its own (as wtype does) and no level modifier is ever needed. The
// modifiers and named keys are there from the start; characters are added
// as text needs them, and a full keymap drops the characters no held key
// uses.

// XKB keycodes the keymap uses (evdev code + 8; 255 is the highest XKB keycode).
const (
	minCode = 9
	maxCode = 255
)

// modifierMap names the XKB real modifier each modifier keysym sets, and its mask.
var modifierMap = map[uint32]struct {
	name string
	mask uint32
}{
	0xffe1: {"Shift", 1}, 0xffe2: {"Shift", 1},
	0xffe3: {"Control", 4}, 0xffe4: {"Control", 4},
	0xffe9: {"Mod1", 8}, 0xffea: {"Mod1", 8}, 0xffe7: {"Mod1", 8},
	0xffeb: {"Mod4", 0x40}, 0xffec: {"Mod4", 0x40},
	0xfe03: {"Mod5", 0x80},
}

// baseKeys are on the keymap from the start, in this order.
var baseKeys = []desktop.Key{
	desktop.Shift, desktop.Ctrl, desktop.Alt, desktop.Super, "Shift_R", "Control_R", "Alt_R", "Super_R", "Meta_L", "ISO_Level3_Shift",
	"Return", "Tab", "BackSpace", "Escape", "Delete", "Insert", "Home", "End", "Page_Up", "Page_Down",
	"Left", "Right", "Up", "Down", "space", "Caps_Lock", "Num_Lock", "Scroll_Lock", "Print", "Pause", "Menu", "KP_Enter",
	"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12",
}

// keymap assigns keysyms to keycodes. syms[kc-minCode] is keycode kc's
// keysym; 0 marks a free keycode.
type keymap struct {
	syms []uint32
	code map[uint32]int
	base int // keycodes below minCode+base are the fixed base keys
}

func newKeymap() *keymap {
	m := &keymap{syms: make([]uint32, maxCode-minCode+1), code: map[uint32]int{}}
	for _, k := range baseKeys {
		s, ok := keysym.OfKey(k)
		if !ok {
			panic("wayland: base key without keysym: " + string(k))
		}
		m.put(minCode+m.base, s)
		m.base++
	}
	return m
}

func (m *keymap) put(kc int, sym uint32) {
	m.syms[kc-minCode] = sym
	m.code[sym] = kc
}

// lookup returns the keycode of sym.
func (m *keymap) lookup(sym uint32) (int, bool) {
	kc, ok := m.code[sym]
	return kc, ok
}

// free counts the keycodes without a keysym.
func (m *keymap) free() int {
	n := 0
	for _, s := range m.syms {
		if s == 0 {
			n++
		}
	}
	return n
}

// add gives sym a free keycode; false when none is free.
func (m *keymap) add(sym uint32) (int, bool) {
	if kc, ok := m.code[sym]; ok {
		return kc, true
	}
	for i := m.base; i < len(m.syms); i++ {
		if m.syms[i] == 0 {
			m.put(minCode+i, sym)
			return minCode + i, true
		}
	}
	return 0, false
}

// drop frees every added keycode for which keep is false.
func (m *keymap) drop(keep func(kc int) bool) {
	for i := m.base; i < len(m.syms); i++ {
		kc := minCode + i
		if s := m.syms[i]; s != 0 && !keep(kc) {
			m.syms[i] = 0
			delete(m.code, s)
		}
	}
}

// text renders the keymap in XKB's text format (xkb_keymap v1), as
// zwp_virtual_keyboard_v1.keymap takes it.
func (m *keymap) text() string {
	var b strings.Builder
	b.WriteString("xkb_keymap {\nxkb_keycodes \"guiagent\" {\n\tminimum = 8;\n\tmaximum = 255;\n")
	for i := range m.syms {
		fmt.Fprintf(&b, "\t<I%d> = %d;\n", minCode+i, minCode+i)
	}
	b.WriteString("};\nxkb_types \"guiagent\" { include \"complete\" };\n")
	b.WriteString("xkb_compatibility \"guiagent\" { include \"complete\" };\n")
	b.WriteString("xkb_symbols \"guiagent\" {\n")
	mods := map[string][]string{}
	for i, s := range m.syms {
		if s == 0 {
			continue
		}
		kc := minCode + i
		fmt.Fprintf(&b, "\tkey <I%d> { [ 0x%08x ] };\n", kc, s)
		if mm, ok := modifierMap[s]; ok {
			mods[mm.name] = append(mods[mm.name], fmt.Sprintf("<I%d>", kc))
		}
	}
	names := make([]string, 0, len(mods))
	for n := range mods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\tmodifier_map %s { %s };\n", n, strings.Join(mods[n], ", "))
	}
	b.WriteString("};\n};\n")
	return b.String()
}
