package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/config"
)

// MaxLoginFormBytes bounds the login form's body.
const MaxLoginFormBytes = 4 << 10

var loginTemplate = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>guiagent · sign in</title><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/static/login.css"></head>
<body><main class="login">
<h1>guiagent dashboard</h1>
{{with .Message}}<p class="msg" id="login-message" role="alert">{{.}}</p>{{end}}
<form method="post" action="/login" id="login-form">
<label for="token">Bearer token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus spellcheck="false">
<button type="submit">Sign in</button>
</form>
<p class="hint">Paste the HTTP bearer token: the one <code>guiagent serve --http</code> printed, or set as
{{.TokenVar}}, or stored in the <code>http-token</code> file beside the runs folder.
A one-time login link works too: a signed-in dashboard makes new ones (“New login link”).</p>
</main></body></html>
`))

// loginPage shows the sign-in form with msg.
func (d *Dashboard) loginPage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	loginTemplate.Execute(w, struct{ Message, TokenVar string }{msg, config.Var("HTTPToken")})
}

// newSession starts a dashboard session and sets its cookie.
func (d *Dashboard) newSession(w http.ResponseWriter, r *http.Request) {
	sid := randomString()
	d.mu.Lock()
	if len(d.sessions) >= maxSessions {
		d.dropOldest(d.sessions)
	}
	d.sessions[sid] = time.Now().Add(SessionTTL)
	d.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: sid, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
}

// signedIn answers a successful sign-in. A same-origin follow-up navigation
// carries the Strict cookie whatever started this one (a redirect would
// not: it stays part of a navigation begun elsewhere, such as a terminal).
// The page's script makes it; without scripts a meta refresh does. Not a
// meta refresh alone: a headless Chromium's --screenshot of the login link
// never finishes on a zero-delay refresh.
func signedIn(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><script src="/static/signed-in.js"></script>` +
		`<noscript><meta http-equiv="refresh" content="0;url=/"></noscript>` +
		`<title>guiagent</title></head><body><p>Signed in. <a href="/">Open the dashboard</a>.</p></body></html>`))
}

// login redeems a one-time code. Redeeming is the one state change a GET makes:
// a login link has to be a link. The code is single-use and never logged.
// Without a code, or with a used or expired one, it shows the sign-in form.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	if code == "" {
		d.loginPage(w, http.StatusOK, "")
		return
	}
	now := time.Now()
	d.mu.Lock()
	exp, ok := d.codes[code]
	if ok {
		delete(d.codes, code)
	}
	d.mu.Unlock()
	if !ok || now.After(exp) {
		d.log.Warn("web: dashboard login with an unknown, used or expired code", "remote", r.RemoteAddr)
		d.loginPage(w, http.StatusUnauthorized, "This login link was already used or has expired. Paste the bearer token below, "+
			"or open a new link from a signed-in dashboard (New login link).")
		return
	}
	d.newSession(w, r)
	d.log.Info("web: dashboard login", "remote", r.RemoteAddr, "by", "link")
	signedIn(w)
}

// loginWithToken signs in with the bearer token pasted into the login form.
func (d *Dashboard) loginWithToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxLoginFormBytes)
	if err := r.ParseForm(); err != nil {
		d.loginPage(w, http.StatusBadRequest, "The sign-in form could not be read; paste only the token.")
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	tok = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(tok, "Bearer "), "bearer "))
	if d.opts.Token == "" || !d.tokenMatches(tok) {
		d.log.Warn("web: dashboard sign-in with a wrong token", "remote", r.RemoteAddr)
		time.Sleep(200 * time.Millisecond) // slows guessing; the token is 256 random bits anyway
		d.loginPage(w, http.StatusUnauthorized, "That is not this server's bearer token. Check the token file or "+config.Var("HTTPToken")+", and paste it whole.")
		return
	}
	d.newSession(w, r)
	d.log.Info("web: dashboard login", "remote", r.RemoteAddr, "by", "token")
	signedIn(w)
}

// tokenMatches compares digests so neither the content nor the length of the
// token leaks through timing.
func (d *Dashboard) tokenMatches(tok string) bool {
	got, want := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(d.opts.Token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// loginLink mints a new one-time login link for this dashboard's origin (the
// request's Host, which the listener has checked against its allowlist).
func (d *Dashboard) loginLink(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	d.log.Info("web: new one-time login link made", "remote", r.RemoteAddr)
	d.writeJSON(w, http.StatusOK, map[string]string{"url": d.LoginURL(scheme + "://" + r.Host),
		"expires_in": LoginCodeTTL.String()})
}

// logout ends this browser's dashboard session and clears its cookie.
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		d.mu.Lock()
		delete(d.sessions, c.Value)
		d.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	d.log.Info("web: dashboard logout", "remote", r.RemoteAddr)
	d.loginPage(w, http.StatusOK, "Signed out.")
}

// logoutAll ends every dashboard session and voids every unused login link
// (the bearer token still signs in).
func (d *Dashboard) logoutAll(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	n := len(d.sessions)
	clear(d.sessions)
	clear(d.codes)
	d.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	d.log.Info("web: every dashboard session signed out and every login link voided", "remote", r.RemoteAddr, "sessions", n)
	d.writeJSON(w, http.StatusOK, map[string]any{"signed_out": n})
}
