package wayland

import (
	"context"
	"errors"
	"fmt"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// cursorPos is where this backend last put the pointer (Wayland lets no
// client read the pointer's position).
type cursorPos struct{ at geom.GlobalPoint }

// pointer returns the virtual pointer, created on first use. Caller holds ptrMu.
func (b *Backend) pointer() (uint32, error) {
	if b.ptr != 0 {
		return b.ptr, nil
	}
	if b.ptrErr != nil {
		return 0, b.ptrErr
	}
	mgr, _, err := b.bind(ifVirtualPointer, nil)
	if err != nil {
		return 0, err
	}
	b.regMu.Lock()
	seat := b.bound[ifSeat]
	b.regMu.Unlock()
	if err := b.c.send(mgr, 0, seat, newObj{out: &b.ptr}); err != nil {
		return 0, err
	}
	return b.ptr, nil
}

// absolute returns the motion_absolute arguments that put the pointer on the
// centre of global logical pixel p: positions in half pixels of the layout's
// bounding box, so that rounding in the compositor cannot move it to the
// neighbour pixel.
func absolute(ps []place, origin, p geom.GlobalPoint) (x, y, w, h uint32, err error) {
	var box geom.Rect
	on := false
	for i, pl := range ps {
		r := pl.logical
		if i == 0 {
			box = r
		} else {
			x0, y0 := min(box.X, r.X), min(box.Y, r.Y)
			x1, y1 := max(box.X+box.W, r.X+r.W), max(box.Y+box.H, r.Y+r.H)
			box = geom.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
		}
		on = on || r.Contains(geom.GlobalPoint{X: p.X + origin.X, Y: p.Y + origin.Y})
	}
	if !on {
		return 0, 0, 0, 0, fmt.Errorf("wayland: point %v lies on no output: %w", p, geom.ErrOutside)
	}
	lx, ly := p.X+origin.X-box.X, p.Y+origin.Y-box.Y
	return uint32(2*lx + 1), uint32(2*ly + 1), uint32(2 * box.W), uint32(2 * box.H), nil
}

// MoveTo moves the pointer to p (global logical pixels) with
// zwlr_virtual_pointer_v1's absolute motion over the output layout.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ps, origin := b.places()
	x, y, w, h, err := absolute(ps, origin, p)
	if err != nil {
		return err
	}
	b.ptrMu.Lock()
	defer b.ptrMu.Unlock()
	ptr, err := b.pointer()
	if err != nil {
		return err
	}
	if err := b.c.send(ptr, 1, b.now(), x, y, w, h); err != nil {
		return err
	}
	if err := b.c.send(ptr, 4); err != nil { // frame
		return err
	}
	b.cursor = &cursorPos{at: p}
	return b.c.roundtrip(ctx)
}

func buttonCode(bt desktop.Button) (uint32, error) {
	code, err := keysym.EvdevButton(bt)
	if err != nil {
		return 0, fmt.Errorf("wayland: %w", err)
	}
	return code, nil
}

// button sends one button event. Caller holds ptrMu.
func (b *Backend) button(bt desktop.Button, pressed bool) error {
	code, err := buttonCode(bt)
	if err != nil {
		return err
	}
	ptr, err := b.pointer()
	if err != nil {
		return err
	}
	state := uint32(0)
	if pressed {
		state = 1
	}
	if err := b.c.send(ptr, 2, b.now(), code, state); err != nil {
		return err
	}
	if err := b.c.send(ptr, 4); err != nil {
		return err
	}
	b.btns[bt] = pressed
	return b.c.roundtrip(context.Background())
}

// ButtonDown presses a mouse button at the current position.
func (b *Backend) ButtonDown(ctx context.Context, bt desktop.Button) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.ptrMu.Lock()
	defer b.ptrMu.Unlock()
	return b.button(bt, true)
}

// ButtonUp releases a mouse button. It ignores ctx cancellation so that a
// release always happens.
func (b *Backend) ButtonUp(ctx context.Context, bt desktop.Button) error {
	b.ptrMu.Lock()
	defer b.ptrMu.Unlock()
	return b.button(bt, false)
}

// Scroll turns the wheel one discrete step (15 units, as libinput's wheel
// click) per notch: vertical axis for up and down, horizontal for left and right.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	var axis uint32
	sign := 1
	switch d {
	case desktop.Up:
		sign = -1
	case desktop.Down:
	case desktop.LeftD:
		axis, sign = 1, -1
	case desktop.RightD:
		axis = 1
	default:
		return fmt.Errorf("wayland: unknown scroll direction %q: use up, down, left or right", d)
	}
	b.ptrMu.Lock()
	defer b.ptrMu.Unlock()
	ptr, err := b.pointer()
	if err != nil {
		return err
	}
	for range max(notches, 1) {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := b.now()
		err := errors.Join(
			b.c.send(ptr, 5, uint32(0)),                            // axis_source(wheel)
			b.c.send(ptr, 7, t, axis, fixed(15*sign), int32(sign)), // axis_discrete
			b.c.send(ptr, 4),                                       // frame
		)
		if err != nil {
			return err
		}
	}
	return b.c.roundtrip(ctx)
}

// CursorPosition returns where this backend last moved the pointer: Wayland
// gives no client the pointer's position, so before the first MoveTo it is
// an error, and a pointer a person moved since is not seen.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	b.ptrMu.Lock()
	defer b.ptrMu.Unlock()
	if b.cursor == nil {
		return geom.GlobalPoint{}, fmt.Errorf("wayland: the pointer position is unknown until guiagent first moves it (Wayland shows clients no pointer position): %w", desktop.ErrUnsupported)
	}
	return b.cursor.at, nil
}

// releaseButtons releases every button this backend holds.
func (b *Backend) releaseButtons() error {
	b.ptrMu.Lock()
	defer b.ptrMu.Unlock()
	var errs []error
	for bt, down := range b.btns {
		if down {
			errs = append(errs, b.button(bt, false))
		}
	}
	return errors.Join(errs...)
}

// releaseAll releases every held key and button.
func (b *Backend) releaseAll() error {
	return errors.Join(b.releaseButtons(), b.releaseKeys())
}

// EchoesPointer implements desktop.PointerEcho: CursorPosition is where
// guiagent last put the pointer; the platform shows no other.
func (b *Backend) EchoesPointer() bool { return true }
