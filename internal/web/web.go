// Package web serves the live dashboard beside /mcp on the HTTP listener: the
// live screen, the current task's steps as they happen (server-sent events),
// a Stop button that works like the kill switch, the audit log, the
// recorded runs with their reports, and the questions a run waits on, which a
// person can answer there.
//
// Every page and API needs the token, as an "Authorization: Bearer" header or
// as the HttpOnly, SameSite=Strict session cookie that a one-time login link
// (LoginURL) or the login page (the token pasted in) sets. A signed-in page
// mints new one-time links (POST /api/login-link), so a used link is renewed
// without restarting the server. State changes only by POST, and only from the same origin.
// Pages carry a strict Content-Security-Policy: no inline script, scripts and
// styles from files of this origin only.
package web

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/ask"
	"github.com/guiagent/guiagent/internal/secret"
	"github.com/guiagent/guiagent/internal/trace"
)

//go:embed static
var staticFiles embed.FS

// CookieName is the dashboard's session cookie.
const CookieName = "guiagent_session"

// Lifetimes of login codes and sessions.
const (
	LoginCodeTTL = 15 * time.Minute
	SessionTTL   = 24 * time.Hour
	maxSessions  = 64
	maxCodes     = 64
)

// DashboardCSP is the Content-Security-Policy of the dashboard's pages and API.
const DashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configures a Dashboard. Nil funcs turn their feature off (the API
// answers 503 naming what is missing).
type Options struct {
	// Token is the bearer token of the HTTP listener; "" accepts no bearer
	// header, so only one-time login links let anyone in.
	Token string
	// Screen returns a JPEG of the screen with the cursor drawn.
	Screen func(ctx context.Context) (jpeg []byte, err error)
	// Subscribe returns the events of the current and later tasks until cancel is called.
	Subscribe func() (events <-chan agent.Event, cancel func())
	// Current describes the running task (nil when idle); served as JSON.
	Current func() any
	// Stop cancels the current task like the kill switch.
	Stop func() error
	// Audit returns the audit log; served as JSON.
	Audit func() any
	// Runs is the run store behind /api/runs and /runs/{id}/.
	Runs *trace.Store
	// Settings, when set, serves GET and PUT /api/settings and GET
	// /api/displays behind the dashboard's authentication (see settings.go).
	Settings http.Handler
	// Logger receives request errors; nil means slog.Default().
	Logger *slog.Logger
	// Scrubber knows the secrets (API key, token) removed from every
	// response; it is shared with the rest of the process, so a key added to
	// it at run time (the settings API) is removed from the next response on.
	// Token is added to it. Nil means a scrubber of Token alone.
	Scrubber *secret.Scrubber
	// Desktops, when set, lists the live desktops of a desktop-per-session
	// server (GET /api/desktops, JSON); each entry has an "id", its session's
	// record id (never the Mcp-Session-Id).
	Desktops func() any
	// DesktopScreen, when set, returns a JPEG of the screen of the desktop of
	// the session whose record id is id (GET /api/desktops/{id}/screen.jpg).
	DesktopScreen func(ctx context.Context, id string) (jpeg []byte, err error)
	// Questions, when set, is the broker of the questions that runs put to a
	// person: the Questions panel lists the pending ones with their
	// screenshots and answers them (see questions.go). Nil: the panel says
	// questions are not available.
	Questions *ask.Broker
}

// Dashboard is the dashboard's http.Handler. It is safe for concurrent use.
type Dashboard struct {
	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux
	cop    *http.CrossOriginProtection
	scrub  *secret.Scrubber
	static fs.FS

	mu       sync.Mutex
	codes    map[string]time.Time // login code -> expiry
	sessions map[string]time.Time // session id -> expiry
}

// New returns a dashboard. It has no side effects.
func New(o Options) *Dashboard {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d := &Dashboard{opts: o, log: o.Logger, mux: http.NewServeMux(), cop: http.NewCrossOriginProtection(),
		codes: map[string]time.Time{}, sessions: map[string]time.Time{}}
	d.static, _ = fs.Sub(staticFiles, "static")
	if d.scrub = o.Scrubber; d.scrub == nil {
		d.scrub = secret.NewScrubber()
	}
	d.scrub.Add(o.Token)
	d.mux.HandleFunc("GET /login", d.login)
	d.mux.Handle("POST /login", d.sameOrigin(http.HandlerFunc(d.loginWithToken)))
	d.mux.Handle("GET /static/login.css", d.file("login.css"))
	d.mux.Handle("GET /static/signed-in.js", d.file("signed-in.js")) // before the cookie is sent: it only opens the dashboard
	d.mux.Handle("POST /api/login-link", d.auth(d.sameOrigin(http.HandlerFunc(d.loginLink))))
	d.mux.Handle("POST /logout", d.auth(d.sameOrigin(http.HandlerFunc(d.logout))))
	d.mux.Handle("POST /api/logout-all", d.auth(d.sameOrigin(http.HandlerFunc(d.logoutAll))))
	d.mux.Handle("GET /{$}", d.auth(d.file("index.html")))
	d.mux.Handle("GET /static/{name}", d.auth(http.HandlerFunc(d.staticFile)))
	// The icon is public: browsers fetch it for the login page before the
	// session cookie exists, and it reveals nothing.
	d.mux.Handle("GET /favicon.ico", d.file("favicon.svg"))
	d.mux.Handle("GET /api/screen.jpg", d.auth(http.HandlerFunc(d.screen)))
	d.mux.Handle("GET /api/events", d.auth(http.HandlerFunc(d.events)))
	d.mux.Handle("GET /api/current", d.auth(d.jsonFunc("current task", o.Current)))
	d.mux.Handle("GET /api/audit", d.auth(d.jsonFunc("audit log", o.Audit)))
	d.mux.Handle("GET /api/runs", d.auth(http.HandlerFunc(d.runs)))
	d.mux.Handle("GET /api/desktops", d.auth(http.HandlerFunc(d.desktops)))
	d.mux.Handle("GET /api/desktops/{id}/screen.jpg", d.auth(http.HandlerFunc(d.desktopScreen)))
	d.mux.Handle("POST /api/stop", d.auth(d.sameOrigin(http.HandlerFunc(d.stop))))
	d.mux.Handle("GET /runs/{id}/{file...}", d.auth(http.HandlerFunc(d.runFile)))
	d.mountSettings()
	d.mountQuestions()
	return d
}

// ServeHTTP serves the dashboard.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", DashboardCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	d.mux.ServeHTTP(w, r)
}

func randomString() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// LoginURL mints a single-use login code and returns base + "/login?code=...":
// opening it in a browser sets the session cookie and shows the dashboard.
// base is the listener's origin, such as "http://127.0.0.1:60008".
func (d *Dashboard) LoginURL(base string) string {
	code := randomString()
	now := time.Now()
	d.mu.Lock()
	for c, exp := range d.codes {
		if now.After(exp) {
			delete(d.codes, c)
		}
	}
	if len(d.codes) >= maxCodes {
		d.dropOldest(d.codes)
	}
	d.codes[code] = now.Add(LoginCodeTTL)
	d.mu.Unlock()
	return strings.TrimRight(base, "/") + "/login?code=" + url.QueryEscape(code)
}

// dropOldest removes the entry that expires first; d.mu held.
func (d *Dashboard) dropOldest(m map[string]time.Time) {
	var oldest string
	var t time.Time
	for k, v := range m {
		if oldest == "" || v.Before(t) {
			oldest, t = k, v
		}
	}
	delete(m, oldest)
}

// authKind says how a request authenticated: "bearer", "cookie" or "".
func (d *Dashboard) authKind(r *http.Request) string {
	if d.opts.Token != "" {
		if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			if d.tokenMatches(strings.TrimSpace(h[7:])) {
				return "bearer"
			}
		}
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		d.mu.Lock()
		exp, ok := d.sessions[c.Value]
		if ok && time.Now().After(exp) {
			delete(d.sessions, c.Value)
			ok = false
		}
		d.mu.Unlock()
		if ok {
			return "cookie"
		}
	}
	return ""
}

type ctxKey struct{}

func (d *Dashboard) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := d.authKind(r)
		if kind == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="guiagent"`)
			if r.Method == http.MethodGet && r.URL.Path == "/" {
				d.loginPage(w, http.StatusUnauthorized, "")
				return
			}
			http.Error(w, "401 unauthorized: open the one-time link that `guiagent serve --http` printed, "+
				"sign in at /login with the bearer token, or send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, kind)))
	})
}

// sameOrigin refuses cross-origin requests (by Sec-Fetch-Site or Origin); a
// request that authenticated by cookie must also show it is same-origin, as
// browsers do for POST.
func (d *Dashboard) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := d.cop.Check(r); err != nil {
			http.Error(w, "403 forbidden: cross-origin request refused; use the dashboard page itself", http.StatusForbidden)
			return
		}
		if r.Context().Value(ctxKey{}) == "cookie" && r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "" {
			http.Error(w, "403 forbidden: a cookie-authenticated POST must come from the dashboard page (Origin or Sec-Fetch-Site missing)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (d *Dashboard) clean(b []byte) []byte { return d.scrub.Bytes(b) }

func (d *Dashboard) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		d.log.Error("web: encode response", "err", err)
		http.Error(w, "500 internal error: response does not encode as JSON", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(d.clean(b))
}

func (d *Dashboard) unavailable(w http.ResponseWriter, what string) {
	d.writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": what + " is not available on this server"})
}

func (d *Dashboard) file(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, d.static, name)
	})
}

func (d *Dashboard) staticFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "index.html" || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=300")
	http.ServeFileFS(w, r, d.static, name)
}

func (d *Dashboard) jsonFunc(what string, f func() any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f == nil {
			d.unavailable(w, "the "+what)
			return
		}
		d.writeJSON(w, http.StatusOK, f())
	})
}

func (d *Dashboard) screen(w http.ResponseWriter, r *http.Request) {
	if d.opts.Screen == nil {
		d.unavailable(w, "the live screen")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	jpg, err := d.opts.Screen(ctx)
	if err != nil {
		d.writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "screen capture failed: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Write(jpg)
}

// desktops lists the live desktops; null on a server with one shared
// desktop (the page then hides the panel).
func (d *Dashboard) desktops(w http.ResponseWriter, r *http.Request) {
	var list any
	if d.opts.Desktops != nil {
		list = d.opts.Desktops()
	}
	d.writeJSON(w, http.StatusOK, list)
}

// desktopScreen serves one live desktop's screen (desktop-per-session servers).
func (d *Dashboard) desktopScreen(w http.ResponseWriter, r *http.Request) {
	if d.opts.DesktopScreen == nil {
		d.unavailable(w, "the desktops' screens")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	jpg, err := d.opts.DesktopScreen(ctx, r.PathValue("id"))
	if err != nil {
		d.writeJSON(w, http.StatusNotFound, map[string]string{"error": d.scrub.String(err.Error())})
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(jpg)
}

func (d *Dashboard) stop(w http.ResponseWriter, r *http.Request) {
	if d.opts.Stop == nil {
		d.unavailable(w, "stopping tasks")
		return
	}
	if err := d.opts.Stop(); err != nil {
		d.writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
		return
	}
	d.log.Info("web: stop requested from the dashboard", "remote", r.RemoteAddr)
	d.writeJSON(w, http.StatusOK, map[string]bool{"stopped": true})
}

// runEntry is one run in /api/runs.
type runEntry struct {
	trace.RunInfo
	ReportURL string `json:"report_url"`
}

func (d *Dashboard) runs(w http.ResponseWriter, r *http.Request) {
	if d.opts.Runs == nil {
		d.unavailable(w, "the run store")
		return
	}
	list, err := d.opts.Runs.List()
	if err != nil {
		d.writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	out := make([]runEntry, len(list))
	for i, ri := range list {
		out[i] = runEntry{RunInfo: ri, ReportURL: "/runs/" + url.PathEscape(ri.ID) + "/"}
	}
	d.writeJSON(w, http.StatusOK, out)
}

// runFile serves a run's report (at /runs/{id}/) and the files it links to,
// under trace.ReportCSP.
func (d *Dashboard) runFile(w http.ResponseWriter, r *http.Request) {
	if d.opts.Runs == nil {
		d.unavailable(w, "the run store")
		return
	}
	id, name := r.PathValue("id"), r.PathValue("file")
	var dir string
	var err error
	if name == "" || name == trace.ReportFile {
		var rep string
		if rep, err = d.opts.Runs.EnsureReport(id); err == nil {
			dir, name = path.Dir(rep), trace.ReportFile
		}
	} else {
		dir, err = d.opts.Runs.Path(id)
	}
	if errors.Is(err, trace.ErrNotFound) {
		http.Error(w, "404 not found: no run "+id, http.StatusNotFound)
		return
	}
	if err != nil {
		d.log.Error("web: serve run", "run", id, "err", err)
		http.Error(w, "500 internal error: the run record cannot be read", http.StatusInternalServerError)
		return
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		http.Error(w, "404 not found", http.StatusNotFound)
		return
	}
	defer root.Close()
	if !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	if fi, err := root.Stat(name); err != nil || fi.IsDir() || strings.HasPrefix(path.Base(name), ".") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Security-Policy", trace.ReportCSP)
	w.Header().Set("Cache-Control", "private, no-cache")
	if path.Ext(name) == ".json" || path.Ext(name) == ".jsonl" {
		w.Header().Set("Content-Type", "application/json")
	}
	http.ServeFileFS(w, r, root.FS(), name)
}
