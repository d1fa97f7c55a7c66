package operate

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
)

// Scope is the release ledger of one caller's run (a flow, a task): what its
// actions left held on purpose (mouse_down without its mouse_up, a key down)
// and Release, which lets go of them when the run ends, however it ends.
// Input held by others (an MCP client's gui_mouse_down) is not touched.
type Scope struct {
	e       *Executor
	mu      sync.Mutex
	buttons []desktop.Button
	keys    []desktop.Key
}

// NewScope returns an empty ledger for one run.
func (e *Executor) NewScope() *Scope { return &Scope{e: e} }

// Release releases what the scope's actions left held, newest first, and
// forgets it. Safe after cancellation and to call twice.
func (s *Scope) Release() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	buttons, keys := s.buttons, s.keys
	s.buttons, s.keys = nil, nil
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), ReleaseTimeout)
	defer cancel()
	heldKeys, heldButtons := s.e.in.Held()
	var errs []error
	for _, b := range slices.Backward(buttons) {
		if slices.Contains(heldButtons, b) {
			errs = append(errs, s.e.in.MouseUp(ctx, nil, b))
		}
	}
	for _, k := range slices.Backward(keys) {
		if slices.Contains(heldKeys, k) {
			errs = append(errs, s.e.in.KeyUp(ctx, k))
		}
	}
	return errors.Join(errs...)
}

// noteHeld updates op's scope after the action and, when input stays held,
// watches the kill switch.
func (e *Executor) noteHeld(op Op, err error) {
	if err == nil && op.Scope != nil {
		s := op.Scope
		s.mu.Lock()
		switch op.Action.Kind {
		case action.MouseDown:
			s.buttons = append(s.buttons, op.Action.ButtonOrLeft())
		case action.MouseUp:
			if i := slices.Index(s.buttons, op.Action.ButtonOrLeft()); i >= 0 {
				s.buttons = slices.Delete(s.buttons, i, i+1)
			}
		}
		s.mu.Unlock()
	}
	e.watchHeld()
}

// watchHeld makes sure that, while anything is held, the kill switch is
// looked at every HeldEvery and, once it engages, everything is released:
// a button held by gui_mouse_down must not stay down while input is halted.
func (e *Executor) watchHeld() {
	if e.o.KillSwitch == nil || !e.holding() || !e.watching.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			e.watchUntilFree()
			e.watching.Store(false)
			// Something pressed just as the watch ended is watched again.
			if !e.holding() || !e.watching.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// watchUntilFree polls until nothing is held, the kill switch engaged (and
// everything was released), or Close.
func (e *Executor) watchUntilFree() {
	t := time.NewTicker(HeldEvery)
	defer t.Stop()
	for e.holding() {
		select {
		case <-e.closed:
			return
		case <-t.C:
		}
		if e.o.KillSwitch.Engaged() {
			keys, buttons := e.in.Held()
			if err := e.in.ReleaseAll(); err != nil {
				e.o.Logger.Warn("the kill switch engaged; releasing held input failed", "err", err)
			} else if len(keys)+len(buttons) > 0 {
				e.o.Logger.Warn("the kill switch engaged: released held input", "keys", keys, "buttons", buttons)
			}
			return
		}
	}
}

func (e *Executor) holding() bool {
	keys, buttons := e.in.Held()
	return len(keys) > 0 || len(buttons) > 0
}
