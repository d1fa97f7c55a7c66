package guiagent

import (
	"io"
	"reflect"
	"time"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
)

// Size is a width and height in pixels.
type Size struct{ Width, Height int }

// Options configure an Agent. Every field's zero value means what the
// guiagent command's default means (docs/configuration.md lists them), except SettingsFile
// (zero: no settings file). LoadOptions fills Options from flags and
// GUI_AGENT_* variables exactly as the command does.
type Options struct {
	// Provider is the model provider: "openai", "anthropic" or "gemini"
	// (GUI_AGENT_PROVIDER). With Model empty, Execute has no model; the
	// desktop methods and the MCP tools other than gui_execute_task work.
	Provider string
	// Model is the vision model's name (GUI_AGENT_MODEL).
	Model string
	// APIKey is the provider's key (GUI_AGENT_API_KEY). It is never logged,
	// returned or recorded.
	APIKey string
	// BaseURL is an OpenAI- or Anthropic-compatible endpoint (GUI_AGENT_BASE_URL);
	// "" means the provider's own.
	BaseURL string
	// Adapter is the model adapter: "generic", "anthropic-computer",
	// "openai-computer" or "ui-tars" (GUI_AGENT_ADAPTER); "" picks by
	// provider and model.
	Adapter string
	// MemoryModel, MemoryProvider, MemoryBaseURL and MemoryAPIKey name the
	// text model that condenses old steps (GUI_AGENT_MEMORY_*); "" means the
	// main model's.
	MemoryModel, MemoryProvider, MemoryBaseURL, MemoryAPIKey string
	// GroundingModel, GroundingBaseURL and GroundingAPIKey name an optional
	// model that locates named targets (GUI_AGENT_GROUNDING_*); "" means none.
	GroundingModel, GroundingBaseURL, GroundingAPIKey string
	// ToolVersion is the Anthropic computer tool version (GUI_AGENT_TOOL_VERSION).
	ToolVersion string
	// ModelTimeout bounds one model call; 0 means 120 s.
	ModelTimeout time.Duration

	// Display is the id of the display tasks and tools use by default
	// (GUI_AGENT_DISPLAY_INDEX); "" means the primary display.
	Display string
	// CoordinateMode is the default space of MCP tool coordinates
	// (GUI_AGENT_COORDINATE_MODE): "image" (""), "screen" or a normalized
	// mode. While ModelCoordinates is empty, a normalized mode here also
	// sets that (deprecated; a warning is logged).
	CoordinateMode string
	// ModelCoordinates is how a model guiagent does not know gives points
	// (GUI_AGENT_MODEL_COORDINATES): "image-absolute", "normalized-1000",
	// "normalized-999", "normalized-0-1" or "yx-normalized-1000"; "" means
	// by model (known models use their own convention).
	ModelCoordinates string
	// DisableActions are action kinds the model is not offered (zoom,
	// mouse_down, ...; GUI_AGENT_DISABLE_ACTIONS).
	DisableActions []string
	// Accessibility reads applications' accessibility trees: auto
	// (default), on (also asks Chromium, Qt and GTK 4 to expose theirs) or
	// off (GUI_AGENT_ACCESSIBILITY).
	Accessibility string
	// OCRLangs are the Tesseract languages of model-free text finding
	// (GUI_AGENT_OCR_LANGS; default eng).
	OCRLangs []string
	// OCRTesseract is the Tesseract program, a path or a name on PATH, for
	// one installed outside PATH (GUI_AGENT_OCR_TESSERACT; default tesseract
	// on PATH).
	OCRTesseract string
	// Backend is the desktop backend (--backend, GUI_AGENT_BACKEND): "" or
	// "auto" picks from the session (WAYLAND_DISPLAY, XDG_SESSION_TYPE,
	// XDG_CURRENT_DESKTOP, DISPLAY); Linux: "x11", "wayland" (wlroots
	// compositors), "portal" (xdg-desktop-portal: GNOME, KDE); Windows
	// "windows", macOS "darwin"; everywhere "vnc", "browser" (a Chromium
	// page) and "android" (a phone over adb).
	Backend string
	// DisplayServer is the X server's display to drive, such as ":0"
	// (--display); "" means $DISPLAY. Given here with Backend auto, it picks
	// the x11 backend.
	DisplayServer string
	// XDisplay is DisplayServer's old name; it is used when DisplayServer is "".
	//
	// Deprecated: use DisplayServer.
	XDisplay string
	// XAuthority is the X authority file; "" means $XAUTHORITY, else ~/.Xauthority.
	XAuthority string
	// VirtualDisplay, when set, starts a private Xvfb of this size when no X
	// display is reachable (--virtual-display); Close stops it.
	VirtualDisplay Size
	// AlwaysVirtualDisplay starts the private display even when an X display
	// is reachable, so nothing touches the user's screen (tests, sandboxes).
	// Its size is VirtualDisplay, or 1280x800.
	AlwaysVirtualDisplay bool
	// VNC drives a remote desktop at host[:port] instead (--vnc), with
	// VNCPassword (GUI_AGENT_VNC_PASSWORD).
	VNC, VNCPassword string
	// The browser backend (Backend "browser"): BrowserPath is the Chromium
	// or Chrome program ("" finds chromium, chromium-browser or
	// google-chrome on PATH); BrowserURL attaches to a running browser's
	// DevTools (http://127.0.0.1:9222) instead of launching one;
	// BrowserHeaded shows its window; BrowserViewport is the page's size in
	// CSS pixels (zero: 1280x800); BrowserIsolated uses a temporary profile;
	// BrowserDialogs is "ask" (""), "accept" or "dismiss"; BrowserFiles are
	// the folders gui_upload may take files from.
	BrowserPath, BrowserURL        string
	BrowserHeaded, BrowserIsolated bool
	BrowserViewport                Size
	BrowserDialogs                 string
	// BrowserUserAgent is the user agent pages see ("" the browser's own);
	// BrowserSameTab loads what a page opens in a new tab in its own tab.
	BrowserUserAgent string
	BrowserSameTab   bool
	BrowserFiles     []string
	// The Android backend (Backend "android"): Device is the phone's serial
	// ("" means the only one attached), ADB the adb server's host:port (""
	// means as adb reads ANDROID_ADB_SERVER_ADDRESS and _PORT, else
	// 127.0.0.1:5037); with Backend "harmony" Device is the connect key.
	Device, ADB string
	// The iOS backend (Backend "ios"): WDAURL is WebDriverAgent's address
	// ("" means http://127.0.0.1:8100). The HarmonyOS backend (Backend
	// "harmony"): HDC is the hdc program ("" means hdc on PATH).
	WDAURL, HDC string

	// JPEGQuality (1-100; 0 means 75), MaxLongEdge (64-8192; 0 means 1920),
	// MaxImageBytes (0 means 750000) and ImageFormat ("jpeg" or "png"; ""
	// means jpeg) shape screenshots sent to models and MCP clients.
	JPEGQuality, MaxLongEdge, MaxImageBytes int
	ImageFormat                             string
	// ScreenshotAfterAction attaches a fresh screenshot to MCP input tools' results.
	ScreenshotAfterAction bool

	// MaxSteps bounds a task's model steps (0 means 50); TaskTimeout its wall
	// time (0 means 600 s); TokenBudget its tokens (0 means none); StepDelay
	// is an extra pause after each step; KeepImages is how many screenshots
	// a model call carries (0 means 3).
	MaxSteps    int
	TaskTimeout time.Duration
	TokenBudget int
	StepDelay   time.Duration
	KeepImages  int
	// OnBusy says what a task does while another runs: "queue" (""), "preempt" or "reject".
	OnBusy string
	// DisableHumanOverride keeps a task going when someone else moves the pointer.
	DisableHumanOverride bool
	// Elements is what each task step shows the model of the UI's elements
	// (GUI_AGENT_ELEMENTS): "off" (""), "text" (their outline), "marks"
	// (numbered marks on the screenshot) or "both".
	Elements string

	// KillSwitchFile stops all input while the file exists; "" means none.
	KillSwitchFile string
	// BlockedHotkeys are key combinations refused besides the platform's
	// defaults; AllowedHotkeys are defaults to allow.
	BlockedHotkeys, AllowedHotkeys []string
	// ConfirmHotkeys are combinations that need a person's yes before they are
	// sent (the blocklist still wins); AskTimeout bounds the wait for one
	// answer to a task's question or a confirmation (0 means 300 s).
	ConfirmHotkeys []string
	AskTimeout     time.Duration

	// Tools selects the MCP tools offered, by tool name or group ("observe",
	// "input", "clipboard", "task", ...; --tools); nil offers all. ReadOnly
	// offers the observe group only (--read-only).
	Tools    []string
	ReadOnly bool

	// HTTP says to serve MCP over HTTP (the command's --http); New ignores it.
	HTTP bool
	// HTTPAddr is ListenAndServe's address; "" means 127.0.0.1:60008.
	HTTPAddr string
	// HTTPToken is the bearer token of Handler and ListenAndServe; "" means
	// one is generated by New (see HTTPToken).
	HTTPToken string
	// AllowRemote permits a non-loopback HTTPAddr (HTTPToken required).
	AllowRemote bool

	// RunsDir holds task run records; "" means $XDG_STATE_HOME/guiagent/runs.
	// RunsKeep (0 means 200) and RunsMaxMB (0 means 2048) bound them.
	RunsDir             string
	RunsKeep, RunsMaxMB int
	// StateDir holds held-input ledgers; "" means RunsDir's parent.
	StateDir string
	// NoDebugImages leaves screenshots out of run records.
	NoDebugImages bool
	// LogLevel is "debug", "info" (""), "warn" or "error"; LogFile, when set,
	// receives the logs, else Log does (nil means os.Stderr). LogFormat is
	// "text" ("") or "json" (one object per line).
	LogLevel, LogFile string
	Log               io.Writer
	LogFormat         string
	// MetricsPublic serves Handler's /metrics without the bearer token.
	MetricsPublic bool
	// CacheDir holds the caches of flows run from text (RunFlow,
	// gui_run_flow); "" means flow-cache beside RunsDir.
	CacheDir string

	// SettingsFile is where the settings API (PUT /api/settings) keeps its
	// values; "" means nowhere (changes last until Close). New applies the
	// values it holds to the settings left empty here (provider, model,
	// base URL, API key, coordinate mode, display, adapter, grounding and
	// memory model); LoadOptions has already done so, with the flags and
	// the environment taking precedence.
	SettingsFile string

	// sources is set by LoadOptions: which layer set each value.
	sources config.Sources
	// credentials are each provider's own keys (GUI_AGENT_<PROVIDER>_API_KEY,
	// the SDKs' variables), set by LoadOptions, so the scrubber knows them.
	credentials config.Credentials
}

// LoadOptions reads flags (args, as `guiagent serve` takes them) and
// GUI_AGENT_* variables (through getenv, e.g. os.Getenv) exactly as the
// command does: flags win over the environment, the environment over the
// settings file (os.UserConfigDir()/guiagent/settings.json, or
// GUI_AGENT_SETTINGS_FILE), the file over defaults. A bad value is an error
// naming the flag or variable and what it accepts. It also returns the
// positional arguments left after the flags. The flags and variables of a
// desktop per MCP session (--desktop-per-session and its companions) are
// accepted and checked but have no Options field: an Agent drives one
// desktop, and `guiagent serve --http --desktop-per-session` serves many.
func LoadOptions(args []string, getenv func(string) string) (Options, []string, error) {
	c, rest, err := config.Load("serve", args, getenv)
	if err != nil {
		return Options{}, nil, err
	}
	if c.Sources == nil {
		c.Sources = config.Sources{} // read: New does not apply the file again
	}
	return fromConfig(c), rest, nil
}

// optionFields maps the knobs whose Options field has another name; a
// negated field holds the opposite of the knob (its zero value must mean
// the knob's default, true).
var optionFields = map[string]struct {
	field   string
	negated bool
}{
	"DisplayIndex":  {"Display", false},
	"XDisplay":      {"DisplayServer", false},
	"HumanOverride": {"DisableHumanOverride", true},
	"DebugImages":   {"NoDebugImages", true},
}

// notOptions are the knobs without an Options field, and why.
var notOptions = map[string]string{
	"DesktopPerSession": "an Agent drives one desktop; a desktop per MCP session is guiagent serve --http --desktop-per-session",
	"SessionCommand":    "started on each per-session desktop (serve --desktop-per-session only)",
	"MaxDesktops":       "bounds the per-session desktops (serve --desktop-per-session only)",
	"SessionKeepAlive":  "pings the clients of per-session desktops (serve --desktop-per-session only)",
}

// optionsOnly are the Options fields no knob sets: what only a Go program gives.
var optionsOnly = map[string]string{
	"XAuthority":           "the session's X authority file, which the command takes from $XAUTHORITY",
	"XDisplay":             "the deprecated name of DisplayServer",
	"AlwaysVirtualDisplay": "a private display even when one is reachable (tests, sandboxes)",
	"Log":                  "where logs go, as an io.Writer",
	"sources":              "which layer set each value, from LoadOptions",
	"credentials":          "each provider's own keys, from LoadOptions",
}

// optionField is the Options field of knob k, and whether it is negated;
// ok is false for a knob in notOptions.
func optionField(o reflect.Value, k config.Knob) (f reflect.Value, negated, ok bool) {
	name := k.Name
	if m, renamed := optionFields[name]; renamed {
		name, negated = m.field, m.negated
	}
	f = o.FieldByName(name)
	return f, negated, f.IsValid()
}

// fromConfig is the Options of c: every knob's value in its Options field.
func fromConfig(c config.Config) Options {
	o := Options{XAuthority: c.XAuthority, XDisplay: c.XDisplay, sources: c.Sources, credentials: c.Credentials}
	ov, cv := reflect.ValueOf(&o).Elem(), reflect.ValueOf(c)
	for _, k := range config.Knobs {
		f, negated, ok := optionField(ov, k)
		if !ok {
			continue
		}
		v := cv.FieldByName(k.Name)
		switch {
		case negated:
			f.SetBool(!v.Bool())
		case v.Type() == reflect.TypeOf(geom.Size{}):
			s := v.Interface().(geom.Size)
			f.Set(reflect.ValueOf(Size{s.W, s.H}))
		default:
			f.Set(v)
		}
	}
	return o
}

// config turns o into a validated configuration: a field at its zero value
// takes the command's default, any other replaces it; for Options not from
// LoadOptions the settings file fills the settings left empty.
func (o Options) config() (config.Config, error) {
	c := config.Default()
	o.applyTo(&c)
	if o.sources == nil {
		if err := c.ApplySettingsFile(); err != nil {
			return c, err
		}
	}
	c.FillSessionDefaults(config.Getenv)
	err := c.Validate()
	return c, err
}

// applyTo sets the knobs of c whose Options field is not zero to its value,
// and c's XAuthority and Sources to o's.
func (o Options) applyTo(c *config.Config) {
	if o.DisplayServer == "" {
		o.DisplayServer = o.XDisplay
	}
	ov, cv := reflect.ValueOf(o), reflect.ValueOf(c).Elem()
	for _, k := range config.Knobs {
		f, negated, ok := optionField(ov, k)
		if !ok || f.IsZero() {
			continue
		}
		dst := cv.FieldByName(k.Name)
		switch {
		case negated:
			dst.SetBool(false)
		case f.Type() == reflect.TypeOf(Size{}):
			s := f.Interface().(Size)
			dst.Set(reflect.ValueOf(geom.Size{W: s.Width, H: s.Height}))
		default:
			dst.Set(f)
		}
	}
	c.XAuthority, c.Sources, c.Credentials = o.XAuthority, o.sources, o.credentials
	if o.sources == nil && o.Backend != "" {
		c.MarkSource("Backend", config.SourceOptions)
	}
	if o.sources == nil && o.DisplayServer != "" {
		c.MarkSource("XDisplay", config.SourceOptions) // a display a Go program names is an X display
	}
}
