package config

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// EnvPrefix begins the name of every guiagent environment variable.
const EnvPrefix = "GUI_AGENT_"

// Limits of a task's step budget: GUI_AGENT_MAX_STEPS, the public package's
// WithMaxSteps and gui_execute_task's max_steps all accept 1 to MaxStepsLimit.
const (
	MaxStepsLimit   = 500
	DefaultMaxSteps = 50
)

// Kind says how a knob's text is read and what values it accepts.
type Kind int

// The kinds of knobs.
const (
	KindText     Kind = iota // any text (a check may narrow it)
	KindInt                  // a whole number from Min to Max
	KindDuration             // a whole number of Unit from Min to Max
	KindBool                 // true or false (1/0, yes/no, on/off)
	KindList                 // a comma-separated list
	KindSize                 // WIDTHxHEIGHT
	KindChoice               // one of Choices
	KindURL                  // an http:// or https:// URL
)

// Knob is one configuration value: its Config field, environment variable
// and flag, what it accepts, its default and a line of documentation. Knobs
// is the one table of them; loading, flags, validation, docs/configuration.md's table,
// the public Options mapping and the variable names in errors (Var) all come
// from it.
type Knob struct {
	// Name is the Config field the knob sets; Var takes it.
	Name string
	// Env is its environment variable; "" for a flag without one.
	Env string
	// Flag is its flag, without dashes; "" when it has none.
	Flag string
	Kind Kind
	// Unit is the unit of a KindDuration variable (time.Second for _S).
	Unit time.Duration
	// Min and Max bound a KindInt or KindDuration value (in Unit).
	Min, Max int
	// Choices lists what a KindChoice knob accepts; Fold reads it
	// case-insensitively (kept lowercase).
	Choices func() []string
	Fold    bool
	// Secret values are never logged, returned or recorded.
	Secret bool
	// Default is the default as it would be written in the variable ("" =
	// empty); Shown replaces it in documentation when the default is
	// computed (from the session, the model, the machine).
	Default, Shown string
	// Doc is a line of documentation: the documented meaning and the flag's
	// usage (its first `quoted` word names the flag's value).
	Doc string

	defaultFn func() string      // a default computed at start (MaxDesktops)
	check     func(string) error // more checks of a non-empty KindText value
	// listCheck checks a KindList value (each item); parseList, when set,
	// reads a KindList variable in place of a plain comma list.
	listCheck func([]string) error
	parseList func(string) ([]string, error)
	empty     string // the error of a list flag that names nothing
}

var numCPU = runtime.NumCPU

func itoa(n int) string { return strconv.Itoa(n) }

func secs(d time.Duration) string { return itoa(int(d / time.Second)) }

func providers() []string { return Providers() }
func adapters() []string  { return Adapters() }

// backends lists what --backend accepts on this system; it is
// platform.Backends (config may not import platform), held to it by a test
// in internal/app.
func backends() []string {
	anywhere := []string{"vnc", "browser", "android", "ios", "harmony"}
	switch runtime.GOOS {
	case "linux":
		return append([]string{"auto", "x11", "wayland", "portal"}, anywhere...)
	case "windows":
		return append([]string{"auto", "windows"}, anywhere...)
	case "darwin":
		return append([]string{"auto", "darwin"}, anywhere...)
	}
	return append([]string{"auto"}, anywhere...)
}

func choices(v ...string) func() []string { return func() []string { return v } }

// Knobs is every configuration knob, in the order of docs/configuration.md.
var Knobs = []Knob{
	// Model provider.
	{Name: "Provider", Env: "GUI_AGENT_PROVIDER", Flag: "provider", Kind: KindChoice, Choices: providers, Fold: true,
		Doc: "model `provider` of gui_execute_task and the vision tools"},
	{Name: "Model", Env: "GUI_AGENT_MODEL", Flag: "model", Doc: "model `name`"},
	{Name: "APIKey", Env: "GUI_AGENT_API_KEY", Secret: true, Doc: "the provider's API key"},
	{Name: "BaseURL", Env: "GUI_AGENT_BASE_URL", Kind: KindURL, Shown: "the provider's",
		Doc: "endpoint of an OpenAI- or Anthropic-compatible server, as the provider's SDK takes it (OpenAI: up to and including `/v1`; Anthropic: the host root)"},
	{Name: "Adapter", Env: "GUI_AGENT_ADAPTER", Kind: KindChoice, Choices: adapters, Shown: "by provider and model",
		Doc: "how guiagent talks to the model (see Models)"},
	{Name: "MemoryModel", Env: "GUI_AGENT_MEMORY_MODEL", Shown: "the main model", Doc: "cheaper model for history summaries"},
	{Name: "MemoryProvider", Env: "GUI_AGENT_MEMORY_PROVIDER", Kind: KindChoice, Choices: providers, Fold: true, Shown: "the main provider",
		Doc: "the memory model's provider"},
	{Name: "MemoryBaseURL", Env: "GUI_AGENT_MEMORY_BASE_URL", Kind: KindURL, Shown: "the main one (same provider)",
		Doc: "the memory model's endpoint"},
	{Name: "MemoryAPIKey", Env: "GUI_AGENT_MEMORY_API_KEY", Secret: true, Shown: "the main one (same provider)",
		Doc: "the memory model's key (required when its provider differs)"},
	{Name: "GroundingModel", Env: "GUI_AGENT_GROUNDING_MODEL", Shown: "none",
		Doc: "separate model that turns named targets into points (OpenAI-compatible Chat Completions)"},
	{Name: "GroundingBaseURL", Env: "GUI_AGENT_GROUNDING_BASE_URL", Kind: KindURL, Shown: "the main one",
		Doc: "the grounding model's endpoint (required with provider anthropic)"},
	{Name: "GroundingAPIKey", Env: "GUI_AGENT_GROUNDING_API_KEY", Secret: true, Shown: "the main one", Doc: "the grounding model's key"},
	{Name: "ToolVersion", Env: "GUI_AGENT_TOOL_VERSION", Shown: "by model",
		Doc: "native tool version: Anthropic computer_toolset_20260801, computer_20251124, computer_20250124; OpenAI computer, computer_use_preview"},
	{Name: "DisableActions", Env: "GUI_AGENT_DISABLE_ACTIONS", Kind: KindList, Shown: "none", listCheck: checkDisableActions,
		Doc: "action kinds the model is not offered, comma separated (zoom, mouse_down, mouse_up, drag, hold_key, ...)"},
	{Name: "ModelTimeout", Env: "GUI_AGENT_MODEL_TIMEOUT_S", Kind: KindDuration, Unit: time.Second, Min: 1, Max: 600,
		Default: secs(llm.DefaultTimeout), Doc: "bound on one model request, in seconds"},

	// Desktop.
	{Name: "DisplayIndex", Env: "GUI_AGENT_DISPLAY_INDEX", Shown: "primary", Doc: "default display id (see gui_list_displays)"},
	{Name: "CoordinateMode", Env: "GUI_AGENT_COORDINATE_MODE", Shown: "image", check: checkSpace,
		Doc: "default `space` of MCP tool coordinates: " + strings.Join(geom.SpaceNames, ", ") +
			"; while GUI_AGENT_MODEL_COORDINATES is unset, a normalized mode here also sets that (deprecated: a warning at start says so)"},
	{Name: "ModelCoordinates", Env: "GUI_AGENT_MODEL_COORDINATES", Shown: "by model", check: checkModelMode,
		Doc: "coordinate convention of a model guiagent does not know (known ones use their own): " + strings.Join(geom.CoordinateModes, ", ")},
	{Name: "Backend", Env: "GUI_AGENT_BACKEND", Flag: "backend", Kind: KindChoice, Choices: backends, Fold: true, Default: "auto",
		Doc: "desktop `backend`: auto picks from the session (WAYLAND_DISPLAY, XDG_SESSION_TYPE, XDG_CURRENT_DESKTOP, DISPLAY; `guiagent doctor` says which and why); Linux: x11, wayland (wlroots compositors: sway, Hyprland, ...), portal (xdg-desktop-portal: GNOME, KDE); Windows: windows; macOS: darwin; everywhere: vnc, browser (a Chromium page over the DevTools protocol), android (a phone over adb), ios (an iPhone or iPad through WebDriverAgent), harmony (a HarmonyOS device through hdc)"},
	{Name: "XDisplay", Flag: "display", Shown: "$DISPLAY", Doc: "X `display` to drive, e.g. :1"},
	{Name: "VirtualDisplay", Env: "GUI_AGENT_VIRTUAL_DISPLAY", Flag: "virtual-display", Kind: KindSize,
		Doc: "when no X display is reachable, start a private Xvfb of this `size`, e.g. 1280x800 (with one reachable it is not used, and the start-up log says so)"},
	{Name: "VNC", Env: "GUI_AGENT_VNC", Flag: "vnc",
		Doc: "drive a remote desktop or VM over VNC at `host[:port]` instead (default port 5900; password in GUI_AGENT_VNC_PASSWORD)"},
	{Name: "VNCPassword", Env: "GUI_AGENT_VNC_PASSWORD", Secret: true, Doc: "the VNC server's password"},
	{Name: "BrowserPath", Env: "GUI_AGENT_BROWSER_PATH", Flag: "browser-path", Shown: "chromium, chromium-browser or google-chrome on PATH",
		Doc: "with --backend browser: the Chromium or Chrome `program` to launch"},
	{Name: "BrowserURL", Env: "GUI_AGENT_BROWSER_URL", Flag: "browser-url",
		Doc: "with --backend browser: attach to the browser already running with its DevTools at this `address` (http://127.0.0.1:9222) instead of launching one; loopback only unless --allow-remote; only the tabs guiagent opens are touched"},
	{Name: "BrowserHeaded", Env: "GUI_AGENT_BROWSER_HEADED", Flag: "browser-headed", Kind: KindBool, Default: "false",
		Doc: "with --backend browser: show the launched browser's window (default: headless)"},
	{Name: "BrowserViewport", Env: "GUI_AGENT_BROWSER_VIEWPORT", Flag: "browser-viewport", Kind: KindSize, Default: "1280x800",
		Doc: "with --backend browser: the page's viewport `size` in CSS pixels"},
	{Name: "BrowserIsolated", Env: "GUI_AGENT_BROWSER_ISOLATED", Flag: "browser-isolated", Kind: KindBool, Default: "false",
		Doc: "with --backend browser: a temporary profile, removed at exit (default: a profile kept in GUI_AGENT_STATE_DIR/browser-profile)"},
	{Name: "BrowserUserAgent", Env: "GUI_AGENT_BROWSER_USER_AGENT", Flag: "browser-user-agent", Shown: "the browser's own",
		Doc: "with --backend browser: the user agent pages see (`text`)"},
	{Name: "BrowserSameTab", Env: "GUI_AGENT_BROWSER_SAME_TAB", Kind: KindBool, Default: "false",
		Doc: "with --backend browser: load what a page opens in a new tab (window.open, target=_blank) in its own tab instead"},
	{Name: "BrowserDialogs", Env: "GUI_AGENT_BROWSER_DIALOGS", Kind: KindChoice, Choices: choices("ask", "accept", "dismiss"), Fold: true, Default: "ask",
		Doc: "with --backend browser: what a page's alert, confirm, prompt or beforeunload gets: ask (the MCP client's user or the dashboard, else dismissed), accept or dismiss; the call that raised it says which"},
	{Name: "BrowserFiles", Env: "GUI_AGENT_BROWSER_FILES", Kind: KindList,
		Doc: "with --backend browser: the folders gui_upload may take files from (none by default)"},
	{Name: "Device", Env: "GUI_AGENT_DEVICE", Flag: "device",
		Doc: "with --backend android: the phone's `serial` (adb devices); with --backend harmony: its connect key (hdc list targets); without it, the only device attached"},
	{Name: "ADB", Env: "GUI_AGENT_ADB", Flag: "adb", Shown: "ANDROID_ADB_SERVER_ADDRESS:ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037",
		Doc: "with --backend android: the adb server's `host:port`; when nothing answers there and adb is on PATH, it is started as adb does"},
	{Name: "WDAURL", Env: "GUI_AGENT_WDA_URL", Flag: "wda-url", Kind: KindURL, Default: "http://127.0.0.1:8100",
		Doc: "with --backend ios: the `address` of WebDriverAgent (7 or later) running on the device or simulator, its port forwarded (iproxy 8100 8100, go-ios forward)"},
	{Name: "HDC", Env: "GUI_AGENT_HDC", Shown: "hdc on PATH",
		Doc: "with --backend harmony: the hdc `program` of the HarmonyOS SDK's toolchains"},
	{Name: "Accessibility", Env: "GUI_AGENT_ACCESSIBILITY", Kind: KindChoice, Choices: choices("auto", "on", "off"), Fold: true, Default: "auto",
		Doc: "read applications' accessibility trees (Linux: AT-SPI2; Windows: UI Automation; macOS: the AX API, which needs the Accessibility permission); on also asks Chromium, Qt and GTK 4 to expose theirs, as a screen reader does; the bus is found from DBUS_SESSION_BUS_ADDRESS or AT_SPI_BUS_ADDRESS"},

	// Screenshots.
	{Name: "JPEGQuality", Env: "GUI_AGENT_JPEG_QUALITY", Kind: KindInt, Min: 1, Max: 100, Default: itoa(imaging.DefaultQuality),
		Doc: "JPEG quality of screenshots"},
	{Name: "MaxLongEdge", Env: "GUI_AGENT_MAX_LONG_EDGE", Kind: KindInt, Min: 64, Max: 8192, Default: itoa(imaging.DefaultMaxLongEdge),
		Doc: "longest side of a screenshot sent, in pixels"},
	{Name: "MaxImageBytes", Env: "GUI_AGENT_MAX_IMAGE_BYTES", Kind: KindInt, Min: 32768, Max: 20_000_000, Default: itoa(imaging.DefaultMaxBytes),
		Doc: "byte budget of one screenshot (about 1 MB once base64-encoded)"},
	{Name: "ImageFormat", Env: "GUI_AGENT_IMAGE_FORMAT", Kind: KindChoice, Choices: choices("jpeg", "png"), Default: "jpeg",
		Doc: "format of screenshots"},
	{Name: "ScreenshotAfterAction", Env: "GUI_AGENT_SCREENSHOT_AFTER_ACTION", Kind: KindBool, Default: "false",
		Doc: "attach a fresh screenshot to every input tool result"},
	{Name: "OCRLangs", Env: "GUI_AGENT_OCR_LANGS", Kind: KindList, Default: "eng", parseList: ParseOCRLangs,
		listCheck: func(l []string) error { _, err := ParseOCRLangs(strings.Join(l, "+")); return err },
		Doc:       "languages of model-free text finding (Tesseract, optional: `apt-get install tesseract-ocr tesseract-ocr-eng`), separated by `+` or commas, e.g. `eng+jpn`; each needs its package (`tesseract-ocr-chi-sim`, `-jpn`, `-kor`); `guiagent doctor` says what is installed"},
	{Name: "OCRTesseract", Env: "GUI_AGENT_OCR_TESSERACT", Shown: "tesseract on PATH",
		Doc: "the Tesseract program of text finding, a `path` or a name on PATH, for one installed outside PATH (`C:\\Program Files\\Tesseract-OCR\\tesseract.exe`); `guiagent doctor` shows the one in use"},

	// Task loop.
	{Name: "MaxSteps", Env: "GUI_AGENT_MAX_STEPS", Kind: KindInt, Min: 1, Max: MaxStepsLimit, Default: itoa(DefaultMaxSteps),
		Doc: "model steps of one task"},
	{Name: "StepDelay", Env: "GUI_AGENT_STEP_DELAY_MS", Kind: KindDuration, Unit: time.Millisecond, Min: 0, Max: 10000, Default: "0",
		Doc: "extra pause after each step, in milliseconds"},
	{Name: "TaskTimeout", Env: "GUI_AGENT_TASK_TIMEOUT_S", Kind: KindDuration, Unit: time.Second, Min: 1, Max: 86400, Default: "600",
		Doc: "deadline of one task, in seconds"},
	{Name: "TokenBudget", Env: "GUI_AGENT_TOKEN_BUDGET", Kind: KindInt, Min: 0, Max: 1 << 30, Default: "0", Shown: "0 (none)",
		Doc: "input+output tokens per task"},
	{Name: "KeepImages", Env: "GUI_AGENT_SCREENSHOT_KEEP", Kind: KindInt, Min: 1, Max: 10, Default: itoa(llm.DefaultKeepImages),
		Doc: "screenshots per model call (older ones become text)"},
	{Name: "OnBusy", Env: "GUI_AGENT_ON_BUSY", Kind: KindChoice, Choices: choices("queue", "preempt", "reject"), Default: "queue",
		Doc: "what a second task does while one runs"},
	{Name: "HumanOverride", Env: "GUI_AGENT_HUMAN_OVERRIDE", Kind: KindBool, Default: "true",
		Doc: "stop a task when someone else moves the pointer"},
	{Name: "AskTimeout", Env: "GUI_AGENT_ASK_TIMEOUT_S", Kind: KindDuration, Unit: time.Second, Min: 1, Max: 86400, Default: "300",
		Doc: "how long a task waits for a person's answer to one question, in seconds; without one it ends as blocked"},
	{Name: "Elements", Env: "GUI_AGENT_ELEMENTS", Kind: KindChoice, Choices: choices("off", "text", "marks", "both"), Fold: true, Default: "off",
		Doc: "what each step of gui_execute_task shows the model of the UI's elements (the accessibility tree, where the desktop has one): `text` adds their outline (ref, role, name, box) to the prompt, `marks` draws numbered marks on the screenshot, `both` does both; the model may then act by ref (`{\"action\": \"click\", \"ref\": \"e12\"}`)"},

	// Safety.
	{Name: "KillSwitchFile", Env: "GUI_AGENT_KILL_SWITCH_FILE", Doc: "while this file exists, all input stops"},
	{Name: "BlockedHotkeys", Env: "GUI_AGENT_BLOCKED_HOTKEYS", Kind: KindList, Doc: "key combinations added to the blocklist"},
	{Name: "AllowedHotkeys", Env: "GUI_AGENT_ALLOWED_HOTKEYS", Kind: KindList, Doc: "key combinations removed from the blocklist"},
	{Name: "ConfirmHotkeys", Env: "GUI_AGENT_CONFIRM_HOTKEYS", Kind: KindList,
		Doc: "key combinations (e.g. `ctrl+w,ctrl+shift+delete`) sent only after a person says yes; a blocked combination stays blocked"},

	// HTTP transport.
	{Name: "HTTP", Flag: "http", Kind: KindBool, Default: "false", Doc: "serve MCP over Streamable HTTP instead of stdio"},
	{Name: "HTTPAddr", Env: "GUI_AGENT_HTTP_ADDR", Flag: "addr", Default: "127.0.0.1:60008",
		Doc: "HTTP listen `host:port`, loopback unless --allow-remote"},
	{Name: "HTTPToken", Env: "GUI_AGENT_HTTP_TOKEN", Secret: true, Shown: "generated",
		Doc: "the HTTP bearer token, 16 characters or more (a generated one is written to the token file)"},
	{Name: "AllowRemote", Env: "GUI_AGENT_ALLOW_REMOTE", Flag: "allow-remote", Kind: KindBool, Default: "false",
		Doc: "allow a non-loopback --addr; requires GUI_AGENT_HTTP_TOKEN"},

	// MCP surface.
	{Name: "Tools", Env: "GUI_AGENT_TOOLS", Flag: "tools", Kind: KindList, Shown: "all",
		Doc:   "offer only these tools: comma `list` of tool names or groups (guiagent serve --help lists them)",
		empty: "names no tool: give tool names or groups, comma separated (see guiagent serve --help)"},
	{Name: "ReadOnly", Env: "GUI_AGENT_READ_ONLY", Flag: "read-only", Kind: KindBool, Default: "false",
		Doc: "offer only the observe tools: no input, no clipboard writes, no tasks"},

	// Many desktops.
	{Name: "DesktopPerSession", Env: "GUI_AGENT_DESKTOP_PER_SESSION", Flag: "desktop-per-session", Kind: KindSize,
		Doc: "serve --http only: give each MCP session its own private Xvfb of this `size`, e.g. 1280x800"},
	{Name: "SessionCommand", Env: "GUI_AGENT_SESSION_COMMAND", Flag: "session-command",
		Doc: "with --desktop-per-session: a `command` (sh -c) started on each new desktop; its output goes to desktops/<session>/session-command.log"},
	{Name: "MaxDesktops", Env: "GUI_AGENT_MAX_DESKTOPS", Flag: "max-desktops", Kind: KindInt, Min: 1, Max: 4096, Shown: "number of CPUs",
		defaultFn: func() string { return itoa(numCPU()) },
		Doc:       "with --desktop-per-session: at most this many desktops at once; a session beyond gets 503 naming the limit"},
	{Name: "MetricsPublic", Env: "GUI_AGENT_METRICS_PUBLIC", Flag: "metrics-public", Kind: KindBool, Default: "false",
		Doc: "serve /metrics without the bearer token"},
	{Name: "SessionKeepAlive", Env: "GUI_AGENT_SESSION_KEEPALIVE_S", Kind: KindDuration, Unit: time.Second, Min: 1, Max: 3600, Default: "10",
		Doc: "with a desktop per session: ping each client this often, in seconds; one that misses two pings loses its session and desktop"},

	// Records and logs.
	{Name: "RunsDir", Env: "GUI_AGENT_RUNS_DIR", Flag: "runs-dir",
		Shown: "`$XDG_STATE_HOME/guiagent/runs` (`~/.local/state/guiagent/runs`); Windows `%LOCALAPPDATA%\\guiagent\\runs`; macOS `~/Library/Application Support/guiagent/runs`",
		Doc:   "the `folder` of run records"},
	{Name: "RunsKeep", Env: "GUI_AGENT_RUNS_KEEP", Kind: KindInt, Min: 1, Max: 100_000, Default: "200",
		Doc: "finished run records kept (oldest removed first; a long MCP session is recorded in parts of 500 calls)"},
	{Name: "RunsMaxMB", Env: "GUI_AGENT_RUNS_MAX_MB", Kind: KindInt, Min: 1, Max: 1 << 20, Default: "2048",
		Doc: "total size of finished run records, in MB (oldest removed first)"},
	{Name: "StateDir", Env: "GUI_AGENT_STATE_DIR", Shown: "the folder holding the runs folder (`$XDG_STATE_HOME/guiagent`)",
		Doc: "held-input ledgers (`held-input/`): what a killed guiagent left pressed is released at the next start, or by `guiagent release`"},
	{Name: "DebugImages", Env: "GUI_AGENT_DEBUG_IMAGES", Kind: KindBool, Default: "true",
		Doc: "keep screenshots and overlays in run records"},
	{Name: "LogLevel", Env: "GUI_AGENT_LOG_LEVEL", Flag: "log-level", Kind: KindChoice, Choices: choices("debug", "info", "warn", "error"), Default: "info",
		Doc: "log `level`"},
	{Name: "LogFile", Env: "GUI_AGENT_LOG_FILE", Flag: "log-file", Shown: "stderr", Doc: "write logs to this `file` (never stdout)"},
	{Name: "LogFormat", Env: "GUI_AGENT_LOG_FORMAT", Flag: "log-format", Kind: KindChoice, Choices: choices("text", "json"), Default: "text",
		Doc: "log `format`; json: one object per line, with `run_id` (task run) and `session_id` (MCP session)"},
	{Name: "CacheDir", Env: "GUI_AGENT_CACHE_DIR",
		Doc: "flow caches: `guiagent run` keeps `FLOW.cache.yaml` beside the flow unless this is set; `gui_run_flow` keeps `NAME.cache.yaml` here, else in `flow-cache` beside the runs folder"},
	{Name: "SettingsFile", Env: "GUI_AGENT_SETTINGS_FILE", Shown: "os.UserConfigDir()/guiagent/settings.json",
		Doc: "where the settings API keeps its values"},
}

// knobIndex finds a knob by Name.
var knobIndex = func() map[string]int {
	m := make(map[string]int, len(Knobs))
	for i, k := range Knobs {
		m[k.Name] = i
	}
	return m
}()

// KnobNamed returns the knob that sets Config field name.
func KnobNamed(name string) (Knob, bool) {
	i, ok := knobIndex[name]
	if !ok {
		return Knob{}, false
	}
	return Knobs[i], true
}

// Var is the environment variable of the knob that sets Config field name,
// for messages that tell the user what to set: Var("APIKey") is
// "GUI_AGENT_API_KEY". An unknown name, or a knob without a variable, is a
// programming error, which the module's tests catch: it panics.
func Var(name string) string {
	k, ok := KnobNamed(name)
	if !ok || k.Env == "" {
		panic(fmt.Sprintf("config.Var(%q): no knob with an environment variable has that name", name))
	}
	return k.Env
}

// Vars names the variables of several knobs for a message, as a list:
// Vars("Provider", "Model", "APIKey") is "GUI_AGENT_PROVIDER, GUI_AGENT_MODEL
// and GUI_AGENT_API_KEY".
func Vars(names ...string) string {
	vs := make([]string, len(names))
	for i, n := range names {
		vs[i] = Var(n)
	}
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1]
}

// key is the name Sources uses for k: its variable without EnvPrefix, or
// "--flag" for a flag without a variable.
func (k Knob) key() string {
	if k.Env == "" {
		return "--" + k.Flag
	}
	return strings.TrimPrefix(k.Env, EnvPrefix)
}

// label names k in a message: "--flag/VARIABLE", or the one it has.
func (k Knob) label() string {
	switch {
	case k.Flag == "":
		return k.Env
	case k.Env == "":
		return "--" + k.Flag
	}
	return "--" + k.Flag + "/" + k.Env
}

// field is k's field of c.
func (k Knob) field(c *Config) reflect.Value { return reflect.ValueOf(c).Elem().FieldByName(k.Name) }

// defaultText is the default k starts from.
func (k Knob) defaultText() string {
	if k.defaultFn != nil {
		return k.defaultFn()
	}
	return k.Default
}

// parse reads text v as k's value, with an error saying what k accepts.
func (k Knob) parse(v string) (any, error) {
	switch k.Kind {
	case KindInt, KindDuration:
		n, err := strconv.Atoi(v)
		if err != nil || n < k.Min || n > k.Max {
			return nil, fmt.Errorf("want a whole number from %d to %d", k.Min, k.Max)
		}
		if k.Kind == KindDuration {
			return time.Duration(n) * k.Unit, nil
		}
		return n, nil
	case KindBool:
		switch strings.ToLower(v) {
		case "1", "true", "yes", "on":
			return true, nil
		case "0", "false", "no", "off":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false (1/0, yes/no, on/off)")
	case KindList:
		if k.parseList != nil {
			return k.parseList(v)
		}
		return splitList(v), nil
	case KindSize:
		return ParseSize(v)
	}
	return v, nil
}

// set parses v into c's field of k.
func (k Knob) set(c *Config, v string) error {
	x, err := k.parse(v)
	if err != nil {
		return err
	}
	k.field(c).Set(reflect.ValueOf(x))
	return nil
}

// format writes c's value of k as it would be given in the variable.
func (k Knob) format(c *Config) string {
	f := k.field(c)
	switch k.Kind {
	case KindDuration:
		return strconv.FormatFloat(float64(f.Int())/float64(k.Unit), 'f', -1, 64)
	case KindList:
		return strings.Join(f.Interface().([]string), ",")
	case KindSize:
		if s := f.Interface().(geom.Size); s != (geom.Size{}) {
			return fmt.Sprintf("%dx%d", s.W, s.H)
		}
		return ""
	}
	return fmt.Sprint(f.Interface())
}

// validate checks c's value of k against what k accepts; a value given in Go
// (guiagent.New) or by a flag is held to the same ranges as a variable.
func (k Knob) validate(c *Config) error {
	f := k.field(c)
	switch k.Kind {
	case KindInt, KindDuration:
		n := f.Int()
		lo, hi := int64(k.Min), int64(k.Max)
		if k.Kind == KindDuration {
			lo, hi = lo*int64(k.Unit), hi*int64(k.Unit)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%s=%s: want a whole number from %d to %d", k.label(), k.format(c), k.Min, k.Max)
		}
	case KindChoice:
		v := f.String()
		if k.Fold {
			v = strings.ToLower(v)
			f.SetString(v)
		}
		if v != "" || k.Default != "" {
			return oneOf(k.Env, v, k.Choices())
		}
	case KindURL:
		if v := f.String(); v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return fmt.Errorf("%s=%q: want an http:// or https:// URL", k.Env, v)
		} else if strings.ContainsFunc(v, unicode.IsControl) || strings.ContainsAny(v, " \t") {
			return fmt.Errorf("%s=%q: a URL holds no spaces, line breaks or control characters", k.Env, v)
		}
	case KindList:
		if k.listCheck != nil {
			if err := k.listCheck(f.Interface().([]string)); err != nil {
				return fmt.Errorf("%s: %w", k.label(), err)
			}
		}
	case KindSize:
		if s := f.Interface().(geom.Size); s != (geom.Size{}) {
			if _, err := ParseSize(k.format(c)); err != nil {
				return fmt.Errorf("%s: %w", k.label(), err)
			}
		}
	case KindText:
		if v := f.String(); v != "" && k.check != nil {
			if err := k.check(v); err != nil {
				return fmt.Errorf("%s: %w", k.Env, err)
			}
		}
	}
	return nil
}

// checkSpace accepts a space of the MCP tools' coordinates.
func checkSpace(v string) error {
	if _, err := geom.ParseSpace(v, ""); err != nil {
		return fmt.Errorf("unknown coordinate mode %q: use one of %s", v, strings.Join(geom.SpaceNames, ", "))
	}
	return nil
}

// checkModelMode accepts a model coordinate convention.
func checkModelMode(v string) error {
	_, err := geom.Profile{}.WithMode(v)
	return err
}
