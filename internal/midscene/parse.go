package midscene

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/guiagent/guiagent/internal/flow"
)

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("invalid Midscene script")

// maxErrors is how many problems an error lists.
const maxErrors = 20

// Looks reports whether text has a Midscene script's shape: a top-level
// tasks list whose items have a flow (what `guiagent run` recognises).
func Looks(text []byte) bool {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	for _, kv := range pairs(doc.Content[0]) {
		if kv[0].Value != "tasks" || kv[1].Kind != yaml.SequenceNode {
			continue
		}
		for _, t := range kv[1].Content {
			if t.Kind != yaml.MappingNode {
				continue
			}
			for _, tk := range pairs(t) {
				if tk[0].Value == "flow" {
					return true
				}
			}
		}
	}
	return false
}

// Parse reads a Midscene script and translates it whole: every problem is
// reported, each with its line and column, before anything runs.
func Parse(text []byte, o Options) (*Plan, error) {
	if len(text) > flow.MaxBytes {
		return nil, fmt.Errorf("%w: the script is %d bytes, more than the limit of %d (1 MiB)", ErrInvalid, len(text), flow.MaxBytes)
	}
	p := &parser{o: o, lines: bytes.Count(text, []byte("\n")) + 1, plan: &Plan{Vars: map[string]string{}, navStep: -1}}
	for k, v := range o.Vars {
		p.plan.Vars[k] = v
	}
	text = p.interpolate(text)
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, flow.SyntaxError(text, err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: the YAML is empty: give a platform (web:, android:, computer:) and tasks", ErrInvalid)
	}
	p.script(doc.Content[0])
	if len(p.errs) > 0 {
		errs := p.errs
		if len(errs) > maxErrors {
			errs = append(errs[:maxErrors:maxErrors], fmt.Sprintf("... and %d more problems", len(p.errs)-maxErrors))
		}
		return nil, fmt.Errorf("%w:\n  %s", ErrInvalid, strings.Join(errs, "\n  "))
	}
	return p.plan, nil
}

type parser struct {
	o     Options
	errs  []string
	lines int
	plan  *Plan
	// context is agent.aiActContext, put before every agent task.
	context string
	// display is computer.displayId.
	display string
	// appNames is harmony.appNameMapping.
	appNames map[string]string
	steps    []flow.Step
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line, col := n.Line, n.Column
	if line > p.lines {
		line, col = p.lines, 1
	}
	p.errs = append(p.errs, fmt.Sprintf("line %d, column %d: ", line, col)+fmt.Sprintf(format, args...))
}

func pairs(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

// envRef is ${NAME} as Midscene reads it (a name up to the first "}");
// tasksKey and topKey are its patterns of the top-level tasks key and of
// any other top-level key.
var (
	envRef   = regexp.MustCompile(`\$\{([^}]*)\}`)
	tasksKey = regexp.MustCompile(`^tasks\s*:`)
	topKey   = regexp.MustCompile(`^[^\s#][^:]*:`)
)

// interpolate replaces ${NAME} line by line as Midscene's parseYamlScript
// does: comment lines are left alone; outside the top-level tasks block an
// undefined name is an error; inside it, it stays as written (and reaches
// the flow runner as itself, through Plan.Vars).
func (p *parser) interpolate(text []byte) []byte {
	lines := strings.Split(string(text), "\n")
	inTasks := false
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if len(trimmed) == len(line) { // a top-level key
			if tasksKey.MatchString(trimmed) {
				inTasks = true
				continue
			}
			if topKey.MatchString(trimmed) {
				inTasks = false
			}
		}
		lines[i] = envRef.ReplaceAllStringFunc(line, func(m string) string {
			name := strings.TrimSpace(m[2 : len(m)-1])
			if name == "" {
				return m
			}
			if v, ok := p.o.Vars[name]; ok {
				return v
			}
			if p.o.Getenv != nil {
				if v := p.o.Getenv(name); v != "" {
					return v
				}
			}
			if inTasks {
				p.plan.Vars[m[2:len(m)-1]] = m
				return m
			}
			p.errs = append(p.errs, fmt.Sprintf("line %d: ${%s} is not defined: set the environment variable %s or pass --var %s=VALUE", i+1, name, name, name))
			return m
		})
	}
	return []byte(strings.Join(lines, "\n"))
}

// webSections are the keys that configure a web target, in Midscene's order.
var webSections = []string{"page", "browser", "web", "target"}

// topKeys are a script's top-level keys.
var topKeys = []string{"page", "browser", "web", "target", "android", "ios", "harmony", "computer", "interface", "config", "agent", "tasks"}

func (p *parser) script(n *yaml.Node) {
	pl := p.plan
	pl.Name = p.o.Name
	if n.Kind != yaml.MappingNode {
		p.errf(n, "a Midscene script is a mapping with a platform (web:, android:, computer:) and tasks:")
		return
	}
	var tasks, agent *yaml.Node
	var platforms [][2]*yaml.Node
	for _, kv := range pairs(n) {
		k := kv[0].Value
		switch {
		case !slices.Contains(topKeys, k):
			p.errf(kv[0], "unknown key %q: a Midscene script has %s", k, strings.Join(topKeys, ", "))
		case k == "tasks":
			tasks = kv[1]
		case k == "agent":
			agent = kv[1]
		case k == "config":
			p.configSection(kv[1])
		default:
			platforms = append(platforms, kv)
		}
	}
	switch len(platforms) {
	case 0:
		p.errf(n, "no platform: give one of page:, web:, android:, ios:, computer: (Midscene needs one too)")
	case 1:
		p.platform(platforms[0][0], platforms[0][1])
	default:
		var names []string
		for _, kv := range platforms {
			names = append(names, kv[0].Value)
		}
		p.errf(platforms[1][0], "only one platform can be given, this script has %s", strings.Join(names, ", "))
	}
	if agent != nil {
		p.agentOpts(agent, "agent")
	}
	p.tasks(n, tasks)
	pl.Flow = &flow.Flow{Name: pl.Name, Display: p.display, Steps: p.steps}
	if strings.TrimSpace(pl.Flow.Name) == "" {
		pl.Flow.Name = "midscene"
	}
}

// configSection reads the top-level config: (output, unstableLogContent).
func (p *parser) configSection(n *yaml.Node) {
	p.mapping(n, "config", func(k, v *yaml.Node) {
		switch k.Value {
		case "output":
			if p.plan.Output == "" {
				p.plan.Output = p.str(v, "config.output")
			}
		default:
			p.cannot(k, "config", "output")
		}
	})
}

// mapping calls each for every pair of n, which must be a mapping (or empty).
func (p *parser) mapping(n *yaml.Node, what string, each func(k, v *yaml.Node)) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping", what)
		return
	}
	for _, kv := range pairs(n) {
		each(kv[0], kv[1])
	}
}

// cannot refuses a key of section that guiagent does not honour.
func (p *parser) cannot(k *yaml.Node, section string, takes ...string) {
	if why, ok := refused[k.Value]; ok {
		p.errf(k, "%s.%s: %s", section, k.Value, why)
		return
	}
	p.errf(k, "%s.%s is not something guiagent can honour here (%s takes %s)", section, k.Value, section, strings.Join(takes, ", "))
}

// refused says why guiagent does not honour a key Midscene knows.
var refused = map[string]string{
	"acceptInsecureCerts":         "guiagent does not turn off certificate checks",
	"deviceScaleFactor":           "the browser backend keeps the screen's device pixel ratio",
	"extraHTTPHeaders":            "the browser backend cannot add request headers",
	"downloadPath":                "downloads go to guiagent's downloads folder in its state directory",
	"chromeArgs":                  "guiagent starts Chromium with its own arguments (--browser-path chooses the program)",
	"bridgeMode":                  "guiagent has no Chrome extension bridge: attach to a running browser with cdpEndpoint or --browser-url",
	"closeNewTabsAfterDisconnect": "guiagent has no Chrome extension bridge",
	"autoFollowNewPage":           "the browser backend stays in the tab it opened; it does not follow a tab a page opens",
	"unstableLogContent":          "guiagent records every run in its own run record and report (guiagent runs, guiagent report)",
	"mode":                        "guiagent's browser backend works in one page: use page: or web: without mode: browser",
	"groupName":                   "guiagent names a run after the script (agent.testId)",
	"groupDescription":            "guiagent names a run after the script (agent.testId)",
	"generateReport":              "guiagent always records the run with its report",
	"persistExecutionDump":        "guiagent always records the run with its report",
	"autoPrintReportMsg":          "guiagent always prints where the report is",
	"reportFileName":              "the report is written into the run's folder (guiagent report opens it)",
	"screenshotShrinkFactor":      "guiagent sizes screenshots for the model it uses",
	"outputFormat":                "the report is written into the run's folder",
	"waitAfterAction":             "guiagent waits for the screen to settle after each action",
	"useDeviceTime":               "guiagent does not give the model the device's time",
	"cacheId":                     "use agent.cache: {id: ...}",
	"aiActionProgressTips":        "guiagent reports an agent task's progress itself",
	"androidAdbPath":              "guiagent finds adb on PATH",
	"imeStrategy":                 "the Android backend types ASCII with input text and other text through ADBKeyboard",
	"autoDismissKeyboard":         "the Android backend leaves the keyboard as it is",
	"keyboardTypeDelay":           "guiagent types at its own pace",
	"displayId":                   "the Android backend uses the phone's main display",
	"scrcpyConfig":                "the Android backend captures with screencap",
	"wdaMjpegPort":                "guiagent captures iOS screens with WebDriverAgent's screenshot",
}

func (p *parser) platform(k, v *yaml.Node) {
	pl := p.plan
	pl.Section = k.Value
	switch {
	case slices.Contains(webSections, k.Value):
		pl.Platform, pl.Backend = Web, "browser"
		p.web(k, v)
	case k.Value == "android":
		pl.Platform, pl.Backend = Android, "android"
		p.android(v)
	case k.Value == "ios":
		pl.Platform, pl.Backend = IOS, "ios"
		if !slices.Contains(p.o.Backends, "ios") {
			p.errf(k, "ios: this guiagent has no iOS backend (--backend takes %s): it cannot run an ios: script", strings.Join(p.o.Backends, ", "))
			return
		}
		p.ios(v)
	case k.Value == "computer":
		pl.Platform = Computer
		p.mapping(v, "computer", func(k, v *yaml.Node) {
			switch k.Value {
			case "displayId":
				p.display = p.str(v, "computer.displayId")
			case "output":
				pl.Output = p.str(v, "computer.output")
			default:
				p.cannot(k, "computer", "displayId, output")
			}
		})
	case k.Value == "harmony":
		pl.Platform, pl.Backend = Harmony, "harmony"
		if !slices.Contains(p.o.Backends, "harmony") {
			p.errf(k, "harmony: this guiagent has no HarmonyOS backend (--backend takes %s)", strings.Join(p.o.Backends, ", "))
			return
		}
		p.harmony(v)
	case k.Value == "interface":
		p.errf(k, "interface: guiagent cannot load a JavaScript device module; use page:, web:, android: or computer:")
	}
}

func (p *parser) web(k, v *yaml.Node) {
	pl := p.plan
	pl.Viewport = DefaultViewport
	pl.SameTab = true // Midscene's default: a page's new tabs load in its own
	idle, idleOK := DefaultNetworkIdle, true
	var urlNode *yaml.Node
	if k.Value == "browser" {
		p.errf(k, "browser: %s", refused["mode"])
		return
	}
	if v.Kind != yaml.MappingNode {
		p.errf(v, "%s: must be a mapping with url", k.Value)
		return
	}
	var cookieNode *yaml.Node
	for _, kv := range pairs(v) {
		key, val := kv[0], kv[1]
		switch key.Value {
		case "url":
			urlNode = val
			pl.URL = p.str(val, k.Value+".url")
		case "serve":
			pl.Serve = p.str(val, k.Value+".serve")
			exists := p.o.DirExists
			if exists == nil {
				exists = func(d string) bool { fi, err := os.Stat(d); return err == nil && fi.IsDir() }
			}
			if pl.Serve != "" && !exists(pl.Serve) {
				p.errf(val, "%s.serve: %s is not a folder (a relative path is from the folder guiagent runs in, as in Midscene)", k.Value, pl.Serve)
			}
		case "viewportWidth":
			pl.Viewport.W = p.positive(val, k.Value+".viewportWidth")
		case "viewportHeight":
			pl.Viewport.H = p.positive(val, k.Value+".viewportHeight")
		case "waitForNetworkIdle":
			p.mapping(val, k.Value+".waitForNetworkIdle", func(wk, wv *yaml.Node) {
				switch wk.Value {
				case "timeout":
					idle = msDuration(p.nonNegative(wv, "waitForNetworkIdle.timeout"))
				case "continueOnNetworkIdleError":
					idleOK = p.boolean(wv, "waitForNetworkIdle.continueOnNetworkIdleError")
				default:
					p.cannot(wk, k.Value+".waitForNetworkIdle", "timeout, continueOnNetworkIdleError")
				}
			})
		case "cookie":
			cookieNode = val
		case "output":
			pl.Output = p.str(val, k.Value+".output")
		case "cdpEndpoint":
			pl.BrowserURL = p.cdpEndpoint(val)
		case "forceSameTabNavigation":
			pl.SameTab = p.boolean(val, key.Value)
		case "userAgent":
			pl.UserAgent = p.str(val, k.Value+".userAgent")
		case "mode":
			if s := p.str(val, key.Value); s != "page" {
				p.cannot(key, k.Value)
			}
		case "bridgeMode":
			if val.Value != "false" {
				p.cannot(key, k.Value)
			}
		case "acceptInsecureCerts", "autoFollowNewPage", "closeNewTabsAfterDisconnect":
			if p.boolean(val, key.Value) {
				p.cannot(key, k.Value)
			}
		default:
			if !p.agentOpt(key, val, k.Value) {
				p.cannot(key, k.Value, "url, serve, viewportWidth, viewportHeight, waitForNetworkIdle, cookie, output, cdpEndpoint, and agent options")
			}
		}
	}
	if urlNode == nil {
		p.errf(k, "%s: url is required (with serve:, the page's path in the served folder)", k.Value)
	} else if pl.Serve == "" {
		if u, err := url.Parse(pl.URL); err != nil || u.Scheme == "" {
			p.errf(urlNode, "%s.url %q is not an absolute URL (http://..., file://...): give one, or serve: a folder and its page's path", k.Value, pl.URL)
		}
	}
	st := flow.Step{Kind: flow.Navigate, Target: pl.URL, Line: k.Line, Column: k.Column,
		Extra: &flow.Extra{Wait: "load", IdleErrorOK: idleOK}}
	if idle > 0 {
		st.Extra.Wait, st.Extra.Timeout = "networkidle", navigationTimeout+idle
	}
	if cookieNode != nil {
		p.cookie(cookieNode, k.Value)
	}
	pl.navStep = len(p.steps)
	p.add(st)
}

// navigationTimeout is how long the start page may take to load (as
// Puppeteer's goto).
const navigationTimeout = 30 * time.Second

// msDuration is ms milliseconds.
func msDuration(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// cookie reads web.cookie's file (a JSON list of cookies, Puppeteer's
// format) and adds a step that sets them before the start page loads.
func (p *parser) cookie(n *yaml.Node, section string) {
	path := p.str(n, section+".cookie")
	read := p.o.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	b, err := read(path)
	if err != nil {
		p.errf(n, "%s.cookie: %v", section, err)
		return
	}
	var cookies []map[string]any
	if err := json.Unmarshal(b, &cookies); err != nil {
		p.errf(n, "%s.cookie: %s is not a JSON list of cookies: %v", section, path, err)
		return
	}
	p.add(flow.Step{Kind: flow.SetCookies, Target: path, Line: n.Line, Column: n.Column, Extra: &flow.Extra{Cookies: cookies}})
}

// cdpEndpoint turns a DevTools WebSocket address into the http address
// --browser-url takes (the browser's /json/version gives the socket).
func (p *parser) cdpEndpoint(n *yaml.Node) string {
	s := p.str(n, "cdpEndpoint")
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		p.errf(n, "cdpEndpoint %q is not an address such as ws://127.0.0.1:9222/devtools/browser/...", s)
		return ""
	}
	scheme := "http"
	if u.Scheme == "wss" || u.Scheme == "https" {
		scheme = "https"
	}
	return scheme + "://" + u.Host
}

func (p *parser) android(v *yaml.Node) {
	pl := p.plan
	var host, port string
	var launch *yaml.Node
	p.mapping(v, "android", func(k, v *yaml.Node) {
		switch k.Value {
		case "deviceId":
			pl.Device = p.str(v, "android.deviceId")
		case "launch":
			launch = v
		case "output":
			pl.Output = p.str(v, "android.output")
		case "remoteAdbHost":
			host = p.str(v, "android.remoteAdbHost")
		case "remoteAdbPort":
			port = strconv.Itoa(p.positive(v, "android.remoteAdbPort"))
		default:
			if !p.agentOpt(k, v, "android") {
				p.cannot(k, "android", "deviceId, launch, remoteAdbHost, remoteAdbPort, output, and agent options")
			}
		}
	})
	if host != "" || port != "" {
		if host == "" {
			host = "127.0.0.1"
		}
		if port == "" {
			port = "5037"
		}
		pl.ADB = host + ":" + port
	}
	if launch != nil {
		p.add(flow.Step{Kind: flow.Launch, Target: p.str(launch, "android.launch"), Line: launch.Line, Column: launch.Column})
	}
}

// ios reads the ios: section: WebDriverAgent's address (wdaHost, wdaPort:
// localhost:8100 as in Midscene) and the app or URL to launch.
func (p *parser) ios(v *yaml.Node) {
	pl := p.plan
	host, port := "localhost", "8100"
	var launch *yaml.Node
	p.mapping(v, "ios", func(k, v *yaml.Node) {
		switch k.Value {
		case "wdaHost":
			host = p.str(v, "ios.wdaHost")
		case "wdaPort":
			port = strconv.Itoa(p.positive(v, "ios.wdaPort"))
		case "launch":
			launch = v
		case "output":
			pl.Output = p.str(v, "ios.output")
		default:
			if !p.agentOpt(k, v, "ios") {
				p.cannot(k, "ios", "wdaHost, wdaPort, launch, output, and agent options")
			}
		}
	})
	pl.WDAURL = "http://" + net.JoinHostPort(host, port)
	if launch != nil {
		p.add(flow.Step{Kind: flow.Launch, Target: p.str(launch, "ios.launch"), Line: launch.Line, Column: launch.Column})
	}
}

// harmony reads the harmony: section: the device's connect key, the hdc
// program, the app to launch (appNameMapping turns a name into a bundle).
func (p *parser) harmony(v *yaml.Node) {
	pl := p.plan
	var launch *yaml.Node
	p.mapping(v, "harmony", func(k, v *yaml.Node) {
		switch k.Value {
		case "deviceId":
			pl.Device = p.str(v, "harmony.deviceId")
		case "hdcPath":
			pl.HDC = p.str(v, "harmony.hdcPath")
		case "launch":
			launch = v
		case "appNameMapping":
			p.mapping(v, "harmony.appNameMapping", func(k, v *yaml.Node) {
				if p.appNames == nil {
					p.appNames = map[string]string{}
				}
				p.appNames[k.Value] = p.str(v, "harmony.appNameMapping."+k.Value)
			})
		case "output":
			pl.Output = p.str(v, "harmony.output")
		default:
			if !p.agentOpt(k, v, "harmony") {
				p.cannot(k, "harmony", "deviceId, hdcPath, launch, appNameMapping, output, and agent options")
			}
		}
	})
	if launch != nil {
		p.add(flow.Step{Kind: flow.Launch, Target: p.appName(p.str(launch, "harmony.launch")), Line: launch.Line, Column: launch.Column})
	}
}

// appName is what harmony.appNameMapping maps name to, else name.
func (p *parser) appName(name string) string {
	if b, ok := p.appNames[name]; ok {
		return b
	}
	return name
}

// agentOpts reads the agent: section (its options may also sit in the
// platform's section, as Midscene allows).
func (p *parser) agentOpts(n *yaml.Node, section string) {
	p.mapping(n, section, func(k, v *yaml.Node) {
		if !p.agentOpt(k, v, section) {
			p.cannot(k, section, "testId, aiActContext, aiActionContext, replanningCycleLimit, cache")
		}
	})
}

// agentOpt reads one agent option; false if k is not one guiagent honours.
func (p *parser) agentOpt(k, v *yaml.Node, section string) bool {
	pl := p.plan
	switch k.Value {
	case "testId":
		pl.Name = p.str(v, section+".testId")
	case "aiActContext", "aiActionContext":
		if c := p.str(v, section+"."+k.Value); k.Value == "aiActContext" || p.context == "" {
			p.context = c
		}
	case "replanningCycleLimit":
		pl.MaxSteps = p.positive(v, section+".replanningCycleLimit")
	case "cache":
		p.cache(v, section)
	case "generateReport":
		if !p.boolean(v, k.Value) {
			p.errf(k, "%s.generateReport: false: %s", section, refused["generateReport"])
		}
	default:
		return false
	}
	return true
}

func (p *parser) cache(v *yaml.Node, section string) {
	c := &p.plan.Cache
	c.Set, c.Strategy = true, flow.ReadWrite
	if v.Kind == yaml.ScalarNode {
		if p.boolean(v, section+".cache") {
			return
		}
		c.Off = true
		return
	}
	p.mapping(v, section+".cache", func(k, v *yaml.Node) {
		switch k.Value {
		case "id":
			c.ID = p.str(v, "cache.id")
		case "strategy":
			s, err := flow.ParseStrategy(p.str(v, "cache.strategy"))
			if err != nil || s == flow.CacheOff {
				p.errf(v, "cache.strategy %q: use read-only, read-write or write-only", v.Value)
			}
			c.Strategy = s
		case "cacheDir":
			c.Dir = p.str(v, "cache.cacheDir")
		default:
			p.cannot(k, section+".cache", "id, strategy, cacheDir")
		}
	})
}

func (p *parser) add(st flow.Step) int {
	st.Index = len(p.steps) + 1
	p.steps = append(p.steps, st)
	return st.Index
}

// scalar helpers

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || (n.Value == "" && n.Style == 0 && n.Tag != "!!str")))
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errf(n, "%s must be text", what)
		return ""
	}
	return n.Value
}

func (p *parser) number(n *yaml.Node, what string) float64 {
	f, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil {
		p.errf(n, "%s must be a number, not %q", what, n.Value)
	}
	return f
}

func (p *parser) positive(n *yaml.Node, what string) int {
	f := p.number(n, what)
	if f < 1 || f != float64(int(f)) {
		p.errf(n, "%s must be a whole number above 0, not %s", what, n.Value)
		return 0
	}
	return int(f)
}

func (p *parser) nonNegative(n *yaml.Node, what string) int {
	f := p.number(n, what)
	if f < 0 || f != float64(int(f)) {
		p.errf(n, "%s must be a whole number of milliseconds, not %s", what, n.Value)
		return 0
	}
	return int(f)
}

func (p *parser) boolean(n *yaml.Node, what string) bool {
	if n.Kind != yaml.ScalarNode || (n.Value != "true" && n.Value != "false") {
		p.errf(n, "%s must be true or false, not %q", what, n.Value)
		return false
	}
	return n.Value == "true"
}
