package x11

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// XTEST FakeInput event types.
const (
	fakeKeyPress      = xproto.KeyPress
	fakeKeyRelease    = xproto.KeyRelease
	fakeButtonPress   = xproto.ButtonPress
	fakeButtonRelease = xproto.ButtonRelease
	fakeMotion        = xproto.MotionNotify
)

// fake sends one XTEST event and waits until the server processed it.
func (b *Backend) fake(typ byte, detail byte, x, y int) error {
	if err := b.ready(); err != nil {
		return err
	}
	if !b.hasXTest {
		return fmt.Errorf("x11 input: the XTEST extension is missing on %s: %w (start the server with +extension XTEST)", b.DisplayName(), desktop.ErrUnsupported)
	}
	err := xtest.FakeInputChecked(b.conn, typ, detail, 0, b.root, int16(x), int16(y), 0).Check()
	if err != nil {
		return fmt.Errorf("x11 XTEST FakeInput: %w", err)
	}
	return nil
}

// MoveTo moves the pointer to p (global pixels).
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x, y := b.toRoot(p)
	return b.fake(fakeMotion, 0, x, y)
}

func buttonCode(bt desktop.Button) (byte, error) {
	switch bt {
	case desktop.Left:
		return 1, nil
	case desktop.Middle:
		return 2, nil
	case desktop.Right:
		return 3, nil
	}
	return 0, fmt.Errorf("x11: unknown mouse button %d: use left, middle or right", bt)
}

// ButtonDown presses a mouse button at the current position.
func (b *Backend) ButtonDown(ctx context.Context, bt desktop.Button) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	code, err := buttonCode(bt)
	if err != nil {
		return err
	}
	return b.fake(fakeButtonPress, code, 0, 0)
}

// ButtonUp releases a mouse button. It ignores ctx cancellation so that a
// release always happens.
func (b *Backend) ButtonUp(ctx context.Context, bt desktop.Button) error {
	code, err := buttonCode(bt)
	if err != nil {
		return err
	}
	return b.fake(fakeButtonRelease, code, 0, 0)
}

// Scroll turns the wheel: buttons 4/5 are up/down, 6/7 left/right; one click per notch.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	var code byte
	switch d {
	case desktop.Up:
		code = 4
	case desktop.Down:
		code = 5
	case desktop.LeftD:
		code = 6
	case desktop.RightD:
		code = 7
	default:
		return fmt.Errorf("x11: unknown scroll direction %q: use up, down, left or right", d)
	}
	for range max(notches, 1) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.fake(fakeButtonPress, code, 0, 0); err != nil {
			return err
		}
		if err := b.fake(fakeButtonRelease, code, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// CursorPosition returns the pointer position in global pixels.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	if err := b.ready(); err != nil {
		return geom.GlobalPoint{}, err
	}
	rep, err := xproto.QueryPointer(b.conn, b.root).Reply()
	if err != nil {
		return geom.GlobalPoint{}, fmt.Errorf("x11 QueryPointer: %w", err)
	}
	return b.fromRoot(int(rep.RootX), int(rep.RootY)), nil
}

// resolveKey returns the keycode for k and whether Shift must be held. A key
// missing from the keymap is mapped onto a spare keycode for the backend's
// lifetime (restored at Close). Caller holds kbdMu.
func (b *Backend) resolveKey(k desktop.Key) (xproto.Keycode, bool, error) {
	sym, err := keyKeysym(k)
	if err != nil {
		return 0, false, err
	}
	if err := b.refreshKeymap(); err != nil {
		return 0, false, err
	}
	if kc, shift, ok := b.keymap.find(sym); ok {
		return kc, shift, nil
	}
	if kc, ok := b.sticky[sym]; ok {
		return kc, false, nil
	}
	spare := b.spareCodes()
	if len(spare) == 0 {
		return 0, false, fmt.Errorf("x11: key %q is not on the keyboard map and no spare keycode is free to map it", string(k))
	}
	kc := spare[0]
	if err := b.mapKeycodes(map[xproto.Keycode]xproto.Keysym{kc: sym}); err != nil {
		return 0, false, err
	}
	b.sticky[sym] = kc
	return kc, false, nil
}

func (b *Backend) refreshKeymap() error {
	if !b.keymap.stale.Load() {
		return nil
	}
	return b.keymap.load(b.conn, b.setup)
}

// shiftSym is the keysym of the left Shift key, the level modifier KeyDown and
// TypeText press for shifted characters.
const shiftSym xproto.Keysym = 0xffe1

// pressCode presses kc on behalf of one more holder. A keycode already held
// (by another KeyDown) is only counted, unless again is set: then the press is
// sent anyway (the server treats it as a repeat). Caller holds kbdMu.
func (b *Backend) pressCode(kc xproto.Keycode, again bool) error {
	if b.down[kc] == 0 || again {
		if err := b.fake(fakeKeyPress, byte(kc), 0, 0); err != nil {
			return err
		}
	}
	b.down[kc]++
	return nil
}

// releaseCode drops one holder of kc and releases the keycode when it was the
// last. A failed release keeps the count, so a retry releases it. Caller holds kbdMu.
func (b *Backend) releaseCode(kc xproto.Keycode) error {
	switch b.down[kc] {
	case 0:
		return nil
	case 1:
		if err := b.fake(fakeKeyRelease, byte(kc), 0, 0); err != nil {
			return err
		}
		delete(b.down, kc)
	default:
		b.down[kc]--
	}
	return nil
}

// KeyDown presses k. A character that needs Shift (such as "A" or "!") presses
// Shift first unless Shift is already held. The keycodes pressed are recorded,
// so KeyUp releases exactly those even when the keyboard mapping changed
// meanwhile.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	if err := b.ready(); err != nil {
		return err
	}
	kc, shift, err := b.resolveKey(k)
	if err != nil {
		return err
	}
	var codes []xproto.Keycode // in press order: level modifier, then the key
	if shift {
		skc, _, ok := b.keymap.find(shiftSym)
		if !ok {
			return fmt.Errorf("x11: key %q needs Shift, but Shift is not on the keyboard map: restore the keyboard layout (setxkbmap us)", string(k))
		}
		if err := b.pressCode(skc, false); err != nil {
			return err
		}
		codes = append(codes, skc)
	}
	if err := b.pressCode(kc, true); err != nil {
		for _, c := range codes {
			err = errors.Join(err, b.releaseCode(c))
		}
		return err
	}
	b.held[k] = append(b.held[k], append(codes, kc))
	return nil
}

// KeyUp releases k: the keycodes its latest KeyDown pressed (and the Shift it
// pressed for it, unless Shift is still held otherwise), whatever the keyboard
// mapping is now. A key this backend did not press is released by its current
// keycode. It ignores ctx cancellation so that a release always happens.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	if err := b.ready(); err != nil {
		return err
	}
	presses := b.held[k]
	if len(presses) == 0 {
		kc, _, err := b.resolveKey(k)
		if err != nil {
			return err
		}
		if b.down[kc] > 0 {
			return nil // held through another key name: its KeyUp releases it
		}
		return b.fake(fakeKeyRelease, byte(kc), 0, 0)
	}
	codes := presses[len(presses)-1]
	for i := len(codes) - 1; i >= 0; i-- {
		if err := b.releaseCode(codes[i]); err != nil {
			presses[len(presses)-1] = codes[:i+1] // retried by the next KeyUp(k)
			return err
		}
	}
	if len(presses) == 1 {
		delete(b.held, k)
	} else {
		b.held[k] = presses[:len(presses)-1]
	}
	return nil
}

// releaseHeld releases every keycode KeyDown pressed and KeyUp has not
// released. Caller holds kbdMu.
func (b *Backend) releaseHeld() error {
	var errs []error
	for kc := range b.down {
		if err := b.fake(fakeKeyRelease, byte(kc), 0, 0); err != nil {
			errs = append(errs, fmt.Errorf("x11: release keycode %d: %w", kc, err))
		}
	}
	clear(b.down)
	clear(b.held)
	return errors.Join(errs...)
}

// spareCodes returns the keycodes without keysyms that no held key uses,
// highest first. Caller holds kbdMu.
func (b *Backend) spareCodes() []xproto.Keycode {
	return slices.DeleteFunc(b.keymap.spare(), func(kc xproto.Keycode) bool { return b.down[kc] > 0 })
}

// mapKeycodes sets each keycode's keysyms (both shift levels) and waits until
// the server applied the change. Caller holds kbdMu.
func (b *Backend) mapKeycodes(m map[xproto.Keycode]xproto.Keysym) error {
	for kc, sym := range m {
		syms := make([]xproto.Keysym, b.keymap.per)
		syms[0] = sym
		if len(syms) > 1 {
			syms[1] = sym
		}
		if err := xproto.ChangeKeyboardMappingChecked(b.conn, 1, kc, byte(b.keymap.per), syms).Check(); err != nil {
			return fmt.Errorf("x11: map keycode %d to keysym 0x%x: %w", kc, uint32(sym), err)
		}
		b.keymap.set(kc, syms)
	}
	return nil
}

// clearKeycodes removes every keysym from codes (restoring spare keycodes). Caller holds kbdMu.
func (b *Backend) clearKeycodes(codes []xproto.Keycode) error {
	var errs []error
	for _, kc := range codes {
		syms := make([]xproto.Keysym, b.keymap.per)
		if err := xproto.ChangeKeyboardMappingChecked(b.conn, 1, kc, byte(b.keymap.per), syms).Check(); err != nil {
			errs = append(errs, fmt.Errorf("x11: restore keycode %d: %w", kc, err))
			continue
		}
		b.keymap.set(kc, syms)
	}
	return errors.Join(errs...)
}
