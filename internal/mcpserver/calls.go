package mcpserver

import (
	"context"
	"net/http"
	"sync"
)

// callTracker keeps a cancel function for every running tool call per MCP
// session, so that a Streamable HTTP client that goes away (its connection
// drops mid-call, or it ends its session with DELETE) stops its calls: the
// go-sdk runs handlers on the session's context, not the request's.
type callTracker struct {
	mu    sync.Mutex
	next  uint64
	calls map[string]map[uint64]context.CancelFunc
}

// track derives a cancellable context for one call of session; done must be called when it ends.
func (t *callTracker) track(ctx context.Context, session string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls == nil {
		t.calls = map[string]map[uint64]context.CancelFunc{}
	}
	t.next++
	id := t.next
	if t.calls[session] == nil {
		t.calls[session] = map[uint64]context.CancelFunc{}
	}
	t.calls[session][id] = cancel
	return ctx, func() {
		cancel()
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.calls[session], id)
		if len(t.calls[session]) == 0 {
			delete(t.calls, session)
		}
	}
}

// cancelSession cancels every running call of session and reports how many.
func (t *callTracker) cancelSession(session string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, cancel := range t.calls[session] {
		cancel()
		n++
	}
	return n
}

// cancelWhenClientGone wraps the Streamable HTTP handler: a DELETE cancels the
// session's running calls before the session closes, and a POST whose client
// connection closed before its answer was written cancels them too (without an
// event store the answer could never be delivered).
func (s *Server) cancelWhenClientGone(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id != "" && r.Method == http.MethodDelete {
			if n := s.calls.cancelSession(id); n > 0 {
				s.log.Info("session deleted by the client; its running calls were cancelled", "session", id, "calls", n)
			}
		}
		next.ServeHTTP(w, r)
		if id != "" && r.Method == http.MethodPost && r.Context().Err() != nil {
			if n := s.calls.cancelSession(id); n > 0 {
				s.log.Info("client went away during a call; its running calls were cancelled", "session", id, "calls", n)
			}
		}
	})
}
