package web

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

// busyDashboard is a dashboard with what a user has after a while: tool
// calls with long arguments and results, a long task, an open MCP session.
func busyDashboard(t *testing.T) (*Dashboard, *httptest.Server) {
	t.Helper()
	store := trace.NewStore(trace.Options{Dir: t.TempDir(), DebugImages: true})
	audit := safety.NewAudit(0, nil)
	for i := 0; i < 6; i++ {
		audit.Record(safety.AuditEntry{Tool: "gui_click", Millis: 31,
			Result: `{"clicked":{"image":{"x":120,"y":80},"screen":{"x":240,"y":160}},"frame_id":"f-20261201-204951-0007","display":"0","note":"the screen changed after the click; take a screenshot to see it, or pass screenshot_after_action to get one with every input"}`},
			map[string]any{"x": 120, "y": 80, "button": "left", "frame_id": "f-20261201-204951-0007", "space": "image", "modifiers": []string{"ctrl", "shift"}})
	}
	rec := store.Session("3f2a9c1e-5b7d-4e21-9a6f-0c8d7e6b5a41")
	rec.RecordCall(trace.Call{Tool: "gui_click", Result: "clicked", Client: "claude-code"})
	t.Cleanup(func() { rec.Close() })
	run, err := store.Begin("20261201-204951-abcdef", "In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit, and read the confirmation number it shows.", nil)
	if err != nil {
		t.Fatal(err)
	}
	run.Close()
	d := New(Options{Token: token, Screen: func(context.Context) ([]byte, error) { return frameJPEG(1), nil }, Subscribe: (&hub{}).Subscribe,
		Current: func() any { return nil }, Audit: func() any { return audit.Snapshot() }, Runs: store, Settings: settingsStub{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(d)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return d, srv
}

// dashboardLayout is what TestDashboardFitsInChromium measures.
type dashboardLayout struct {
	ScrollWidth, Width int
	// Scrollers are the table boxes that scroll sideways (name: overflow px).
	Scrollers []string
	// Overlaps are pairs of panels whose boxes overlap.
	Overlaps []string
	// Cut are report links or table cells outside their panel or the window.
	Cut []string
	// AuditLines is the most lines any audit cell shows.
	AuditLines, AuditRows int
	Ready                 string
	LoadEnd               float64
}

const measureDashboard = `(() => {
  const box = (e) => e.getBoundingClientRect();
  const panels = [...document.querySelectorAll("section.panel")].filter((p) => p.checkVisibility());
  const overlaps = [];
  panels.forEach((a, i) => panels.slice(i + 1).forEach((b) => {
    const r = box(a), q = box(b);
    if (r.left < q.right - 1 && q.left < r.right - 1 && r.top < q.bottom - 1 && q.top < r.bottom - 1) overlaps.push(a.id + " / " + b.id);
  }));
  const cut = [];
  for (const td of document.querySelectorAll("#runs td, #audit td, #runs th, #audit th")) {
    const panel = td.closest("section.panel"), r = box(td), p = box(panel);
    if (r.right > p.right + 0.5 || r.right > document.documentElement.clientWidth + 0.5) cut.push(panel.id + ": " + td.innerText.slice(0, 40));
  }
  let lines = 0;
  for (const c of document.querySelectorAll("#audit td .clamp")) {
    lines = Math.max(lines, Math.round(box(c).height / parseFloat(getComputedStyle(c).lineHeight)));
  }
  const nav = performance.getEntriesByType("navigation")[0];
  return {
    scrollWidth: document.documentElement.scrollWidth, width: document.documentElement.clientWidth,
    scrollers: [...document.querySelectorAll(".scroll")].filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.parentElement.id + ": " + (s.scrollWidth - s.clientWidth)),
    overlaps, cut, auditLines: lines, auditRows: document.querySelectorAll("#audit tbody tr").length,
    ready: document.readyState, loadEnd: nav ? nav.loadEventEnd : 0,
  };
})()`

// TestDashboardFitsInChromium: at 1000 and 1400 px the dashboard does not
// scroll sideways, neither the page nor a table; the Runs table shows its
// Report column; an audit row's long result takes at most two lines (a
// click shows it all); no panels overlap; and the page has finished loading
// while the live screen keeps drawing new frames.
func TestDashboardFitsInChromium(t *testing.T) {
	d, srv := busyDashboard(t)
	b := browsertest.New(t)
	for _, width := range []int64{1000, 1400} {
		if err := b.Do(10*time.Second, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		signIn(t, b, d, srv.URL)
		if err := browsertest.WaitFor(b, `document.querySelectorAll("#audit tbody tr").length === 6 && document.querySelectorAll("#runs tr[data-run]").length === 2 && +document.getElementById("screen").dataset.frames >= 3`, 15*time.Second); err != nil {
			t.Fatal(err)
		}
		l, err := browsertest.Eval[dashboardLayout](b, measureDashboard)
		if err != nil {
			t.Fatal(err)
		}
		if l.ScrollWidth > l.Width {
			t.Errorf("at %d px the page scrolls sideways: %d px wide in a %d px window", width, l.ScrollWidth, l.Width)
		}
		if len(l.Scrollers) > 0 || len(l.Cut) > 0 {
			t.Errorf("at %d px tables scroll sideways %q or are cut off: %q", width, l.Scrollers, l.Cut)
		}
		if len(l.Overlaps) > 0 {
			t.Errorf("at %d px panels overlap: %q", width, l.Overlaps)
		}
		if l.AuditLines > 2 || l.AuditRows != 6 {
			t.Errorf("at %d px an audit cell takes %d lines (%d rows), want at most 2", width, l.AuditLines, l.AuditRows)
		}
		if l.Ready != "complete" || l.LoadEnd <= 0 {
			t.Errorf("at %d px the page has not finished loading while the live screen runs: readyState %q, load event end %v", width, l.Ready, l.LoadEnd)
		}
	}
	// A click on an audit row shows its whole result.
	if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS("#audit tbody tr td.result"))); err != nil {
		t.Fatal(err)
	}
	lines, err := browsertest.Eval[int](b, `(c => Math.round(c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight)))(document.querySelector("#audit tbody tr td.result .clamp"))`)
	if err != nil || lines < 3 {
		t.Errorf("a clicked audit row shows %d lines of its result (%v), want all of it", lines, err)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestHeadlessScreenshotOfTheDashboard: `chromium --headless --screenshot`
// of the one-time login link finishes and writes the dashboard's picture,
// the live screen running.
func TestHeadlessScreenshotOfTheDashboard(t *testing.T) {
	d, srv := busyDashboard(t)
	path, err := browsertest.Path()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "dashboard.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1400,1000", "--screenshot="+shot, d.LoginURL(srv.URL)).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("chromium --screenshot of the dashboard did not finish in 90 s: the page never finished loading")
	}
	if err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Fatalf("no screenshot written (%v)", err)
	}
}
