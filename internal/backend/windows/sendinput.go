package windows

import "unsafe"

// INPUT.type values.
const (
	inputMouse    = 0
	inputKeyboard = 1
)

// MOUSEINPUT.dwFlags values.
const (
	mouseMove        = 0x0001
	mouseLeftDown    = 0x0002
	mouseLeftUp      = 0x0004
	mouseRightDown   = 0x0008
	mouseRightUp     = 0x0010
	mouseMiddleDown  = 0x0020
	mouseMiddleUp    = 0x0040
	mouseWheel       = 0x0800
	mouseHWheel      = 0x1000
	mouseVirtualDesk = 0x4000
	mouseAbsolute    = 0x8000
)

// KEYBDINPUT.dwFlags values.
const (
	keyExtended = 0x0001
	keyUp       = 0x0002
	keyUnicode  = 0x0004
)

// wheelDelta is one wheel notch (WHEEL_DELTA).
const wheelDelta = 120

// mouseInput is MOUSEINPUT.
type mouseInput struct {
	Dx, Dy      int32
	MouseData   uint32
	Flags       uint32
	Time        uint32
	DwExtraInfo uintptr
}

// keybdInput is KEYBDINPUT. It is stored in the union of input, whose largest
// member is MOUSEINPUT.
type keybdInput struct {
	VK          uint16
	Scan        uint16
	Flags       uint32
	Time        uint32
	DwExtraInfo uintptr
}

// input is INPUT: a type tag and a union whose largest member, MOUSEINPUT,
// gives it its size and alignment (40 bytes on 64-bit Windows, 28 on 32-bit).
type input struct {
	Type  uint32
	Mouse mouseInput
}

// key returns the keyboard view of the union.
func (in *input) key() *keybdInput { return (*keybdInput)(unsafe.Pointer(&in.Mouse)) }

// inputSize is the cbSize SendInput expects.
const inputSize = int(unsafe.Sizeof(input{}))

// mouseEvent returns a mouse INPUT.
func mouseEvent(flags uint32, dx, dy int32, data uint32) input {
	return input{Type: inputMouse, Mouse: mouseInput{Dx: dx, Dy: dy, MouseData: data, Flags: flags}}
}

// keyEvent returns a keyboard INPUT for a virtual key with its scan code.
func keyEvent(k vkKey, scan uint16, up bool) input {
	in := input{Type: inputKeyboard}
	kb := in.key()
	kb.VK, kb.Scan = k.VK, scan
	if k.Extended {
		kb.Flags |= keyExtended
	}
	if up {
		kb.Flags |= keyUp
	}
	return in
}

// unicodeEvent returns a KEYEVENTF_UNICODE keyboard INPUT for one UTF-16 unit.
func unicodeEvent(unit uint16, up bool) input {
	in := input{Type: inputKeyboard}
	kb := in.key()
	kb.Scan, kb.Flags = unit, keyUnicode
	if up {
		kb.Flags |= keyUp
	}
	return in
}

// mouseUpFor maps each button-down flag to its button-up flag.
var mouseUpFor = map[uint32]uint32{
	mouseLeftDown: mouseLeftUp, mouseRightDown: mouseRightUp, mouseMiddleDown: mouseMiddleUp,
}

// releasesAfter returns the events that release what events[:sent] left
// pressed (keys or buttons pressed there and not released there), newest
// first. SendInput may insert only part of a batch (when UIPI blocks it or the
// input desktop changes); these undo the part that went through.
func releasesAfter(events []input, sent int) []input {
	sent = min(max(sent, 0), len(events))
	type keyID struct {
		vk, scan uint16
		unicode  bool
	}
	var keys []keyID
	var keyEvents []input
	var buttons []uint32
	for i := range events[:sent] {
		e := &events[i]
		switch e.Type {
		case inputKeyboard:
			kb := e.key()
			id := keyID{kb.VK, kb.Scan, kb.Flags&keyUnicode != 0}
			if kb.VK != 0 {
				id.scan = 0
			}
			if kb.Flags&keyUp == 0 {
				keys = append(keys, id)
				keyEvents = append(keyEvents, *e)
				continue
			}
			for j := len(keys) - 1; j >= 0; j-- {
				if keys[j] == id {
					keys = append(keys[:j], keys[j+1:]...)
					keyEvents = append(keyEvents[:j], keyEvents[j+1:]...)
					break
				}
			}
		case inputMouse:
			f := e.Mouse.Flags
			for down, up := range mouseUpFor {
				if f&down != 0 {
					buttons = append(buttons, up)
				}
				if f&up != 0 {
					for j := len(buttons) - 1; j >= 0; j-- {
						if buttons[j] == up {
							buttons = append(buttons[:j], buttons[j+1:]...)
							break
						}
					}
				}
			}
		}
	}
	var out []input
	for j := len(keyEvents) - 1; j >= 0; j-- {
		e := keyEvents[j]
		e.key().Flags |= keyUp
		out = append(out, e)
	}
	for j := len(buttons) - 1; j >= 0; j-- {
		out = append(out, mouseEvent(buttons[j], 0, 0, 0))
	}
	return out
}
