package x11

import (
	"fmt"
	"sync/atomic"
	"unicode"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/desktop"
)

// namedKeysyms maps canonical desktop.Key names of non-character keys to X keysyms.
var namedKeysyms = map[desktop.Key]xproto.Keysym{
	"BackSpace": 0xff08, "Tab": 0xff09, "Return": 0xff0d, "Pause": 0xff13, "Scroll_Lock": 0xff14,
	"Escape": 0xff1b, "Delete": 0xffff, "Home": 0xff50, "Left": 0xff51, "Up": 0xff52, "Right": 0xff53,
	"Down": 0xff54, "Page_Up": 0xff55, "Page_Down": 0xff56, "End": 0xff57, "Print": 0xff61,
	"Insert": 0xff63, "Menu": 0xff67, "Num_Lock": 0xff7f, "KP_Enter": 0xff8d,
	"Shift_L": 0xffe1, "Shift_R": 0xffe2, "Control_L": 0xffe3, "Control_R": 0xffe4, "Caps_Lock": 0xffe5,
	"Meta_L": 0xffe7, "Alt_L": 0xffe9, "Alt_R": 0xffea, "Super_L": 0xffeb, "Super_R": 0xffec,
	"ISO_Level3_Shift": 0xfe03, "space": 0x20,
	"XF86AudioRaiseVolume": 0x1008ff13, "XF86AudioLowerVolume": 0x1008ff11, "XF86AudioMute": 0x1008ff12,
}

// keysymNames is the reverse of namedKeysyms (plus F-keys).
var keysymNames = map[xproto.Keysym]desktop.Key{}

func init() {
	for i := 1; i <= 24; i++ {
		namedKeysyms[desktop.Key(fmt.Sprintf("F%d", i))] = xproto.Keysym(0xffbe + i - 1)
	}
	for k, s := range namedKeysyms {
		if s != 0x20 {
			keysymNames[s] = k
		}
	}
}

// runeKeysym returns the keysym of a character: Latin-1 characters are their
// own keysym, others use the Unicode keysym range 0x01000000+codepoint.
func runeKeysym(r rune) (xproto.Keysym, bool) {
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
		return xproto.Keysym(r), true
	}
	return xproto.Keysym(0x01000000 + r), true
}

// keysymRune returns the character a keysym types, if any.
func keysymRune(s xproto.Keysym) (rune, bool) {
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

// KeysymKey returns the canonical desktop.Key for an X keysym: the name of a
// named key, or the (lower-case) character of a printable one.
func KeysymKey(s xproto.Keysym) (desktop.Key, bool) {
	if k, ok := keysymNames[s]; ok {
		return k, true
	}
	if s == 0x20 {
		return "space", true
	}
	if r, ok := keysymRune(s); ok && r >= 0x20 {
		return desktop.Key(string(unicode.ToLower(r))), true
	}
	return "", false
}

// keyKeysym returns the keysym for a desktop.Key.
func keyKeysym(k desktop.Key) (xproto.Keysym, error) {
	if s, ok := namedKeysyms[k]; ok {
		return s, nil
	}
	if r, ok := k.Rune(); ok {
		if s, ok := runeKeysym(r); ok {
			return s, nil
		}
	}
	return 0, fmt.Errorf("x11: unknown key %q: use a name like Return, ctrl, F5 or a single character", string(k))
}

// keymap is a copy of the server's core keyboard mapping.
type keymap struct {
	min, max xproto.Keycode
	per      int             // keysyms per keycode
	syms     []xproto.Keysym // (max-min+1)*per
	stale    atomic.Bool     // set by the event loop on MappingNotify
}

func (m *keymap) load(conn *xgb.Conn, setup *xproto.SetupInfo) error {
	m.min, m.max = setup.MinKeycode, setup.MaxKeycode
	rep, err := xproto.GetKeyboardMapping(conn, m.min, byte(int(m.max)-int(m.min)+1)).Reply()
	if err != nil {
		return err
	}
	m.per, m.syms = int(rep.KeysymsPerKeycode), rep.Keysyms
	m.stale.Store(false)
	return nil
}

// at returns the keysym of kc at column col.
func (m *keymap) at(kc xproto.Keycode, col int) xproto.Keysym {
	i := (int(kc)-int(m.min))*m.per + col
	if col >= m.per || i < 0 || i >= len(m.syms) {
		return 0
	}
	return m.syms[i]
}

// find returns a keycode producing sym and whether Shift is needed. The
// unshifted column wins over the shifted one, and lower keycodes win.
func (m *keymap) find(sym xproto.Keysym) (xproto.Keycode, bool, bool) {
	if m.per == 0 {
		return 0, false, false
	}
	for col := 0; col < min(2, m.per); col++ {
		for kc := int(m.min); kc <= int(m.max); kc++ {
			s := m.at(xproto.Keycode(kc), col)
			if col == 1 && s == 0 { // implicit upper case of an alphabetic key
				if l := m.at(xproto.Keycode(kc), 0); l >= 'a' && l <= 'z' {
					s = l - 0x20
				}
			}
			if s == sym {
				return xproto.Keycode(kc), col == 1, true
			}
		}
	}
	return 0, false, false
}

// spare returns keycodes with no keysym at all, highest first (they are the
// least likely to be used by hardware).
func (m *keymap) spare() []xproto.Keycode {
	var out []xproto.Keycode
	for kc := int(m.max); kc >= int(m.min); kc-- {
		empty := true
		for col := 0; col < m.per; col++ {
			if m.at(xproto.Keycode(kc), col) != 0 {
				empty = false
				break
			}
		}
		if empty {
			out = append(out, xproto.Keycode(kc))
		}
	}
	return out
}

// set records a local change of kc's keysyms.
func (m *keymap) set(kc xproto.Keycode, syms []xproto.Keysym) {
	base := (int(kc) - int(m.min)) * m.per
	for col := 0; col < m.per && base+col < len(m.syms); col++ {
		m.syms[base+col] = syms[col]
	}
}

func (m *keymap) describe() string {
	return fmt.Sprintf("keycodes %d-%d, %d keysyms per keycode, %d spare keycodes", m.min, m.max, m.per, len(m.spare()))
}
