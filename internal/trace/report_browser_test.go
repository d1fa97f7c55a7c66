package trace

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guiagent/guiagent/internal/trace/browsertest"
)

// reportState is what the test reads from a rendered report.
type reportState struct {
	Steps         []int    `json:"steps"`
	Overlays      []int    `json:"overlays"` // naturalWidth of each overlay image
	Shots         []int    `json:"shots"`
	Status        string   `json:"status"`
	ActionRows    int      `json:"actionRows"`
	StyleApplied  bool     `json:"styleApplied"`
	TimelineLinks []string `json:"timeline"`
}

const readReport = `(() => ({
  steps: [...document.querySelectorAll('section.step')].map(s => +s.dataset.step),
  overlays: [...document.querySelectorAll('img.overlay')].map(i => i.complete ? i.naturalWidth : -1),
  shots: [...document.querySelectorAll('img.shot')].map(i => i.complete ? i.naturalWidth : -1),
  status: document.getElementById('run-status').textContent,
  actionRows: document.querySelectorAll('table.actions tbody tr').length,
  styleApplied: getComputedStyle(document.querySelector('.badge')).borderRadius !== '0px',
  timeline: [...document.querySelectorAll('nav.timeline a')].map(a => a.getAttribute('href')),
}))()`

const allImagesLoaded = `[...document.images].every(i => i.complete)`

func checkReport(t *testing.T, b *browsertest.Browser, pageURL string, steps, w int) {
	t.Helper()
	b.ResetErrors()
	if err := b.Do(30*time.Second, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("open %s: %v", pageURL, err)
	}
	if err := browsertest.WaitFor(b, allImagesLoaded, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	st, err := browsertest.Eval[reportState](b, readReport)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Steps) != steps || st.Steps[0] != 1 || st.Steps[steps-1] != steps {
		t.Errorf("rendered steps %v, want 1..%d", st.Steps, steps)
	}
	if len(st.Overlays) != steps || len(st.Shots) != steps {
		t.Errorf("%d overlays and %d screenshots for %d steps", len(st.Overlays), len(st.Shots), steps)
	}
	for i, nw := range st.Overlays {
		if nw != w {
			t.Errorf("overlay %d naturalWidth %d, want %d", i+1, nw, w)
		}
	}
	for i, nw := range st.Shots {
		if nw != w {
			t.Errorf("screenshot %d naturalWidth %d, want %d", i+1, nw, w)
		}
	}
	if st.Status != "completed" || st.ActionRows != steps*5 || len(st.TimelineLinks) != steps || !st.StyleApplied {
		t.Errorf("report state %+v", st)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

func TestReportInChromium(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("browser", "open the invoice and read its total", testConfig{APIKey: canary})
	if err != nil {
		t.Fatal(err)
	}
	const steps, w = 8, 640
	play(t, run, run.ID(), script{steps: steps, w: w, h: 400, pngEvery: 5, repeatEach: 3, finish: true})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)

	// From disk, as a user opens it.
	fileURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(run.ReportPath())}).String()
	checkReport(t, b, fileURL, steps, w)

	// Served over HTTP under ReportCSP (as the dashboard serves it): the
	// report needs nothing the policy forbids.
	mux := http.NewServeMux()
	mux.HandleFunc("/favicon.ico", func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(http.StatusNoContent) })
	mux.Handle("/r/", http.StripPrefix("/r/", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Security-Policy", ReportCSP)
		http.FileServer(http.Dir(run.Dir())).ServeHTTP(rw, r)
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	checkReport(t, b, srv.URL+"/r/"+ReportFile, steps, w)

	// The check sees violations: under a policy without the style hash the
	// browser reports the blocked style.
	strict := httptest.NewServer(http.StripPrefix("/r/", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Security-Policy", "default-src 'self'")
		http.FileServer(http.Dir(run.Dir())).ServeHTTP(rw, r)
	})))
	defer strict.Close()
	b.ResetErrors()
	if err := b.Do(30*time.Second, chromedp.Navigate(strict.URL+"/r/"+ReportFile)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Errors()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(b.Errors()) == 0 {
		t.Error("a blocked inline style produced no reported error: the error check is blind")
	}
}
