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

// readFacts measures the report header's facts (Started, Duration, ...) as
// laid out: each fact's box, how far its value reaches, and whether the page
// scrolls sideways.
const readFacts = `(() => ({
  facts: [...document.querySelectorAll('dl.facts > div')].map(d => {
    const r = d.getBoundingClientRect(), text = document.createRange();
    text.selectNodeContents(d.querySelector('dd')); // the value's text, not its box, which overflowing text leaves behind
    const v = text.getBoundingClientRect();
    return {text: d.innerText.replace(/\n/g, ': '), left: r.left, right: r.right, top: r.top, bottom: r.bottom, valueRight: v.right};
  }),
  scrollWidth: document.documentElement.scrollWidth,
  width: window.innerWidth,
}))()`

type factBox struct {
	Text                     string
	Left, Right, Top, Bottom float64
	ValueRight               float64
}

// TestReportHeaderFitsInChromium: at 1000 and 1400 px, in a task's report
// and in a session's, every header fact keeps its value inside its own box
// ("Started" never runs into "Duration"), no two facts overlap, and the page
// does not scroll sideways.
func TestReportHeaderFitsInChromium(t *testing.T) {
	st := newTestStore(t, nil)
	run, err := st.Begin("header", "open the invoice and read its total", testConfig{APIKey: canary})
	if err != nil {
		t.Fatal(err)
	}
	play(t, run, run.ID(), script{steps: 2, w: 640, h: 400, finish: true})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	rec := st.Session("mcp-session-header")
	rec.RecordCall(Call{Tool: "gui_list_displays", Result: "one display", Client: "claude-code"})
	sessionID := rec.RunID()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	session, err := st.EnsureReport(sessionID)
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	for _, page := range []struct{ name, path string }{{"task", run.ReportPath()}, {"session", session}} {
		for _, width := range []int64{1000, 1400} {
			u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(page.path)}).String()
			if err := b.Do(30*time.Second, chromedp.EmulateViewport(width, 900), chromedp.Navigate(u)); err != nil {
				t.Fatal(err)
			}
			got, err := browsertest.Eval[struct {
				Facts       []factBox
				ScrollWidth int
				Width       int
			}](b, readFacts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Facts) < 4 {
				t.Fatalf("%s report at %d px: %d header facts: %+v", page.name, width, len(got.Facts), got.Facts)
			}
			for i, f := range got.Facts {
				if f.ValueRight > f.Right+0.5 {
					t.Errorf("%s report at %d px: %q runs %.0f px out of its box into the next fact", page.name, width, f.Text, f.ValueRight-f.Right)
				}
				for _, g := range got.Facts[i+1:] {
					if f.Left < g.Right-0.5 && g.Left < f.Right-0.5 && f.Top < g.Bottom-0.5 && g.Top < f.Bottom-0.5 {
						t.Errorf("%s report at %d px: %q overlaps %q", page.name, width, f.Text, g.Text)
					}
				}
			}
			if got.ScrollWidth > got.Width {
				wide, _ := browsertest.Eval[[]string](b, `[...document.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > innerWidth).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right) + ' ' + (e.innerText||'').slice(0,60))`)
				t.Logf("elements past the right edge: %q", wide)
				t.Errorf("%s report at %d px scrolls sideways: %d px wide", page.name, width, got.ScrollWidth)
			}
		}
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("pages reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
