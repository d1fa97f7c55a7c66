package mcpserver

import (
	"slices"
	"sync"

	"github.com/guiagent/guiagent/internal/ask"
)

// askers are the ask channels of the input calls in flight: what a page's
// dialog, raised by one of them, can ask the calling client's user
// (ActiveAskChannel). Safe for concurrent use; the zero value is ready.
type askers struct {
	mu   sync.Mutex
	next int
	held []heldAsker
}

type heldAsker struct {
	id int
	ch ask.Channel
}

// hold adds ch (nil: nothing) while a call runs; the function it returns
// takes it away again.
func (a *askers) hold(ch ask.Channel) func() {
	if ch == nil {
		return func() {}
	}
	a.mu.Lock()
	a.next++
	id := a.next
	a.held = append(a.held, heldAsker{id, ch})
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.held = slices.DeleteFunc(a.held, func(h heldAsker) bool { return h.id == id })
	}
}

// ActiveAskChannel is the ask channel of the latest input call still in
// flight whose client can be asked, or nil: a page's dialog, which an input
// call raised and which holds that call until it is answered, asks there.
func (s *Server) ActiveAskChannel() ask.Channel {
	s.askers.mu.Lock()
	defer s.askers.mu.Unlock()
	if n := len(s.askers.held); n > 0 {
		return s.askers.held[n-1].ch
	}
	return nil
}
