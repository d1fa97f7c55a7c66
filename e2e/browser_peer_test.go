package e2e

// guiagent's browser backend beside Playwright MCP (npm @playwright/mcp), both
// over MCP stdio with the official go-sdk client, on the same local pages in
// the same run: TestBrowserBesidePlaywright checks only what is
// deterministic (both see the same page; our snapshot has every element in
// the viewport, each with a ref); BenchmarkBrowserBesidePlaywright measures
// medians of rounds and reports the ratios (b.ReportMetric), as the speed
// targets are checked: in benchmarks, against a baseline measured in the
// same run.
//
// Playwright MCP is installed once per machine with npm (the registry is
// the only network it needs; it uses the system Chromium and downloads no
// browser) into the user's cache folder, under a lock. Without node and npm
// the test fails saying so (it skips only under -short).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/browser"
	gdesktop "github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/testenv"
)

// playwrightMCPVersion is the version of @playwright/mcp measured against.
const playwrightMCPVersion = "0.0.86"

// peerViewport is the viewport of both browsers.
const peerViewport = "1280x800"

// peerTableRows is the size of the table page.
const peerTableRows = 3000

// peerPages are the pages both servers open.
func peerPages() http.Handler {
	var table strings.Builder
	table.WriteString(`<!doctype html><title>Table</title><table>`)
	for i := 0; i < peerTableRows; i++ {
		fmt.Fprintf(&table, `<tr><td>Row %d</td><td><input aria-label="qty %d" value="%d"></td><td><button>Edit %d</button></td></tr>`, i, i, i, i)
	}
	table.WriteString(`</table>`)
	tableHTML := table.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/table":
			fmt.Fprint(w, tableHTML)
		case "/button":
			fmt.Fprint(w, `<!doctype html><title>Button</title><h1>Counter</h1>
<button id="b" onclick="document.getElementById('n').textContent = ++window.count">Press</button>
<p>Pressed <span id="n">0</span> times</p><script>window.count = 0</script>`)
		default:
			http.NotFound(w, r)
		}
	})
}

// peer is one MCP server under measurement.
type peer struct {
	name string
	cs   *mcp.ClientSession
	// tool names and the argument that carries a ref to browser_click.
	navigate, snapshot, screenshot, click, refArg string
}

func (p *peer) call(ctx context.Context, tb testing.TB, name string, args map[string]any) (*mcp.CallToolResult, time.Duration, int) {
	tb.Helper()
	if args == nil {
		args = map[string]any{}
	}
	start := time.Now()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	if err != nil {
		tb.Fatalf("%s %s: %v", p.name, name, err)
	}
	if res.IsError {
		tb.Fatalf("%s %s: %s", p.name, name, resultText(res))
	}
	b, _ := json.Marshal(res)
	return res, took, len(b)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// startOurs starts guiagent serve --backend browser --browser-isolated.
func startOurs(tb testing.TB) *peer {
	tb.Helper()
	testenv.NeedChromium(tb)
	state := tb.TempDir()
	cmd := exec.Command(binary, "serve", "--backend", "browser", "--browser-isolated", "--browser-viewport", peerViewport)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state, "GUI_AGENT_LOG_LEVEL=info"}
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	testenv.DieWithTest(cmd)
	cs := mustDial(tb, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "peer-guiagent"}, logs)
	return &peer{name: "guiagent", cs: cs, navigate: "gui_navigate", snapshot: "gui_snapshot", screenshot: "gui_screenshot", click: "gui_click", refArg: "ref"}
}

// startPlaywright starts Playwright MCP on the system Chromium, headless, in
// an isolated profile, with the same viewport.
func startPlaywright(tb testing.TB) *peer {
	tb.Helper()
	testenv.NeedChromium(tb)
	cli := playwrightMCP(tb)
	chromium, _, err := browser.Find("")
	if err != nil {
		tb.Fatal(err)
	}
	state := tb.TempDir()
	cmd := exec.Command("node", cli, "--browser", "chromium", "--executable-path", chromium, "--headless", "--isolated",
		"--no-sandbox", "--viewport-size", peerViewport, "--output-dir", filepath.Join(state, "out"))
	cmd.Env = append(os.Environ(), "HOME="+state, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	testenv.DieWithTest(cmd)
	cs := mustDial(tb, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "peer-playwright"}, logs)
	p := &peer{name: "playwright-mcp", cs: cs, navigate: "browser_navigate", snapshot: "browser_snapshot", screenshot: "browser_take_screenshot", click: "browser_click", refArg: "ref"}
	// browser_click takes the ref as target in some versions, ref in others.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		tb.Fatalf("playwright-mcp tools/list: %v", err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != p.click {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		var sc struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(b, &sc)
		if _, ok := sc.Properties["target"]; ok {
			p.refArg = "target"
		}
	}
	return p
}

// playwrightMCP installs @playwright/mcp once per machine (under a lock, in
// the user's cache folder) and returns its cli.js.
func playwrightMCP(tb testing.TB) string {
	tb.Helper()
	for _, prog := range []string{"node", "npm"} {
		if _, err := exec.LookPath(prog); err != nil {
			if testing.Short() {
				tb.Skipf("%s is not installed (needed to run Playwright MCP beside guiagent)", prog)
			}
			tb.Fatalf("%s is not installed: the comparison with Playwright MCP needs Node.js and npm (apt-get install nodejs npm)", prog)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "guiagent-test", "playwright-mcp-"+playwrightMCPVersion)
	cli := filepath.Join(dir, "node_modules", "@playwright", "mcp", "cli.js")
	done := filepath.Join(dir, "installed")
	if _, err := os.Stat(done); err == nil {
		return cli
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock := lockDir(tb, filepath.Join(dir, "lock"))
	defer unlock()
	if _, err := os.Stat(done); err == nil { // another test installed it meanwhile
		return cli
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error",
		"@playwright/mcp@"+playwrightMCPVersion)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm install @playwright/mcp@%s into %s: %v\n%s", playwrightMCPVersion, dir, err, out)
	}
	if _, err := os.Stat(cli); err != nil {
		tb.Fatalf("npm installed @playwright/mcp but %s is missing: %v", cli, err)
	}
	if err := os.WriteFile(done, []byte(time.Now().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return cli
}

// lockDir takes a lock that other test processes respect: a file made with
// O_EXCL, taken over when older than ten minutes (its holder died).
func lockDir(tb testing.TB, path string) func() {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(path) }
		}
		if !errors.Is(err, os.ErrExist) {
			tb.Fatalf("lock %s: %v", path, err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > 10*time.Minute {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			tb.Fatalf("lock %s: still held after 10 minutes", path)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// peerSetup serves the pages on 127.0.0.1 and starts both servers.
func peerSetup(tb testing.TB) (string, *peer, *peer) {
	tb.Helper()
	srv := httptest.NewServer(peerPages())
	tb.Cleanup(srv.Close)
	return srv.URL, startOurs(tb), startPlaywright(tb)
}

func (p *peer) open(ctx context.Context, tb testing.TB, url string) {
	tb.Helper()
	p.call(ctx, tb, p.navigate, map[string]any{"url": url})
}

var pwRef = regexp.MustCompile(`\[ref=([^\]]+)\]`)

// pwButtonRef finds the ref of the button named name in a Playwright snapshot.
func pwButtonRef(text, name string) string {
	m := regexp.MustCompile(`button "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=([^\]]+)\]`).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// ourSnapshot is what gui_snapshot's structured content says.
type ourSnapshot struct {
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncated_by"`
	Elements    []struct {
		Ref  string `json:"ref"`
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"elements"`
}

func parseOurs(tb testing.TB, res *mcp.CallToolResult) ourSnapshot {
	tb.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		tb.Fatal(err)
	}
	var s ourSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatalf("gui_snapshot's structured content: %v", err)
	}
	return s
}

// inViewport asks Playwright's browser (the same Chromium, page and
// viewport) which buttons and fields of the table intersect the viewport:
// the elements our snapshot must each have with a ref.
func inViewport(ctx context.Context, tb testing.TB, pw *peer) []string {
	tb.Helper()
	res, _, _ := pw.call(ctx, tb, "browser_evaluate", map[string]any{"function": `() => JSON.stringify([...document.querySelectorAll('button, input')]
		.filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth; })
		.map(e => (e.tagName === 'BUTTON' ? 'button ' + e.textContent : 'textbox ' + e.getAttribute('aria-label'))))`})
	// "### Result", then the value as JSON: here a string holding the list.
	text := resultText(res)
	_, rest, _ := strings.Cut(text, "### Result\n")
	line, _, _ := strings.Cut(rest, "\n")
	var list string
	var names []string
	if err := json.Unmarshal([]byte(line), &list); err != nil {
		tb.Fatalf("browser_evaluate gave %q: %v", text, err)
	}
	if err := json.Unmarshal([]byte(list), &names); err != nil {
		tb.Fatalf("browser_evaluate's list %q: %v", list, err)
	}
	return names
}

// missingInOurs lists the elements of want ("role name") our snapshot lacks.
func missingInOurs(s ourSnapshot, want []string) []string {
	have := map[string]bool{}
	for _, e := range s.Elements {
		if e.Ref != "" {
			have[e.Role+" "+e.Name] = true
		}
	}
	var miss []string
	for _, w := range want {
		if !have[w] {
			miss = append(miss, w)
		}
	}
	return miss
}

// TestBrowserBesidePlaywright checks that both servers see the same pages:
// the button, by ref, in each; our snapshot of the 3000-row table has every
// button and field in the viewport with a ref, and is not truncated. No
// timing is asserted here.
func TestBrowserBesidePlaywright(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two browsers and Playwright MCP")
	}
	base, ours, pw := peerSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	ours.open(ctx, t, base+"/button")
	pw.open(ctx, t, base+"/button")
	snap := parseOurs(t, first(ours.call(ctx, t, ours.snapshot, nil)))
	ref := ""
	for _, e := range snap.Elements {
		if e.Role == "button" && e.Name == "Press" {
			ref = e.Ref
		}
	}
	if ref == "" {
		t.Fatalf("guiagent's snapshot has no button Press: %+v", snap.Elements)
	}
	pwText := resultText(first(pw.call(ctx, t, pw.snapshot, nil)))
	pref := pwButtonRef(pwText, "Press")
	if pref == "" {
		t.Fatalf("Playwright MCP's snapshot has no button Press:\n%s", pwText)
	}
	ours.call(ctx, t, ours.click, map[string]any{"ref": ref})
	pw.call(ctx, t, pw.click, map[string]any{"element": "Press button", pw.refArg: pref})
	after := resultText(first(pw.call(ctx, t, pw.snapshot, nil)))
	if !strings.Contains(after, "Pressed 1 times") && !strings.Contains(after, `"1"`) {
		t.Errorf("after Playwright's click the page does not say 1:\n%s", after)
	}
	snap = parseOurs(t, first(ours.call(ctx, t, ours.snapshot, nil)))
	found := false
	for _, e := range snap.Elements {
		if strings.Contains(e.Name, "Pressed 1 times") || e.Name == "1" {
			found = true
		}
	}
	if !found {
		t.Errorf("after guiagent's click the snapshot does not show the count 1: %+v", snap.Elements)
	}

	ours.open(ctx, t, base+"/table")
	pw.open(ctx, t, base+"/table")
	want := inViewport(ctx, t, pw)
	if len(want) < 20 {
		t.Fatalf("only %d buttons and fields in Playwright's viewport: %q", len(want), want)
	}
	// The first snapshot of a page builds the browser's accessibility tree;
	// the default budget holds for the ones after it.
	ours.call(ctx, t, ours.snapshot, map[string]any{})
	res, _, _ := ours.call(ctx, t, ours.snapshot, map[string]any{})
	snap = parseOurs(t, res)
	if snap.Truncated {
		t.Errorf("guiagent's snapshot of the table is truncated (%s)", snap.TruncatedBy)
	}
	if miss := missingInOurs(snap, want); len(miss) > 0 {
		t.Errorf("guiagent's snapshot lacks %d of the %d buttons and fields in the viewport: %q", len(miss), len(want), miss)
	}
}

func first(res *mcp.CallToolResult, _ time.Duration, _ int) *mcp.CallToolResult { return res }

// median of ds.
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkBrowserBesidePlaywright measures, rounds interleaved so both
// servers share the machine's load: a screenshot; a click by ref (call to
// result); a snapshot of the 3000-row table (time, bytes on the wire, refs,
// every button and field in the viewport present). It reports medians and
// the ratios Playwright/guiagent (speed-up) and guiagent/Playwright
// (bytes), and the memory of a second browser context against an empty
// Xvfb of 1280x800.
//
//	go test ./e2e -run '^$' -bench BrowserBesidePlaywright -benchtime 1x
func BenchmarkBrowserBesidePlaywright(b *testing.B) {
	base, ours, pw := peerSetup(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rounds := 9
	if v, err := strconv.Atoi(os.Getenv("PEER_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	type series struct{ ours, pw []time.Duration }
	var shot, click, snap series
	var ourShotBytes, pwShotBytes, ourSnapBytes, pwSnapBytes, ourRefs, pwRefs, missing int

	for b.Loop() {
		// Screenshots.
		ours.open(ctx, b, base+"/button")
		pw.open(ctx, b, base+"/button")
		for i := 0; i < rounds; i++ {
			_, d, n := ours.call(ctx, b, ours.screenshot, map[string]any{})
			shot.ours, ourShotBytes = append(shot.ours, d), n
			_, d, n = pw.call(ctx, b, pw.screenshot, map[string]any{})
			shot.pw, pwShotBytes = append(shot.pw, d), n
		}
		// Clicks by ref.
		snapRes := parseOurs(b, first(ours.call(ctx, b, ours.snapshot, nil)))
		ref := ""
		for _, e := range snapRes.Elements {
			if e.Role == "button" && e.Name == "Press" {
				ref = e.Ref
			}
		}
		pref := pwButtonRef(resultText(first(pw.call(ctx, b, pw.snapshot, nil))), "Press")
		if ref == "" || pref == "" {
			b.Fatalf("no button Press: guiagent ref %q, Playwright ref %q", ref, pref)
		}
		for i := 0; i < rounds; i++ {
			_, d, _ := ours.call(ctx, b, ours.click, map[string]any{"ref": ref})
			click.ours = append(click.ours, d)
			res, d, _ := pw.call(ctx, b, pw.click, map[string]any{"element": "Press button", pw.refArg: pref})
			click.pw = append(click.pw, d)
			if r := pwButtonRef(resultText(res), "Press"); r != "" {
				pref = r
			}
		}
		// The 3000-row table; the first snapshot of each builds what it
		// keeps (the browser's accessibility tree) and is not counted.
		ours.open(ctx, b, base+"/table")
		pw.open(ctx, b, base+"/table")
		want := inViewport(ctx, b, pw)
		ours.call(ctx, b, ours.snapshot, map[string]any{})
		pw.call(ctx, b, pw.snapshot, nil)
		for i := 0; i < rounds; i++ {
			res, d, n := ours.call(ctx, b, ours.snapshot, map[string]any{})
			snap.ours, ourSnapBytes = append(snap.ours, d), n
			s := parseOurs(b, res)
			ourRefs = len(s.Elements)
			missing = len(missingInOurs(s, want))
			res, d, n = pw.call(ctx, b, pw.snapshot, nil)
			snap.pw, pwSnapBytes = append(snap.pw, d), n
			pwRefs = len(pwRef.FindAllString(resultText(res), -1))
		}
	}
	b.StopTimer()
	ratio := func(s series) float64 { return float64(median(s.pw)) / float64(median(s.ours)) }
	b.ReportMetric(float64(median(shot.ours).Microseconds())/1000, "ours-shot-ms")
	b.ReportMetric(float64(median(shot.pw).Microseconds())/1000, "pw-shot-ms")
	b.ReportMetric(ratio(shot), "shot-speedup")
	b.ReportMetric(float64(median(click.ours).Microseconds())/1000, "ours-click-ms")
	b.ReportMetric(float64(median(click.pw).Microseconds())/1000, "pw-click-ms")
	b.ReportMetric(ratio(click), "click-speedup")
	b.ReportMetric(float64(median(snap.ours).Microseconds())/1000, "ours-snap-ms")
	b.ReportMetric(float64(median(snap.pw).Microseconds())/1000, "pw-snap-ms")
	b.ReportMetric(ratio(snap), "snap-speedup")
	b.ReportMetric(float64(ourSnapBytes)/float64(pwSnapBytes), "snap-bytes-ratio")
	b.ReportMetric(float64(missing), "viewport-missing")
	mem := contextMemory(b, base)
	b.Logf("\n%-26s %14s %14s %10s\n%-26s %14v %14v %9.1fx\n%-26s %14v %14v %9.1fx\n%-26s %14v %14v %9.1fx\n%-26s %14d %14d %9.3f\n%-26s %14d %14d\n%-26s %14d\n%-26s %14d %14s\n%s",
		"median of "+strconv.Itoa(rounds), "guiagent", "playwright-mcp", "speed-up",
		"screenshot", median(shot.ours).Round(time.Millisecond), median(shot.pw).Round(time.Millisecond), ratio(shot),
		"click by ref", median(click.ours).Round(time.Millisecond), median(click.pw).Round(time.Millisecond), ratio(click),
		"snapshot 3000 rows", median(snap.ours).Round(time.Millisecond), median(snap.pw).Round(time.Millisecond), ratio(snap),
		"snapshot bytes (wire)", ourSnapBytes, pwSnapBytes, float64(ourSnapBytes)/float64(pwSnapBytes),
		"snapshot refs", ourRefs, pwRefs,
		"viewport elements missing", missing,
		"screenshot bytes (wire)", ourShotBytes, strconv.Itoa(pwShotBytes),
		mem)
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"screenshot speed-up", ratio(shot), 3}, {"click speed-up", ratio(click), 10}, {"snapshot speed-up", ratio(snap), 5},
		{"snapshot bytes Playwright/guiagent", float64(pwSnapBytes) / float64(ourSnapBytes), 10}} {
		if c.got < c.want {
			b.Logf("short of target: %s %.1fx, target %.0fx", c.what, c.got, c.want)
		}
	}
	if missing > 0 {
		b.Errorf("guiagent's snapshot lacks %d of the buttons and fields in the viewport", missing)
	}
}

// contextMemory measures what a browser context with a page costs (the
// growth of the Chromium process tree's proportional set size) against an
// Xvfb of 1280x800 with nothing on it, and reports both.
func contextMemory(b *testing.B, base string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	br, err := browser.Launch(ctx, browser.Options{Dialogs: browser.DialogDismiss})
	if err != nil {
		b.Fatalf("launch: %v", err)
	}
	defer br.Close()
	root := chromiumChild()
	if root == 0 {
		return "memory: the browser's process was not found"
	}
	settle := func() int64 {
		time.Sleep(time.Second)
		return treePSS(b, root)
	}
	open := func() {
		be, err := br.NewContext(ctx, geom.Size{W: 1280, H: 800})
		if err != nil {
			b.Fatalf("context: %v", err)
		}
		if _, err := be.Navigate(ctx, gdesktop.Navigation{URL: base + "/button"}); err != nil {
			b.Fatalf("navigate: %v", err)
		}
	}
	open()
	one := settle()
	open()
	two := settle()
	open()
	three := settle()
	perContext := ((two - one) + (three - two)) / 2
	xvfb := xvfbPSS(b)
	const mb = 1 << 20
	b.ReportMetric(float64(perContext)/mb, "context-MB")
	b.ReportMetric(float64(xvfb)/mb, "xvfb-MB")
	return fmt.Sprintf("memory (PSS): a browser context with a page %.1f MB (two: %.1f MB); an empty Xvfb 1280x800 %.1f MB",
		float64(perContext)/mb, float64(2*perContext)/mb, float64(xvfb)/mb)
}

// chromiumChild is the process id of a Chromium this test process started
// (0: none).
func chromiumChild() int {
	me := os.Getpid()
	for pid, pp := range processes() {
		if pp.ppid == me && strings.Contains(pp.comm, "chrom") {
			return pid
		}
	}
	return 0
}

type procInfo struct {
	ppid int
	comm string
}

// processes reads every process's parent and name from /proc.
func processes() map[int]procInfo {
	out := map[int]procInfo{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out[pid] = procInfo{ppid: ppid, comm: s[i+1 : j]}
	}
	return out
}

// xvfbPSS starts an Xvfb of 1280x800x24 with nothing on it and reads its
// proportional set size (bytes, as treePSS) once it listens.
func xvfbPSS(b *testing.B) int64 {
	testenv.NeedX(b)
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		b.Fatalf("Xvfb: %v", err)
	}
	w.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	buf := make([]byte, 16)
	_ = r.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := r.Read(buf); err != nil {
		b.Fatalf("Xvfb did not say its display: %v", err)
	}
	time.Sleep(time.Second)
	return pss(cmd.Process.Pid)
}
