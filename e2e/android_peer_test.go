package e2e

// guiagent's Android backend beside mobile-mcp (npm @mobilenext/mobile-mcp),
// both over MCP stdio with the official go-sdk client, against the same fake
// phone (androidtest) through the same private adb server in the same run.
// mobile-mcp runs in both of its modes: the default, which runs its
// mobilecli binary for each call (mobilecli keeps a daemon under
// $HOME/.mobilecli, here a private HOME, stopped at the end), and
// MOBILEMCP_LEGACY_ROBOT=1, which runs adb itself; the benchmark takes its
// faster mode for each call.
//
// TestAndroidBesideMobileMCP checks only what is deterministic: guiagent's
// tap lands and its Unicode typing arrives; what mobile-mcp does with the
// same Unicode is recorded (and, where it fails, guiagent must succeed);
// guiagent's screenshot is a scaled JPEG, and what mobile-mcp returns is
// checked for its format and size. BenchmarkAndroidBesideMobileMCP measures
// medians of rounds of a tap, an element list and a screenshot, for each
// server and for `adb shell input tap` run as a process, reports them and
// their ratios with b.ReportMetric, and counts the adb commands of one
// guiagent tap in the fake phone's log.
//
// mobile-mcp is installed once per machine with npm (the registry is the
// only network it needs) into the user's cache folder, under a lock.
// Without node and npm the test fails saying so (it skips only under -short).

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/testenv"
)

// mobileMCPVersion is the version of @mobilenext/mobile-mcp measured against.
const mobileMCPVersion = "1.0.4"

// peerUnicode is the text both servers type: Hebrew, CJK and an emoji.
const peerUnicode = "שלום 世界 🙂"

// mobileMCPDir installs @mobilenext/mobile-mcp once per machine (under a
// lock, in the user's cache folder) and returns the folder it is in.
func mobileMCPDir(tb testing.TB) string {
	tb.Helper()
	testenv.NeedNode(tb)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "guiagent-test", "mobile-mcp-"+mobileMCPVersion)
	done := filepath.Join(dir, "installed")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock := lockDir(tb, filepath.Join(dir, "lock"))
	defer unlock()
	if _, err := os.Stat(done); err == nil { // another test installed it meanwhile
		return dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error",
		"@mobilenext/mobile-mcp@"+mobileMCPVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("npm install @mobilenext/mobile-mcp@%s into %s: %v\n%s", mobileMCPVersion, dir, err, out)
	}
	for _, f := range []string{mobileMCPIndex(dir), mobilecliPath(dir)} {
		if _, err := os.Stat(f); err != nil {
			tb.Fatalf("npm installed @mobilenext/mobile-mcp but %s is missing: %v", f, err)
		}
	}
	if err := os.WriteFile(done, []byte(time.Now().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func mobileMCPIndex(dir string) string {
	return filepath.Join(dir, "node_modules", "@mobilenext", "mobile-mcp", "lib", "index.js")
}

func mobilecliPath(dir string) string {
	return filepath.Join(dir, "node_modules", "@mobilenext", "mobilecli-linux-amd64", "mobilecli-linux-amd64")
}

// droid is one MCP server driving the fake phone.
type droid struct {
	name string
	cs   *mcp.ClientSession
	// device is mobile-mcp's device argument ("" for guiagent).
	device string
	logs   *testenv.Buffer
}

// call calls a tool and returns its result and round trip; a protocol error
// fails the test, a tool error is returned in the result.
func (d *droid) call(tb testing.TB, name string, args map[string]any) (*mcp.CallToolResult, time.Duration) {
	tb.Helper()
	if args == nil {
		args = map[string]any{}
	}
	if d.device != "" {
		args["device"] = d.device
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	if err != nil {
		tb.Fatalf("%s %s: %v\nserver log:\n%s", d.name, name, err, d.logs)
	}
	return res, took
}

// must is call, failing the test on a tool error too.
func (d *droid) must(tb testing.TB, name string, args map[string]any) (*mcp.CallToolResult, time.Duration) {
	tb.Helper()
	res, took := d.call(tb, name, args)
	if res.IsError {
		tb.Fatalf("%s %s(%v): %s\nserver log:\n%s", d.name, name, args, textOf(res), d.logs)
	}
	return res, took
}

// startGuiagentAndroid starts `guiagent serve --backend android` on dev.
func startGuiagentAndroid(tb testing.TB, dev *androidtest.Device) *droid {
	tb.Helper()
	state := tb.TempDir()
	cmd := exec.Command(binary, "serve", "--backend", "android", "--adb", dev.Server, "--device", dev.Serial)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state, "GUI_AGENT_LOG_LEVEL=info"}
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	testenv.DieWithTest(cmd)
	cs := mustDial(tb, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "peer-guiagent"}, logs)
	return &droid{name: "guiagent", cs: cs, logs: logs}
}

// startMobileMCP starts mobile-mcp over stdio against dev's adb server, in
// its default (mobilecli) mode or, with legacy, its adb mode, with a private
// HOME; mobilecli's daemon is stopped at the test's end. It checks the
// tools the measurements use and that the device is listed.
func startMobileMCP(tb testing.TB, dev *androidtest.Device, legacy bool) *droid {
	tb.Helper()
	dir := mobileMCPDir(tb)
	home := tb.TempDir()
	env := append(slices.Clone(dev.Env), "HOME="+home, "ANDROID_ADB_SERVER_PORT="+strconv.Itoa(dev.ServerPort),
		"PATH="+filepath.Dir(dev.ADBPath)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MOBILEMCP_DISABLE_TELEMETRY=1", "MOBILECLI_PATH="+mobilecliPath(dir))
	name := "mobile-mcp"
	if legacy {
		env = append(env, "MOBILEMCP_LEGACY_ROBOT=1")
		name = "mobile-mcp-legacy"
	}
	tb.Cleanup(func() { stopMobilecli(tb, dir, env, home) })
	cmd := exec.Command("node", mobileMCPIndex(dir))
	cmd.Env = env
	cmd.Dir = home
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	testenv.DieWithTest(cmd)
	cs := mustDial(tb, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "peer-" + name}, logs)
	d := &droid{name: name, cs: cs, logs: logs}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		tb.Fatalf("%s tools/list: %v", name, err)
	}
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = true
	}
	for _, want := range []string{"mobile_list_available_devices", "mobile_click_on_screen_at_coordinates",
		"mobile_list_elements_on_screen", "mobile_take_screenshot", "mobile_type_keys"} {
		if !have[want] {
			tb.Fatalf("%s %s has no tool %s (tools: %v)", name, mobileMCPVersion, want, have)
		}
	}
	res, _ := d.must(tb, "mobile_list_available_devices", nil)
	if !strings.Contains(textOf(res), dev.Serial) {
		tb.Fatalf("%s does not list the fake phone %s: %s\nserver log:\n%s", name, dev.Serial, textOf(res), logs)
	}
	d.device = dev.Serial
	return d
}

// stopMobilecli stops the mobilecli daemon a mobile-mcp started under home.
func stopMobilecli(tb testing.TB, dir string, env []string, home string) {
	if _, err := os.Stat(filepath.Join(home, ".mobilecli")); err != nil {
		return // never started
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mobilecliPath(dir), "daemon", "stop")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Logf("mobilecli daemon stop: %v: %s", err, out)
	}
}

// imageOf returns the first image of a result: its MIME type, the format
// its bytes decode as, and its size.
func imageOf(tb testing.TB, who string, res *mcp.CallToolResult) (mime, format string, size image.Point) {
	tb.Helper()
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			cfg, f, err := imaging.DecodeConfig(ic.Data)
			if err != nil {
				tb.Fatalf("%s's screenshot (%s, %d bytes) does not decode: %v", who, ic.MIMEType, len(ic.Data), err)
			}
			return ic.MIMEType, f, image.Pt(cfg.Width, cfg.Height)
		}
	}
	tb.Fatalf("%s's screenshot has no image: %s", who, textOf(res))
	return "", "", image.Point{}
}

// centreOf is the centre, in the phone's pixels, of a widget of the fake's
// counter app given at fractions of the screen (androidtest.IncrementAt...).
func centreOf(f [4]float64) (int, int) {
	c := androidtest.DefaultConfig()
	return int((f[0] + f[2]) / 2 * float64(c.Width)), int((f[1] + f[3]) / 2 * float64(c.Height))
}

// scaleOf is the phone's pixels per point (density / 160).
func scaleOf() float64 { return float64(androidtest.DefaultConfig().Density) / 160 }

// TestAndroidBesideMobileMCP: guiagent and mobile-mcp (both modes) on the
// same fake phone. No timing is asserted here.
func TestAndroidBesideMobileMCP(t *testing.T) {
	testenv.NeedNode(t)
	dev := androidtest.Start(t)
	phone := dev.Phone
	ours := startGuiagentAndroid(t, dev)
	peers := []*droid{startMobileMCP(t, dev, false), startMobileMCP(t, dev, true)}

	// A tap lands: guiagent's by screen point.
	px, py := centreOf(androidtest.IncrementAt)
	before := phone.Counter()
	ours.must(t, "gui_click", map[string]any{"x": float64(px) / scaleOf(), "y": float64(py) / scaleOf(), "space": "screen"})
	if !testenv.WaitUntil(5*time.Second, func() bool { return phone.Counter() == before+1 }) {
		t.Errorf("guiagent's tap on Increment: the counter is %d, want %d", phone.Counter(), before+1)
	}
	for _, p := range peers {
		before := phone.Counter()
		res, _ := p.call(t, "mobile_click_on_screen_at_coordinates", map[string]any{"x": px, "y": py})
		if got := phone.Counter(); got != before+1 {
			t.Logf("%s's tap on Increment: %q; the counter is %d, want %d", p.name, textOf(res), got, before+1)
		}
	}

	// Unicode typed into the name field: guiagent by ref, mobile-mcp into
	// the focused field after its own tap on it. mobile-mcp 1.0.4's legacy
	// mode refuses text outside ASCII unless the DeviceKit app is installed;
	// its default mode pushes a helper .dex to set the clipboard and pastes,
	// which the fake cannot run (its adb push already fails: the fake
	// announces stat_v2 without serving STA2), so that failure says nothing
	// about a real phone.
	nx, ny := centreOf(androidtest.NameAt)
	failed := map[string]string{}
	for _, p := range peers {
		phone.SetField("name", "")
		phone.SetField("", "")
		p.call(t, "mobile_click_on_screen_at_coordinates", map[string]any{"x": nx, "y": ny})
		res, _ := p.call(t, "mobile_type_keys", map[string]any{"text": peerUnicode, "submit": false})
		got := phone.FieldText("name")
		t.Logf("%s typed %q: the field holds %q; it answered (error %v): %q", p.name, peerUnicode, got, res.IsError, textOf(res))
		if got != peerUnicode {
			failed[p.name] = fmt.Sprintf("the field holds %q; %q", got, textOf(res))
		}
	}
	phone.SetField("name", "")
	phone.SetField("", "")
	res, _ := ours.must(t, "gui_snapshot", nil)
	var snap mcpserver.SnapshotResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatalf("gui_snapshot: %v: %s", err, b)
	}
	field := "" // the first text field that is not the password
	for _, e := range snap.Elements {
		if string(e.Role) == "textbox" && !slices.Contains(e.States, "protected") && field == "" {
			field = e.Ref
		}
	}
	if field == "" {
		t.Fatalf("no text field in guiagent's snapshot: %+v", snap.Elements)
	}
	ours.must(t, "gui_type", map[string]any{"ref": field, "text": peerUnicode, "mode": "replace"})
	if got := phone.FieldText("name"); got != peerUnicode {
		t.Errorf("guiagent typed %q by ref: the field holds %q", peerUnicode, got)
		for name, why := range failed {
			t.Errorf("  and %s failed too: %s", name, why)
		}
	}
	for _, p := range peers {
		if why, ok := failed[p.name]; ok {
			t.Logf("Unicode typing: %s fails (%s) where guiagent succeeds", p.name, why)
		} else {
			t.Logf("Unicode typing: %s succeeds", p.name)
		}
	}

	// Screenshots: guiagent's is a JPEG scaled down from 1080x2400.
	cfg := androidtest.DefaultConfig()
	res, _ = ours.must(t, "gui_screenshot", nil)
	mime, format, size := imageOf(t, ours.name, res)
	t.Logf("guiagent's screenshot: %s (%s) %dx%d", mime, format, size.X, size.Y)
	if mime != "image/jpeg" || format != "jpeg" {
		t.Errorf("guiagent's screenshot is %s (decodes as %s), want image/jpeg", mime, format)
	}
	if size.X >= cfg.Width || size.Y >= cfg.Height || size.X*cfg.Height/size.Y < cfg.Width-8 || size.X*cfg.Height/size.Y > cfg.Width+8 {
		t.Errorf("guiagent's screenshot is %dx%d, want smaller than the phone's %dx%d with its aspect", size.X, size.Y, cfg.Width, cfg.Height)
	}
	for _, p := range peers {
		res, _ := p.must(t, "mobile_take_screenshot", nil)
		mime, format, size := imageOf(t, p.name, res)
		t.Logf("%s's screenshot: %s (%s) %dx%d", p.name, mime, format, size.X, size.Y)
		if mime == "image/png" && format != "png" || mime == "image/jpeg" && format != "jpeg" {
			t.Errorf("%s's screenshot says %s but decodes as %s", p.name, mime, format)
		}
	}
}

// peerRounds is how many rounds of each call the benchmark measures
// (GUIAGENT_PEER_ROUNDS overrides it).
func peerRounds() int {
	if n, err := strconv.Atoi(os.Getenv("GUIAGENT_PEER_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 15
}

// adbTap runs `adb shell input tap X Y` as a process against dev and
// returns how long it took.
func adbTap(tb testing.TB, dev *androidtest.Device, x, y int) time.Duration {
	tb.Helper()
	cmd := exec.Command(dev.ADBPath, "-P", strconv.Itoa(dev.ServerPort), "-s", dev.Serial, "shell", "input", "tap", strconv.Itoa(x), strconv.Itoa(y))
	cmd.Env = dev.Env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		tb.Fatalf("adb shell input tap: %v: %s", err, out)
	}
	return took
}

// BenchmarkAndroidBesideMobileMCP measures, on one fake phone behind one adb
// server, the medians of rounds of a tap at a point, an element list and a
// screenshot: guiagent (gui_click x,y; gui_snapshot; gui_screenshot),
// mobile-mcp in its faster mode for each call (default or legacy), and a tap
// with `adb shell input tap` run as a process. It reports the medians (ms),
// the ratios (theirs / ours) and the adb commands of one guiagent tap.
//
//	go test -run XXX -bench BenchmarkAndroidBesideMobileMCP -benchtime=1x ./e2e/
func BenchmarkAndroidBesideMobileMCP(b *testing.B) {
	testenv.NeedNode(b)
	dev := androidtest.Start(b)
	phone := dev.Phone
	ours := startGuiagentAndroid(b, dev)
	peers := []*droid{startMobileMCP(b, dev, false), startMobileMCP(b, dev, true)}
	px, py := centreOf(androidtest.IncrementAt)
	s := scaleOf()

	// guiagent takes the screen's size from a screenshot less than 500 ms
	// old, else from a new screencap's header. An agent's tap comes after
	// the model's answer, seconds after its screenshot: the measured tap
	// waits until the size is stale (lastCapture: guiagent's last capture).
	var lastCapture time.Time
	tapNow := func() time.Duration {
		_, took := ours.must(b, "gui_click", map[string]any{"x": float64(px) / s, "y": float64(py) / s, "space": "screen"})
		return took
	}
	ourTap := func() time.Duration {
		time.Sleep(time.Until(lastCapture.Add(600 * time.Millisecond)))
		took := tapNow()
		lastCapture = time.Now()
		return took
	}
	ourCapture := func(tool string) func() time.Duration {
		return func() time.Duration {
			_, took := ours.must(b, tool, nil)
			lastCapture = time.Now()
			return took
		}
	}
	peerTap := func(d *droid) time.Duration {
		_, took := d.must(b, "mobile_click_on_screen_at_coordinates", map[string]any{"x": px, "y": py})
		return took
	}
	ops := []struct {
		name      string
		ours      func() time.Duration
		peer      func(d *droid) time.Duration
		withAdbOp bool
	}{
		{"tap", ourTap, peerTap, true},
		{"list", ourCapture("gui_snapshot"),
			func(d *droid) time.Duration { _, took := d.must(b, "mobile_list_elements_on_screen", nil); return took }, false},
		{"shot", ourCapture("gui_screenshot"),
			func(d *droid) time.Duration { _, took := d.must(b, "mobile_take_screenshot", nil); return took }, false},
	}

	// One of each first (connections, caches, mobilecli's daemon), then the
	// adb commands of one tap each.
	for _, o := range ops {
		o.ours()
		for _, p := range peers {
			o.peer(p)
		}
	}
	// The shell commands the phone ran for one call of each: "call/server".
	cmds := map[string][]string{}
	for _, o := range ops {
		phone.Commands()
		o.ours()
		cmds[o.name+"/guiagent"] = phone.Commands()
		for _, p := range peers {
			o.peer(p)
			cmds[o.name+"/"+p.name] = phone.Commands()
		}
	}
	adbTap(b, dev, px, py)
	cmds["tap/adb-process"] = phone.Commands()
	ours.must(b, "gui_screenshot", nil)
	phone.Commands()
	tapNow()
	freshCmds := phone.Commands()
	ourCmds := cmds["tap/guiagent"]

	rounds := peerRounds()
	series := map[string][]time.Duration{}
	taps := 0
	before := phone.Counter()
	b.ResetTimer()
	for range b.N {
		for range rounds {
			for _, o := range ops {
				series[o.name+"/guiagent"] = append(series[o.name+"/guiagent"], o.ours())
				for _, p := range peers {
					series[o.name+"/"+p.name] = append(series[o.name+"/"+p.name], o.peer(p))
				}
				if o.withAdbOp {
					series[o.name+"/adb-process"] = append(series[o.name+"/adb-process"], adbTap(b, dev, px, py))
					taps += 2 + len(peers)
				}
			}
			// A tap right after a screenshot, while guiagent still
			// knows the screen's size.
			ourCapture("gui_screenshot")()
			series["tap-fresh/guiagent"] = append(series["tap-fresh/guiagent"], tapNow())
			taps++
		}
	}
	b.StopTimer()
	if got := phone.Counter() - before; got != taps {
		b.Errorf("the counter went up by %d in %d taps: some taps did not land", got, taps)
	}

	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var table strings.Builder
	fmt.Fprintf(&table, "%d rounds on the fake phone (1080x2400) through one adb server; medians in ms\n", rounds*b.N)
	fmt.Fprintf(&table, "%-5s %9s %11s %18s %12s  %-34s %s\n", "call", "guiagent", "mobile-mcp", "mobile-mcp-legacy", "adb-process", "faster mobile-mcp / guiagent", "adb-process / guiagent")
	fastest := map[string]string{} // the faster mobile-mcp mode for each call
	for _, o := range ops {
		g := median(series[o.name+"/guiagent"])
		best, bestName := time.Duration(0), ""
		cells := []string{}
		for _, p := range peers {
			m := median(series[o.name+"/"+p.name])
			cells = append(cells, fmt.Sprintf("%.1f", ms(m)))
			if bestName == "" || m < best {
				best, bestName = m, p.name
			}
		}
		ratio := float64(best) / float64(g)
		fastest[o.name] = bestName
		b.ReportMetric(ms(g), o.name+"-guiagent-ms")
		b.ReportMetric(ms(best), o.name+"-mobilemcp-ms")
		b.ReportMetric(ratio, o.name+"-mobilemcp/guiagent")
		want := 2.0
		if o.name == "shot" {
			want = 1
		}
		vs := fmt.Sprintf("%.2f (%s; want >= %g)", ratio, bestName, want)
		adbCell, adbVs := "-", ""
		if o.withAdbOp {
			a := median(series[o.name+"/adb-process"])
			r := float64(a) / float64(g)
			b.ReportMetric(ms(a), o.name+"-adbprocess-ms")
			b.ReportMetric(r, o.name+"-adbprocess/guiagent")
			adbCell, adbVs = fmt.Sprintf("%.1f", ms(a)), fmt.Sprintf("%.2f (want >= 3)", r)
		}
		fmt.Fprintf(&table, "%-5s %9.1f %11s %18s %12s  %-34s %s\n", o.name, ms(g), cells[0], cells[1], adbCell, vs, adbVs)
	}
	fresh := median(series["tap-fresh/guiagent"])
	b.ReportMetric(ms(fresh), "tap-after-shot-guiagent-ms")
	b.ReportMetric(float64(len(ourCmds)), "adb-cmds/guiagent-tap")
	b.ReportMetric(float64(len(freshCmds)), "adb-cmds/guiagent-tap-after-shot")
	fmt.Fprintf(&table, "adb commands of one guiagent tap: %d (want 1); right after a screenshot (size known): %d in %.1f ms, %.2fx faster than the faster mobile-mcp, %.2fx than the adb process\n",
		len(ourCmds), len(freshCmds), ms(fresh), float64(median(series["tap/"+fastest["tap"]]))/float64(fresh), float64(median(series["tap/adb-process"]))/float64(fresh))
	for _, o := range ops {
		fmt.Fprintf(&table, "shell commands of one %s:", o.name)
		for _, who := range []string{"guiagent", peers[0].name, peers[1].name, "adb-process"} {
			if c, ok := cmds[o.name+"/"+who]; ok {
				fmt.Fprintf(&table, " %s %s;", who, shortList(c))
			}
		}
		table.WriteString("\n")
	}
	b.Log(strings.TrimRight(table.String(), "\n"))
}

// shortList quotes at most four commands of cmds, each cut to 40 bytes.
func shortList(cmds []string) string {
	var q []string
	for i, c := range cmds {
		if i == 4 {
			q = append(q, fmt.Sprintf("...%d more", len(cmds)-i))
			break
		}
		if len(c) > 40 {
			c = c[:40] + "..."
		}
		q = append(q, strconv.Quote(c))
	}
	return fmt.Sprintf("%d [%s]", len(cmds), strings.Join(q, " "))
}
