package androidtest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is what a fake phone is.
type Config struct {
	Model, Product, Device string // ro.product.model, .name, .device
	Release                string // ro.build.version.release
	SDK                    int    // ro.build.version.sdk
	Width, Height          int    // the panel, portrait
	Density                int
	// NoShellV2 leaves shell_v2 out of the device's features (Android 6
	// and older): the client must fall back to shell:.
	NoShellV2 bool
	// Unauthorized makes the phone ask for authorization and never grant
	// it: the server lists it as unauthorized.
	Unauthorized bool
	// ADBKeyboard installs the ADBKeyboard IME (com.android.adbkeyboard/.AdbIME).
	ADBKeyboard bool
}

// DefaultConfig is a Pixel 7 on Android 14 with ADBKeyboard installed.
func DefaultConfig() Config {
	return Config{Model: "Pixel 7", Product: "panther", Device: "panther", Release: "14", SDK: 34,
		Width: 1080, Height: 2400, Density: 420, ADBKeyboard: true}
}

// Event is one input event the phone received, as its input dispatcher
// saw it: touch events in the current display's pixels, key events by
// KEYCODE_ name, and text committed by an input method.
type Event struct {
	Kind string // "down", "move", "up", "key_down", "key_up", "text"
	X, Y int
	Key  string // KEYCODE_...
	Text string
	// Held is, for "up", how long the finger was down.
	Held time.Duration
}

// Packages of the fake.
const (
	CounterApp  = "com.example.counter"
	ChromeApp   = "com.android.chrome"
	LauncherApp = "com.google.android.apps.nexuslauncher"
	SettingsApp = "com.android.settings"
	KeyboardApp = "com.android.adbkeyboard"
	AdbIME      = "com.android.adbkeyboard/.AdbIME"
	LatinIME    = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
)

type field struct {
	text   []rune
	cursor int
	anchor int // selection start; -1 none
}

type fill struct {
	r image.Rectangle
	c color.RGBA
}

// Phone is the scripted device behind the fake adbd. Its methods are safe
// for concurrent use; tests read and set its state directly.
type Phone struct {
	mu sync.Mutex
	c  Config

	rotation    int
	override    image.Point // wm size override; zero: none
	fg          string
	url         string
	counter     int
	subscribed  bool
	fields      map[string]*field // by resource id entry: "name", "password"
	focus       string
	ime         string
	enabled     []string
	files       map[string][]byte
	events      []Event
	commands    []string
	fills       []fill
	animating   int // uiautomator dumps left that fail to get an idle state; -1: all
	noMotion    bool
	settings    map[string]string
	down        *Event
	downAt      time.Time
	keysHeld    []string
	installed   []string
	thirdParty  map[string]bool
	launchCount map[string]int
}

// NewPhone returns a phone in the counter app, portrait, no field focused.
func NewPhone(c Config) *Phone {
	p := &Phone{c: c, fg: CounterApp, ime: LatinIME, enabled: []string{LatinIME},
		fields: map[string]*field{"name": {anchor: -1}, "password": {anchor: -1}},
		files:  map[string][]byte{}, settings: map[string]string{}, launchCount: map[string]int{},
		installed:  []string{"android", SettingsApp, LauncherApp, ChromeApp, CounterApp, "com.google.android.inputmethod.latin"},
		thirdParty: map[string]bool{CounterApp: true}}
	p.noMotion = c.SDK < 30
	if c.ADBKeyboard {
		p.installed = append(p.installed, KeyboardApp)
		p.thirdParty[KeyboardApp] = true
	}
	return p
}

func (p *Phone) cfg() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.c
}

func (p *Phone) banner() string {
	c := p.cfg()
	feats := "cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,fixed_push_symlink_timestamp,abb_exec,remount_shell,track_app,sendrecv_v2,sendrecv_v2_brotli,sendrecv_v2_lz4,sendrecv_v2_zstd,sendrecv_v2_dry_run_send,openscreen_mdns,delayed_ack"
	if !c.NoShellV2 {
		feats = "shell_v2," + feats
	}
	return fmt.Sprintf("device::ro.product.name=%s;ro.product.model=%s;ro.product.device=%s;features=%s", c.Product, c.Model, c.Device, feats)
}

// SetRotation turns the phone: 0 portrait, 1 landscape (90°), 2, 3.
func (p *Phone) SetRotation(r int) {
	p.mu.Lock()
	p.rotation = r & 3
	p.mu.Unlock()
}

// SetAnimating makes the next n uiautomator dumps fail to get an idle
// state (-1: every dump), as on a screen that keeps animating.
func (p *Phone) SetAnimating(n int) {
	p.mu.Lock()
	p.animating = n
	p.mu.Unlock()
}

// SetMotionEvent says whether `input motionevent` exists (Android 11+).
func (p *Phone) SetMotionEvent(on bool) {
	p.mu.Lock()
	p.noMotion = !on
	p.mu.Unlock()
}

// Counter is the number the counter app shows.
func (p *Phone) Counter() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counter
}

// Subscribed is the state of the counter app's checkbox.
func (p *Phone) Subscribed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.subscribed
}

// FieldText is the text of the counter app's field "name" or "password".
func (p *Phone) FieldText(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.fields[id].text)
}

// FocusedText is the text of the focused field ("" when none).
func (p *Phone) FocusedText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.fields[p.focus]; f != nil {
		return string(f.text)
	}
	return ""
}

// SetField sets a field's text and focuses it ("" focuses nothing).
func (p *Phone) SetField(id, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.focus = id
	if f := p.fields[id]; f != nil {
		f.text = []rune(text)
		f.cursor = len(f.text)
		f.anchor = -1
	}
}

// Foreground is the package in front and, for the browser, its URL.
func (p *Phone) Foreground() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fg, p.url
}

// IME is the current input method.
func (p *Phone) IME() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ime
}

// Events returns the input events received since the last call and forgets them.
func (p *Phone) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events
	p.events = nil
	return ev
}

// Commands returns the shell commands run since the last call and forgets them.
func (p *Phone) Commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.commands
	p.commands = nil
	return c
}

// Fill paints r (pixels of the current orientation) in c over whatever
// the screen shows; ClearFills removes the paint.
func (p *Phone) Fill(r image.Rectangle, c color.RGBA) {
	p.mu.Lock()
	p.fills = append(p.fills, fill{r, c})
	p.mu.Unlock()
}

// ClearFills removes what Fill painted.
func (p *Phone) ClearFills() {
	p.mu.Lock()
	p.fills = nil
	p.mu.Unlock()
}

// size is the display's size in the current orientation. Caller holds mu.
func (p *Phone) size() image.Point {
	s := image.Pt(p.c.Width, p.c.Height)
	if p.override != (image.Point{}) {
		s = p.override
	}
	if p.rotation&1 == 1 {
		s.X, s.Y = s.Y, s.X
	}
	return s
}

func (p *Phone) writeFile(name string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !strings.HasPrefix(name, "/sdcard/") && !strings.HasPrefix(name, "/data/local/tmp/") {
		return fmt.Errorf("couldn't create file: Permission denied")
	}
	p.files[path.Clean(name)] = bytes.Clone(data)
	return nil
}

func (p *Phone) readFile(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.files[path.Clean(name)]
	if !ok {
		return nil, fmt.Errorf("open failed: No such file or directory")
	}
	return bytes.Clone(b), nil
}

// Run runs a shell command line as the device's shell would and returns
// its stdout, stderr and exit status.
func (p *Phone) Run(line string) (stdout, stderr []byte, code int) {
	p.mu.Lock()
	p.commands = append(p.commands, line)
	p.mu.Unlock()
	cmds, err := parseShell(line, map[string]string{"HOME": "/", "PATH": "/system/bin"})
	if err != nil {
		return nil, []byte("/system/bin/sh: " + err.Error() + "\n"), 1
	}
	var out, errb bytes.Buffer
	prevOp := ""
	for _, c := range cmds {
		if (prevOp == "&&" && code != 0) || (prevOp == "||" && code == 0) {
			prevOp = c.op
			continue
		}
		args := c.args
		discard := false
		if i := slices.Index(args, ">/dev/null"); i >= 0 {
			args = slices.Delete(slices.Clone(args), i, i+1)
			discard = true
		}
		var o, e bytes.Buffer
		code = p.command(args, &o, &e)
		if !discard {
			out.Write(o.Bytes())
		}
		errb.Write(e.Bytes())
		prevOp = c.op
	}
	return out.Bytes(), errb.Bytes(), code
}

type writer interface {
	Write([]byte) (int, error)
	WriteString(string) (int, error)
}

func (p *Phone) command(args []string, out, errw writer) int {
	if len(args) == 0 {
		return 0
	}
	rest := args[1:]
	switch args[0] {
	case "echo":
		fmt.Fprintln(out, strings.Join(rest, " "))
		return 0
	case "true":
		return 0
	case "rm":
		for _, a := range rest {
			if strings.HasPrefix(a, "-") {
				continue
			}
			p.mu.Lock()
			delete(p.files, path.Clean(a))
			p.mu.Unlock()
		}
		return 0
	case "cat":
		code := 0
		for _, a := range rest {
			b, err := p.readFile(a)
			if err != nil {
				fmt.Fprintf(errw, "cat: %s: No such file or directory\n", a)
				code = 1
				continue
			}
			out.Write(b)
		}
		return code
	case "getprop":
		return p.getprop(rest, out)
	case "wm":
		return p.wm(rest, out, errw)
	case "settings":
		return p.settingsCmd(rest, out, errw)
	case "screencap":
		return p.screencap(rest, out, errw)
	case "uiautomator":
		return p.uiautomator(rest, out, errw)
	case "input":
		return p.input(rest, out, errw)
	case "ime":
		return p.imeCmd(rest, out, errw)
	case "am":
		return p.am(rest, out, errw)
	case "pm":
		return p.pm(rest, out, errw)
	case "cmd":
		return p.cmdService(rest, out, errw)
	case "monkey":
		return p.monkey(rest, out, errw)
	case "dumpsys":
		if len(rest) > 0 && rest[0] == "display" {
			p.mu.Lock()
			s := p.size()
			d := p.c.Density
			p.mu.Unlock()
			fmt.Fprintf(out, "DISPLAY MANAGER (dumpsys display)\n  mOnlyCore=false\n  mSafeMode=false\n\nLogical Displays: size=1\n  Display 0:\n    mDisplayId=0\n    mLayerStack=0\n    mHasContent=true\n    mBaseDisplayInfo=DisplayInfo{\"Built-in Screen\", displayId 0, FLAG_SECURE, FLAG_SUPPORTS_PROTECTED_BUFFERS, FLAG_TRUSTED, real %d x %d, largest app %d x %d, smallest app %d x %d, density %d (%d.0 x %d.0) dpi, rotation 0, type INTERNAL, state ON}\n", s.X, s.Y, s.X, s.Y, s.X, s.Y, d, d, d)
			return 0
		}
		return 0
	case "sleep":
		if len(rest) > 0 {
			if f, err := strconv.ParseFloat(rest[0], 64); err == nil {
				time.Sleep(min(time.Duration(f*float64(time.Second)), 30*time.Second))
			}
		}
		return 0
	}
	fmt.Fprintf(errw, "/system/bin/sh: %s: inaccessible or not found\n", args[0])
	return 127
}

func (p *Phone) getprop(args []string, out writer) int {
	p.mu.Lock()
	c := p.c
	p.mu.Unlock()
	props := map[string]string{
		"ro.product.model": c.Model, "ro.product.name": c.Product, "ro.product.device": c.Device,
		"ro.build.version.release": c.Release, "ro.build.version.sdk": strconv.Itoa(c.SDK),
		"ro.product.manufacturer": "Google", "ro.sf.lcd_density": strconv.Itoa(c.Density),
	}
	if len(args) == 0 {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(out, "[%s]: [%s]\n", k, props[k])
		}
		return 0
	}
	fmt.Fprintln(out, props[args[0]])
	return 0
}

func (p *Phone) wm(args []string, out, errw writer) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(args) == 0 {
		fmt.Fprintln(errw, "Window manager (window) commands:")
		return 255
	}
	switch args[0] {
	case "size":
		if len(args) > 1 {
			if args[1] == "reset" {
				p.override = image.Point{}
				return 0
			}
			w, h, ok := strings.Cut(args[1], "x")
			wi, e1 := strconv.Atoi(w)
			hi, e2 := strconv.Atoi(h)
			if !ok || e1 != nil || e2 != nil {
				fmt.Fprintf(errw, "Error: bad size %s\n", args[1])
				return 255
			}
			p.override = image.Pt(wi, hi)
			return 0
		}
		fmt.Fprintf(out, "Physical size: %dx%d\n", p.c.Width, p.c.Height)
		if p.override != (image.Point{}) {
			fmt.Fprintf(out, "Override size: %dx%d\n", p.override.X, p.override.Y)
		}
		return 0
	case "density":
		fmt.Fprintf(out, "Physical density: %d\n", p.c.Density)
		return 0
	}
	fmt.Fprintf(errw, "Unknown command: %s\n", args[0])
	return 255
}

func (p *Phone) settingsCmd(args []string, out, errw writer) int {
	if len(args) < 3 {
		fmt.Fprintln(errw, "Invalid command: settings")
		return 255
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := args[1] + "/" + args[2]
	switch args[0] {
	case "get":
		switch key {
		case "system/user_rotation":
			fmt.Fprintln(out, p.rotation)
		case "system/accelerometer_rotation":
			fmt.Fprintln(out, 0)
		case "secure/default_input_method":
			fmt.Fprintln(out, p.ime)
		default:
			if v, ok := p.settings[key]; ok {
				fmt.Fprintln(out, v)
			} else {
				fmt.Fprintln(out, "null")
			}
		}
		return 0
	case "put":
		if len(args) < 4 {
			fmt.Fprintln(errw, "Invalid command: put")
			return 255
		}
		if key == "system/user_rotation" {
			r, _ := strconv.Atoi(args[3])
			p.rotation = r & 3
		}
		p.settings[key] = args[3]
		return 0
	}
	fmt.Fprintf(errw, "Invalid command: %s\n", args[0])
	return 255
}

func (p *Phone) imeCmd(args []string, out, errw writer) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := []string{LatinIME}
	if slices.Contains(p.installed, KeyboardApp) {
		all = append(all, AdbIME)
	}
	if len(args) == 0 {
		fmt.Fprintln(errw, "Invalid command")
		return 255
	}
	switch args[0] {
	case "list":
		list := p.enabled
		if slices.Contains(args, "-a") {
			list = all
		}
		for _, id := range list {
			if slices.Contains(args, "-s") {
				fmt.Fprintln(out, id)
			} else {
				pkg, _, _ := strings.Cut(id, "/")
				fmt.Fprintf(out, "%s:\n  mId=%s mSettingsActivity=null\n  mIsDefaultResId=0x0\n  Service:\n    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n    ServiceInfo:\n      name=%s\n      packageName=%s\n", id, id, id, pkg)
			}
		}
		return 0
	case "enable", "set":
		if len(args) < 2 {
			fmt.Fprintln(errw, "Error: no input method given")
			return 255
		}
		id := args[1]
		if !slices.Contains(all, id) {
			fmt.Fprintf(errw, "Unknown input method %s cannot be %s for user #0\n", id, map[string]string{"enable": "enabled", "set": "selected"}[args[0]])
			return 255
		}
		if args[0] == "enable" {
			if slices.Contains(p.enabled, id) {
				fmt.Fprintf(out, "Input method %s: already enabled for user #0\n", id)
			} else {
				p.enabled = append(p.enabled, id)
				fmt.Fprintf(out, "Input method %s: now enabled for user #0\n", id)
			}
			return 0
		}
		if !slices.Contains(p.enabled, id) {
			fmt.Fprintf(errw, "Unknown input method %s cannot be selected for user #0\n", id)
			return 255
		}
		p.ime = id
		fmt.Fprintf(out, "Input method %s selected for user #0\n", id)
		return 0
	}
	fmt.Fprintf(errw, "Unknown command: %s\n", args[0])
	return 255
}

// launchable are the apps with a launcher activity.
var launchable = map[string]string{
	CounterApp:  CounterApp + "/.MainActivity",
	ChromeApp:   ChromeApp + "/com.google.android.apps.chrome.Main",
	SettingsApp: SettingsApp + "/.Settings",
}

func (p *Phone) am(args []string, out, errw writer) int {
	if len(args) == 0 {
		fmt.Fprintln(errw, "Activity manager (activity) commands:")
		return 255
	}
	opts := map[string]string{}
	var extras [][2]string
	var pos []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-a", "-d", "-n", "-c", "--user":
			if i+1 < len(args) {
				opts[a] = args[i+1]
				i++
			}
		case "--es":
			if i+2 < len(args) {
				extras = append(extras, [2]string{args[i+1], args[i+2]})
				i += 2
			}
		case "-W", "-S":
		default:
			pos = append(pos, a)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch args[0] {
	case "start", "start-activity":
		if comp := opts["-n"]; comp != "" {
			for pkg, c := range launchable {
				if c == comp || strings.Replace(c, "/.", "/"+pkg+".", 1) == comp {
					fmt.Fprintf(out, "Starting: Intent { cmp=%s }\n", comp)
					p.launch(pkg)
					return 0
				}
			}
			fmt.Fprintf(out, "Starting: Intent { cmp=%s }\n", comp)
			fmt.Fprintf(errw, "Error type 3\nError: Activity class {%s} does not exist.\n", comp)
			return 255
		}
		if opts["-a"] == "android.intent.action.VIEW" && opts["-d"] != "" {
			u := opts["-d"]
			desc := fmt.Sprintf("Intent { act=android.intent.action.VIEW dat=%s }", redactURL(u))
			fmt.Fprintf(out, "Starting: %s\n", desc)
			if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
				p.launch(ChromeApp)
				p.url = u
				return 0
			}
			if strings.HasPrefix(u, "counter://") {
				p.launch(CounterApp)
				return 0
			}
			fmt.Fprintf(errw, "Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW dat=%s flg=0x10000000 }\n", redactURL(u))
			return 255
		}
		fmt.Fprintln(errw, "Error: Intent does not match any activities")
		return 255
	case "force-stop":
		if len(pos) > 0 && p.fg == pos[0] {
			p.fg = LauncherApp
			p.focus = ""
		}
		return 0
	case "broadcast":
		fmt.Fprintf(out, "Broadcasting: Intent { act=%s flg=0x400000 (has extras) }\n", opts["-a"])
		if p.ime == AdbIME && p.fg != "" {
			for _, e := range extras {
				if e[0] != "msg" {
					continue
				}
				switch opts["-a"] {
				case "ADB_INPUT_B64":
					b, err := base64.StdEncoding.DecodeString(e[1])
					if err == nil {
						p.commit(string(b))
					}
				case "ADB_INPUT_TEXT":
					p.commit(e[1])
				}
			}
			if opts["-a"] == "ADB_CLEAR_TEXT" {
				if f := p.fields[p.focus]; f != nil {
					f.text, f.cursor, f.anchor = nil, 0, -1
				}
			}
		}
		fmt.Fprintln(out, "Broadcast completed: result=0")
		return 0
	}
	fmt.Fprintf(errw, "Unknown command: %s\n", args[0])
	return 255
}

// redactURL is how ActivityManager prints an intent's data: the scheme and host only.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host + "/..."
}

// launch brings pkg to the front. Caller holds mu.
func (p *Phone) launch(pkg string) {
	p.fg = pkg
	p.focus = ""
	p.launchCount[pkg]++
}

// Launches is how many times pkg was started.
func (p *Phone) Launches(pkg string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.launchCount[pkg]
}

func (p *Phone) pm(args []string, out, errw writer) int {
	if len(args) < 2 || args[0] != "list" || args[1] != "packages" {
		fmt.Fprintln(errw, "Error: unknown command")
		return 255
	}
	third := slices.Contains(args, "-3")
	filter := ""
	for _, a := range args[2:] {
		if !strings.HasPrefix(a, "-") {
			filter = a
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pkg := range p.installed {
		if third && !p.thirdParty[pkg] || filter != "" && !strings.Contains(pkg, filter) {
			continue
		}
		fmt.Fprintf(out, "package:%s\n", pkg)
	}
	return 0
}

func (p *Phone) cmdService(args []string, out, errw writer) int {
	if len(args) >= 2 && args[0] == "package" && args[1] == "resolve-activity" {
		pkg := ""
		for i := 2; i < len(args); i++ {
			switch args[i] {
			case "-a", "-c", "--user":
				i++
			case "--brief", "--components":
			default:
				pkg = args[i]
			}
		}
		comp, ok := launchable[pkg]
		if !ok {
			fmt.Fprintln(out, "No activity found")
			return 0
		}
		fmt.Fprintf(out, "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n%s\n", comp)
		return 0
	}
	if len(args) >= 2 && args[0] == "display" && args[1] == "get-displays" {
		p.mu.Lock()
		s := p.size()
		d := p.c.Density
		p.mu.Unlock()
		fmt.Fprintf(out, "Displays:\n  Display id 0: DisplayInfo{\"Built-in Screen\", displayId 0, FLAG_SECURE, FLAG_SUPPORTS_PROTECTED_BUFFERS, FLAG_TRUSTED, real %d x %d, density %d, rotation 0, type INTERNAL, state ON}\n", s.X, s.Y, d)
		return 0
	}
	if len(args) >= 1 && args[0] == "input" {
		return p.input(args[1:], out, errw)
	}
	fmt.Fprintf(errw, "cmd: Can't find service: %s\n", strings.Join(args, " "))
	return 20
}

func (p *Phone) monkey(args []string, out, errw writer) int {
	pkg := ""
	for i := 0; i < len(args); i++ {
		if args[i] == "-p" && i+1 < len(args) {
			pkg = args[i+1]
		}
	}
	for _, a := range args {
		fmt.Fprintf(out, "  bash arg: %s\n", a)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := launchable[pkg]; !ok {
		fmt.Fprintln(errw, "** No activities found to run, monkey aborted.")
		return 252
	}
	p.launch(pkg)
	fmt.Fprintln(out, "Events injected: 1\n## Network stats: elapsed time=11ms (0ms mobile, 0ms wifi, 11ms not connected)")
	return 0
}

func (p *Phone) uiautomator(args []string, out, errw writer) int {
	if len(args) == 0 || args[0] != "dump" {
		fmt.Fprintln(errw, "Usage: uiautomator <subcommand> [options]")
		return 1
	}
	file := "/sdcard/window_dump.xml"
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "--") {
			file = a
		}
	}
	p.mu.Lock()
	if p.animating != 0 {
		if p.animating > 0 {
			p.animating--
		}
		p.mu.Unlock()
		fmt.Fprintln(errw, "ERROR: could not get idle state.")
		return 0
	}
	xml := p.dumpXML()
	p.mu.Unlock()
	if file == "/dev/tty" {
		out.WriteString(xml)
	} else if err := p.writeFile(file, []byte(xml)); err != nil {
		fmt.Fprintf(errw, "java.io.FileNotFoundException: %s: open failed: EACCES (Permission denied)\n", file)
		return 1
	}
	fmt.Fprintf(out, "UI hierchary dumped to: %s\n", file)
	return 0
}

func (p *Phone) screencap(args []string, out, errw writer) int {
	png := false
	file := ""
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-p":
			png = true
		case "-d":
			i++
		default:
			file = args[i]
			if strings.HasSuffix(file, ".png") {
				png = true
			}
		}
	}
	img := p.Screenshot()
	var b []byte
	if png {
		b = encodePNG(img)
	} else {
		hdr := make([]byte, 12, 16+len(img.Pix))
		putLE(hdr[0:], uint32(img.Rect.Dx()))
		putLE(hdr[4:], uint32(img.Rect.Dy()))
		putLE(hdr[8:], 1) // PIXEL_FORMAT_RGBA_8888
		if p.cfg().SDK >= 28 {
			hdr = append(hdr, 0, 0, 0, 0) // dataspace (Android 9+)
		}
		b = append(hdr, img.Pix...)
	}
	if file != "" {
		if err := p.writeFile(file, b); err != nil {
			fmt.Fprintf(errw, "Error opening file: %s (Permission denied)\n", file)
			return 1
		}
		return 0
	}
	out.Write(b)
	return 0
}

func putLE(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// WriteFile puts a file on the phone's storage (/sdcard/..., /data/local/tmp/...).
func (p *Phone) WriteFile(name string, data []byte) error { return p.writeFile(name, data) }
