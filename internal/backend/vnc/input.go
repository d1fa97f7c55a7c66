package vnc

import (
	"context"
	"fmt"
	"unicode"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// RFB button mask bits: buttons 1-3, and the wheel as buttons 4-7.
const (
	maskLeft   = 1 << 0
	maskMiddle = 1 << 1
	maskRight  = 1 << 2
)

var wheelMask = map[desktop.Direction]uint8{desktop.Up: 1 << 3, desktop.Down: 1 << 4, desktop.LeftD: 1 << 5, desktop.RightD: 1 << 6}

func buttonMask(bt desktop.Button) (uint8, error) {
	switch bt {
	case desktop.Left:
		return maskLeft, nil
	case desktop.Middle:
		return maskMiddle, nil
	case desktop.Right:
		return maskRight, nil
	}
	return 0, fmt.Errorf("vnc: unknown mouse button %d: use left, middle or right", bt)
}

// writePointer sends a PointerEvent. Caller holds inMu.
func (b *Backend) writePointer(mask uint8, p geom.GlobalPoint) error {
	return b.writeMsg(pointerEventMsg(mask, p.X, p.Y))
}

// writeKey sends a KeyEvent.
func (b *Backend) writeKey(down bool, keysym uint32) error {
	return b.writeMsg(keyEventMsg(down, keysym))
}

// MoveTo moves the pointer to p (global pixels = framebuffer pixels).
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s := b.size(); p.X < 0 || p.Y < 0 || p.X >= s.W || p.Y >= s.H {
		return fmt.Errorf("vnc: point %v is outside the remote screen (%dx%d): give a point inside the display", p, s.W, s.H)
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if err := b.writePointer(b.mask, p); err != nil {
		return err
	}
	b.pos = p
	return nil
}

// ButtonDown presses a mouse button at the current position.
func (b *Backend) ButtonDown(ctx context.Context, bt desktop.Button) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m, err := buttonMask(bt)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if err := b.writePointer(b.mask|m, b.pos); err != nil {
		return err
	}
	b.mask |= m
	return nil
}

// ButtonUp releases a mouse button. It ignores ctx cancellation so that a
// release always happens.
func (b *Backend) ButtonUp(ctx context.Context, bt desktop.Button) error {
	if err := b.ready(); err != nil {
		return err
	}
	m, err := buttonMask(bt)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	b.mask &^= m
	return b.writePointer(b.mask, b.pos)
}

// Scroll turns the wheel by notches at the current position: each notch is a
// press and a release of wheel button 4 (up), 5 (down), 6 (left) or 7 (right).
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	if err := b.ready(); err != nil {
		return err
	}
	wm, ok := wheelMask[d]
	if !ok {
		return fmt.Errorf("vnc: unknown scroll direction %q: use up, down, left or right", d)
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	for i := 0; i < notches; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.writePointer(b.mask|wm, b.pos); err != nil {
			return err
		}
		if err := b.writePointer(b.mask, b.pos); err != nil {
			return err
		}
	}
	return nil
}

// CursorPosition returns the last pointer position this client sent: RFB does
// not report where the remote pointer is. Before the first move it is (0,0).
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	if err := b.ready(); err != nil {
		return geom.GlobalPoint{}, err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	return b.pos, nil
}

// shiftHeld reports whether this client holds a Shift key. Caller holds inMu.
func (b *Backend) shiftHeld() bool {
	_, l := b.keysyms[desktop.Shift]
	_, r := b.keysyms["Shift_R"]
	return l || r
}

// KeyDown presses k. A letter pressed while this client holds Shift is sent
// as its upper-case keysym, as a keyboard would produce it: servers that
// compare keysyms with the Shift state (Xvnc) would otherwise release Shift
// around the key.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sym, err := keyKeysym(k)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if r, ok := k.Rune(); ok && b.shiftHeld() && unicode.IsLower(r) {
		if u := unicode.ToUpper(r); u != r {
			if s, ok := keysym.OfRune(u); ok {
				sym = s
			}
		}
	}
	if err := b.writeKey(true, sym); err != nil {
		return err
	}
	b.keysyms[k] = sym
	return nil
}

// KeyUp releases k (with the keysym its KeyDown sent). It ignores ctx
// cancellation so that a release always happens.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	if err := b.ready(); err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	sym, ok := b.keysyms[k]
	if !ok {
		var err error
		if sym, err = keyKeysym(k); err != nil {
			return err
		}
	}
	delete(b.keysyms, k)
	return b.writeKey(false, sym)
}

// TypeText types text key by key: each character is sent as its keysym
// (Latin-1 characters directly, others as 0x01000000 + code point, newline as
// Return, tab as Tab), pressed and released. The server maps keysyms onto its
// own keyboard layout, so what arrives depends on it (see the package
// documentation). The clipboard is never used. Control characters other than
// newline, tab and backspace are rejected before anything is sent.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	if err := b.ready(); err != nil {
		return err
	}
	type stroke struct {
		sym   uint32
		shift bool
	}
	strokes := make([]stroke, 0, len(text))
	for _, r := range text {
		s, ok := keysym.OfRune(r)
		if !ok {
			return fmt.Errorf("vnc: cannot type the control character U+%04X: remove it from the text (use a key press for special keys)", r)
		}
		strokes = append(strokes, stroke{s, unicode.IsUpper(r) && unicode.ToLower(r) != r})
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	const shiftL = 0xffe1
	for _, st := range strokes {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Upper-case letters go with Shift held, as a keyboard types them:
		// left alone, a server may toggle Caps Lock to reach the letter
		// (Xvnc does) and leave it on after the text.
		shift := st.shift && !b.shiftHeld()
		if shift {
			if err := b.writeKey(true, shiftL); err != nil {
				return err
			}
		}
		err := b.writeKey(true, st.sym)
		if err == nil {
			err = b.writeKey(false, st.sym)
		}
		if shift {
			if uerr := b.writeKey(false, shiftL); err == nil {
				err = uerr
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keyKeysym returns the keysym for a desktop.Key.
func keyKeysym(k desktop.Key) (uint32, error) {
	if s, ok := keysym.OfKey(k); ok {
		return s, nil
	}
	return 0, fmt.Errorf("vnc: unknown key %q: use a name like Return, ctrl, F5 or a single character", string(k))
}

// EchoesPointer implements desktop.PointerEcho: CursorPosition is where
// guiagent last put the pointer; the platform shows no other.
func (b *Backend) EchoesPointer() bool { return true }
