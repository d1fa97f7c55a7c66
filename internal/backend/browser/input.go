package browser

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// inputState is what the page's input has seen: the pointer, the buttons
// and modifiers held, the last press (for click counts). Guarded by
// Backend.mu.
type inputState struct {
	x, y      float64
	buttons   int // the protocol's bitmask: left 1, right 2, middle 4
	mods      int // Alt 1, Ctrl 2, Meta 4, Shift 8
	lastPress time.Time
	lastBtn   desktop.Button
	lastAt    geom.GlobalPoint
	count     int
}

// doubleClickTime and doubleClickSlop bound a multi-click.
const (
	doubleClickTime = 500 * time.Millisecond
	doubleClickSlop = 4
	wheelNotch      = 100 // CSS pixels a wheel notch scrolls
)

func buttonName(b desktop.Button) (string, int) {
	switch b {
	case desktop.Right:
		return "right", 2
	case desktop.Middle:
		return "middle", 4
	}
	return "left", 1
}

// input sends one Input.* event to the active tab.
func (b *Backend) input(ctx context.Context, method string, p map[string]any) error {
	t, err := b.current(ctx)
	if err != nil {
		return err
	}
	return b.explain(t.s.call(ctx, method, p, nil))
}

// MoveTo implements desktop.Pointer: a mouseMoved, so hover works.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	b.mu.Lock()
	b.in.x, b.in.y = float64(p.X), float64(p.Y)
	ev := map[string]any{"type": "mouseMoved", "x": p.X, "y": p.Y, "buttons": b.in.buttons, "modifiers": b.in.mods}
	if name := heldButton(b.in.buttons); name != "" {
		ev["button"] = name
	}
	b.mu.Unlock()
	return b.input(ctx, "Input.dispatchMouseEvent", ev)
}

func heldButton(mask int) string {
	switch {
	case mask&1 != 0:
		return "left"
	case mask&2 != 0:
		return "right"
	case mask&4 != 0:
		return "middle"
	}
	return ""
}

// ButtonDown implements desktop.Pointer. Presses of the same button at the
// same place within doubleClickTime count up (clickCount), so a double
// click is one.
func (b *Backend) ButtonDown(ctx context.Context, btn desktop.Button) error {
	name, bit := buttonName(btn)
	b.mu.Lock()
	at := geom.GlobalPoint{X: int(b.in.x), Y: int(b.in.y)}
	now := time.Now()
	if btn == b.in.lastBtn && now.Sub(b.in.lastPress) < doubleClickTime &&
		abs(at.X-b.in.lastAt.X) <= doubleClickSlop && abs(at.Y-b.in.lastAt.Y) <= doubleClickSlop {
		b.in.count++
	} else {
		b.in.count = 1
	}
	b.in.lastPress, b.in.lastBtn, b.in.lastAt = now, btn, at
	b.in.buttons |= bit
	ev := map[string]any{"type": "mousePressed", "x": b.in.x, "y": b.in.y, "button": name,
		"buttons": b.in.buttons, "clickCount": b.in.count, "modifiers": b.in.mods}
	b.mu.Unlock()
	return b.input(ctx, "Input.dispatchMouseEvent", ev)
}

// ButtonUp implements desktop.Pointer.
func (b *Backend) ButtonUp(ctx context.Context, btn desktop.Button) error {
	name, bit := buttonName(btn)
	b.mu.Lock()
	b.in.buttons &^= bit
	count := b.in.count
	if count == 0 {
		count = 1
	}
	ev := map[string]any{"type": "mouseReleased", "x": b.in.x, "y": b.in.y, "button": name,
		"buttons": b.in.buttons, "clickCount": count, "modifiers": b.in.mods}
	b.mu.Unlock()
	return b.input(ctx, "Input.dispatchMouseEvent", ev)
}

// Scroll implements desktop.Pointer: one mouseWheel of wheelNotch CSS
// pixels per notch.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	dx, dy := 0, 0
	switch d {
	case desktop.Up:
		dy = -wheelNotch
	case desktop.Down:
		dy = wheelNotch
	case desktop.LeftD:
		dx = -wheelNotch
	case desktop.RightD:
		dx = wheelNotch
	default:
		return fmt.Errorf("unknown scroll direction %q", d)
	}
	for i := 0; i < notches; i++ {
		b.mu.Lock()
		ev := map[string]any{"type": "mouseWheel", "x": b.in.x, "y": b.in.y, "deltaX": dx, "deltaY": dy,
			"buttons": b.in.buttons, "modifiers": b.in.mods}
		b.mu.Unlock()
		if err := b.input(ctx, "Input.dispatchMouseEvent", ev); err != nil {
			return err
		}
	}
	return nil
}

// CursorPosition implements desktop.Pointer: where the pointer was put last.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return geom.GlobalPoint{X: int(math.Round(b.in.x)), Y: int(math.Round(b.in.y))}, nil
}

// keyDef is a key as the protocol names it.
type keyDef struct {
	key, code string
	vk        int
	text      string
	location  int
	mod       int // the modifier bit it holds
}

var namedKeys = map[desktop.Key]keyDef{
	"Return": {key: "Enter", code: "Enter", vk: 13, text: "\r"}, "KP_Enter": {key: "Enter", code: "NumpadEnter", vk: 13, text: "\r", location: 3},
	"Tab": {key: "Tab", code: "Tab", vk: 9}, "Escape": {key: "Escape", code: "Escape", vk: 27},
	"BackSpace": {key: "Backspace", code: "Backspace", vk: 8}, "Delete": {key: "Delete", code: "Delete", vk: 46},
	"Insert": {key: "Insert", code: "Insert", vk: 45}, "Home": {key: "Home", code: "Home", vk: 36}, "End": {key: "End", code: "End", vk: 35},
	"Page_Up": {key: "PageUp", code: "PageUp", vk: 33}, "Page_Down": {key: "PageDown", code: "PageDown", vk: 34},
	"Left": {key: "ArrowLeft", code: "ArrowLeft", vk: 37}, "Up": {key: "ArrowUp", code: "ArrowUp", vk: 38},
	"Right": {key: "ArrowRight", code: "ArrowRight", vk: 39}, "Down": {key: "ArrowDown", code: "ArrowDown", vk: 40},
	"space":     {key: " ", code: "Space", vk: 32, text: " "},
	"Caps_Lock": {key: "CapsLock", code: "CapsLock", vk: 20}, "Num_Lock": {key: "NumLock", code: "NumLock", vk: 144},
	"Scroll_Lock": {key: "ScrollLock", code: "ScrollLock", vk: 145}, "Print": {key: "PrintScreen", code: "PrintScreen", vk: 44},
	"Menu": {key: "ContextMenu", code: "ContextMenu", vk: 93}, "Pause": {key: "Pause", code: "Pause", vk: 19},
	desktop.Ctrl: {key: "Control", code: "ControlLeft", vk: 17, location: 1, mod: 2}, "Control_R": {key: "Control", code: "ControlRight", vk: 17, location: 2, mod: 2},
	desktop.Shift: {key: "Shift", code: "ShiftLeft", vk: 16, location: 1, mod: 8}, "Shift_R": {key: "Shift", code: "ShiftRight", vk: 16, location: 2, mod: 8},
	desktop.Alt: {key: "Alt", code: "AltLeft", vk: 18, location: 1, mod: 1}, "Alt_R": {key: "Alt", code: "AltRight", vk: 18, location: 2, mod: 1},
	"ISO_Level3_Shift": {key: "AltGraph", code: "AltRight", vk: 225, location: 2},
	desktop.Super:      {key: "Meta", code: "MetaLeft", vk: 91, location: 1, mod: 4}, "Super_R": {key: "Meta", code: "MetaRight", vk: 92, location: 2, mod: 4},
	"Meta_L":               {key: "Meta", code: "MetaLeft", vk: 91, location: 1, mod: 4},
	"XF86AudioRaiseVolume": {key: "AudioVolumeUp", code: "AudioVolumeUp", vk: 175},
	"XF86AudioLowerVolume": {key: "AudioVolumeDown", code: "AudioVolumeDown", vk: 174},
	"XF86AudioMute":        {key: "AudioVolumeMute", code: "AudioVolumeMute", vk: 173},
}

// punct maps US-layout punctuation to its code, virtual key and shifted form.
var punct = map[rune]struct {
	code    string
	vk      int
	shifted bool
}{
	'-': {"Minus", 189, false}, '_': {"Minus", 189, true}, '=': {"Equal", 187, false}, '+': {"Equal", 187, true},
	'[': {"BracketLeft", 219, false}, '{': {"BracketLeft", 219, true}, ']': {"BracketRight", 221, false}, '}': {"BracketRight", 221, true},
	'\\': {"Backslash", 220, false}, '|': {"Backslash", 220, true}, ';': {"Semicolon", 186, false}, ':': {"Semicolon", 186, true},
	'\'': {"Quote", 222, false}, '"': {"Quote", 222, true}, ',': {"Comma", 188, false}, '<': {"Comma", 188, true},
	'.': {"Period", 190, false}, '>': {"Period", 190, true}, '/': {"Slash", 191, false}, '?': {"Slash", 191, true},
	'`': {"Backquote", 192, false}, '~': {"Backquote", 192, true},
	'!': {"Digit1", 49, true}, '@': {"Digit2", 50, true}, '#': {"Digit3", 51, true}, '$': {"Digit4", 52, true},
	'%': {"Digit5", 53, true}, '^': {"Digit6", 54, true}, '&': {"Digit7", 55, true}, '*': {"Digit8", 56, true},
	'(': {"Digit9", 57, true}, ')': {"Digit0", 48, true},
}

// keyFor returns the protocol's description of k with modifiers mods held.
func keyFor(k desktop.Key, mods int) (keyDef, error) {
	if d, ok := namedKeys[k]; ok {
		return d, nil
	}
	if len(k) > 1 && k[0] == 'F' {
		var n int
		if _, err := fmt.Sscanf(string(k), "F%d", &n); err == nil && n >= 1 && n <= 24 {
			return keyDef{key: string(k), code: string(k), vk: 111 + n}, nil
		}
	}
	r, ok := k.Rune()
	if !ok {
		return keyDef{}, fmt.Errorf("key %q: %w", string(k), desktop.ErrUnsupported)
	}
	shift := mods&8 != 0
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		up := unicode.ToUpper(r)
		ch := unicode.ToLower(r)
		if shift || unicode.IsUpper(r) {
			ch = up
		}
		return keyDef{key: string(ch), code: "Key" + string(up), vk: int(up), text: string(ch)}, nil
	case r >= '0' && r <= '9':
		return keyDef{key: string(r), code: "Digit" + string(r), vk: int(r), text: string(r)}, nil
	}
	if p, ok := punct[r]; ok {
		return keyDef{key: string(r), code: p.code, vk: p.vk, text: string(r)}, nil
	}
	return keyDef{key: string(r), text: string(r)}, nil
}

// KeyDown implements desktop.Keyboard: a keyDown with the key's text when
// it types (no ctrl, alt or meta held), else a rawKeyDown; a modifier
// joins the held set.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	b.mu.Lock()
	d, err := keyFor(k, b.in.mods)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	b.in.mods |= d.mod
	ev := map[string]any{"type": "rawKeyDown", "key": d.key, "code": d.code, "windowsVirtualKeyCode": d.vk,
		"nativeVirtualKeyCode": d.vk, "modifiers": b.in.mods, "location": d.location}
	if d.text != "" && b.in.mods&(1|2|4) == 0 {
		ev["type"], ev["text"], ev["unmodifiedText"] = "keyDown", d.text, d.text
	}
	b.mu.Unlock()
	return b.input(ctx, "Input.dispatchKeyEvent", ev)
}

// KeyUp implements desktop.Keyboard.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	b.mu.Lock()
	d, err := keyFor(k, b.in.mods)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	b.in.mods &^= d.mod
	ev := map[string]any{"type": "keyUp", "key": d.key, "code": d.code, "windowsVirtualKeyCode": d.vk,
		"nativeVirtualKeyCode": d.vk, "modifiers": b.in.mods, "location": d.location}
	b.mu.Unlock()
	return b.input(ctx, "Input.dispatchKeyEvent", ev)
}

// TypeText implements desktop.Keyboard: Input.insertText, any Unicode, no
// key pressed and no clipboard used. Newlines and tabs are pressed as
// Return and Tab, as a user types them.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	for text != "" {
		i := strings.IndexAny(text, "\n\t")
		chunk := text
		if i >= 0 {
			chunk = text[:i]
		}
		if chunk != "" {
			if err := b.input(ctx, "Input.insertText", map[string]any{"text": chunk}); err != nil {
				return err
			}
		}
		if i < 0 {
			return nil
		}
		k := desktop.Key("Return")
		if text[i] == '\t' {
			k = "Tab"
		}
		if err := b.KeyDown(ctx, k); err != nil {
			return err
		}
		if err := b.KeyUp(ctx, k); err != nil {
			return err
		}
		text = text[i+1:]
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

var (
	_ desktop.Pointer  = (*Backend)(nil)
	_ desktop.Keyboard = (*Backend)(nil)
)
