package mcpserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// httpCallHeader is set by the server (never trusted from the client) on every
// Streamable HTTP POST, so a tool handler knows which HTTP request carried it:
// the go-sdk runs handlers on the session's context, not the request's, and
// passes the request's header along.
const httpCallHeader = "X-Guiagent-Http-Request"

// callTracker keeps a cancel function for every running tool call that came
// over Streamable HTTP, by session and by carrying HTTP request, so that a
// client that goes away (its connection drops mid-call, or it ends its session
// with DELETE) stops its calls.
type callTracker struct {
	seq   atomic.Uint64
	mu    sync.Mutex
	calls map[*trackedCall]struct{}
}

type trackedCall struct {
	session, request string
	cancel           context.CancelFunc
}

// track derives a cancellable context for one call; done must be called when it ends.
func (t *callTracker) track(ctx context.Context, session string, header http.Header) (context.Context, func()) {
	request := ""
	if header != nil {
		request = header.Get(httpCallHeader)
	}
	if session == "" && request == "" {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &trackedCall{session: session, request: request, cancel: cancel}
	t.mu.Lock()
	if t.calls == nil {
		t.calls = map[*trackedCall]struct{}{}
	}
	t.calls[c] = struct{}{}
	t.mu.Unlock()
	return ctx, func() {
		cancel()
		t.mu.Lock()
		delete(t.calls, c)
		t.mu.Unlock()
	}
}

// cancel cancels the running calls that match and reports how many.
func (t *callTracker) cancel(match func(*trackedCall) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for c := range t.calls {
		if match(c) {
			c.cancel()
			n++
		}
	}
	return n
}

// CancelWhenClientGone wraps the Streamable HTTP handler: a DELETE cancels the
// session's running calls before the session closes, and a POST whose client
// connection closed before the call it carried was answered cancels that call
// (without an event store its answer could never be delivered).
func (s *Server) CancelWhenClientGone(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.Header.Get("Mcp-Session-Id")
		switch r.Method {
		case http.MethodDelete:
			if n := s.calls.cancel(func(c *trackedCall) bool { return session != "" && c.session == session }); n > 0 {
				s.log.Info("session deleted by the client; its running calls were cancelled", "session", session, "calls", n)
			}
		case http.MethodPost:
			id := strconv.FormatUint(s.calls.seq.Add(1), 10)
			r.Header.Set(httpCallHeader, id)
			next.ServeHTTP(w, r)
			if r.Context().Err() != nil {
				if n := s.calls.cancel(func(c *trackedCall) bool { return c.request == id }); n > 0 {
					s.log.Info("client went away during a call; the call was cancelled", "session", session, "calls", n)
				}
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}
