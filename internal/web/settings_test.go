package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// settingsStub stands in for the settings API (internal/app serves the real
// one; its tests are at the module root): it answers what it was asked.
type settingsStub struct{}

func (settingsStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/api/displays" {
		w.Write([]byte(`{"displays":[{"id":"0","name":"screen","width":800,"height":600,"primary":true}]}`))
		return
	}
	w.Write([]byte(`{"method":"` + r.Method + `","provider":"","model":"","api_key_set":false,"sources":{},"choices":{}}`))
}

// TestSettingsAPIBehindTheDashboardAuth: /api/settings and /api/displays need
// the token or the session cookie, and a PUT must be same-origin.
func TestSettingsAPIBehindTheDashboardAuth(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/api/settings", "/api/displays"} {
		if r, _ := do(t, "GET", f.srv.URL+path, nil); r.StatusCode != 401 {
			t.Errorf("GET %s without the token: %d, want 401", path, r.StatusCode)
		}
		if r, body := do(t, "GET", f.srv.URL+path, map[string]string{"Authorization": "Bearer " + token}); r.StatusCode != 200 || !strings.HasPrefix(body, "{") {
			t.Errorf("GET %s with the token: %d %s", path, r.StatusCode, body)
		}
	}
	if r, body := do(t, "PUT", f.srv.URL+"/api/settings", map[string]string{"Authorization": "Bearer " + token}); r.StatusCode != 200 || !strings.Contains(body, `"method":"PUT"`) {
		t.Errorf("PUT with the token: %d %s", r.StatusCode, body)
	}
	if r, _ := do(t, "PUT", f.srv.URL+"/api/settings", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); r.StatusCode != 403 {
		t.Errorf("cross-origin PUT: %d, want 403", r.StatusCode)
	}
	if r, _ := do(t, "DELETE", f.srv.URL+"/api/settings", map[string]string{"Authorization": "Bearer " + token}); r.StatusCode != 405 {
		t.Errorf("DELETE: %d, want 405", r.StatusCode)
	}
	req := httptest.NewRequest("GET", "/api/settings", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	New(Options{Token: token}).ServeHTTP(rec, req)
	if rec.Code != 503 {
		t.Errorf("without a settings handler: %d, want 503", rec.Code)
	}
}
