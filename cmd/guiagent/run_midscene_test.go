package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
	"github.com/guiagent/guiagent/internal/backend/ios/iostest"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/testenv"
)

// shopPage is the page the Midscene script works on: a Name field and a
// Submit button in flat colours the vision brain finds, and a Submit that
// reports what the field held to the test's server.
const shopPage = `<!doctype html>
<html><head><title>Shop</title></head>
<body style="margin:0;padding:40px;background:#ffffff;font:16px sans-serif">
<p><label for="name">Name</label>
<input id="name" style="background:rgb(240,200,40);border:0;width:320px;height:44px;font-size:18px"></p>
<p><button id="submit" style="background:rgb(40,120,220);color:#fff;border:0;width:180px;height:56px;font-size:18px">Submit</button></p>
<p id="status">waiting</p>
<script>
document.getElementById('submit').addEventListener('click', function () {
  var v = document.getElementById('name').value;
  document.getElementById('status').textContent = 'sent ' + v;
  new Image().src = 'HIT/submit?name=' + encodeURIComponent(v);
});
</script>
</body></html>
`

// pageReports is the server test pages report to (new Image().src =
// HIT/...): the paths and queries it was asked for, in order.
type pageReports struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newPageReports(t *testing.T) *pageReports {
	p := &pageReports{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.got = append(p.got, r.URL.Path+"?"+r.URL.RawQuery)
		p.mu.Unlock()
	}))
	t.Cleanup(p.Close)
	return p
}

// joined is every report so far, separated by spaces.
func (p *pageReports) joined() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.got, " ")
}

// shopScript is a Midscene script (the format of its documentation) on
// that page, served from a local folder.
const shopScript = `web:
  serve: %s
  url: /index.html
  viewportWidth: 900
  viewportHeight: 600
  output: %s
  cookie: %s

agent:
  aiActionContext: The form is a test shop's.

tasks:
  - name: fill in the form
    flow:
      - ai: check that the form is on the screen
      - aiInput: the Name field
        value: Ada
      - aiTap: the Submit button
      - aiAssert: the Submit button is visible
        name: submitVisible
      - aiNumber: how many widgets can you see?
        name: count
      - aiBoolean: is the form filled in?
      - javascript: document.getElementById('status').textContent
        name: status
      - javascript: document.cookie
        name: cookie
      - aiLocate: the Submit button
        name: submit
      - javascript: >
          (() => { const r = document.getElementById('submit').getBoundingClientRect();
                   return {left: r.left, top: r.top, width: r.width, height: r.height}; })()
        name: box

  - name: an optional check
    continueOnError: true
    flow:
      - aiAssert: the OK button is visible
      - aiTap: the Submit button

  - name: read the page
    flow:
      - aiString: which widgets are visible?
        name: widgets
`

// TestRunMidsceneWebScript: `guiagent run SCRIPT.yaml` recognises a
// Midscene script, serves its folder on loopback, sets the cookie file's
// cookies, opens the page in headless Chromium at the script's viewport, types and clicks (the page receives
// both), asks the model its questions, skips the rest of a failed task that
// may fail, and writes the named answers to the script's output file in
// Midscene's shape.
func TestRunMidsceneWebScript(t *testing.T) {
	testenv.NeedChromium(t)
	var mu sync.Mutex
	hit := newPageReports(t)

	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	os.Mkdir(site, 0o755)
	os.WriteFile(filepath.Join(site, "index.html"), []byte(strings.ReplaceAll(shopPage, "HIT", hit.URL)), 0o600)
	out := filepath.Join(dir, "out", "answers.json")
	script := filepath.Join(dir, "shop.yaml")
	cookies := filepath.Join(dir, "cookies.json")
	os.WriteFile(cookies, []byte(`[{"name": "flavour", "value": "oat", "url": "http://127.0.0.1/", "path": "/"}]`), 0o600)
	os.WriteFile(script, []byte(fmt.Sprintf(shopScript, site, out, cookies)), 0o600)

	widgets := []fakellm.Widget{
		{Name: "the Name field", Word: "name", Color: color.RGBA{240, 200, 40, 255}},
		{Name: "the Submit button", Word: "submit", Color: color.RGBA{40, 120, 220, 255}},
		{Name: "the OK button", Word: "ok", Color: color.RGBA{10, 200, 10, 255}},
	}
	vision := fakellm.VisionBrain(widgets)
	var actPrompt string
	brain := func(t fakellm.Turn) fakellm.Reply {
		if t.Schema == nil { // the agent's step of the ai item
			mu.Lock()
			actPrompt = t.Prompt
			mu.Unlock()
			return fakellm.Reply{Status: llm.Done, Result: "the form is on the screen", Observation: "a form with a Name field"}
		}
		if strings.Contains(string(t.Schema), `"type":"boolean"`) && strings.Contains(t.Prompt, "Question about the screenshot") {
			return fakellm.Reply{Answer: map[string]any{"data": true, "reason": "the Name field holds text"}}
		}
		return vision(t)
	}
	model := fakellm.NewChatServer(brain, fakellm.ChatOptions{})
	defer model.Close()
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_BASE_URL"] = "openai", "gpt-4.1", model.URL

	code, stdout, stderr := runCmd(t, env, "run", script, "--allow-javascript", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res struct {
		Status string `json:"status"`
		Steps  []struct {
			Kind, Status, Description, Error string
		} `json:"steps"`
		Report string          `json:"report"`
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, stdout)
	}
	got := hit.joined()
	if !strings.Contains(got, "/submit?name=Ada") || strings.Count(got, "/submit?") != 1 {
		t.Fatalf("the page reported %q, want one submit of Ada (the skipped tap must not click)", got)
	}
	if res.Status != "passed" || res.Report == "" {
		t.Fatalf("status %q report %q\n%s", res.Status, res.Report, stdout)
	}
	var kinds []string
	for _, s := range res.Steps {
		kinds = append(kinds, s.Kind+":"+s.Status)
	}
	mu.Lock()
	prompt := actPrompt
	mu.Unlock()
	if !strings.Contains(prompt, "The form is a test shop's.") || !strings.Contains(prompt, "check that the form is on the screen") {
		t.Errorf("the agent's task lacks the ai item or agent.aiActionContext:\n%s", prompt)
	}
	if want := "set_cookies:passed navigate:passed group:passed act:passed type:passed click:passed assert:passed query:passed query:passed evaluate:passed evaluate:passed locate:passed evaluate:passed " +
		"group:passed assert:failed group:passed query:passed"; strings.Join(kinds, " ") != want {
		t.Fatalf("steps %s\nwant  %s", strings.Join(kinds, " "), want)
	}

	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile, fromJSON any
	json.Unmarshal(b, &fromFile)
	json.Unmarshal(res.Output, &fromJSON)
	if !reflect.DeepEqual(fromFile, fromJSON) || fromFile == nil {
		t.Fatalf("the output file and --json differ:\n%s\n%s", b, res.Output)
	}
	var ans struct {
		Zero bool `json:"0"`
		One  struct {
			Pass    bool
			Message string
		}
		SubmitVisible struct {
			Pass    bool
			Thought string
		}
		Count  float64
		Status string
		Cookie string
		Submit struct {
			Rect   struct{ Left, Top, Width, Height float64 }
			Center []float64
		}
		Box     struct{ Left, Top, Width, Height float64 }
		Widgets string
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(b, &raw)
	json.Unmarshal(raw["1"], &ans.One)
	if !strings.HasPrefix(string(b), "{\n  \"0\": true,\n  \"1\": {") {
		t.Fatalf("unnamed answers are not numbered first:\n%s", b)
	}
	if !ans.SubmitVisible.Pass || ans.SubmitVisible.Thought == "" || ans.Count != 3-1 || ans.Status != "sent Ada" || ans.Cookie != "flavour=oat" ||
		!strings.Contains(ans.Widgets, "the Submit button") || ans.One.Pass || !strings.HasPrefix(ans.One.Message, "Assertion failed: the OK button is visible") {
		t.Fatalf("answers:\n%s", b)
	}
	r, box := ans.Submit.Rect, ans.Box
	if math.Abs(r.Left-box.Left) > 4 || math.Abs(r.Top-box.Top) > 4 || math.Abs(r.Width-box.Width) > 6 || math.Abs(r.Height-box.Height) > 6 ||
		len(ans.Submit.Center) != 2 || ans.Submit.Center[0] < r.Left || ans.Submit.Center[0] > r.Left+r.Width {
		t.Fatalf("aiLocate gave %+v, the page says the button is at %+v", ans.Submit, box)
	}

	// Again: the field, the button and the located button replay from the
	// script's cache (shop.cache.yaml), verified on the page.
	code, stdout, stderr = runCmd(t, env, "run", script, "--allow-javascript", "--json")
	var again struct {
		Status    string `json:"status"`
		CacheHits int    `json:"cache_hits"`
	}
	if err := json.Unmarshal([]byte(stdout), &again); err != nil || code != 0 || again.Status != "passed" {
		t.Fatalf("second run: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if again.CacheHits < 3 {
		t.Errorf("the second run replayed %d steps from the cache, want the input, the tap and the locate", again.CacheHits)
	}
	if _, err := os.Stat(filepath.Join(dir, "shop.cache.yaml")); err != nil {
		t.Errorf("no cache beside the script: %v", err)
	}
	got = hit.joined()
	if strings.Count(got, "/submit?name=Ada") != 2 {
		t.Errorf("after two runs the page reported %q, want two submits of Ada", got)
	}
}

// TestRunMidsceneRefusesBeforeStarting: a Midscene script with a field
// guiagent cannot honour is refused, the field and its line named, before
// any browser starts; --format midscene reads a flow as a script (and says
// what is wrong with it), and a web: script on another backend is refused.
func TestRunMidsceneRefusesBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "certs.yaml")
	os.WriteFile(bad, []byte("web:\n  url: https://example.com\n  acceptInsecureCerts: true\ntasks:\n  - name: a\n    flow:\n      - aiTap: the OK button\n"), 0o600)
	env := baseEnv(t)
	env["GUI_AGENT_BROWSER_PATH"] = "/nonexistent/chromium" // a start would fail differently
	code, stdout, stderr := runCmd(t, env, "run", "--allow-javascript", bad)
	if code == 0 || !strings.Contains(stderr, "line 3, column 3: web.acceptInsecureCerts") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	flowFile := filepath.Join(dir, "flow.yaml")
	os.WriteFile(flowFile, []byte("name: f\nsteps:\n  - click: OK\n"), 0o600)
	if code, _, stderr := runCmd(t, env, "run", flowFile, "--format", "midscene"); code == 0 || !strings.Contains(stderr, "unknown key \"name\"") {
		t.Fatalf("--format midscene on a flow: exit %d\n%s", code, stderr)
	}
	ok := filepath.Join(dir, "ok.yaml")
	os.WriteFile(ok, []byte("web:\n  url: https://example.com\ntasks:\n  - name: a\n    flow:\n      - aiTap: the OK button\n"), 0o600)
	if code, _, stderr := runCmd(t, env, "run", ok, "--backend", "x11"); code == 0 || !strings.Contains(stderr, "web: runs on --backend browser, not --backend x11") {
		t.Fatalf("web: on x11: exit %d\n%s", code, stderr)
	}
}

// TestRunMidsceneAndroidScript: an android: script runs on the fake phone
// behind a real adb server (deviceId, remoteAdbHost and remoteAdbPort say
// which): the app is launched, the taps found in the phone's UI tree with
// no model reach the app, aiLocate answers in the phone's screen pixels,
// and the phone's own key is pressed.
func TestRunMidsceneAndroidScript(t *testing.T) {
	dev := androidtest.Start(t)
	phone := dev.Phone
	host, port, _ := strings.Cut(dev.Server, ":")
	dir := t.TempDir()
	out := filepath.Join(dir, "answers.json")
	script := filepath.Join(dir, "counter.yaml")
	os.WriteFile(script, []byte(fmt.Sprintf(`android:
  deviceId: '%s'
  remoteAdbHost: %s
  remoteAdbPort: %s
  launch: %s
  output: %s

tasks:
  - name: count twice
    flow:
      - aiTap: the Increment button
      - aiTap: the Increment button
      - aiLocate: the Reset button
        name: reset
      - aiKeyboardPress: home_screen
      - terminate: %s
`, dev.Serial, host, port, androidtest.CounterApp, out, androidtest.CounterApp)), 0o600)
	code, stdout, stderr := runCmd(t, baseEnv(t), "run", script)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := phone.Launches(androidtest.CounterApp); n != 1 {
		t.Errorf("the counter app was launched %d times, want 1", n)
	}
	if c := phone.Counter(); c != 2 {
		t.Errorf("the counter is %d after two aiTaps on Increment, want 2\n%s", c, stdout)
	}
	if fg, _ := phone.Foreground(); fg != androidtest.LauncherApp {
		t.Errorf("in front after aiKeyboardPress home_screen: %s, want the launcher", fg)
	}
	stopped := false
	for _, c := range phone.Commands() {
		stopped = stopped || strings.Contains(c, "force-stop "+androidtest.CounterApp)
	}
	if !stopped {
		t.Errorf("terminate did not stop the app: %v", phone.Commands())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Reset struct {
			Rect   struct{ Left, Top, Width, Height float64 }
			Center []float64
		}
	}
	json.Unmarshal(b, &ans)
	// A Pixel 7's 1080x2400 pixels at scale 2.625: about 411x914; the
	// Reset button spans 0.53-0.95 of the width and 0.16-0.23 of the height.
	r := ans.Reset.Rect
	if math.Abs(r.Left-0.53*411) > 6 || math.Abs(r.Top-0.16*914) > 6 || math.Abs(r.Width-0.42*411) > 8 || len(ans.Reset.Center) != 2 {
		t.Fatalf("aiLocate answered %s", b)
	}
}

// TestRunMidsceneIOSScript: an ios: script reaches the fake WebDriverAgent
// at wdaHost:wdaPort, launches the app, types into the field and taps the
// button it finds in the app's element tree, with no model.
func TestRunMidsceneIOSScript(t *testing.T) {
	wda := iostest.Start(t)
	u, err := url.Parse(wda.URL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "counter.yaml")
	os.WriteFile(script, []byte(fmt.Sprintf(`ios:
  wdaHost: %s
  wdaPort: %s
  launch: %s

tasks:
  - name: sign and count
    flow:
      - aiInput: the Name field
        value: Ada
      - aiTap: the Increment button
`, u.Hostname(), u.Port(), iostest.AppBundleID)), 0o600)
	code, stdout, stderr := runCmd(t, baseEnv(t), "run", script)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if wda.Field() != "Ada" || wda.Counter() != 1 || wda.Front() != iostest.AppBundleID {
		t.Fatalf("the app holds %q, counted %d, %s in front\n%s", wda.Field(), wda.Counter(), wda.Front(), stdout)
	}
	launched := false
	for _, r := range wda.Requests() {
		launched = launched || strings.Contains(r, "apps/launch")
	}
	if !launched {
		t.Fatalf("the app was not launched: %v", wda.Requests())
	}
}

// dragPage has a red card that follows the pointer while a button is held
// and a green bin; releasing over the bin reports the drop.
const dragPage = `<!doctype html>
<html><head><title>Sort</title></head>
<body style="margin:0;background:#ffffff">
<div id="card" style="position:absolute;left:60px;top:80px;width:120px;height:80px;background:rgb(220,40,40)"></div>
<div id="bin" style="position:absolute;left:420px;top:300px;width:160px;height:120px;background:rgb(40,180,60)"></div>
<script>
var card = document.getElementById('card'), bin = document.getElementById('bin'), held = false;
card.addEventListener('mousedown', function (e) { held = true; e.preventDefault(); });
document.addEventListener('mousemove', function (e) {
  if (held) { card.style.left = (e.clientX - 60) + 'px'; card.style.top = (e.clientY - 40) + 'px'; }
});
document.addEventListener('mouseup', function (e) {
  if (!held) return;
  held = false;
  var r = bin.getBoundingClientRect();
  var inside = e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
  new Image().src = 'HIT/drop?inside=' + inside;
});
</script>
</body></html>
`

// TestRunMidsceneDragAndDrop: a script's aiDragAndDrop (from: and to:, in
// Midscene's two forms) drags the card onto the bin in Chromium: the page
// sees the press on the card and the release over the bin; the second run
// replays both ends from the cache.
func TestRunMidsceneDragAndDrop(t *testing.T) {
	testenv.NeedChromium(t)
	hit := newPageReports(t)
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	os.Mkdir(site, 0o755)
	os.WriteFile(filepath.Join(site, "index.html"), []byte(strings.ReplaceAll(dragPage, "HIT", hit.URL)), 0o600)
	script := filepath.Join(dir, "sort.yaml")
	os.WriteFile(script, []byte(fmt.Sprintf(`web:
  serve: %s
  url: /index.html
  viewportWidth: 800
  viewportHeight: 600

tasks:
  - name: sort the card
    flow:
      - aiDragAndDrop:
          from: the red card
          to:
            prompt: the green bin
`, site)), 0o600)
	vision := fakellm.VisionBrain([]fakellm.Widget{
		{Name: "the red card", Word: "card", Color: color.RGBA{220, 40, 40, 255}},
		{Name: "the green bin", Word: "bin", Color: color.RGBA{40, 180, 60, 255}},
	})
	model := fakellm.NewChatServer(vision, fakellm.ChatOptions{})
	defer model.Close()
	env := baseEnv(t)
	env["GUI_AGENT_PROVIDER"], env["GUI_AGENT_MODEL"], env["GUI_AGENT_BASE_URL"] = "openai", "gpt-4.1", model.URL
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := runCmd(t, env, "run", script, "--json")
		var res struct {
			Status    string `json:"status"`
			CacheHits int    `json:"cache_hits"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != 0 || res.Status != "passed" {
			t.Fatalf("run %d: exit %d, %v\n%s\n%s", run, code, err, stdout, stderr)
		}
		want := strings.TrimSpace(strings.Repeat("/drop?inside=true ", run))
		var got string
		testenv.WaitUntil(5*time.Second, func() bool { // the page reports as it can
			got = hit.joined()
			return got == want
		})
		if got != want {
			t.Fatalf("run %d: the page reported %q, want %q (the card released over the bin)", run, got, want)
		}
		if run == 2 && res.CacheHits < 1 {
			t.Errorf("the second run replayed %d steps from the cache, want the drag", res.CacheHits)
		}
	}
}
