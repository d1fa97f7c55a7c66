// Package hosting serves an MCP server to its clients: the stdio framing
// (bounded lines, malformed messages answered, backpressure) and the HTTP
// front (bearer token, Host and Origin checks, body and session limits,
// health and metrics, listening on loopback). It knows nothing of the
// tools: mcpserver and fleet hand it an *mcp.Server or a handler.
package hosting

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/config"
)

// HTTP defaults.
const (
	DefaultHTTPAddr       = "127.0.0.1:60008"
	DefaultMaxBodyBytes   = 8 << 20
	DefaultSessionTimeout = 30 * time.Minute
	DefaultMaxSessions    = 256
	// MCPPath is the Streamable HTTP endpoint.
	MCPPath = "/mcp"
)

// HTTPOptions configures the Streamable HTTP transport. Zero values are documented per field.
type HTTPOptions struct {
	// Addr is the listen address; "" means 127.0.0.1:60008. A non-loopback
	// address needs AllowRemote.
	Addr string
	// Token is the bearer token every /mcp request must carry. Required
	// (GUI_AGENT_HTTP_TOKEN, or GenerateToken at start).
	Token string
	// AllowRemote permits a non-loopback Addr and Host headers other than
	// loopback names (restricted to AllowedHosts when that is set).
	AllowRemote bool
	// AllowedHosts are extra Host header names accepted (without port), e.g. the
	// machine's DNS name when AllowRemote is set.
	AllowedHosts []string
	// AllowedOrigins are browser origins ("https://app.example") trusted for
	// cross-origin requests. Empty means none: any cross-origin request gets 403.
	AllowedOrigins []string
	// Dashboard, when set, is served at "/" behind the same Host and Origin
	// checks; it does its own authentication.
	Dashboard http.Handler
	// MaxBodyBytes limits request bodies (413 beyond); 0 means 8 MiB.
	MaxBodyBytes int64
	// SessionTimeout closes MCP sessions idle this long; 0 means 30 min, negative never.
	SessionTimeout time.Duration
	// MaxSessions caps the open MCP sessions (each holds memory and a
	// goroutine until closed or idle for SessionTimeout): a new session beyond
	// it gets 503 naming the limit. 0 means 256, negative no limit.
	MaxSessions int
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout set the http.Server's
	// timeouts; 0 means 10 s, 60 s and 120 s. ReadTimeout bounds reading a
	// request (body included), not the response: long tool calls and event
	// streams are not cut by it. There is no write timeout, for the same reason.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// OnListen, when set, is called with the bound address before serving
	// (useful with port 0, and to publish the token only once the address is
	// ours). An error it returns closes the listener unserved and is returned.
	OnListen func(net.Addr) error
	// Metrics, when set, is served at /metrics (the Prometheus text format)
	// behind the bearer token, or without it when MetricsPublic is set.
	Metrics http.Handler
	// MetricsPublic serves /metrics without the token (--metrics-public).
	MetricsPublic bool
}

// WithDefaults fills the zero fields of o with their documented defaults.
func (o HTTPOptions) WithDefaults() HTTPOptions {
	if o.Addr == "" {
		o.Addr = DefaultHTTPAddr
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.SessionTimeout < 0 {
		o.SessionTimeout = 0
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 60 * time.Second
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 120 * time.Second
	}
	return o
}

// ErrNoToken is returned when HTTP is requested without a bearer token.
var ErrNoToken = errors.New("the HTTP transport needs a bearer token: set " + config.Var("HTTPToken") + " or let guiagent generate one")

// sessionVersion serves a session's request that names protocol 2026-07-28
// or later in its Mcp-Protocol-Version header as of the session's own
// version. A session exists only by the initialize handshake, which never
// negotiates 2026-07-28 or later (2025-11-25 at most: that protocol has no
// initialize), and the SDK's stateful handler refuses every request carrying
// such a header with -32022: a client that asked for 2026-07-28 in its
// initialize and keeps sending the version it asked for, not the one it was
// given, would have had every later request refused. A request of the
// 2026-07-28 protocol proper carries the version in its _meta too and is
// judged by that, as before.
func sessionVersion(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" && r.Header.Get("Mcp-Protocol-Version") >= RoundTripVersion {
			r = r.Clone(r.Context())
			r.Header.Set("Mcp-Protocol-Version", lastHandshakeVersion)
		}
		h.ServeHTTP(w, r)
	})
}

// lastHandshakeVersion is the newest protocol version the initialize
// handshake negotiates.
const lastHandshakeVersion = "2025-11-25"

// RoundTripVersion is the first MCP protocol version without the initialize
// handshake, whose input_required results carry questions to the client.
const RoundTripVersion = "2026-07-28"

// Guard holds what the HTTP front's checks log to.
type Guard struct {
	Log *slog.Logger
}

// Wrap serves mcpH at /mcp, the health endpoints and metrics, and the
// dashboard at /, behind the Host, Origin and body-size checks. ready answers
// /readyz. o must have its defaults (WithDefaults).
func (g Guard) Wrap(o HTTPOptions, mcpH http.Handler, ready func(context.Context) error) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, sessionVersion(mcpH))
	for _, p := range noOAuthPaths {
		mux.HandleFunc(p, noOAuth)
	}
	g.handleHealth(mux, o, ready)
	if o.Dashboard != nil {
		mux.Handle("/", o.Dashboard)
	} else {
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "not found: the MCP endpoint is "+MCPPath, http.StatusNotFound)
		})
	}
	cop := http.NewCrossOriginProtection()
	for _, origin := range o.AllowedOrigins {
		if err := cop.AddTrustedOrigin(origin); err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", origin, err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.deny(w, r, "cross-origin request refused")
	}))
	var h http.Handler = mux
	h = limitBody(o.MaxBodyBytes, h)
	h = cop.Handler(h)
	h = g.checkOrigin(o, h)
	h = g.checkHost(o, h)
	return h, nil
}

func (g Guard) deny(w http.ResponseWriter, r *http.Request, why string) {
	g.Log.Warn("HTTP request refused", "why", why, "host", r.Host, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr, "path", r.URL.Path)
	http.Error(w, "forbidden: "+why, http.StatusForbidden)
}

var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// checkHost refuses Host headers that are not loopback names (or AllowedHosts),
// which is how DNS rebinding reaches a loopback server.
func (g Guard) checkHost(o HTTPOptions, next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, h := range append(slices.Clone(loopbackNames), o.AllowedHosts...) {
		allowed[strings.ToLower(h)] = true
	}
	anyHost := o.AllowRemote && len(o.AllowedHosts) == 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		if !anyHost && !allowed[host] && !isLoopbackIP(host) {
			g.deny(w, r, fmt.Sprintf("Host %q is not allowed (DNS rebinding protection); connect to 127.0.0.1 or localhost", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses browser requests from another origin, whatever the method.
func (g Guard) checkOrigin(o HTTPOptions, next http.Handler) http.Handler {
	trusted := map[string]bool{}
	for _, origin := range o.AllowedOrigins {
		trusted[strings.ToLower(strings.TrimSuffix(origin, "/"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !trusted[strings.ToLower(origin)] {
			u, err := url.Parse(origin)
			if err != nil || !strings.EqualFold(u.Host, r.Host) {
				g.deny(w, r, fmt.Sprintf("cross-origin request from %q refused", origin))
				return
			}
		}
		if site := r.Header.Get("Sec-Fetch-Site"); (site == "cross-site" || site == "same-site") && !trusted[strings.ToLower(origin)] {
			g.deny(w, r, "cross-site browser request refused")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RequireToken checks the bearer token in constant time.
func (g Guard) RequireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		scheme, got, ok := strings.Cut(auth, " ")
		if auth == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
			unauthorized(w, "missing", "unauthorized: send the header Authorization: Bearer <token> ("+config.Var("HTTPToken")+", or the token guiagent printed at start and wrote to its http-token file)")
			return
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			g.Log.Warn("HTTP request with a wrong bearer token", "remote", r.RemoteAddr)
			unauthorized(w, "wrong", "unauthorized: the bearer token is wrong (use "+config.Var("HTTPToken")+", or the token in guiagent's http-token file; a restart without "+config.Var("HTTPToken")+" makes a new one)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unauthorized answers 401 with a WWW-Authenticate challenge that names a
// static token and no authorization server: no realm or resource_metadata
// parameter that MCP clients take as an invitation to OAuth discovery, so a
// client shows the message instead of starting a login. what is "missing" or
// "wrong".
func unauthorized(w http.ResponseWriter, what, msg string) {
	challenge := `Bearer error="invalid_request", error_description="a static bearer token is required (no OAuth)"`
	if what == "wrong" {
		challenge = `Bearer error="invalid_token", error_description="wrong static bearer token (no OAuth)"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, msg, http.StatusUnauthorized)
}

// noOAuthPaths are where MCP clients look for OAuth after a 401: the
// discovery documents and the default endpoints a client falls back to.
var noOAuthPaths = []string{"/.well-known/", "/authorize", "/token", "/register"}

// NoOAuthMessage is the error_description of every OAuth path's 404.
var NoOAuthMessage = "guiagent does not use OAuth: send its static bearer token in the header Authorization: Bearer <token> (" + config.Var("HTTPToken") + ", or the token in guiagent's http-token file)"

// noOAuth answers a definitive 404 with an OAuth-style JSON error, so a client
// that probes for OAuth stops and shows the description.
func noOAuth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": NoOAuthMessage})
}

// limitBody rejects bodies over max bytes with 413. (http.Server clears the
// read deadline once a request is read, so ReadTimeout never cuts a long tool
// call or event stream.)
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		next.ServeHTTP(w, r)
	})
}

func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
}

func isLoopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckListenAddr refuses a malformed address, and a non-loopback one without AllowRemote.
func CheckListenAddr(o HTTPOptions) error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("HTTP address %q: want host:port such as %s", o.Addr, DefaultHTTPAddr)
	}
	if !o.AllowRemote && host != "localhost" && !isLoopbackIP(host) {
		return fmt.Errorf("HTTP address %s is not loopback: guiagent listens on loopback only unless --allow-remote is given together with %s", o.Addr, config.Var("HTTPToken"))
	}
	return nil
}

// ShutdownGrace is how long serving over HTTP waits, once ctx is done, for
// calls and streams in flight before closing their connections. It is kept
// well under the command's hard shutdown limit (5 s), so a stream a client
// leaves open never makes a clean stop look like a hung one.
const ShutdownGrace = 2 * time.Second

// Serve listens on o.Addr and serves h until ctx is done, then shuts down
// (waiting up to ShutdownGrace for calls in flight). o must have its
// defaults (WithDefaults).
func (g Guard) Serve(ctx context.Context, o HTTPOptions, h http.Handler) error {
	if err := CheckListenAddr(o); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another guiagent running? choose another --addr)", o.Addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if o.OnListen != nil {
		if err := o.OnListen(ln.Addr()); err != nil {
			ln.Close()
			return err
		}
	}
	g.Log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+MCPPath, "remote", o.AllowRemote)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// GenerateToken returns a new random bearer token (64 hex characters).
func GenerateToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// WriteTokenFile writes token to path, readable only by the user (0600; the
// directory is created 0700 when missing). The token goes through a new
// temporary file that no other user can ever read and that a failure removes.
func WriteTokenFile(path, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	tmp := path + ".tmp"
	// A leftover temporary file may be readable by others: never write into it.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("token file: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}

// CapSessions answers 503 to a request that would open a session (a POST
// without Mcp-Session-Id) while o.MaxSessions are open (sessions counts
// them) or being opened.
func (g Guard) CapSessions(o HTTPOptions, sessions func() int, next http.Handler) http.Handler {
	if o.MaxSessions < 0 {
		return next
	}
	var mu sync.Mutex
	opening := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		open := opening + sessions()
		if open >= o.MaxSessions {
			mu.Unlock()
			g.Log.Warn("HTTP session refused: too many sessions", "limit", o.MaxSessions, "remote", r.RemoteAddr)
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("service unavailable: too many MCP sessions (%d open, the limit is %d); close unused sessions (HTTP DELETE with their Mcp-Session-Id) or wait until idle ones expire after %v", open, o.MaxSessions, o.SessionTimeout), http.StatusServiceUnavailable)
			return
		}
		opening++
		mu.Unlock()
		defer func() { mu.Lock(); opening--; mu.Unlock() }()
		next.ServeHTTP(w, r)
	})
}
