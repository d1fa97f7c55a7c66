package darwin

import (
	"fmt"
	"strconv"
	"unicode"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Quartz event flags (CGEventFlags). The device-dependent low bits tell left
// from right modifiers, as real keyboards report them.
const (
	flagAlphaShift  uint64 = 0x00010000
	flagShift       uint64 = 0x00020000
	flagControl     uint64 = 0x00040000
	flagAlternate   uint64 = 0x00080000
	flagCommand     uint64 = 0x00100000
	flagNumericPad  uint64 = 0x00200000
	flagSecondaryFn uint64 = 0x00800000

	devLeftControl  uint64 = 0x00000001
	devLeftShift    uint64 = 0x00000002
	devRightShift   uint64 = 0x00000004
	devLeftCommand  uint64 = 0x00000008
	devRightCommand uint64 = 0x00000010
	devLeftOption   uint64 = 0x00000020
	devRightOption  uint64 = 0x00000040
	devRightControl uint64 = 0x00002000
)

// Virtual key codes (kVK_* of Carbon's Events.h) for keys that are not letters,
// digits or punctuation.
const (
	vkReturn        uint16 = 0x24
	vkTab           uint16 = 0x30
	vkSpace         uint16 = 0x31
	vkDelete        uint16 = 0x33 // backspace
	vkEscape        uint16 = 0x35
	vkRightCommand  uint16 = 0x36
	vkCommand       uint16 = 0x37
	vkShift         uint16 = 0x38
	vkCapsLock      uint16 = 0x39
	vkOption        uint16 = 0x3A
	vkControl       uint16 = 0x3B
	vkRightShift    uint16 = 0x3C
	vkRightOption   uint16 = 0x3D
	vkRightControl  uint16 = 0x3E
	vkKeypadClear   uint16 = 0x47
	vkKeypadEnter   uint16 = 0x4C
	vkHelp          uint16 = 0x72 // where PC keyboards have Insert
	vkHome          uint16 = 0x73
	vkPageUp        uint16 = 0x74
	vkForwardDelete uint16 = 0x75
	vkEnd           uint16 = 0x77
	vkPageDown      uint16 = 0x79
	vkLeftArrow     uint16 = 0x7B
	vkRightArrow    uint16 = 0x7C
	vkDownArrow     uint16 = 0x7D
	vkUpArrow       uint16 = 0x7E
)

// functionKeys holds kVK_F1..kVK_F20 in order.
var functionKeys = [20]uint16{
	0x7A, 0x78, 0x63, 0x76, 0x60, 0x61, 0x62, 0x64, 0x65, 0x6D, // F1-F10
	0x67, 0x6F, 0x69, 0x6B, 0x71, 0x6A, 0x40, 0x4F, 0x50, 0x5A, // F11-F20
}

// ansiKeys maps the characters of the US (ANSI) layout to their key codes,
// unshifted.
var ansiKeys = map[rune]uint16{
	'a': 0x00, 's': 0x01, 'd': 0x02, 'f': 0x03, 'h': 0x04, 'g': 0x05, 'z': 0x06, 'x': 0x07,
	'c': 0x08, 'v': 0x09, 'b': 0x0B, 'q': 0x0C, 'w': 0x0D, 'e': 0x0E, 'r': 0x0F, 'y': 0x10,
	't': 0x11, '1': 0x12, '2': 0x13, '3': 0x14, '4': 0x15, '6': 0x16, '5': 0x17, '=': 0x18,
	'9': 0x19, '7': 0x1A, '-': 0x1B, '8': 0x1C, '0': 0x1D, ']': 0x1E, 'o': 0x1F, 'u': 0x20,
	'[': 0x21, 'i': 0x22, 'p': 0x23, 'l': 0x25, 'j': 0x26, '\'': 0x27, 'k': 0x28, ';': 0x29,
	'\\': 0x2A, ',': 0x2B, '/': 0x2C, 'n': 0x2D, 'm': 0x2E, '.': 0x2F, '`': 0x32, ' ': vkSpace,
}

// shiftedANSI maps the characters typed with shift on the US layout to their
// unshifted key.
var shiftedANSI = map[rune]rune{
	'!': '1', '@': '2', '#': '3', '$': '4', '%': '5', '^': '6', '&': '7', '*': '8', '(': '9', ')': '0',
	'_': '-', '+': '=', '{': '[', '}': ']', '|': '\\', ':': ';', '"': '\'', '<': ',', '>': '.', '?': '/', '~': '`',
}

// keySpec says how to press one desktop.Key on a Mac keyboard.
type keySpec struct {
	// code is the virtual key code (kVK_*).
	code uint16
	// flags are added to the event flags while the key is pressed: shift for
	// shifted characters, and the function/numeric-pad bits real keyboards set
	// on navigation and function keys.
	flags uint64
	// modifier is the generic and device flag bits a modifier key sets while
	// held; zero for other keys.
	modifier uint64
}

// namedKeys maps canonical non-character key names to key specs.
var namedKeys = map[desktop.Key]keySpec{
	desktop.Ctrl:       {code: vkControl, modifier: flagControl | devLeftControl},
	"Control_R":        {code: vkRightControl, modifier: flagControl | devRightControl},
	desktop.Shift:      {code: vkShift, modifier: flagShift | devLeftShift},
	"Shift_R":          {code: vkRightShift, modifier: flagShift | devRightShift},
	desktop.Alt:        {code: vkOption, modifier: flagAlternate | devLeftOption},
	"Alt_R":            {code: vkRightOption, modifier: flagAlternate | devRightOption},
	"ISO_Level3_Shift": {code: vkRightOption, modifier: flagAlternate | devRightOption},
	desktop.Super:      {code: vkCommand, modifier: flagCommand | devLeftCommand},
	"Meta_L":           {code: vkCommand, modifier: flagCommand | devLeftCommand},
	"Super_R":          {code: vkRightCommand, modifier: flagCommand | devRightCommand},
	"Caps_Lock":        {code: vkCapsLock, modifier: flagAlphaShift},

	"Return":    {code: vkReturn},
	"KP_Enter":  {code: vkKeypadEnter, flags: flagNumericPad},
	"Tab":       {code: vkTab},
	"Escape":    {code: vkEscape},
	"space":     {code: vkSpace},
	"BackSpace": {code: vkDelete},
	"Delete":    {code: vkForwardDelete, flags: flagSecondaryFn},
	"Insert":    {code: vkHelp, flags: flagSecondaryFn},
	"Home":      {code: vkHome, flags: flagSecondaryFn},
	"End":       {code: vkEnd, flags: flagSecondaryFn},
	"Page_Up":   {code: vkPageUp, flags: flagSecondaryFn},
	"Page_Down": {code: vkPageDown, flags: flagSecondaryFn},
	"Left":      {code: vkLeftArrow, flags: flagSecondaryFn | flagNumericPad},
	"Right":     {code: vkRightArrow, flags: flagSecondaryFn | flagNumericPad},
	"Up":        {code: vkUpArrow, flags: flagSecondaryFn | flagNumericPad},
	"Down":      {code: vkDownArrow, flags: flagSecondaryFn | flagNumericPad},
	"Num_Lock":  {code: vkKeypadClear, flags: flagNumericPad},
}

// lookupKey returns how to press k. ok is false when k is a character the US
// layout has no key for (it is then typed as a Unicode string) or a key Macs
// do not have (err explains which).
func lookupKey(k desktop.Key) (spec keySpec, ok bool, err error) {
	if s, found := namedKeys[k]; found {
		return s, true, nil
	}
	if len(k) >= 2 && k[0] == 'F' {
		if n, err := strconv.Atoi(string(k[1:])); err == nil {
			if n >= 1 && n <= len(functionKeys) {
				return keySpec{code: functionKeys[n-1], flags: flagSecondaryFn}, true, nil
			}
			return keySpec{}, false, fmt.Errorf("key %s has no macOS key code: Mac keyboards have F1-F20", k)
		}
	}
	r, isChar := k.Rune()
	if !isChar {
		return keySpec{}, false, fmt.Errorf("key %q has no macOS key code: use Return, Tab, Escape, BackSpace, Delete, Home, End, Page_Up, Page_Down, arrows, F1-F20, modifiers or a single character", string(k))
	}
	if c, found := ansiKeys[r]; found {
		return keySpec{code: c}, true, nil
	}
	if base, found := shiftedANSI[r]; found {
		return keySpec{code: ansiKeys[base], flags: flagShift | devLeftShift}, true, nil
	}
	if r < unicode.MaxASCII && unicode.IsUpper(r) {
		return keySpec{code: ansiKeys[unicode.ToLower(r)], flags: flagShift | devLeftShift}, true, nil
	}
	switch r {
	case '\n', '\r':
		return namedKeys["Return"], true, nil
	case '\t':
		return namedKeys["Tab"], true, nil
	}
	return keySpec{}, false, nil
}

// modifierState tracks the modifier keys the backend holds and derives the
// event flags from them. It is not safe for concurrent use.
type modifierState struct {
	held map[desktop.Key]uint64
}

// press records k as held when it is a modifier and returns whether it is one.
func (m *modifierState) press(k desktop.Key, spec keySpec) bool {
	if spec.modifier == 0 {
		return false
	}
	if m.held == nil {
		m.held = map[desktop.Key]uint64{}
	}
	m.held[k] = spec.modifier
	return true
}

// release forgets k and returns whether it is a modifier.
func (m *modifierState) release(k desktop.Key, spec keySpec) bool {
	if spec.modifier == 0 {
		return false
	}
	delete(m.held, k)
	return true
}

// flags returns the event flags of the held modifiers.
func (m *modifierState) flags() uint64 {
	var f uint64
	for _, bits := range m.held {
		f |= bits
	}
	return f
}

// reset forgets every held modifier.
func (m *modifierState) reset() { clear(m.held) }
