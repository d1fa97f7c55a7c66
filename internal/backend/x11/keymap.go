package x11

import (
	"fmt"
	"sync/atomic"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
)

// runeKeysym returns the keysym of a character (see keysym.OfRune).
func runeKeysym(r rune) (xproto.Keysym, bool) {
	s, ok := keysym.OfRune(r)
	return xproto.Keysym(s), ok
}

// KeysymKey returns the canonical desktop.Key for an X keysym: the name of a
// named key, or the (lower-case) character of a printable one.
func KeysymKey(s xproto.Keysym) (desktop.Key, bool) { return keysym.Key(uint32(s)) }

// keyKeysym returns the keysym for a desktop.Key.
func keyKeysym(k desktop.Key) (xproto.Keysym, error) {
	if s, ok := keysym.OfKey(k); ok {
		return xproto.Keysym(s), nil
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
