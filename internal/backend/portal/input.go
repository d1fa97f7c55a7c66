package portal

import (
	"context"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Key and button states of the Notify* methods.
const (
	released uint32 = 0
	pressed  uint32 = 1
)

// Axes of NotifyPointerAxisDiscrete.
const (
	axisVertical   uint32 = 0
	axisHorizontal uint32 = 1
)

// releaseTimeout bounds a release sent after the caller's context ended.
const releaseTimeout = 2 * time.Second

// notify calls RemoteDesktop.Notify<method>(session, {}, args...) once the
// session is ready.
func (b *Backend) notify(ctx context.Context, method string, args ...any) error {
	if err := b.rd.ready(ctx); err != nil {
		return err
	}
	b.rd.mu.Lock()
	session := b.rd.session
	b.rd.mu.Unlock()
	call := append([]any{session, map[string]dbus.Variant{}}, args...)
	if err := b.bus.obj.CallWithContext(ctx, ifaceRemote+".Notify"+method, 0, call...).Err; err != nil {
		return fmt.Errorf("portal input: Notify%s: %w", method, describeCallError(err))
	}
	return nil
}

// hold sends a press and notes how to release it; release sends the release
// (even after ctx ended) and forgets it.
func (b *Backend) hold(ctx context.Context, id, method string, code int32) error {
	if err := b.rd.ready(ctx); err != nil {
		return err
	}
	if err := b.notify(ctx, method, code, pressed); err != nil {
		// The press may have gone out before ctx ended: release it.
		_ = b.release(ctx, id, method, code)
		return err
	}
	b.rd.mu.Lock()
	if b.rd.pressed != nil {
		b.rd.pressed[id] = func(ctx context.Context) error { return b.notify(ctx, method, code, released) }
	}
	b.rd.mu.Unlock()
	return nil
}

func (b *Backend) release(ctx context.Context, id, method string, code int32) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	err := b.notify(ctx, method, code, released)
	b.rd.mu.Lock()
	delete(b.rd.pressed, id)
	b.rd.mu.Unlock()
	return err
}

// releaseAll releases every key and button still held (Close, a cancelled run).
func (r *remote) releaseAll() {
	r.mu.Lock()
	held := r.pressed
	r.pressed = map[string]func(context.Context) error{}
	r.mu.Unlock()
	for _, rel := range held {
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		_ = rel(ctx)
		cancel()
	}
}

// MoveTo moves the pointer to p with NotifyPointerMotionAbsolute, relative to
// the monitor stream that contains p.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	if err := b.rd.ready(ctx); err != nil {
		return err
	}
	b.rd.mu.Lock()
	streams := b.rd.streams
	b.rd.mu.Unlock()
	st, ok := streamAt(streams, p)
	if !ok {
		return fmt.Errorf("portal input: %v is on none of the shared monitors (%v): move inside a display (see Displays)", p, streams)
	}
	if err := b.notify(ctx, "PointerMotionAbsolute", st.node, float64(p.X-st.bounds.X), float64(p.Y-st.bounds.Y)); err != nil {
		return err
	}
	b.rd.mu.Lock()
	b.rd.cursor = &p
	b.rd.mu.Unlock()
	return nil
}

// streamAt is the stream whose bounds hold p; a stream of unknown bounds
// (the only one) takes every point.
func streamAt(streams []stream, p geom.GlobalPoint) (stream, bool) {
	for _, s := range streams {
		if s.bounds.Contains(p) || (s.bounds.Empty() && len(streams) == 1) {
			return s, true
		}
	}
	return stream{}, false
}

// CursorPosition is where guiagent last put the pointer: the portal does
// not report the pointer's position.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	b.rd.mu.Lock()
	defer b.rd.mu.Unlock()
	if b.rd.cursor == nil {
		return geom.GlobalPoint{}, fmt.Errorf("portal: the desktop portal does not report the pointer's position, and guiagent has not moved it yet: %w", desktop.ErrUnsupported)
	}
	return *b.rd.cursor, nil
}

func evdevButton(btn desktop.Button) (int32, error) {
	code, err := keysym.EvdevButton(btn)
	if err != nil {
		return 0, fmt.Errorf("portal input: %w", err)
	}
	return int32(code), nil
}

// ButtonDown presses btn (NotifyPointerButton, evdev code, state 1).
func (b *Backend) ButtonDown(ctx context.Context, btn desktop.Button) error {
	code, err := evdevButton(btn)
	if err != nil {
		return err
	}
	return b.hold(ctx, fmt.Sprint("button ", code), "PointerButton", code)
}

// ButtonUp releases btn (state 0), also after ctx ended.
func (b *Backend) ButtonUp(ctx context.Context, btn desktop.Button) error {
	code, err := evdevButton(btn)
	if err != nil {
		return err
	}
	return b.release(ctx, fmt.Sprint("button ", code), "PointerButton", code)
}

// Scroll turns the wheel by notches with NotifyPointerAxisDiscrete: down
// and right are positive steps, as in libinput.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	if notches <= 0 {
		return fmt.Errorf("portal input: scroll by %d notches: give 1 or more", notches)
	}
	axis, steps := axisVertical, int32(notches)
	switch d {
	case desktop.Up:
		steps = -steps
	case desktop.Down:
	case desktop.LeftD:
		axis, steps = axisHorizontal, -steps
	case desktop.RightD:
		axis = axisHorizontal
	default:
		return fmt.Errorf("portal input: unknown scroll direction %q: use up, down, left or right", d)
	}
	return b.notify(ctx, "PointerAxisDiscrete", axis, steps)
}

func keysymOf(k desktop.Key) (int32, error) {
	s, ok := keysym.OfKey(k)
	if !ok {
		return 0, fmt.Errorf("portal input: key %q has no keysym: use a key name such as Control_L, Return, F5 or a single character", k)
	}
	return int32(s), nil
}

// KeyDown presses k (NotifyKeyboardKeysym, state 1).
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	s, err := keysymOf(k)
	if err != nil {
		return err
	}
	return b.hold(ctx, fmt.Sprint("key ", s), "KeyboardKeysym", s)
}

// KeyUp releases k (state 0), also after ctx ended.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	s, err := keysymOf(k)
	if err != nil {
		return err
	}
	return b.release(ctx, fmt.Sprint("key ", s), "KeyboardKeysym", s)
}

// TypeText types text as keysyms, each character pressed and released
// (Latin-1 as itself, others as Unicode keysyms 0x01000000+code point, the
// compositor finding the key). Every character is checked before the first
// is sent; a press is always followed by its release.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	var syms []int32
	for i, r := range text {
		s, ok := keysym.OfRune(r)
		if !ok {
			return fmt.Errorf("portal input: character %U at byte %d cannot be typed: it has no keysym", r, i)
		}
		syms = append(syms, int32(s))
	}
	for _, s := range syms {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := fmt.Sprint("key ", s)
		if err := b.hold(ctx, id, "KeyboardKeysym", s); err != nil {
			return err
		}
		if err := b.release(ctx, id, "KeyboardKeysym", s); err != nil {
			return err
		}
	}
	return nil
}

// EchoesPointer implements desktop.PointerEcho: CursorPosition is where
// guiagent last put the pointer; the platform shows no other.
func (b *Backend) EchoesPointer() bool { return true }
