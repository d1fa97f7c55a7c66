package windows

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// errInputBlocked explains why SendInput inserts fewer events than given.
const errInputBlocked = "input is blocked: the foreground window may belong to an elevated program (UIPI; run guiagent as administrator to drive it) or the secure desktop (UAC prompt, lock screen) is active"

// send injects events with one SendInput call, so that no other input
// interleaves with them. When Windows inserts only part of the batch, what
// the inserted part pressed is released again. Caller holds inMu.
func (b *Backend) send(events []input) error {
	if len(events) == 0 {
		return nil
	}
	n, _, e := procSendInput.Call(uintptr(len(events)), uintptr(unsafe.Pointer(&events[0])), uintptr(inputSize))
	if int(n) == len(events) {
		return nil
	}
	if rel := releasesAfter(events, int(n)); len(rel) > 0 {
		procSendInput.Call(uintptr(len(rel)), uintptr(unsafe.Pointer(&rel[0])), uintptr(inputSize))
	}
	return fmt.Errorf("windows SendInput inserted %d of %d events (%v): %s", n, len(events), e, errInputBlocked)
}

// cursorPhysical returns the cursor position in physical pixels.
func cursorPhysical() (int, int, error) {
	var pt winPoint
	if r, _, e := procGetCursorPos.Call(uintptr(unsafe.Pointer(&pt))); r == 0 {
		return 0, 0, callErr("GetCursorPos", e)
	}
	return int(pt.X), int(pt.Y), nil
}

// MoveTo moves the pointer to p (global logical pixels) with an absolute
// SendInput move over the virtual desktop. A point on no display is clamped
// onto the nearest one. If the cursor does not land on the target physical
// pixel (rounding of normalized coordinates differs between Windows versions),
// SetCursorPos puts it there.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	l, err := b.currentLayout(ctx)
	if err != nil {
		return err
	}
	x, y, clamped := l.toPhysical(p)
	if clamped {
		b.log.Debug("pointer target is on no display; clamped", "global", p.String(), "physical_x", x, "physical_y", y)
	}
	dx, dy := normalizeAbsolute(x, y, virtualScreen())
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if err := b.send([]input{mouseEvent(mouseMove|mouseAbsolute|mouseVirtualDesk, dx, dy, 0)}); err != nil {
		return err
	}
	if cursorReaches(x, y) {
		return nil
	}
	cx, cy, _ := cursorPhysical()
	if r, _, e := procSetCursorPos.Call(uintptr(int32(x)), uintptr(int32(y))); r == 0 {
		return fmt.Errorf("%w (the cursor is at physical %d,%d instead of %d,%d)", callErr("SetCursorPos", e), cx, cy, x, y)
	}
	if !cursorReaches(x, y) {
		cx, cy, _ = cursorPhysical()
		b.log.Debug("the cursor did not reach the target", "physical_x", x, "physical_y", y, "at_x", cx, "at_y", cy)
	}
	return nil
}

// cursorSettle bounds how long MoveTo waits for the cursor to reach its
// target: SendInput only queues the move, and the system (Windows' raw input
// thread, Wine's X11 driver) updates the cursor position a moment later.
const cursorSettle = 100 * time.Millisecond

// cursorReaches reports whether the cursor is at physical (x, y) within cursorSettle.
func cursorReaches(x, y int) bool {
	deadline := time.Now().Add(cursorSettle)
	for {
		if cx, cy, err := cursorPhysical(); err == nil && cx == x && cy == y {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ButtonDown presses a mouse button at the current position. The button is
// logical: with swapped buttons (a left-handed setup) Windows swaps it.
func (b *Backend) ButtonDown(ctx context.Context, bt desktop.Button) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	down, up, err := buttonFlags(bt)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	if err := b.send([]input{mouseEvent(down, 0, 0, 0)}); err != nil {
		return err
	}
	b.buttons[bt] = []input{mouseEvent(up, 0, 0, 0)}
	return nil
}

// ButtonUp releases a mouse button. It ignores ctx cancellation so that a
// release always happens.
func (b *Backend) ButtonUp(ctx context.Context, bt desktop.Button) error {
	if err := b.ready(); err != nil {
		return err
	}
	_, up, err := buttonFlags(bt)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	delete(b.buttons, bt)
	return b.send([]input{mouseEvent(up, 0, 0, 0)})
}

// Scroll turns the wheel by notches in direction d at the current position.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ev, err := scrollEvents(d, notches)
	if err != nil {
		return err
	}
	b.inMu.Lock()
	defer b.inMu.Unlock()
	return b.send(ev)
}

// CursorPosition returns the pointer position in global logical pixels.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	l, err := b.currentLayout(ctx)
	if err != nil {
		return geom.GlobalPoint{}, err
	}
	x, y, err := cursorPhysical()
	if err != nil {
		return geom.GlobalPoint{}, err
	}
	return l.toLogical(x, y), nil
}
