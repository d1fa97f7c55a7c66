package trace

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
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
	// Layout as a user sees it at a 1400 px wide window.
	OverlayShown []int  `json:"overlayShown"` // rendered width of each overlay
	RawShown     []int  `json:"rawShown"`     // rendered width of each raw screenshot (0 while folded)
	MainWidth    int    `json:"mainWidth"`
	NavWidth     int    `json:"navWidth"`
	LogWidth     int    `json:"logWidth"`
	Text         string `json:"text"`
}

const readReport = `(() => ({
  steps: [...document.querySelectorAll('section.step')].map(s => +s.dataset.step),
  overlays: [...document.querySelectorAll('img.overlay')].map(i => i.complete ? i.naturalWidth : -1),
  shots: [...document.querySelectorAll('img.shot')].map(i => i.complete ? i.naturalWidth : -1),
  status: document.getElementById('run-status').textContent,
  actionRows: document.querySelectorAll('table.actions tbody tr').length,
  styleApplied: getComputedStyle(document.querySelector('.badge')).borderRadius !== '0px',
  timeline: [...document.querySelectorAll('nav.timeline a')].map(a => a.getAttribute('href')),
  overlayShown: [...document.querySelectorAll('img.overlay')].map(i => Math.round(i.getBoundingClientRect().width)),
  rawShown: [...document.querySelectorAll('img.shot')].map(i => i.checkVisibility() ? Math.round(i.getBoundingClientRect().width) : 0),
  mainWidth: Math.round(document.querySelector('main').getBoundingClientRect().width),
  navWidth: Math.round(document.querySelector('nav.timeline').getBoundingClientRect().width),
  logWidth: Math.round(document.getElementById('log').getBoundingClientRect().width),
  text: document.body.innerText,
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
	checkLayout(t, st)
	// The raw screenshot is one click away.
	if err := b.Do(10*time.Second, chromedp.Click(chromedp.CSS("#step-1 details.raw summary"))); err != nil {
		t.Fatal(err)
	}
	if w, err := browsertest.Eval[int](b, `(i => i.checkVisibility() ? Math.round(i.getBoundingClientRect().width) : 0)(document.querySelector('#step-1 img.shot'))`); err != nil || w < 200 {
		t.Errorf("raw screenshot of step 1 is %d px wide after opening its toggle (%v)", w, err)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// checkLayout checks what a reader sees at 1400 px: each step's overlay is the
// main view and wide enough to read, the raw screenshots are folded away, the
// step navigator and the one-entry log are no wider than their content, and
// no JSON escape shows.
func checkLayout(t *testing.T, st reportState) {
	t.Helper()
	for i, w := range st.OverlayShown {
		if w < 1000 {
			t.Errorf("overlay %d is shown %d px wide at a 1400 px window, want at least 1000", i+1, w)
		}
	}
	for i, w := range st.RawShown {
		if w != 0 {
			t.Errorf("raw screenshot %d is shown (%d px) before its toggle is opened", i+1, w)
		}
	}
	if st.NavWidth > st.MainWidth/2 || st.NavWidth < 100 {
		t.Errorf("step navigator is %d px wide in a %d px page: want it to fit its %d links", st.NavWidth, st.MainWidth, len(st.TimelineLinks))
	}
	if st.LogWidth > st.MainWidth*3/4 {
		t.Errorf("the one-entry log card is %d px wide in a %d px page: want it to fit its line", st.LogWidth, st.MainWidth)
	}
	if strings.Contains(st.Text, `\u00`) {
		t.Error("the report shows a JSON escape such as \\u003c")
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

	// Copied alone to another folder (mailed, attached to a bug), it still
	// shows every image.
	alone := filepath.Join(t.TempDir(), "copied-report.html")
	rep, err := os.ReadFile(run.ReportPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, rep, 0o600); err != nil {
		t.Fatal(err)
	}
	checkReport(t, b, (&url.URL{Scheme: "file", Path: filepath.ToSlash(alone)}).String(), steps, w)

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
	deadline := time.Now().Add(time.Minute)
	for len(b.Errors()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(b.Errors()) == 0 {
		t.Error("a blocked inline style produced no reported error: the error check is blind")
	}
}
