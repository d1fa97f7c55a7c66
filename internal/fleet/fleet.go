// Package fleet serves MCP over Streamable HTTP with a private desktop per
// session (serve --http --desktop-per-session): each session's initialize
// starts its desktop and its own mcpserver.Server, every later request of the
// session goes to that server, and the session's end destroys the desktop.
package fleet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/mcpserver"
)

// Desktop is one MCP session's private desktop and the server that acts only
// on it (serve --http --desktop-per-session).
type Desktop struct {
	// Server serves the session; it was built with Options.SessionID and
	// Options.RecordID set to the ids Open was given, and its screen, input,
	// frames and task gate are this desktop's alone.
	Server *mcpserver.Server
	// Display names the desktop (the X display, e.g. ":123").
	Display string
	// Size is the desktop's screen size in pixels.
	Size geom.Size
	// Close stops what runs on the desktop and the desktop itself, and removes
	// its files. The fleet calls it once, when the session ends or never started.
	Close func() error
}

// DesktopInfo describes a live desktop (dashboard, logs). It names the
// session by its record id, never by its Mcp-Session-Id.
type DesktopInfo struct {
	ID      string    `json:"id"`
	Display string    `json:"display"`
	Width   int       `json:"width"`
	Height  int       `json:"height"`
	Started time.Time `json:"started"`
	// Ready is false while the desktop is being started for a session that
	// is initializing.
	Ready bool `json:"ready"`
}

// Options configures a Fleet. Open is required.
type Options struct {
	// Open starts a new private desktop for the MCP session sessionID and
	// builds its server (with Options.SessionID = sessionID and
	// Options.RecordID = recordID). The record id, drawn at random apart from
	// the session id, is what names the session anywhere but in the
	// session's own HTTP exchange (records, files, logs, dashboard): the
	// session id is its credential. Open must clean up after itself when it fails.
	Open func(ctx context.Context, sessionID, recordID string) (*Desktop, error)
	// Max caps the live desktops: a new session beyond it is refused with 503
	// naming the limit. Zero means the number of CPUs.
	Max int
	// Logger receives the fleet's logs; nil discards them.
	Logger *slog.Logger
	// OnChange, when set, is called with the number of live desktops after
	// each start and end (for a metrics gauge).
	OnChange func(live int)
}

// Fleet serves MCP over Streamable HTTP with a private desktop per session:
// a session's initialize request starts its desktop, every later request of
// the session goes to that desktop's server, and the desktop is destroyed
// when the session ends (DELETE, idle timeout, or its client found gone by
// the keep-alive ping of Options.KeepAlive).
type Fleet struct {
	opts Options
	log  *slog.Logger
	// front carries the HTTP checks (token, Host, Origin), which need no desktop.
	front hosting.Guard

	mu       sync.Mutex
	desktops map[string]*fleetDesktop
	closed   bool
	wg       sync.WaitGroup
}

type fleetDesktop struct {
	id      string // the Mcp-Session-Id
	record  string // the record id
	started time.Time
	d       *Desktop // nil while starting
	handler http.Handler
}

// New validates o and returns a Fleet with no desktop.
func New(o Options) (*Fleet, error) {
	if o.Open == nil {
		return nil, errors.New("fleet: Options.Open is required")
	}
	if o.Max <= 0 {
		o.Max = runtime.NumCPU()
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Fleet{opts: o, log: log, front: hosting.Guard{Log: log}, desktops: map[string]*fleetDesktop{}}, nil
}

// Max returns the cap on live desktops.
func (f *Fleet) Max() int { return f.opts.Max }

// Desktops lists the live desktops, oldest first.
func (f *Fleet) Desktops() []DesktopInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]DesktopInfo, 0, len(f.desktops))
	for _, fd := range f.desktops {
		di := DesktopInfo{ID: fd.record, Started: fd.started}
		if fd.d != nil {
			di.Display, di.Width, di.Height, di.Ready = fd.d.Display, fd.d.Size.W, fd.d.Size.H, true
		}
		out = append(out, di)
	}
	slices.SortFunc(out, func(a, b DesktopInfo) int { return a.Started.Compare(b.Started) })
	return out
}

// Desktop returns the live desktop of the session whose record id is id.
func (f *Fleet) Desktop(id string) (*Desktop, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fd := range f.desktops {
		if fd.record == id && fd.d != nil {
			return fd.d, true
		}
	}
	return nil, false
}

// Ready reports whether every live desktop answers a capture (true with none).
func (f *Fleet) Ready(ctx context.Context) error {
	f.mu.Lock()
	var ds []*fleetDesktop
	for _, fd := range f.desktops {
		if fd.d != nil {
			ds = append(ds, fd)
		}
	}
	f.mu.Unlock()
	var errs []error
	for _, fd := range ds {
		if err := fd.d.Server.Ready(ctx); err != nil {
			errs = append(errs, fmt.Errorf("desktop %s of session %s: %w", fd.d.Display, fd.record, err))
		}
	}
	return errors.Join(errs...)
}

type fleetServerKey struct{}

// isInitialize reports whether a JSON-RPC body (one message or a batch)
// carries an initialize request.
func isInitialize(body []byte) bool {
	type msg struct {
		Method string `json:"method"`
	}
	var one msg
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []msg
	if json.Unmarshal(body, &batch) != nil {
		return false
	}
	for _, m := range batch {
		if m.Method == "initialize" {
			return true
		}
	}
	return false
}

// NewHTTPHandler returns the HTTP handler of the fleet: as Server.NewHTTPHandler
// (token, Host and Origin checks, body limit, health, metrics, dashboard), with
// each new MCP session on a desktop of its own. o.MaxSessions is ignored: the
// fleet's Max caps the sessions.
func (f *Fleet) NewHTTPHandler(o hosting.HTTPOptions) (http.Handler, error) {
	o = o.WithDefaults()
	if o.Token == "" {
		return nil, hosting.ErrNoToken
	}
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(fleetServerKey{}).(*mcpserver.Server); ok {
			return s.MCP()
		}
		return nil
	}, &mcp.StreamableHTTPOptions{
		Logger:              f.log.With("component", "mcp-http"),
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxBodyBytes,
	})
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			f.mu.Lock()
			fd := f.desktops[id]
			f.mu.Unlock()
			if fd == nil || fd.d == nil {
				http.Error(w, "not found: no such MCP session (it ended, and its desktop with it); start a new session", http.StatusNotFound)
				return
			}
			fd.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), fleetServerKey{}, fd.d.Server)))
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "bad request: send initialize (POST) first; this request has no Mcp-Session-Id", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "bad request: reading the body: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !isInitialize(body) {
			// Stateless requests (such as SEP-2575 server/discover) have no
			// session to give a desktop to: the client falls back to initialize.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"this server gives each MCP session a desktop of its own: start with initialize (no Mcp-Session-Id); requests without a session are not served"}}`))
			return
		}
		f.open(w, r, sdk)
	})
	return f.front.Wrap(o, f.front.RequireToken(o.Token, route), f.Ready)
}

// open starts a desktop for a request without a session id, lets the SDK
// serve it (an initialize creates the session) and keeps the desktop for the
// session's life, or destroys it at once when no session was created.
func (f *Fleet) open(w http.ResponseWriter, r *http.Request, sdk http.Handler) {
	id, fd, err := f.reserve()
	if err != nil {
		f.log.Warn("MCP session refused", "why", err, "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "30")
		http.Error(w, "service unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	start := time.Now()
	d, err := f.opts.Open(r.Context(), id, fd.record)
	if err != nil {
		f.release(id)
		f.log.Error("starting a desktop for a new MCP session failed", "session", fd.record, "err", err)
		http.Error(w, "internal error: starting a private desktop for this session failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	f.mu.Lock()
	fd.d, fd.handler = d, d.Server.CancelWhenClientGone(sdk)
	live := len(f.desktops)
	f.mu.Unlock()
	f.log.Info("desktop started for a new MCP session", "session", fd.record, "display", d.Display, "ms", time.Since(start).Milliseconds(), "live", live)
	fd.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), fleetServerKey{}, d.Server)))
	var ss *mcp.ServerSession
	for s := range d.Server.MCP().Sessions() {
		ss = s
	}
	if ss == nil {
		f.end(id, "the first request did not start a session (it was not a valid initialize)")
		return
	}
	f.changed()
	f.wg.Go(func() {
		_ = ss.Wait()
		f.end(id, "the session ended")
	})
}

// reserve claims a desktop slot, a new session id (128 random bits: the
// session's credential, unguessable) and a record id drawn apart from it, or
// says why not.
func (f *Fleet) reserve() (string, *fleetDesktop, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("making a session id: %w", err)
	}
	id := hex.EncodeToString(b)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return "", nil, errors.New("the server is shutting down")
	}
	if n := len(f.desktops); n >= f.opts.Max {
		return "", nil, fmt.Errorf("all %d desktops are in use (--max-desktops %d); end a session (HTTP DELETE with its Mcp-Session-Id), wait for one to end, or raise --max-desktops", n, f.opts.Max)
	}
	fd := &fleetDesktop{id: id, record: mcpserver.NewRecordID(), started: time.Now()}
	f.desktops[id] = fd
	return id, fd, nil
}

func (f *Fleet) release(id string) {
	f.mu.Lock()
	delete(f.desktops, id)
	f.mu.Unlock()
	f.changed()
}

// end destroys session id's desktop.
func (f *Fleet) end(id, why string) {
	f.mu.Lock()
	fd := f.desktops[id]
	delete(f.desktops, id)
	f.mu.Unlock()
	if fd == nil || fd.d == nil {
		return
	}
	f.changed()
	fd.d.Server.ReleaseAll()
	if err := fd.d.Close(); err != nil {
		f.log.Warn("closing a session's desktop failed", "session", fd.record, "display", fd.d.Display, "err", err)
	}
	f.log.Info("desktop destroyed", "session", fd.record, "display", fd.d.Display, "why", why)
}

func (f *Fleet) changed() {
	if f.opts.OnChange == nil {
		return
	}
	f.mu.Lock()
	n := len(f.desktops)
	f.mu.Unlock()
	f.opts.OnChange(n)
}

// ListenAndServe serves the fleet on o.Addr until ctx is done, then closes
// every session and destroys every desktop.
func (f *Fleet) ListenAndServe(ctx context.Context, o hosting.HTTPOptions) error {
	o = o.WithDefaults()
	if err := hosting.CheckListenAddr(o); err != nil {
		return err
	}
	h, err := f.NewHTTPHandler(o)
	if err != nil {
		return err
	}
	err = f.front.Serve(ctx, o, h)
	f.Close()
	return err
}

// Close ends every session (which destroys its desktop), refuses new ones,
// and waits until every desktop is gone.
func (f *Fleet) Close() {
	f.mu.Lock()
	f.closed = true
	var servers []*mcpserver.Server
	for _, fd := range f.desktops {
		if fd.d != nil {
			servers = append(servers, fd.d.Server)
		}
	}
	f.mu.Unlock()
	for _, s := range servers {
		for ss := range s.MCP().Sessions() {
			_ = ss.Close()
		}
	}
	f.wg.Wait()
}
