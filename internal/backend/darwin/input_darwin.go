package darwin

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf16"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// typingPause is the gap between the keyboard events of TypeText, so that
// applications reading events one by one keep up.
const typingPause = 2 * time.Millisecond

// inputLocked checks that the backend is started and trusted for input.
// Caller holds mu.
func (b *Backend) inputLocked() (*api, error) {
	if err := b.readyLocked(); err != nil {
		return nil, err
	}
	if !b.accessibilityTrusted(false) {
		return nil, accessibilityError()
	}
	return b.sys.api, nil
}

// post sends ev to the HID event tap with flags and releases it.
func (b *Backend) post(a *api, ev uintptr, flags uint64) error {
	if ev == 0 {
		return fmt.Errorf("macOS input: creating the event failed: %w", accessibilityError())
	}
	a.CGEventSetFlags(ev, flags)
	a.CGEventPost(hidEventTap, ev)
	a.CFRelease(ev)
	return nil
}

// location returns the pointer position in global points. Caller holds mu.
func (b *Backend) location(a *api) cgPoint {
	ev := a.CGEventCreate(0)
	if ev == 0 {
		return cgPoint{}
	}
	defer a.CFRelease(ev)
	return a.CGEventGetLocation(ev)
}

// mouseButton returns the Quartz button and its down, up and dragged event types.
func mouseButton(bt desktop.Button) (button, down, up, dragged uint32, err error) {
	switch bt {
	case desktop.Left:
		return mouseButtonLeft, evLeftMouseDown, evLeftMouseUp, evLeftMouseDragged, nil
	case desktop.Right:
		return mouseButtonRight, evRightMouseDown, evRightMouseUp, evRightMouseDragged, nil
	case desktop.Middle:
		return mouseButtonCenter, evOtherMouseDown, evOtherMouseUp, evOtherMouseDragged, nil
	}
	return 0, 0, 0, 0, fmt.Errorf("macOS: unknown mouse button %d: use left, middle or right", bt)
}

// MoveTo moves the pointer to p (global points). While a button is held the
// move is sent as a drag of that button, as applications expect.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a, err := b.inputLocked()
	if err != nil {
		return err
	}
	typ, button := evMouseMoved, mouseButtonLeft
	if len(b.buttons) > 0 {
		button, _, _, typ, _ = mouseButton(b.buttons[0])
	}
	pos := cgPoint{X: float64(p.X), Y: float64(p.Y)}
	b.clicks.moved(pos.X, pos.Y)
	return b.post(a, a.CGEventCreateMouseEvent(b.sys.source, typ, pos, button), b.mods.flags())
}

// ButtonDown presses bt at the current position. Presses of one button at one
// place within the double-click interval count up (double, triple click).
func (b *Backend) ButtonDown(ctx context.Context, bt desktop.Button) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	button, down, _, _, err := mouseButton(bt)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a, err := b.inputLocked()
	if err != nil {
		return err
	}
	pos := b.location(a)
	ev := a.CGEventCreateMouseEvent(b.sys.source, down, pos, button)
	if ev != 0 {
		a.CGEventSetIntegerValueField(ev, fieldMouseClickState, int64(b.clicks.down(bt, pos.X, pos.Y, time.Now())))
	}
	if err := b.post(a, ev, b.mods.flags()); err != nil {
		return err
	}
	if !slices.Contains(b.buttons, bt) {
		b.buttons = append(b.buttons, bt)
	}
	return nil
}

// ButtonUp releases bt at the current position. It ignores ctx cancellation
// so that a release always happens.
func (b *Backend) ButtonUp(ctx context.Context, bt desktop.Button) error {
	button, _, up, _, err := mouseButton(bt)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a, err := b.inputLocked()
	if err != nil {
		return err
	}
	pos := b.location(a)
	ev := a.CGEventCreateMouseEvent(b.sys.source, up, pos, button)
	if ev != 0 {
		a.CGEventSetIntegerValueField(ev, fieldMouseClickState, int64(b.clicks.up(bt)))
	}
	if err := b.post(a, ev, b.mods.flags()); err != nil {
		return err
	}
	if i := slices.Index(b.buttons, bt); i >= 0 {
		b.buttons = slices.Delete(b.buttons, i, i+1)
	}
	return nil
}

// Scroll turns the wheel by notches lines in direction d at the current
// position, one event per notch.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	w1, w2, err := scrollWheels(d)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a, err := b.inputLocked()
	if err != nil {
		return err
	}
	if a.CGEventCreateScrollWheelEvent2 == nil {
		return fmt.Errorf("macOS scroll: CGEventCreateScrollWheelEvent2 is missing (macOS 10.13 or later is needed): %w", desktop.ErrUnsupported)
	}
	for range max(notches, 1) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.post(a, a.CGEventCreateScrollWheelEvent2(b.sys.source, scrollUnitLine, 2, w1, w2, 0), b.mods.flags()); err != nil {
			return err
		}
	}
	return nil
}

// CursorPosition returns the pointer position in global points, rounded.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.readyLocked(); err != nil {
		return geom.GlobalPoint{}, err
	}
	a := b.sys.api
	ev := a.CGEventCreate(0)
	if ev == 0 {
		return geom.GlobalPoint{}, fmt.Errorf("macOS: CGEventCreate failed, so the pointer position is unknown: run guiagent inside a logged-in GUI session")
	}
	defer a.CFRelease(ev)
	return roundPoint(a.CGEventGetLocation(ev)), nil
}

// KeyDown presses k. Modifiers are sent as flag changes and stay in the flags
// of every later event until KeyUp; characters the US layout lacks are sent
// as Unicode text.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.key(k, true)
}

// KeyUp releases k. It ignores ctx cancellation so that a release always
// happens.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	return b.key(k, false)
}

func (b *Backend) key(k desktop.Key, down bool) error {
	spec, known, err := lookupKey(k)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a, err := b.inputLocked()
	if err != nil {
		return err
	}
	if !known { // a character without a US key: send it as text
		r, _ := k.Rune()
		u := utf16Of(r)
		ev := a.CGEventCreateKeyboardEvent(b.sys.source, 0, down)
		if ev != 0 {
			a.CGEventKeyboardSetUnicodeString(ev, uint(len(u)), &u[0])
		}
		return b.post(a, ev, b.mods.flags())
	}
	isMod := false
	if down {
		isMod = b.mods.press(k, spec)
	} else {
		isMod = b.mods.release(k, spec)
	}
	ev := a.CGEventCreateKeyboardEvent(b.sys.source, spec.code, down)
	if isMod {
		if ev != 0 {
			a.CGEventSetType(ev, evFlagsChanged)
		}
		return b.post(a, ev, b.mods.flags())
	}
	return b.post(a, ev, b.mods.flags()|spec.flags)
}

// TypeText types text exactly: runs of characters go as Unicode strings (20
// UTF-16 units per event, independent of the keyboard layout and of held
// modifiers), line breaks as Return and tabs as Tab. Every event is released
// before the next, so nothing stays pressed, even on error.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	steps := planTyping(text)
	b.mu.Lock()
	defer b.mu.Unlock()
	a, err := b.inputLocked()
	if err != nil {
		return err
	}
	for i, st := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("typing stopped after %d of %d steps: %w", i, len(steps), err)
		}
		for _, down := range []bool{true, false} {
			var ev uintptr
			if st.key != "" {
				spec, _, _ := lookupKey(st.key)
				ev = a.CGEventCreateKeyboardEvent(b.sys.source, spec.code, down)
			} else {
				ev = a.CGEventCreateKeyboardEvent(b.sys.source, 0, down)
				if ev != 0 {
					a.CGEventKeyboardSetUnicodeString(ev, uint(len(st.text)), &st.text[0])
				}
			}
			if err := b.post(a, ev, 0); err != nil {
				return err
			}
		}
		time.Sleep(typingPause)
	}
	return nil
}

// utf16Of returns r as UTF-16 code units.
func utf16Of(r rune) []uint16 { return utf16.AppendRune(nil, r) }
