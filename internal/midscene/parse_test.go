package midscene

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/geom"
)

// opts are Parse options for the tests: every folder exists, no
// environment, the backends of a build without iOS.
func opts() Options {
	return Options{Name: "script", Backends: []string{"auto", "x11", "browser", "android"}, DirExists: func(string) bool { return true }}
}

func parseFile(t *testing.T, name string, o Options) (*Plan, error) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if !Looks(text) {
		t.Fatalf("%s does not look like a Midscene script", name)
	}
	return Parse(text, o)
}

// kinds is the plan's steps as "kind target|text" lines.
func kinds(pl *Plan) []string {
	var out []string
	for _, s := range pl.Flow.Steps {
		what := s.Target
		if what == "" {
			what = s.Text
		}
		out = append(out, string(s.Kind)+" "+what)
	}
	return out
}

func wantSteps(t *testing.T, pl *Plan, want ...string) {
	t.Helper()
	got := kinds(pl)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for i, s := range pl.Flow.Steps {
		if s.Index != i+1 || s.Line == 0 {
			t.Errorf("step %d: index %d, line %d", i+1, s.Index, s.Line)
		}
	}
}

// TestDocsFirstExample: the documentation's first script opens the page in
// the browser (network idle awaited, going on when it does not come, as
// Midscene does), then each task's items in a group of its own.
func TestDocsFirstExample(t *testing.T) {
	pl, err := parseFile(t, "docs-bing.yaml", opts())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Platform != Web || pl.Section != "page" || pl.Backend != "browser" || pl.Viewport != DefaultViewport || pl.URL != "https://www.bing.com" {
		t.Fatalf("platform %+v", pl)
	}
	wantSteps(t, pl,
		"navigate https://www.bing.com",
		"group Search for weather",
		`act Search for "today's weather"`,
		"sleep ",
		"group Check results",
		"assert The results show weather information")
	nav := pl.Flow.Steps[0]
	if nav.Extra == nil || nav.Extra.Wait != desktop.WaitNetworkIdle || !nav.Extra.IdleErrorOK || nav.Extra.Timeout != 32*time.Second {
		t.Fatalf("navigation %+v", nav.Extra)
	}
	if d := pl.Flow.Steps[3].Duration; d != 3*time.Second {
		t.Fatalf("sleep %v", d)
	}
	if len(pl.Results) != 1 || pl.Results[0].Kind != ResultAssert || pl.Results[0].Step != 6 || pl.Results[0].Name != "" {
		t.Fatalf("results %+v", pl.Results)
	}
	if pl.StartURL() != "https://www.bing.com" {
		t.Fatalf("start URL %q", pl.StartURL())
	}
}

// TestOldTargetServeAndErrorMessage: target: (the old name of web:) with
// serve: and a relative url; aiAssert's errorMessage is the failure's.
func TestOldTargetServeAndErrorMessage(t *testing.T) {
	pl, err := parseFile(t, "local-error-message.yml", opts())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Section != "target" || pl.Serve != "./tests/server_root" || pl.URL != "index.html" {
		t.Fatalf("plan %+v", pl)
	}
	wantSteps(t, pl, "navigate index.html", "group check title", `assert the content title is "Your App"`)
	if x := pl.Flow.Steps[2].Extra; x == nil || x.ErrorMessage != "something error when assert title" {
		t.Fatalf("assert extra %+v", x)
	}
	if pl.Results[0].Message != "something error when assert title" {
		t.Fatalf("result %+v", pl.Results[0])
	}
}

// TestServeGivesTheStartURL: Start serves the folder on loopback and the
// navigation goes to the page in it.
func TestServeGivesTheStartURL(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>My App</h1>"), 0o600)
	pl, err := Parse([]byte("target:\n  serve: "+dir+"\n  url: /index.html\ntasks:\n  - name: t\n    flow:\n      - aiAssert: the title is My App\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := pl.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	u := pl.StartURL()
	if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/index.html") {
		t.Fatalf("start URL %q", u)
	}
	body := get(t, u)
	if !strings.Contains(body, "My App") {
		t.Fatalf("served %q", body)
	}
}

// TestAndroidScript: android: with deviceId (and no launch) runs on the
// Android backend with that device.
func TestAndroidScript(t *testing.T) {
	pl, err := parseFile(t, "maps-navigation.yaml", opts())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Backend != "android" || pl.Device != "s4ey59ytbitot4yp" || pl.StartURL() != "" {
		t.Fatalf("plan %+v", pl)
	}
	if n := len(pl.Flow.Steps); n != 6 || pl.Flow.Steps[1].Kind != flow.Act || pl.Flow.Steps[1].Text != "open Maps app" {
		t.Fatalf("steps %v", kinds(pl))
	}
	pl, err = Parse([]byte("android:\n  deviceId: 'emulator-5554'\n  launch: com.android.settings\n  remoteAdbHost: 10.0.0.2\ntasks:\n  - name: t\n    flow:\n      - aiTap: Wi-Fi\n      - launch: https://example.com\n      - terminate: com.android.settings\n"), opts())
	if err != nil {
		t.Fatal(err)
	}
	wantSteps(t, pl, "launch com.android.settings", "group t", "click Wi-Fi", "launch https://example.com", "stop_app com.android.settings")
	if pl.ADB != "10.0.0.2:5037" || pl.Device != "emulator-5554" {
		t.Fatalf("adb %q device %q", pl.ADB, pl.Device)
	}
}

// TestComputerScript: the documentation's computer: example runs on this
// desktop.
func TestComputerScript(t *testing.T) {
	pl, err := parseFile(t, "docs-computer.yaml", opts())
	if err != nil {
		t.Fatal(err)
	}
	if pl.Platform != Computer || pl.Backend != "" || len(pl.Flow.Steps) != 11 {
		t.Fatalf("plan %+v %v", pl, kinds(pl))
	}
}

// TestNamedAnswers: aiString and aiQuery with name are results under their
// names; aiString's answer must be a string, aiQuery's any JSON.
func TestNamedAnswers(t *testing.T) {
	pl, err := parseFile(t, "docs-step-names.yaml", opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Results) != 2 || pl.Results[0].Name != "product_id" || pl.Results[1].Name != "search_result" {
		t.Fatalf("results %+v", pl.Results)
	}
	if s := string(pl.Flow.Steps[2].Schema); s != `{"type":"string"}` {
		t.Fatalf("aiString schema %s", s)
	}
	if s := string(pl.Flow.Steps[3].Schema); s != `{}` {
		t.Fatalf("aiQuery schema %s", s)
	}
}

// TestRefusedWithTheirLines: each Midscene field guiagent cannot honour is
// named with its line, in real scripts of Midscene's repository.
func TestRefusedWithTheirLines(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"extended-options.yml", []string{
			"line 11, column 3: agent.groupName:", "line 12, column 3: agent.groupDescription:",
			"line 14, column 3: agent.autoPrintReportMsg:", "line 15, column 3: agent.reportFileName:"}},
		{"online.yaml", []string{
			`line 15, column 9: aiAct: unknown key "planningStrategy"`,
			"line 23, column 9: aiQuery: domIncluded:",
			"line 28, column 9: javascript: guiagent does not run a script's JavaScript in the page unless you pass --allow-javascript"}},
		{"search-headphone-on-ebay.yaml", []string{"line 11, column 9: runAdbShell: guiagent does not run shell commands on the phone"}},
		{"image-prompting.yaml", []string{"line 11, column 11: aiAssert: images:", "aiHover: images:", "aiTap: images:"}},
	} {
		_, err := parseFile(t, tc.file, opts())
		if err == nil {
			t.Errorf("%s parsed", tc.file)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error does not say %q:\n%v", tc.file, w, err)
			}
		}
	}
}

// TestJavaScriptWhenAllowed: with --allow-javascript the online example's
// javascript item becomes an evaluate step whose value is named.
func TestJavaScriptWhenAllowed(t *testing.T) {
	o := opts()
	o.AllowJavaScript = true
	_, err := parseFile(t, "login.yaml", o)
	if err == nil || !strings.Contains(err.Error(), "domIncluded") || strings.Contains(err.Error(), "javascript") {
		t.Fatalf("login.yaml: %v", err)
	}
	pl, err := Parse([]byte("web:\n  url: https://example.com\n  output: ./out/a.json\ntasks:\n  - name: js\n    flow:\n      - javascript: >\n          document.title\n        name: page-title\n"), o)
	if err != nil {
		t.Fatal(err)
	}
	st := pl.Flow.Steps[2]
	if st.Kind != flow.Evaluate || strings.TrimSpace(st.Text) != "document.title" || pl.Results[0].Name != "page-title" || pl.Output != "./out/a.json" {
		t.Fatalf("step %+v results %+v", st, pl.Results)
	}
}

// TestItemForms: the current and older forms of the items translate to
// the same steps.
func TestItemForms(t *testing.T) {
	src := `web:
  url: https://example.com
  viewportWidth: 800
  viewportHeight: 600
  waitForNetworkIdle:
    timeout: 0
agent:
  aiActionContext: Close any cookie banner first.
  replanningCycleLimit: 12
  cache:
    id: shop
    strategy: read-only
tasks:
  - name: forms
    continueOnError: true
    flow:
      - aiInput: the search box
        value: headphones
      - aiInput: headphones
        locate: the search box
      - aiInput: the search box
        value: " more"
        mode: append
      - aiInput: the search box
        mode: clear
      - aiInput: the note
        value: x
        mode: typeOnly
      - aiKeyboardPress: the search box
        keyName: Enter
      - aiKeyboardPress: Enter
        locate: the search box
      - aiKeyboardPress: Tab
      - aiScroll: the results list
        direction: down
        distance: 250
      - aiScroll:
        scrollType: scrollToBottom
      - aiTap:
        locate:
          prompt: the Buy button
        cacheable: false
      - aiTap: the Buy button
        deepThink: false
      - aiDoubleClick: the file icon
      - aiRightClick: the file icon
      - aiHover:
          prompt: the Products menu
      - aiDragAndDrop:
          from: the file icon
          to:
            prompt: the Trash
      - aiAction: add it to the cart
      - aiWaitFor: the cart shows 1 item
        timeout: 20000
      - aiNumber: How many items are in the cart?
        name: count
      - aiBoolean: Is the cart empty?
      - aiAsk: What colour is the cart icon?
        name: colour
      - aiLocate: the cart icon
        name: cart
      - logScreenshot: after buying
        content: the cart
      - recordToReport:
`
	pl, err := Parse([]byte(src), opts())
	if err != nil {
		t.Fatal(err)
	}
	wantSteps(t, pl,
		"navigate https://example.com",
		"group forms",
		"type the search box", "type the search box", "type the search box", "clear the search box", "type the note",
		"click the search box", "key ", "click the search box", "key ", "key ",
		"scroll the results list", "scroll_to_edge ",
		"click the Buy button", "click the Buy button",
		"double_click the file icon", "right_click the file icon", "hover the Products menu",
		"drag the file icon",
		"act Background: Close any cookie banner first.\n\nadd it to the cart",
		"wait_for the cart shows 1 item",
		"query How many items are in the cart?", "query Is the cart empty?", "query What colour is the cart icon?",
		"locate the cart icon",
		"record after buying", "record untitled")
	s := pl.Flow.Steps
	if s[2].Text != "headphones" || s[2].Mode != flow.ModeReplace || s[3].Text != "headphones" || s[3].Target != "the search box" ||
		s[4].Mode != flow.ModeAppend || s[6].Mode != flow.ModeType {
		t.Fatalf("inputs %+v %+v %+v %+v", s[2], s[3], s[4], s[6])
	}
	enter, _ := desktop.ParseCombo("Enter")
	tab, _ := desktop.ParseCombo("Tab")
	if desktop.ComboString(s[8].Keys) != desktop.ComboString(enter) || desktop.ComboString(s[10].Keys) != desktop.ComboString(enter) ||
		desktop.ComboString(s[11].Keys) != desktop.ComboString(tab) {
		t.Fatalf("keys %v %v", s[8].Keys, s[11].Keys)
	}
	if s[12].Amount != 3 || s[12].Direction != desktop.Down || s[13].Direction != desktop.Down {
		t.Fatalf("scrolls %+v %+v", s[12], s[13])
	}
	if s[14].Extra == nil || !s[14].Extra.NoCache || s[15].Extra != nil {
		t.Fatalf("cacheable: %+v %+v", s[14].Extra, s[15].Extra)
	}
	if s[19].Kind != flow.Drag || s[19].Target != "the file icon" || s[19].To != "the Trash" {
		t.Fatalf("drag and drop %+v", s[19])
	}
	if s[21].Timeout != 20*time.Second {
		t.Fatalf("wait timeout %v", s[20].Timeout)
	}
	for _, st := range s[2:] {
		if !st.ContinueOnError {
			t.Fatalf("step %d does not continue on error", st.Index)
		}
	}
	if pl.Viewport != (geom.Size{W: 800, H: 600}) || pl.MaxSteps != 12 || pl.Flow.Steps[0].Extra.Wait != desktop.WaitLoad {
		t.Fatalf("plan %+v", pl)
	}
	if !pl.Cache.Set || pl.Cache.ID != "shop" || pl.Cache.Strategy != flow.ReadOnly {
		t.Fatalf("cache %+v", pl.Cache)
	}
	var names []string
	for _, r := range pl.Results {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "count,,colour,cart" {
		t.Fatalf("result names %q", names)
	}
}

// TestErrors: problems are reported together, each with its place.
func TestErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"tasks:\n  - name: a\n    flow:\n      - aiTap: x\n", "line 1, column 1: no platform"},
		{"web:\n  url: https://a\nandroid: {}\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n", "line 3, column 1: only one platform can be given, this script has web, android"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n        xpath: //button\n", "line 7, column 9: aiTap: xpath"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n        deepLocate: true\n", "line 7, column 9: aiTap: deepLocate"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiTapp: x\n", "line 6, column 9: unknown flow item (keys aiTapp)"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - sleep: 0\n", "line 6, column 16: sleep 0 ms"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiInput: x\n        mode: overwrite\n        value: y\n", `line 7, column 15: aiInput mode "overwrite"`},
		{"web:\n  url: ${SITE}\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n", "line 2: ${SITE} is not defined"},
		{"ios:\n  wdaPort: 8100\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n", "line 1, column 1: ios: this guiagent has no iOS backend"},
		{"harmony: {}\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n", "harmony: this guiagent has no HarmonyOS backend"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n  - aiTap: [\n", "line 6, column"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiDragAndDrop: the icon\n", "line 6, column 24: aiDragAndDrop takes from: and to:"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiDragAndDrop:\n          from: the icon\n", "line 6, column 9: aiDragAndDrop needs from: and to:"},
		{"web:\n  url: https://a\ntasks:\n  - name: a\n    flow:\n      - aiDragAndDrop:\n          from: the icon\n          to: the bin\n          speed: 3\n", `line 9, column 11: aiDragAndDrop: unknown key "speed"`},
		{"web:\n  url: https://a\nagent:\n  cache:\n    strategy: sometimes\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n", `line 5, column 15: cache.strategy "sometimes"`},
	} {
		_, err := Parse([]byte(tc.src), opts())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %q", tc.src, err, tc.want)
		}
	}
}

// TestEnvironment: ${NAME} outside tasks takes --var, then the
// environment; inside tasks an unknown one stays as written, to the end.
func TestEnvironment(t *testing.T) {
	o := opts()
	o.Vars = map[string]string{"SITE": "https://shop.example"}
	o.Getenv = func(k string) string { return map[string]string{"USER_NAME": "ada"}[k] }
	pl, err := Parse([]byte("web:\n  url: ${SITE}/login\ntasks:\n  - name: a\n    flow:\n      - aiInput: the user field\n        value: ${USER_NAME}\n      - aiTap: the ${ITEM} row\n"), o)
	if err != nil {
		t.Fatal(err)
	}
	if pl.URL != "https://shop.example/login" || pl.Flow.Steps[2].Text != "ada" || pl.Flow.Steps[3].Target != "the ${ITEM} row" {
		t.Fatalf("steps %v", kinds(pl))
	}
	got, err := flow.Expand(pl.Flow.Steps[3].Target, pl.Vars)
	if err != nil || got != "the ${ITEM} row" {
		t.Fatalf("the runner would expand it to %q, %v", got, err)
	}
}

// TestLooks: a flow is not a Midscene script; a Midscene script is.
func TestLooks(t *testing.T) {
	if Looks([]byte("name: x\nsteps:\n  - click: OK\n")) || Looks([]byte("tasks: []\n")) {
		t.Fatal("a flow looks like a Midscene script")
	}
	if !Looks([]byte("tasks:\n  - name: a\n    flow: []\n")) {
		t.Fatal("a script does not")
	}
}

// TestAnswers: the output has Midscene's shape: named answers under their
// names, the others numbered in order (numbers first), an assert as
// {pass, thought, message}; steps that did not run have none.
func TestAnswers(t *testing.T) {
	pl := &Plan{Results: []Result{
		{Step: 2, Kind: ResultData, Name: "items"},
		{Step: 3, Kind: ResultAssert, Message: "the price is 49.99"},
		{Step: 4, Kind: ResultData},
		{Step: 5, Kind: ResultData, Name: "never"},
	}}
	res := flow.Result{Steps: []flow.StepResult{
		{Step: 2, Status: flow.Passed, Data: json.RawMessage(`[{"name":"Jacket","price":49.99}]`)},
		{Step: 3, Status: flow.Failed, Value: "the price is 59.99"},
		{Step: 4, Status: flow.Passed, Data: json.RawMessage(`42`)},
	}}
	var got map[string]any
	out := pl.Answers(res)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "{\n  \"0\"") {
		t.Fatalf("numbers do not come first:\n%s", out)
	}
	a := got["0"].(map[string]any)
	if a["pass"] != false || a["thought"] != "the price is 59.99" || a["message"] != "Assertion failed: the price is 49.99\nReason: the price is 59.99" {
		t.Fatalf("assert %v", a)
	}
	if got["1"] != 42.0 || got["items"].([]any)[0].(map[string]any)["price"] != 49.99 {
		t.Fatalf("answers %v", got)
	}
	if _, ok := got["never"]; ok || len(got) != 3 {
		t.Fatalf("answers %v", got)
	}
	dir := t.TempDir()
	pl.Output = filepath.Join(dir, "out", "a.json")
	if err := pl.WriteOutput(res); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(pl.Output); string(b) != string(out) {
		t.Fatalf("file %s", b)
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	r, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// TestIOSAndHarmony: with their backends in this build, ios: reaches
// WebDriverAgent at wdaHost:wdaPort (localhost:8100 by default) and
// harmony: its device, hdc and the app launched, by a mapped name too.
func TestIOSAndHarmony(t *testing.T) {
	o := opts()
	o.Backends = append(o.Backends, "ios", "harmony")
	pl, err := Parse([]byte("ios:\n  wdaPort: 8200\n  launch: com.apple.Preferences\n  output: o.json\ntasks:\n  - name: a\n    flow:\n      - aiTap: General\n      - launch: https://example.com\n"), o)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Backend != "ios" || pl.WDAURL != "http://localhost:8200" || pl.Output != "o.json" {
		t.Fatalf("plan %+v", pl)
	}
	wantSteps(t, pl, "launch com.apple.Preferences", "group a", "click General", "launch https://example.com")
	pl, err = Parse([]byte("harmony:\n  deviceId: 'dev1'\n  hdcPath: /opt/hdc\n  appNameMapping:\n    Video: com.example.video/PhoneAbility\n  launch: Video\ntasks:\n  - name: a\n    flow:\n      - aiLongPress: the clip\n      - launch: Video\n"), o)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Backend != "harmony" || pl.Device != "dev1" || pl.HDC != "/opt/hdc" {
		t.Fatalf("plan %+v", pl)
	}
	wantSteps(t, pl, "launch com.example.video/PhoneAbility", "group a", "right_click the clip", "launch com.example.video/PhoneAbility")
	if _, err := Parse([]byte("ios:\n  wdaHost: 10.0.0.5\n  sessionId: abc\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n"), o); err == nil || !strings.Contains(err.Error(), "line 3, column 3: ios.sessionId") {
		t.Fatalf("ios.sessionId: %v", err)
	}
}

// TestUserAgentAndSameTab: web.userAgent reaches the plan, and a page's new
// tabs load in its own tab unless forceSameTabNavigation is false, as in
// Midscene.
func TestUserAgentAndSameTab(t *testing.T) {
	pl, err := Parse([]byte("web:\n  url: https://a\n  userAgent: Mozilla/5.0 test\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n"), opts())
	if err != nil {
		t.Fatal(err)
	}
	if pl.UserAgent != "Mozilla/5.0 test" || !pl.SameTab {
		t.Errorf("user agent %q, same tab %v; want the script's agent and the same tab by default", pl.UserAgent, pl.SameTab)
	}
	pl, err = Parse([]byte("web:\n  url: https://a\n  forceSameTabNavigation: false\ntasks:\n  - name: a\n    flow:\n      - aiTap: x\n"), opts())
	if err != nil || pl.SameTab {
		t.Errorf("forceSameTabNavigation: false gives same tab %v (%v)", pl != nil && pl.SameTab, err)
	}
}
