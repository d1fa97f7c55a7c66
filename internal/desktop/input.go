package desktop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// Input performs composite actions (click, drag, hotkey, type...) on a backend's
// primitives, one action at a time, and keeps a ledger of every key and button it
// pressed. Whatever an action leaves pressed because of cancellation, an error or
// a panic is released before the action returns; ReleaseAll releases what is held
// on purpose (mouse_down, hold_key) at shutdown or cancellation.
//
// Input is safe for concurrent use: actions are serialized, so input from two
// callers never interleaves inside one action.
type Input struct {
	screen Screen
	ptr    Pointer
	kbd    Keyboard

	// Gate, when set, is called before every primitive; an error (kill switch,
	// policy) stops the action and releases what it pressed.
	Gate func(ctx context.Context) error
	// Ledger, when set, keeps the held keys and buttons in a file written
	// before each press, so a killed process's next start can release them.
	Ledger *Ledger

	mu      sync.Mutex
	keys    []Key
	buttons []Button
	last    geom.GlobalPoint
	lastSet bool
	lastAt  time.Time
	typing  bool
}

// ErrNoInput is returned when the backend cannot inject input.
var ErrNoInput = fmt.Errorf("input injection: %w", ErrUnsupported)

// NewInput wraps s. Pointer and Keyboard are found by type assertion; actions
// needing a missing capability return ErrNoInput.
func NewInput(s Screen) *Input {
	in := &Input{screen: s}
	in.ptr, _ = s.(Pointer)
	in.kbd, _ = s.(Keyboard)
	return in
}

// Screen returns the wrapped backend.
func (in *Input) Screen() Screen { return in.screen }

// Held returns the keys and buttons currently pressed according to the ledger.
func (in *Input) Held() ([]Key, []Button) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.keys), slices.Clone(in.buttons)
}

// LastPointer returns where Input last put the pointer and when.
func (in *Input) LastPointer() (geom.GlobalPoint, time.Time, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.last, in.lastAt, in.lastSet
}

// do runs one action under the lock. On error or panic everything the action
// pressed is released; keep lists what may stay held on success.
func (in *Input) do(ctx context.Context, needPtr, needKbd bool, fn func(ctx context.Context) error) (err error) {
	if (needPtr && in.ptr == nil) || (needKbd && in.kbd == nil) {
		return ErrNoInput
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	heldKeys, heldButtons := len(in.keys), len(in.buttons)
	defer func() {
		p := recover()
		if p != nil || err != nil {
			// Release only what this action pressed; a context error must not stop the release.
			in.releaseFrom(heldKeys, heldButtons)
		}
		if p != nil {
			panic(p)
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(ctx)
}

// persist writes the ledger file (when there is one). Caller holds mu.
func (in *Input) persist() error {
	if in.Ledger == nil {
		return nil
	}
	return in.Ledger.save(in.screen.Name(), in.keys, in.buttons, in.typing)
}

func (in *Input) gate(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if in.Gate != nil {
		return in.Gate(ctx)
	}
	return nil
}

// releaseFrom releases keys and buttons pressed after the given ledger lengths,
// newest first. Caller holds mu.
func (in *Input) releaseFrom(nKeys, nButtons int) error {
	bg, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var errs []error
	for len(in.buttons) > nButtons {
		b := in.buttons[len(in.buttons)-1]
		in.buttons = in.buttons[:len(in.buttons)-1]
		if in.ptr != nil {
			errs = append(errs, in.ptr.ButtonUp(bg, b))
		}
	}
	for len(in.keys) > nKeys {
		k := in.keys[len(in.keys)-1]
		in.keys = in.keys[:len(in.keys)-1]
		if in.kbd != nil {
			errs = append(errs, in.kbd.KeyUp(bg, k))
		}
	}
	if nKeys == 0 && nButtons == 0 {
		in.typing = false
	}
	errs = append(errs, in.persist())
	return errors.Join(errs...)
}

// ReleaseAll releases every key and button the ledger holds. It is safe to call
// at any time, including after cancellation.
func (in *Input) ReleaseAll() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.releaseFrom(0, 0)
}

func (in *Input) keyDown(ctx context.Context, k Key) error {
	if err := in.gate(ctx); err != nil {
		return err
	}
	// Enter the ledger first, so a backend that panics after pressing is still released.
	in.keys = append(in.keys, k)
	if err := in.persist(); err != nil {
		in.keys = in.keys[:len(in.keys)-1]
		return err
	}
	if err := in.kbd.KeyDown(ctx, k); err != nil {
		in.keys = in.keys[:len(in.keys)-1]
		return err
	}
	return nil
}

// keyUp releases k and leaves the ledger only once the release succeeded, so a
// failed release is retried when the action unwinds or at ReleaseAll.
func (in *Input) keyUp(ctx context.Context, k Key) error {
	if err := in.kbd.KeyUp(context.WithoutCancel(ctx), k); err != nil {
		return err
	}
	if i := slices.Index(in.keys, k); i >= 0 {
		in.keys = slices.Delete(in.keys, i, i+1)
	}
	return in.persist()
}

func (in *Input) buttonDown(ctx context.Context, b Button) error {
	if err := in.gate(ctx); err != nil {
		return err
	}
	in.buttons = append(in.buttons, b)
	if err := in.persist(); err != nil {
		in.buttons = in.buttons[:len(in.buttons)-1]
		return err
	}
	if err := in.ptr.ButtonDown(ctx, b); err != nil {
		in.buttons = in.buttons[:len(in.buttons)-1]
		return err
	}
	return nil
}

// buttonUp releases b; like keyUp, the ledger forgets b only after success.
func (in *Input) buttonUp(ctx context.Context, b Button) error {
	if err := in.ptr.ButtonUp(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	if i := slices.Index(in.buttons, b); i >= 0 {
		in.buttons = slices.Delete(in.buttons, i, i+1)
	}
	return in.persist()
}

func (in *Input) moveTo(ctx context.Context, p geom.GlobalPoint) error {
	if err := in.gate(ctx); err != nil {
		return err
	}
	if err := in.ptr.MoveTo(ctx, p); err != nil {
		return err
	}
	in.last, in.lastSet, in.lastAt = p, true, time.Now()
	return nil
}

// withModifiers presses mods, runs fn, and releases mods in reverse order.
func (in *Input) withModifiers(ctx context.Context, mods []Key, fn func() error) error {
	n := len(in.keys)
	for _, m := range mods {
		if err := in.keyDown(ctx, m); err != nil {
			return err
		}
	}
	err := fn()
	rerr := in.releaseFrom(n, len(in.buttons))
	if err != nil {
		return err
	}
	return rerr
}

// Move puts the pointer at p, holding mods (if any) while it moves; they
// are released afterwards, through the ledger.
func (in *Input) Move(ctx context.Context, p geom.GlobalPoint, mods ...Key) error {
	return in.do(ctx, true, len(mods) > 0, func(ctx context.Context) error {
		if len(mods) == 0 {
			return in.moveTo(ctx, p)
		}
		return in.withModifiers(ctx, mods, func() error { return in.moveTo(ctx, p) })
	})
}

// Click moves to p (when not nil) and clicks b count times (1-3) while holding mods.
func (in *Input) Click(ctx context.Context, p *geom.GlobalPoint, b Button, count int, mods []Key) error {
	if count < 1 || count > 3 {
		return fmt.Errorf("clicks must be 1, 2 or 3, got %d", count)
	}
	return in.do(ctx, true, len(mods) > 0, func(ctx context.Context) error {
		if p != nil {
			if err := in.moveTo(ctx, *p); err != nil {
				return err
			}
		}
		if mt, ok := in.screen.(MultiTapper); ok && count > 1 && b == Left && len(mods) == 0 {
			// A finger's double tap is one gesture: two taps sent apart are
			// too slow for the phone to see one.
			if err := in.gate(ctx); err != nil {
				return err
			}
			at, err := in.ptr.CursorPosition(ctx)
			if err != nil {
				return err
			}
			return mt.MultiTap(ctx, at, count)
		}
		return in.withModifiers(ctx, mods, func() error {
			for range count {
				if err := in.buttonDown(ctx, b); err != nil {
					return err
				}
				if err := in.buttonUp(ctx, b); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// MouseDown moves to p (when not nil) and presses b, leaving it held.
func (in *Input) MouseDown(ctx context.Context, p *geom.GlobalPoint, b Button) error {
	if h, ok := CapabilityOf[Holder](in.screen); ok {
		if err := h.CanHold(ctx); err != nil {
			return err
		}
	}
	return in.do(ctx, true, false, func(ctx context.Context) error {
		if p != nil {
			if err := in.moveTo(ctx, *p); err != nil {
				return err
			}
		}
		return in.buttonDown(ctx, b)
	})
}

// MouseUp moves to p (when not nil) and releases b.
func (in *Input) MouseUp(ctx context.Context, p *geom.GlobalPoint, b Button) error {
	return in.do(ctx, true, false, func(ctx context.Context) error {
		if p != nil {
			if err := in.moveTo(ctx, *p); err != nil {
				return err
			}
		}
		return in.buttonUp(ctx, b)
	})
}

// Drag presses b at from, moves along path points (may be empty) to to, and
// releases, holding mods (if any) from before the press until after the
// release; the ledger releases everything on a failure.
func (in *Input) Drag(ctx context.Context, from geom.GlobalPoint, path []geom.GlobalPoint, to geom.GlobalPoint, b Button, mods ...Key) error {
	return in.do(ctx, true, len(mods) > 0, func(ctx context.Context) error {
		if err := in.moveTo(ctx, from); err != nil {
			return err
		}
		if len(mods) == 0 {
			return in.drag(ctx, from, path, to, b)
		}
		return in.withModifiers(ctx, mods, func() error { return in.drag(ctx, from, path, to, b) })
	})
}

// drag is Drag once the pointer is at from.
func (in *Input) drag(ctx context.Context, from geom.GlobalPoint, path []geom.GlobalPoint, to geom.GlobalPoint, b Button) error {
	if err := in.buttonDown(ctx, b); err != nil {
		return err
	}
	pts := path
	if len(pts) == 0 { // a few intermediate motions so apps see a drag
		const steps = 8
		for i := 1; i < steps; i++ {
			pts = append(pts, geom.GlobalPoint{
				X: from.X + (to.X-from.X)*i/steps, Y: from.Y + (to.Y-from.Y)*i/steps})
		}
	}
	for _, q := range append(pts, to) {
		if err := in.moveTo(ctx, q); err != nil {
			return err
		}
		sleep(ctx, 5*time.Millisecond)
	}
	return in.buttonUp(ctx, b)
}

// Scroll moves to p (when not nil) and turns the wheel notches times in d, holding mods.
func (in *Input) Scroll(ctx context.Context, p *geom.GlobalPoint, d Direction, notches int, mods []Key) error {
	if notches < 1 {
		notches = 1
	}
	return in.do(ctx, true, len(mods) > 0, func(ctx context.Context) error {
		if p != nil {
			if err := in.moveTo(ctx, *p); err != nil {
				return err
			}
		}
		return in.withModifiers(ctx, mods, func() error {
			if err := in.gate(ctx); err != nil {
				return err
			}
			return in.ptr.Scroll(ctx, d, notches)
		})
	})
}

// Hotkey presses keys in order and releases them in reverse order.
func (in *Input) Hotkey(ctx context.Context, keys []Key) error {
	return in.do(ctx, false, true, func(ctx context.Context) error {
		n := len(in.keys)
		for _, k := range keys {
			if err := in.keyDown(ctx, k); err != nil {
				return err
			}
		}
		return in.releaseFrom(n, len(in.buttons))
	})
}

// PressKey taps k repeat times (at least once) while holding mods.
func (in *Input) PressKey(ctx context.Context, k Key, repeat int, mods []Key) error {
	repeat = max(repeat, 1)
	return in.do(ctx, false, true, func(ctx context.Context) error {
		return in.withModifiers(ctx, mods, func() error {
			for range repeat {
				if err := in.keyDown(ctx, k); err != nil {
					return err
				}
				if err := in.keyUp(ctx, k); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// KeyDown presses k and leaves it held (hold_key); ReleaseAll or KeyUp releases it.
func (in *Input) KeyDown(ctx context.Context, k Key) error {
	return in.do(ctx, false, true, func(ctx context.Context) error { return in.keyDown(ctx, k) })
}

// KeyUp releases k.
func (in *Input) KeyUp(ctx context.Context, k Key) error {
	return in.do(ctx, false, true, func(ctx context.Context) error { return in.keyUp(ctx, k) })
}

// Type enters text exactly.
func (in *Input) Type(ctx context.Context, text string) error {
	return in.do(ctx, false, true, func(ctx context.Context) error {
		if err := in.gate(ctx); err != nil {
			return err
		}
		in.typing = true // TypeText presses keys of its own
		if err := in.persist(); err != nil {
			in.typing = false
			return err
		}
		err := in.kbd.TypeText(ctx, text)
		in.typing = false
		return errors.Join(err, in.persist())
	})
}

// ObservesPointer reports whether CursorPosition sees the real pointer,
// wherever anyone moved it, rather than echoing guiagent's own moves
// (PointerEcho).
func (in *Input) ObservesPointer() bool {
	if in.ptr == nil {
		return false
	}
	e, ok := in.ptr.(PointerEcho)
	return !ok || !e.EchoesPointer()
}

// CursorPosition returns the pointer's global position.
func (in *Input) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	if in.ptr == nil {
		return geom.GlobalPoint{}, ErrNoInput
	}
	return in.ptr.CursorPosition(ctx)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
