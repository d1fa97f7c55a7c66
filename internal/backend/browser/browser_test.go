package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/testenv"
)

// site serves the test pages and records what pages report to it.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	reports []string
	other   *httptest.Server // the same handler reached as localhost: another site
}

func (s *site) report(r string) {
	s.mu.Lock()
	s.reports = append(s.reports, r)
	s.mu.Unlock()
}

// waitReport waits until a report with the prefix arrives.
func (s *site) waitReport(t *testing.T, prefix string) string {
	t.Helper()
	var got string
	ok := testenv.WaitUntil(10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range s.reports {
			if strings.HasPrefix(r, prefix) {
				got = r
				return true
			}
		}
		return false
	})
	if !ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Fatalf("the server never received %q; it received %q", prefix, s.reports)
	}
	return got
}

const reportJS = `function report(what){ fetch('/report?what='+encodeURIComponent(what), {method:'POST', mode:'no-cors'}); }`

var pages = map[string]string{
	"/form": `<!doctype html><title>Form</title><form method="post" action="/submit">
<label for="name">Name</label> <input id="name" name="name"><br>
<label for="pw">Password</label> <input id="pw" name="pw" type="password"><br>
<button type="submit">Send</button></form>`,
	"/frames": `<!doctype html><title>Frames</title><script>` + reportJS + `</script>
<div id="host"></div>
<script>const root = document.getElementById('host').attachShadow({mode:'open'});
root.innerHTML = '<button id="sb">Shadow button</button>';
root.getElementById('sb').onclick = () => report('shadow');</script>
<p>Below is a frame from another site.</p>
<iframe id="f" src="OTHER/inner" style="width:400px;height:200px;margin-left:60px;border:3px solid black"></iframe>`,
	"/inner": `<!doctype html><title>Inner</title><script>` + reportJS + `</script>
<div style="height:50px"></div><button onclick="report('inner')" style="margin-left:100px">Inner button</button>`,
	"/sameframe": `<!doctype html><title>Same frame</title><p>A frame of this site, in process:</p>
<iframe src="/inner" style="width:400px;height:200px;margin-left:30px;border:5px solid black;padding:7px"></iframe>`,
	"/covered": `<!doctype html><title>Covered</title><button id="under" style="position:absolute;left:100px;top:100px;width:120px;height:40px">Buy</button>
<div id="overlay" role="dialog" aria-label="Cookie banner" style="position:fixed;left:0;top:0;width:100%;height:300px;background:rgba(0,0,0,0.5)"></div>`,
	"/dialog": `<!doctype html><title>Dialog</title><script>` + reportJS + `</script>
<button onclick="report('confirm=' + confirm('Delete?'))">Delete</button>`,
	"/popup":    `<!doctype html><title>Popup</title><button onclick="window.open('/form')">Open</button>`,
	"/upload":   `<!doctype html><title>Upload</title><input type="file" id="file" aria-label="Attachment">`,
	"/download": `<!doctype html><title>Download</title><a href="/report.csv">Get the report</a>`,
	"/cookie":   `<!doctype html><title>Cookie</title>`,
	"/clip":     `<!doctype html><title>Clip</title><textarea id="src">copy me ✓</textarea><textarea id="dst"></textarea>`,
	"/counter":  `<!doctype html><title>Counter</title><script>sessionStorage.loads = (+sessionStorage.loads||0) + 1; document.title = 'Counter ' + sessionStorage.loads;</script>`,
}

func tablePage(rows int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>Table</title><table>`)
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&b, `<tr><td>Row %d</td><td><input aria-label="qty %d" value="%d"></td><td><button>Edit %d</button></td></tr>`, i, i, i, i)
	}
	b.WriteString(`</table>`)
	return b.String()
}

func newSite(t testing.TB) *site {
	s := &site{}
	table := tablePage(3000)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/report":
			s.report(r.URL.Query().Get("what"))
			w.Header().Set("Access-Control-Allow-Origin", "*")
			return
		case "/submit":
			_ = r.ParseForm()
			s.report("submit name=" + r.PostForm.Get("name") + " pwlen=" + fmt.Sprint(len(r.PostForm.Get("pw"))))
			fmt.Fprint(w, "<title>Thanks</title>thanks")
			return
		case "/report.csv":
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
			fmt.Fprint(w, "a,b\n1,2\n")
			return
		case "/table":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, table)
			return
		case "/missing":
			http.NotFound(w, r)
			return
		}
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if s.other != nil {
			_, port, _ := net.SplitHostPort(s.other.Listener.Addr().String())
			p = strings.ReplaceAll(p, "OTHER", "http://localhost:"+port)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, p)
	})
	s.Server = httptest.NewServer(h)
	s.other = httptest.NewServer(h)
	t.Cleanup(s.Close)
	t.Cleanup(s.other.Close)
	return s
}

func snapshot(t testing.TB, b *Backend, q desktop.ElementQuery) *desktop.ElementSnapshot {
	t.Helper()
	snap, err := b.Elements(tctx(t), q)
	if err != nil {
		t.Fatalf("Elements: %v", err)
	}
	return snap
}

func find(t testing.TB, snap *desktop.ElementSnapshot, role desktop.Role, name string) desktop.Element {
	t.Helper()
	for _, e := range snap.Elements {
		if e.Role == role && e.Name == name {
			return e
		}
	}
	var names []string
	for _, e := range snap.Elements {
		names = append(names, fmt.Sprintf("%s %q", e.Role, e.Name))
	}
	t.Fatalf("no %s named %q in the snapshot: %s", role, name, strings.Join(names, ", "))
	return desktop.Element{}
}

func clickAt(t testing.TB, b *Backend, p geom.GlobalPoint) {
	t.Helper()
	in := desktop.NewInput(b)
	if err := in.Click(tctx(t), &p, desktop.Left, 1, nil); err != nil {
		t.Fatalf("Click(%v): %v", p, err)
	}
}

func center(r geom.Rect) geom.GlobalPoint { return geom.GlobalPoint{X: r.X + r.W/2, Y: r.Y + r.H/2} }

func TestFormByRef(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	p := navigate(t, b, s.URL+"/form")
	if p.Status != 200 || p.Title != "Form" {
		t.Errorf("Navigate = %+v, want status 200 and title Form", p)
	}
	snap := snapshot(t, b, desktop.ElementQuery{})
	name := find(t, snap, desktop.RoleTextbox, "Name")
	pw := find(t, snap, desktop.RoleTextbox, "Password")
	if !pw.States.Protected {
		t.Errorf("the password field is not marked protected: %+v", pw.States)
	}
	if err := b.SetText(tctx(t), name.Handle, "Ada Lovelace"); err != nil {
		t.Fatalf("SetText(Name): %v", err)
	}
	if err := b.SetText(tctx(t), pw.Handle, "s3cret-pass"); err != nil {
		t.Fatalf("SetText(Password): %v", err)
	}
	if got, err := b.Text(tctx(t), name.Handle); err != nil || got != "Ada Lovelace" {
		t.Errorf("Text(Name) = %q, %v", got, err)
	}
	if got, err := b.Text(tctx(t), pw.Handle); err == nil {
		t.Errorf("Text(Password) returned %q: a password's value must never be read", got)
	}
	snap = snapshot(t, b, desktop.ElementQuery{})
	for _, e := range snap.Elements {
		if strings.Contains(e.Value, "s3cret") || strings.Contains(e.Name, "s3cret") {
			t.Errorf("the snapshot shows the password: %+v", e)
		}
	}
	if got := find(t, snap, desktop.RoleTextbox, "Name"); got.Value != "Ada Lovelace" || got.Handle != name.Handle {
		t.Errorf("Name after SetText: value %q handle %q, want the value and the same handle %q", got.Value, got.Handle, name.Handle)
	}
	send := find(t, snap, desktop.RoleButton, "Send")
	if err := b.Press(tctx(t), send.Handle); err != nil {
		t.Fatalf("Press(Send): %v", err)
	}
	if got := s.waitReport(t, "submit"); got != "submit name=Ada Lovelace pwlen=11" {
		t.Errorf("the server received %q", got)
	}
}

func TestFramesAndShadowRoots(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/frames")
	var inner, shadow desktop.Element
	// The out-of-process iframe attaches as the page loads; give it a moment.
	testenv.WaitUntil(5*time.Second, func() bool {
		snap := snapshot(t, b, desktop.ElementQuery{})
		inner, shadow = desktop.Element{}, desktop.Element{}
		for _, e := range snap.Elements {
			if e.Role == desktop.RoleButton && e.Name == "Inner button" {
				inner = e
			}
			if e.Role == desktop.RoleButton && e.Name == "Shadow button" {
				shadow = e
			}
		}
		return inner.Handle != "" && shadow.Handle != ""
	})
	if inner.Handle == "" || shadow.Handle == "" {
		t.Fatalf("the snapshot lacks the iframe's or the shadow root's button: inner %+v shadow %+v", inner, shadow)
	}
	clickAt(t, b, center(shadow.Box))
	s.waitReport(t, "shadow")
	clickAt(t, b, center(inner.Box))
	s.waitReport(t, "inner")
	// Reveal sees through the iframe: the button is what sits at its centre.
	if r, err := b.Reveal(tctx(t), inner.Handle); err != nil || r != inner.Box {
		t.Errorf("Reveal(inner) = %v, %v; want %v", r, err, inner.Box)
	}
}

func TestSameSiteFrameInProcess(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/sameframe")
	var inner desktop.Element
	testenv.WaitUntil(5*time.Second, func() bool {
		for _, e := range snapshot(t, b, desktop.ElementQuery{}).Elements {
			if e.Role == desktop.RoleButton && e.Name == "Inner button" {
				inner = e
				return true
			}
		}
		return false
	})
	if inner.Handle == "" {
		t.Fatal("the snapshot lacks the same-site iframe's button")
	}
	// The page's own view of where the button is: the frame's content box
	// plus the button's place in it.
	want := eval(t, b, `(() => { const f = document.querySelector('iframe'), r = f.getBoundingClientRect(), cs = getComputedStyle(f);
		const br = f.contentDocument.querySelector('button').getBoundingClientRect();
		return [r.left + f.clientLeft + parseFloat(cs.paddingLeft) + br.left, r.top + f.clientTop + parseFloat(cs.paddingTop) + br.top, br.width, br.height].map(Math.round).join(','); })()`)
	if got := fmt.Sprintf("%d,%d,%d,%d", inner.Box.X, inner.Box.Y, inner.Box.W, inner.Box.H); got != want {
		t.Errorf("the inner button's box is %s, the page says %s", got, want)
	}
	clickAt(t, b, center(inner.Box))
	s.waitReport(t, "inner")
	if r, err := b.Reveal(tctx(t), inner.Handle); err != nil || r != inner.Box {
		t.Errorf("Reveal(inner) = %v, %v; want %v", r, err, inner.Box)
	}
}

// TestSnapshotFollowsNavigation: the script that finds what is in view runs
// in the document shown, never in one left for another (or kept in the
// back/forward cache).
func TestSnapshotFollowsNavigation(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	has := func(name string) bool {
		for _, e := range snapshot(t, b, desktop.ElementQuery{}).Elements {
			if e.Role == desktop.RoleButton && e.Name == name {
				return true
			}
		}
		return false
	}
	navigate(t, b, s.URL+"/form")
	if !has("Send") {
		t.Fatal("no Send on the form")
	}
	navigate(t, b, s.URL+"/popup")
	if !has("Open") || has("Send") {
		t.Errorf("after navigating to /popup: Open %v, Send %v; want only Open", has("Open"), has("Send"))
	}
	if _, err := b.Navigate(tctx(t), desktop.Navigation{Action: desktop.NavBack}); err != nil {
		t.Fatal(err)
	}
	if !has("Send") || has("Open") {
		t.Errorf("back on the form: Send %v, Open %v; want only Send", has("Send"), has("Open"))
	}
	if _, err := b.Navigate(tctx(t), desktop.Navigation{Action: desktop.NavForward}); err != nil {
		t.Fatal(err)
	}
	if !has("Open") || has("Send") {
		t.Errorf("forward on /popup: Open %v, Send %v; want only Open", has("Open"), has("Send"))
	}
}

func TestTable3000NearViewportOnly(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/table")
	// The budget is raised: on a machine shared with other builds the walk
	// took 1.5-3.5 s (the DOM snapshot of 3000 rows alone is 2 MB).
	q := desktop.ElementQuery{Budget: 10 * time.Second}
	start := time.Now()
	snap := snapshot(t, b, q)
	took := time.Since(start)
	if took > 8*time.Second {
		t.Errorf("a snapshot of the 3000-row table took %v", took)
	}
	if snap.Truncated {
		t.Errorf("the snapshot is truncated (%s) though the viewport's elements fit", snap.TruncatedBy)
	}
	buttons := 0
	for _, e := range snap.Elements {
		if e.Box.Y < 0 || e.Box.Y+e.Box.H > 800 || e.Box.Empty() {
			t.Errorf("element %s %q at %v is outside the viewport", e.Role, e.Name, e.Box)
		}
		if e.Role == desktop.RoleButton {
			buttons++
		}
	}
	if buttons < 10 || buttons > 60 {
		t.Errorf("%d buttons in the snapshot, want the rows in view (tens)", buttons)
	}
	find(t, snap, desktop.RoleButton, "Edit 0")
	t.Logf("%d elements, %d buttons, %v", len(snap.Elements), buttons, took)
	small := snapshot(t, b, desktop.ElementQuery{MaxElements: 5, Budget: 10 * time.Second})
	if !small.Truncated || small.TruncatedBy != "max_elements" || len(small.Elements) != 5 {
		t.Errorf("MaxElements 5: %d elements, truncated %v by %q", len(small.Elements), small.Truncated, small.TruncatedBy)
	}
	// Scrolled down, the rows in view change and boxes follow.
	in := desktop.NewInput(b)
	p := geom.GlobalPoint{X: 300, Y: 400}
	if err := in.Scroll(tctx(t), &p, desktop.Down, 30, nil); err != nil {
		t.Fatal(err)
	}
	// Wheel scrolling animates: wait until the page stands still.
	last := -1.0
	testenv.WaitUntil(5*time.Second, func() bool {
		y := eval(t, b, "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(window.scrollY))))").(float64)
		still := y > 2000 && y == last
		last = y
		return still
	})
	snap = snapshot(t, b, q)
	for _, e := range snap.Elements {
		if e.Role == desktop.RoleButton && e.Name == "Edit 0" {
			t.Errorf("after scrolling down, Edit 0 is still in the snapshot at %v", e.Box)
		}
	}
	var btn desktop.Element
	for _, e := range snap.Elements {
		if e.Role == desktop.RoleButton {
			btn = e
			break
		}
	}
	if btn.Handle == "" {
		t.Fatal("no button after scrolling")
	}
	hit := eval(t, b, fmt.Sprintf("document.elementFromPoint(%d,%d).textContent", center(btn.Box).X, center(btn.Box).Y))
	if hit != btn.Name {
		t.Errorf("at the centre of %q's box %v the page has %q", btn.Name, btn.Box, hit)
	}
}

func TestCoveredElementNamesTheCover(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/covered")
	snap := snapshot(t, b, desktop.ElementQuery{})
	buy := find(t, snap, desktop.RoleButton, "Buy")
	_, err := b.Reveal(tctx(t), buy.Handle)
	if err == nil || !strings.Contains(err.Error(), `id="overlay"`) || !strings.Contains(err.Error(), "Cookie banner") {
		t.Fatalf("Reveal of a covered button: %v; want an error naming the overlay", err)
	}
	if err := b.Press(tctx(t), buy.Handle); err == nil {
		t.Error("Press of a covered button succeeded")
	}
}

func TestConfirmDialogDoesNotHang(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/dialog")
	snap := snapshot(t, b, desktop.ElementQuery{})
	del := find(t, snap, desktop.RoleButton, "Delete")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Press(ctx, del.Handle); err != nil {
		t.Fatalf("Press(Delete): %v", err)
	}
	s.waitReport(t, "confirm=false")
	var evs []string
	testenv.WaitUntil(3*time.Second, func() bool { evs = append(evs, b.TakeEvents()...); return len(evs) > 0 })
	if len(evs) != 1 || evs[0] != `dialog confirm "Delete?" dismissed` {
		t.Errorf("events = %q", evs)
	}
	// The page still answers.
	if _, err := b.Elements(tctx(t), desktop.ElementQuery{}); err != nil {
		t.Errorf("after the dialog: %v", err)
	}
}

func TestWindowOpenJoinsTabs(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/popup")
	snap := snapshot(t, b, desktop.ElementQuery{})
	if err := b.Press(tctx(t), find(t, snap, desktop.RoleButton, "Open").Handle); err != nil {
		t.Fatal(err)
	}
	var tabs []desktop.Tab
	testenv.WaitUntil(5*time.Second, func() bool {
		tabs, _ = b.Tabs(tctx(t))
		return len(tabs) == 2 && strings.HasSuffix(tabs[0].URL+tabs[1].URL, "/form") && b.tabsAttached() == 2
	})
	if len(tabs) != 2 {
		t.Fatalf("tabs = %+v, want the page and the one it opened", tabs)
	}
	var opened desktop.Tab
	for _, tb := range tabs {
		if strings.HasSuffix(tb.URL, "/form") {
			opened = tb
		}
	}
	if !opened.Ours {
		t.Errorf("the opened tab is not ours: %+v", tabs)
	}
	if _, err := b.SelectTab(tctx(t), opened.ID); err != nil {
		t.Fatal(err)
	}
	find(t, snapshot(t, b, desktop.ElementQuery{}), desktop.RoleButton, "Send")
	if err := b.CloseTab(tctx(t), opened.ID); err != nil {
		t.Fatal(err)
	}
	if title, err := b.ActiveWindowTitle(tctx(t)); err != nil || title != "Popup" {
		t.Errorf("after closing the active tab, the active title is %q, %v; want the other tab's, Popup", title, err)
	}
}

func (b *Backend) tabsAttached() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.tabs)
}

func TestUploadOnlyFromAllowedFolders(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	okDir, badDir := t.TempDir(), t.TempDir()
	good, bad := filepath.Join(okDir, "cv.txt"), filepath.Join(badDir, "secret.txt")
	for _, f := range []string{good, bad} {
		if err := os.WriteFile(f, []byte("hello"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	navigate(t, b, s.URL+"/upload")
	input := snapshot(t, b, desktop.ElementQuery{})
	var fileInput desktop.Element
	for _, e := range input.Elements {
		if e.Name == "Attachment" {
			fileInput = e
		}
	}
	if fileInput.Handle == "" {
		t.Fatalf("no file input in %+v", input.Elements)
	}
	if err := b.Upload(tctx(t), fileInput.Handle, []string{good}); err == nil || !strings.Contains(err.Error(), "no folder is allowed") {
		t.Errorf("Upload with no allowed folder: %v; want an error saying no folder is allowed", err)
	}
	b.opts.UploadDirs = []string{okDir}
	if err := b.Upload(tctx(t), fileInput.Handle, []string{bad}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("Upload from a folder not allowed: %v", err)
	}
	link := filepath.Join(okDir, "link.txt")
	if err := os.Symlink(bad, link); err != nil {
		t.Fatal(err)
	}
	if err := b.Upload(tctx(t), fileInput.Handle, []string{link}); err == nil {
		t.Error("Upload through a symbolic link out of the allowed folder succeeded")
	}
	if err := b.Upload(tctx(t), fileInput.Handle, []string{filepath.Join(okDir, "..", filepath.Base(badDir), "secret.txt")}); err == nil {
		t.Error("Upload through .. out of the allowed folder succeeded")
	}
	if got := eval(t, b, "document.getElementById('file').files.length"); got != float64(0) {
		t.Errorf("refused uploads set %v files", got)
	}
	if err := b.Upload(tctx(t), fileInput.Handle, []string{good}); err != nil {
		t.Fatalf("Upload from the allowed folder: %v", err)
	}
	if got := eval(t, b, "document.getElementById('file').files[0].name"); got != "cv.txt" {
		t.Errorf("the input holds %v", got)
	}
}

func TestDownloadSavedAndReported(t *testing.T) {
	s := newSite(t)
	dir := t.TempDir()
	opts := testOptions()
	opts.DownloadDir = dir
	b, err := newBackend(tctx(t), sharedBrowser(t), opts, true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	navigate(t, b, s.URL+"/download")
	link := find(t, snapshot(t, b, desktop.ElementQuery{}), desktop.RoleLink, "Get the report")
	if err := b.Press(tctx(t), link.Handle); err != nil {
		t.Fatal(err)
	}
	var evs []string
	testenv.WaitUntil(10*time.Second, func() bool {
		evs = append(evs, b.TakeEvents()...)
		return len(evs) > 0
	})
	want := "download report.csv saved to " + filepath.Join(dir, "report.csv")
	if len(evs) == 0 || evs[0] != want {
		t.Errorf("events %q, want %q", evs, want)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "report.csv")); err != nil || string(data) != "a,b\n1,2\n" {
		t.Errorf("the saved file: %q, %v", data, err)
	}
	if d := b.Downloads(); len(d) != 1 || d[0].State != "completed" {
		t.Errorf("Downloads = %+v", d)
	}
}

func TestContextsKeepCookiesApart(t *testing.T) {
	s := newSite(t)
	a, c := newContext(t), newContext(t)
	navigate(t, a, s.URL+"/cookie")
	navigate(t, c, s.URL+"/cookie")
	eval(t, a, `document.cookie = "who=alice; path=/"; true`)
	eval(t, c, `document.cookie = "who=carol; path=/"; true`)
	navigate(t, a, s.URL+"/cookie")
	if got := eval(t, a, "document.cookie"); got != "who=alice" {
		t.Errorf("context A's cookie: %v", got)
	}
	if got := eval(t, c, "document.cookie"); got != "who=carol" {
		t.Errorf("context C's cookie: %v", got)
	}
}

func TestClipboardIsThePagesClipboard(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/clip")
	in := desktop.NewInput(b)
	if err := b.WriteClipboard(tctx(t), "pasted ✓ text"); err != nil {
		t.Fatal(err)
	}
	eval(t, b, "document.getElementById('dst').focus(); true")
	if err := in.Hotkey(tctx(t), []desktop.Key{desktop.Ctrl, "v"}); err != nil {
		t.Fatal(err)
	}
	var got any
	testenv.WaitUntil(3*time.Second, func() bool {
		got = eval(t, b, "document.getElementById('dst').value")
		return got == "pasted ✓ text"
	})
	if got != "pasted ✓ text" {
		t.Errorf("ctrl+v pasted %q, want what WriteClipboard wrote", got)
	}
	eval(t, b, "document.getElementById('src').focus(); document.getElementById('src').select(); true")
	if err := in.Hotkey(tctx(t), []desktop.Key{desktop.Ctrl, "c"}); err != nil {
		t.Fatal(err)
	}
	var clip string
	testenv.WaitUntil(3*time.Second, func() bool {
		clip, _ = b.ReadClipboard(tctx(t))
		return clip == "copy me ✓"
	})
	if clip != "copy me ✓" {
		t.Errorf("after ctrl+c ReadClipboard = %q", clip)
	}
}

func TestNavigateReportsFailuresAndHistory(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	if p := navigate(t, b, s.URL+"/missing"); p.Status != 404 {
		t.Errorf("status of a missing page: %+v", p)
	}
	navigate(t, b, s.URL+"/form")
	navigate(t, b, s.URL+"/cookie")
	p, err := b.Navigate(tctx(t), desktop.Navigation{Action: desktop.NavBack})
	if err != nil || p.Title != "Form" {
		t.Errorf("back: %+v, %v", p, err)
	}
	p, err = b.Navigate(tctx(t), desktop.Navigation{Action: desktop.NavForward, Wait: desktop.WaitDOMContentLoaded})
	if err != nil || p.Title != "Cookie" {
		t.Errorf("forward: %+v, %v", p, err)
	}
	p, err = b.Navigate(tctx(t), desktop.Navigation{Action: desktop.NavReload, Wait: desktop.WaitNetworkIdle})
	if err != nil || p.Title != "Cookie" || p.Status != 200 {
		t.Errorf("reload: %+v, %v", p, err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String() + "/"
	l.Close()
	if _, err := b.Navigate(tctx(t), desktop.Navigation{URL: dead}); err == nil || !strings.Contains(err.Error(), "net::ERR_CONNECTION_REFUSED") {
		t.Errorf("navigate to a closed port: %v", err)
	}
	if _, err := b.Navigate(tctx(t), desktop.Navigation{URL: "chrome://settings"}); err == nil {
		t.Error("navigate to chrome://settings succeeded")
	}
}

func TestCrashedTabErrorsThenRecovers(t *testing.T) {
	s := newSite(t)
	b := newContext(t)
	navigate(t, b, s.URL+"/form")
	tb, _ := b.current(tctx(t))
	// The test crashes the tab itself; the product never opens chrome:// pages.
	_ = tb.s.call(tctx(t), "Page.navigate", map[string]any{"url": "chrome://crash"}, nil)
	testenv.WaitUntil(5*time.Second, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return tb.crashed
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := b.Displays(ctx)
	if err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("the call after the crash: %v; want an error saying the tab crashed", err)
	}
	if ds, err := b.Displays(tctx(t)); err != nil || len(ds) != 1 {
		t.Fatalf("the call after that: %v, %v", ds, err)
	}
	navigate(t, b, s.URL+"/form")
	find(t, snapshot(t, b, desktop.ElementQuery{}), desktop.RoleButton, "Send")
}

func TestKilledBrowserErrorsThenRestarts(t *testing.T) {
	testenv.NeedChromium(t)
	s := newSite(t)
	opts := testOptions()
	opts.Isolated = true
	b, err := Open(tctx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	navigate(t, b, s.URL+"/form")
	b.br.kill()
	testenv.WaitUntil(5*time.Second, func() bool { return !b.br.alive(b.gen) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := b.Navigate(ctx, desktop.Navigation{URL: s.URL + "/form"}); err == nil || !strings.Contains(err.Error(), "browser exited") {
		t.Fatalf("the call after the kill: %v; want an error saying the browser exited", err)
	}
	p, err := b.Navigate(tctx(t), desktop.Navigation{URL: s.URL + "/form"})
	if err != nil || p.Title != "Form" {
		t.Fatalf("the call after that: %+v, %v", p, err)
	}
	find(t, snapshot(t, b, desktop.ElementQuery{}), desktop.RoleButton, "Send")
}

func TestAttachLeavesTheUsersTabAlone(t *testing.T) {
	testenv.NeedChromium(t)
	s := newSite(t)
	path, _, err := Find("")
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: the browser's helper processes may still write to the
	// profile for a moment after the browser is killed.
	profile, err := os.MkdirTemp("", "guiagent-attach-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testenv.WaitUntil(5*time.Second, func() bool { return os.RemoveAll(profile) == nil })
	})
	userURL := s.URL + "/counter"
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
		"--user-data-dir="+profile, userURL)
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var port string
	if !testenv.WaitUntil(15*time.Second, func() bool {
		data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err != nil {
			return false
		}
		port = strings.SplitN(string(data), "\n", 2)[0]
		return port != ""
	}) {
		t.Fatal("chromium wrote no DevToolsActivePort")
	}
	u := "http://127.0.0.1:" + port

	if _, err := Open(tctx(t), Options{URL: "http://192.0.2.1:9222"}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("attach to a remote host: %v; want a refusal", err)
	}

	// The user's tab as it was: its id and its counter.
	userTab := func() (target.Info, string) {
		t.Helper()
		var found target.Info
		testenv.WaitUntil(10*time.Second, func() bool {
			resp, err := http.Get(u + "/json/list")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var list []struct {
				ID, Type, URL, Title string
			}
			_ = jsonDecode(resp, &list)
			for _, e := range list {
				if e.Type == "page" && e.URL == userURL && strings.HasPrefix(e.Title, "Counter ") {
					found = target.Info{TargetID: target.ID(e.ID), URL: e.URL, Title: e.Title}
					return true
				}
			}
			return false
		})
		return found, found.Title
	}
	before, title := userTab()
	if title != "Counter 1" {
		t.Fatalf("the user's tab: %+v", before)
	}

	b, err := Open(tctx(t), Options{URL: u})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	p := navigate(t, b, s.URL+"/form")
	if p.Title != "Form" {
		t.Errorf("our tab: %+v", p)
	}
	tabs, err := b.Tabs(tctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ours, users int
	for _, tb := range tabs {
		if tb.Ours {
			ours++
		} else if tb.ID == string(before.TargetID) {
			users++
		}
	}
	if ours != 1 || users != 1 {
		t.Errorf("tabs %+v: want one of ours and the user's", tabs)
	}
	find(t, snapshot(t, b, desktop.ElementQuery{}), desktop.RoleButton, "Send")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	after, title := userTab()
	if after.TargetID != before.TargetID || title != "Counter 1" {
		t.Errorf("after our Close the user's tab is %+v (title %q), want it unchanged and not reloaded (Counter 1)", after, title)
	}
	// Target.closeTarget is answered before the tab is gone: give it a moment.
	var open []string
	testenv.WaitUntil(5*time.Second, func() bool {
		resp, err := http.Get(u + "/json/list")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list []struct{ Type, URL string }
		_ = jsonDecode(resp, &list)
		open = nil
		for _, e := range list {
			if e.Type == "page" && strings.HasSuffix(e.URL, "/form") {
				open = append(open, e.URL)
			}
		}
		return len(open) == 0
	})
	if len(open) > 0 {
		t.Errorf("our tab is still open 5 s after Close: %v", open)
	}
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

// losing is a transport that loses the next Page.captureScreenshot it
// carries once armed, as Chromium loses a capture sent while a navigation
// commits.
type losing struct {
	transport
	armed, lost atomic.Int32
}

func (l *losing) write(b []byte) error {
	if bytes.Contains(b, []byte(`"Page.captureScreenshot"`)) && l.armed.CompareAndSwap(1, 0) {
		l.lost.Add(1)
		return nil
	}
	return l.transport.write(b)
}

// TestCaptureTheBrowserLosesIsSentAgain: a screenshot right after a form's
// submit whose capture the browser never answers (Chromium loses about 1
// in 60 there under load) still arrives, showing the page the submit
// loaded, and so does one lost on a page that stays.
func TestCaptureTheBrowserLosesIsSentAgain(t *testing.T) {
	testenv.NeedChromium(t)
	s := newSite(t)
	l := &losing{}
	opts := testOptions()
	opts.Isolated = true
	opts.wrap = func(tr transport) transport { l.transport = tr; return l }
	b, err := Open(tctx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	navigate(t, b, s.URL+"/form")
	send := find(t, snapshot(t, b, desktop.ElementQuery{}), desktop.RoleButton, "Send")
	for _, submit := range []bool{true, false} {
		l.armed.Store(1)
		if submit {
			clickAt(t, b, center(send.Box))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		img, err := b.Capture(ctx, geom.Rect{W: b.vp.W, H: b.vp.H}, nil)
		cancel()
		if err != nil {
			t.Fatalf("submit %v: a capture the browser lost: %v", submit, err)
		}
		if l.lost.Load() == 0 {
			t.Fatalf("submit %v: the transport lost no capture; the test tests nothing", submit)
		}
		l.lost.Store(0)
		if img.Rect.Dx() != b.vp.W || img.Rect.Dy() != b.vp.H {
			t.Errorf("submit %v: the screenshot is %v, want the %dx%d viewport", submit, img.Rect, b.vp.W, b.vp.H)
		}
	}
	s.waitReport(t, "submit name=")
}
