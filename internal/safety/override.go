package safety

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// ErrHumanOverride is wrapped by the error OverrideWatcher.Check returns when
// someone else moved the pointer.
var ErrHumanOverride = errors.New("human override: the pointer was moved by someone else")

// PointerSource is what OverrideWatcher reads; *desktop.Input implements it.
type PointerSource interface {
	// CursorPosition is where the pointer is now (global logical pixels).
	CursorPosition(ctx context.Context) (geom.GlobalPoint, error)
	// LastPointer is where guiagent last put the pointer, and when.
	LastPointer() (geom.GlobalPoint, time.Time, bool)
}

// OverrideWatcher detects a human taking over the pointer during a task: after
// Arm, the pointer must stay where guiagent's input last put it (or where it was
// at Arm, before guiagent moved it), within a tolerance. It is safe for
// concurrent use.
type OverrideWatcher struct {
	src         PointerSource
	tolerancePx int
	mu          sync.Mutex
	armed       bool
	armedAt     time.Time
	armedPos    geom.GlobalPoint
}

// OverrideError describes a detected takeover; it wraps ErrHumanOverride.
type OverrideError struct {
	// Expected is where guiagent left the pointer; Actual where it is.
	Expected, Actual geom.GlobalPoint
}

// Error says where the pointer was expected and where it is.
func (e *OverrideError) Error() string {
	return fmt.Sprintf("%v: guiagent left it at %v, it is now at %v", ErrHumanOverride, e.Expected, e.Actual)
}

// Unwrap returns ErrHumanOverride.
func (e *OverrideError) Unwrap() error { return ErrHumanOverride }

// NewOverrideWatcher watches src; a pointer farther than tolerancePx (global
// logical pixels, per axis) from where it should be counts as a human; a
// tolerance <= 0 means 4 px.
func NewOverrideWatcher(src PointerSource, tolerancePx int) *OverrideWatcher {
	if tolerancePx <= 0 {
		tolerancePx = 4
	}
	return &OverrideWatcher{src: src, tolerancePx: tolerancePx}
}

// Arm starts watching: the pointer's current position becomes the expected one
// until guiagent moves it. Call it at the start of a task.
func (w *OverrideWatcher) Arm(ctx context.Context) error {
	p, err := w.src.CursorPosition(ctx)
	if err != nil {
		return fmt.Errorf("human-override watcher cannot read the pointer position: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed, w.armedAt, w.armedPos = true, time.Now(), p
	return nil
}

// Expected returns where the pointer should be: guiagent's last move after
// Arm, or the position at Arm.
func (w *OverrideWatcher) Expected() geom.GlobalPoint {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.expectedLocked()
}

func (w *OverrideWatcher) expectedLocked() geom.GlobalPoint {
	if last, at, ok := w.src.LastPointer(); ok && !at.Before(w.armedAt) {
		return last
	}
	return w.armedPos
}

// Check returns an *OverrideError when the pointer is not where guiagent left
// it; nil when it is, when the watcher is not armed, or when the position
// cannot be read (the platform cannot tell).
func (w *OverrideWatcher) Check(ctx context.Context) error {
	w.mu.Lock()
	armed := w.armed
	w.mu.Unlock()
	if !armed {
		return nil
	}
	p, err := w.src.CursorPosition(ctx)
	if err != nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	exp := w.expectedLocked()
	if overrideAbs(p.X-exp.X) > w.tolerancePx || overrideAbs(p.Y-exp.Y) > w.tolerancePx {
		return &OverrideError{Expected: exp, Actual: p}
	}
	return nil
}

// Disarm stops watching (Check returns nil until the next Arm).
func (w *OverrideWatcher) Disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
}

func overrideAbs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
