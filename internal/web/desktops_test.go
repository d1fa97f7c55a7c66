package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/secret"
)

// A desktop-per-session server's dashboard lists the live desktops and
// serves each one's screen, behind the token; one with a shared desktop
// answers null, so the page hides the panel.
func TestDesktopsPanel(t *testing.T) {
	bearer := map[string]string{"Authorization": "Bearer " + token}
	shared := httptest.NewServer(New(Options{Token: token, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer shared.Close()
	if resp, body := do(t, "GET", shared.URL+"/api/desktops", bearer); resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != "null" {
		t.Errorf("GET /api/desktops on a shared-desktop server: %d %q, want 200 null", resp.StatusCode, body)
	}

	d := New(Options{
		Token: token,
		Desktops: func() any {
			return []map[string]any{{"id": "s1", "display": ":101"}, {"id": "s2", "display": ":102"}}
		},
		DesktopScreen: func(_ context.Context, id string) ([]byte, error) {
			if id != "s1" {
				return nil, errors.New("no live desktop for session " + id + " (key " + canary + ")")
			}
			return frameJPEG(1), nil
		},
		Scrubber: secret.NewScrubber(canary),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	srv := httptest.NewServer(d)
	defer srv.Close()
	for _, path := range []string{"/api/desktops", "/api/desktops/s1/screen.jpg"} {
		if resp, _ := do(t, "GET", srv.URL+path, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, resp.StatusCode)
		}
	}
	resp, body := do(t, "GET", srv.URL+"/api/desktops", bearer)
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &list); resp.StatusCode != http.StatusOK || err != nil || len(list) != 2 || list[1].ID != "s2" {
		t.Errorf("GET /api/desktops: %d %q (%v)", resp.StatusCode, body, err)
	}
	resp, body = do(t, "GET", srv.URL+"/api/desktops/s1/screen.jpg", bearer)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/jpeg" || !strings.HasPrefix(body, "\xff\xd8") {
		t.Errorf("GET s1's screen: %d %s, want a JPEG", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, body = do(t, "GET", srv.URL+"/api/desktops/gone/screen.jpg", bearer)
	if resp.StatusCode != http.StatusNotFound || strings.Contains(body, canary) {
		t.Errorf("GET an ended session's screen: %d %q, want 404 without the secret", resp.StatusCode, body)
	}
}
