package sampleapp

import (
	"unicode"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Keysyms the application reacts to.
const (
	ksBackSpace   = 0xff08
	ksTab         = 0xff09
	ksReturn      = 0xff0d
	ksKPEnter     = 0xff8d
	ksISOLeftTab  = 0xfe20
	ksDelete      = 0xffff
	ksEscape      = 0xff1b
	ksHome        = 0xff50
	ksEnd         = 0xff57
	ksKP0         = 0xffb0
	ksKP9         = 0xffb9
	ksEuroSign    = 0x20ac
	unicodeKeysym = 0x01000000
)

// keymap is the server's keyboard mapping as the core protocol reports it.
type keymap struct {
	min     xproto.Keycode
	per     int
	keysyms []xproto.Keysym
}

// loadKeymap fetches the whole keyboard mapping.
func loadKeymap(c *xgb.Conn, setup *xproto.SetupInfo) (keymap, error) {
	count := int(setup.MaxKeycode) - int(setup.MinKeycode) + 1
	rep, err := xproto.GetKeyboardMapping(c, setup.MinKeycode, byte(count)).Reply()
	if err != nil {
		return keymap{}, err
	}
	return keymap{min: setup.MinKeycode, per: int(rep.KeysymsPerKeycode), keysyms: rep.Keysyms}, nil
}

// list returns the keysyms of keycode kc.
func (m keymap) list(kc xproto.Keycode) []xproto.Keysym {
	i := (int(kc) - int(m.min)) * m.per
	if m.per == 0 || i < 0 || i+m.per > len(m.keysyms) {
		return nil
	}
	return m.keysyms[i : i+m.per]
}

// keysym picks the keysym of kc for a modifier state, following the core
// protocol's rules: level 2 with Shift (Lock for letters), levels 3-4 (index
// 4-5 of XKB's core mapping) with Mod5 (ISO_Level3_Shift, AltGr).
func (m keymap) keysym(kc xproto.Keycode, state uint16) xproto.Keysym {
	l := m.list(kc)
	if len(l) == 0 {
		return 0
	}
	at := func(i int) xproto.Keysym {
		if i < len(l) {
			return l[i]
		}
		return 0
	}
	base := 0
	if state&xproto.ModMask5 != 0 && at(4) != 0 {
		base = 4
	}
	lo, hi := at(base), at(base+1)
	if hi == 0 { // one keysym: letters have an implied upper case
		r := keysymRune(lo)
		if r != 0 && unicode.IsLower(r) {
			hi = runeKeysym(unicode.ToUpper(r))
		} else {
			hi = lo
		}
	}
	shift := state&xproto.ModMaskShift != 0
	if state&xproto.ModMaskLock != 0 {
		if r := keysymRune(lo); r != 0 && unicode.IsLetter(r) {
			shift = !shift
		}
	}
	if shift {
		return hi
	}
	return lo
}

// keysymRune returns the character a keysym types, or 0 for none.
func keysymRune(ks xproto.Keysym) rune {
	switch {
	case ks >= 0x20 && ks <= 0x7e, ks >= 0xa0 && ks <= 0xff:
		return rune(ks)
	case ks >= unicodeKeysym+0x100 && ks <= unicodeKeysym+0x10ffff:
		return rune(ks - unicodeKeysym)
	case ks >= ksKP0 && ks <= ksKP9:
		return rune('0' + ks - ksKP0)
	case ks == ksEuroSign:
		return '€'
	}
	switch ks {
	case 0xffaa:
		return '*'
	case 0xffab:
		return '+'
	case 0xffad:
		return '-'
	case 0xffae:
		return '.'
	case 0xffaf:
		return '/'
	case 0xff80:
		return ' '
	}
	return 0
}

// runeKeysym returns the keysym of a character.
func runeKeysym(r rune) xproto.Keysym {
	if r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xff {
		return xproto.Keysym(r)
	}
	return xproto.Keysym(unicodeKeysym + r)
}
