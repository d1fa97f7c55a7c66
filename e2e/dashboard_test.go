package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/sampleapp"
)

var (
	loginLinkRe = regexp.MustCompile(`dashboard \(one-time login link\): (http://\S+/login\?code=\S+)`)
	tokenLineRe = regexp.MustCompile(`generated HTTP bearer token \(also in (\S+), mode 0600\):\n\s+(\S+)`)
)

// fetch GETs url with client and returns the status and body.
func fetch(t *testing.T, client *http.Client, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// The dashboard of the real binary refuses requests without credentials; the
// one-time link printed by `serve --http` logs a browser in once, not twice;
// the generated token (printed and written to a 0600 file) works as a bearer.
func TestDashboardLogin(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneButtons)
	// No GUI_AGENT_HTTP_TOKEN: the server generates one.
	g := startHTTP(t, serverConfig{display: d.display, logToFile: true})
	base := "http://" + g.addr
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, p := range []string{"/", "/api/runs", "/api/audit", "/api/current", "/api/screen.jpg"} {
		if resp, body := fetch(t, plain, base+p); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: status %d, want 401: %.200s", p, resp.StatusCode, body)
		}
	}
	if resp, _ := fetch(t, plain, base+"/", "Authorization", "Bearer not-the-token"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET / with a wrong bearer token: status %d, want 401", resp.StatusCode)
	}

	link := loginLink(t, g)
	if strings.Contains(g.stdout.String(), "login?code=") {
		t.Errorf("the login link went to stdout; only stderr may carry it")
	}

	// A browser (a client with a cookie jar) opens the link and is logged in.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, body := fetch(t, browser, link)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<html") {
		t.Fatalf("opening the login link: status %d: %.300s", resp.StatusCode, body)
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		session = c
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
		t.Errorf("the login cookie is %+v, want HttpOnly and SameSite=Strict", session)
	}
	if resp, body := fetch(t, browser, base+"/api/runs"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(body), "[") {
		t.Errorf("GET /api/runs with the session cookie: status %d: %.200s", resp.StatusCode, body)
	}
	if resp, body := fetch(t, browser, base+"/"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("GET / with the session cookie: status %d: %.200s", resp.StatusCode, body)
	}

	// The link works once: a second browser opening it is refused.
	jar2, _ := cookiejar.New(nil)
	second := &http.Client{Jar: jar2}
	if resp, body := fetch(t, second, link); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("opening the login link a second time: status %d, want 401: %.200s", resp.StatusCode, body)
	}
	if resp, _ := fetch(t, second, base+"/api/runs"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the second browser got status %d from /api/runs, want 401", resp.StatusCode)
	}

	// The generated token is printed on stderr, stored mode 0600, and works.
	m := tokenLineRe.FindStringSubmatch(g.stderr.String())
	if m == nil {
		t.Fatalf("serve --http printed no generated token on stderr:\n%s", g.stderr)
	}
	file, token := m[1], m[2]
	if !strings.HasPrefix(file, g.state) {
		t.Errorf("token file %s is outside the state directory %s", file, g.state)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file %s has mode %v, want 0600", file, fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != token {
		t.Errorf("token file %s does not hold the printed token", filepath.Base(file))
	}
	if resp, body := fetch(t, plain, base+"/api/audit", "Authorization", "Bearer "+token); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/audit with the printed token: status %d: %.200s", resp.StatusCode, body)
	}
	// The used link is renewed without a restart: the second browser signs in
	// on the login page with the token pasted in.
	if resp, body := fetch(t, second, link); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `name="token"`) {
		t.Errorf("a used link shows no sign-in form: status %d: %.300s", resp.StatusCode, body)
	}
	form := strings.NewReader(url.Values{"token": {token}}.Encode())
	req, _ := http.NewRequest(http.MethodPost, base+"/login", form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if resp, err := second.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("signing in with the pasted token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, _ := fetch(t, second, base+"/api/runs"); resp.StatusCode != http.StatusOK {
		t.Errorf("after signing in with the token, /api/runs answers %d", resp.StatusCode)
	}
	g.token = token
	cs := g.connect(t, nil)
	call(t, cs, "gui_list_displays", nil)
	// The token goes to the terminal on purpose, never into the log.
	g.stop(t)
	logs, err := os.ReadFile(g.logFile)
	if err != nil {
		t.Fatalf("the log file: %v", err)
	}
	if strings.Contains(string(logs), token) || strings.Contains(string(logs), strings.TrimPrefix(link, base)) {
		t.Errorf("the generated token or the login link is in the log file")
	}
}

// loginLink waits for the one-time dashboard login link serve --http prints on stderr.
func loginLink(t *testing.T, g *guiagent) string {
	t.Helper()
	var link string
	if !waitFor(10*time.Second, func() bool {
		m := loginLinkRe.FindStringSubmatch(g.stderr.String())
		if m != nil {
			link = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("serve --http printed no one-time login link on stderr:\n%s", g.stderr)
	}
	return link
}
