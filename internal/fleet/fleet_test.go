package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/hosting"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/testenv"
	"github.com/guiagent/guiagent/internal/trace"
)

const fleetToken = "fleet-token-0123456789abcdef"

// fakeFleet is a Fleet whose desktops are fake backends.
// Its desktops share one run store and one audit, as app's fleet does.
type fakeFleet struct {
	f      *Fleet
	url    string
	store  *trace.Store
	mu     sync.Mutex
	desks  map[string]*fake.Backend
	closed atomic.Int32
}

func newFakeFleet(t *testing.T, max int, o hosting.HTTPOptions) *fakeFleet {
	t.Helper()
	// Not t.TempDir: an ended session's record may still be closing when
	// the test's cleanups run, which TempDir's check would report.
	dir, err := os.MkdirTemp("", "fleet-runs-")
	if err != nil {
		t.Fatal(err)
	}
	ff := &fakeFleet{desks: map[string]*fake.Backend{}, store: trace.NewStore(trace.Options{Dir: dir})}
	t.Cleanup(func() { ff.store.Close(); os.RemoveAll(dir) })
	audit := safety.NewAudit(100, nil)
	f, err := New(Options{Max: max, Logger: testLogger(t), Open: func(ctx context.Context, id, record string) (*Desktop, error) {
		desk := fake.New(fake.Options{})
		srv, err := mcpserver.New(mcpserver.Options{Screen: desk, SessionID: id, RecordID: record, Logger: testLogger(t), Audit: audit,
			Runs: ff.store, Records: func(id string) mcpserver.ToolRecorder { return ff.store.Session(id) }})
		if err != nil {
			return nil, err
		}
		ff.mu.Lock()
		ff.desks[id] = desk
		ff.mu.Unlock()
		return &Desktop{Server: srv, Display: "fake-" + id[:6], Size: geom.Size{W: 1920, H: 1080}, Close: func() error {
			ff.closed.Add(1)
			return desk.Close()
		}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ff.f = f
	o.Token = fleetToken
	h, err := f.NewHTTPHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() { f.Close(); ts.Close() })
	ff.url = ts.URL
	return ff
}

func (ff *fakeFleet) connect(t *testing.T) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: ff.url + hosting.MCPPath, HTTPClient: &http.Client{Transport: bearerTransport{fleetToken}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "fleet-test", Version: "1"}, nil).Connect(ctx, tr, nil)
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// Each session's input reaches its own desktop only; the cap refuses a third
// session with 503 naming the limit; ending a session closes its desktop and
// frees the slot.
func TestFleetSessionsHaveTheirOwnDesktops(t *testing.T) {
	ff := newFakeFleet(t, 2, hosting.HTTPOptions{})
	var css []*mcp.ClientSession
	for i := range 2 {
		cs, err := ff.connect(t)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		css = append(css, cs)
	}
	if got := len(ff.f.Desktops()); got != 2 {
		t.Fatalf("%d live desktops after two sessions, want 2", got)
	}
	for i, cs := range css {
		x := 100 + 100*i
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gui_click", Arguments: map[string]any{"x": x, "y": 50, "space": "screen"}})
		if err != nil || res.IsError {
			t.Fatalf("session %d click: %v %v", i, err, res)
		}
	}
	for i, cs := range css {
		ff.mu.Lock()
		desk := ff.desks[cs.ID()]
		ff.mu.Unlock()
		if desk == nil {
			t.Fatalf("session %s has no desktop of its own", cs.ID())
		}
		var downs []geom.GlobalPoint
		for _, ev := range desk.Events() {
			if ev.Op == fake.OpButtonDown {
				downs = append(downs, ev.At)
			}
		}
		want := geom.GlobalPoint{X: 100 + 100*i, Y: 50}
		if len(downs) != 1 || downs[0] != want {
			t.Errorf("session %d's desktop got button presses at %v, want only %v", i, downs, want)
		}
	}

	_, err := ff.connect(t)
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a third session over the cap of 2: err %v, want a 503", err)
	}
	status, body := fleetPost(t, ff.url+hosting.MCPPath, fleetToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "--max-desktops 2") {
		t.Errorf("initialize over the cap: %d %q, want 503 naming --max-desktops 2", status, body)
	}
	if n := ff.closed.Load(); n != 0 {
		t.Fatalf("%d desktops closed while their sessions live", n)
	}

	css[0].Close() // DELETE ends the session
	if !testenv.WaitUntil(time.Minute, func() bool { return ff.closed.Load() == 1 && len(ff.f.Desktops()) == 1 }) {
		t.Fatalf("after a session ended: %d desktops closed, %d live; want 1 and 1", ff.closed.Load(), len(ff.f.Desktops()))
	}
	cs, err := ff.connect(t)
	if err != nil {
		t.Fatalf("a session in the freed slot: %v", err)
	}
	cs.Close()
}

// A request without a session that is not an initialize starts no desktop.
func TestFleetOnlyInitializeStartsADesktop(t *testing.T) {
	ff := newFakeFleet(t, 2, hosting.HTTPOptions{})
	status, body := fleetPost(t, ff.url+hosting.MCPPath, fleetToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "initialize") {
		t.Errorf("tools/list without a session: %d %q, want 400 asking for initialize", status, body)
	}
	status, _ = fleetPost(t, ff.url+hosting.MCPPath, "wrong-token-0123456789", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if status != http.StatusUnauthorized {
		t.Errorf("initialize with a wrong token: %d, want 401", status)
	}
	if n := len(ff.desks); n != 0 {
		t.Errorf("%d desktops started by requests that open no session", n)
	}
}

// /healthz and /readyz need no token; /metrics needs it unless public;
// /readyz fails while a desktop does not answer a capture.
func TestFleetHealthAndMetrics(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "guiagent_desktops 1") })
	ff := newFakeFleet(t, 2, hosting.HTTPOptions{Metrics: metrics})
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{hosting.HealthzPath, "", 200}, {hosting.ReadyzPath, "", 200}, {hosting.MetricsPath, "", 401}, {hosting.MetricsPath, fleetToken, 200},
	} {
		if got, body := fleetGet(t, ff.url+c.path, c.token); got != c.want {
			t.Errorf("GET %s (token %v): %d %q, want %d", c.path, c.token != "", got, body, c.want)
		}
	}
	cs, err := ff.connect(t)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ff.mu.Lock()
	desk := ff.desks[cs.ID()]
	ff.mu.Unlock()
	desk.FailNext("capture", errors.New("the X server is gone"))
	got, body := fleetGet(t, ff.url+hosting.ReadyzPath, "")
	if got != http.StatusServiceUnavailable || strings.Contains(body, "X server is gone") {
		t.Errorf("/readyz with a failing desktop: %d %q, want 503 without the internal reason", got, body)
	}
	if got, _ := fleetGet(t, ff.url+hosting.ReadyzPath, ""); got != 200 {
		t.Errorf("/readyz once the desktop answers again: %d, want 200", got)
	}

	public := newFakeFleet(t, 1, hosting.HTTPOptions{Metrics: metrics, MetricsPublic: true})
	if got, body := fleetGet(t, public.url+hosting.MetricsPath, ""); got != 200 || !strings.Contains(body, "guiagent_desktops") {
		t.Errorf("public /metrics without a token: %d %q, want 200 with the metrics", got, body)
	}
}

func fleetPost(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return fleetDo(t, req)
}

func fleetGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return fleetDo(t, req)
}

func fleetDo(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
