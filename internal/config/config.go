// Package config turns flags and GUI_AGENT_* environment variables into one
// validated Config. It is the only place, with cmd, that reads either. A bad
// value fails fast with a message naming the variable or flag and what it accepts.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

// Config is guiagent's whole configuration. Zero values are never used directly:
// Load fills every default. Each field but XAuthority, Session and Sources is set by
// one knob of Knobs, which names its variable, flag, default and range.
type Config struct {
	// Model provider.
	Provider         string        `json:"provider"`
	Model            string        `json:"model"`
	APIKey           string        `json:"api_key"` // never logged
	BaseURL          string        `json:"base_url"`
	Adapter          string        `json:"adapter"`         // "" = by provider and model
	MemoryModel      string        `json:"memory_model"`    // "" = Model
	MemoryProvider   string        `json:"memory_provider"` // "" = Provider
	MemoryBaseURL    string        `json:"memory_base_url"` // "" = BaseURL when the memory provider is the main one, else that provider's default
	MemoryAPIKey     string        `json:"memory_api_key"`  // "" = APIKey when the memory provider is the main one; never logged
	GroundingModel   string        `json:"grounding_model"` // "" = none
	GroundingBaseURL string        `json:"grounding_base_url"`
	GroundingAPIKey  string        `json:"grounding_api_key"` // never logged
	ToolVersion      string        `json:"tool_version"`
	DisableActions   []string      `json:"disable_actions"`
	ModelTimeout     time.Duration `json:"model_timeout"`

	// Desktop.
	DisplayIndex string `json:"display_index"` // "" = primary
	// CoordinateMode is the MCP tools' default space (geom.ParseSpace; "" =
	// image pixels); ModelCoordinates the convention of a model the profile
	// table does not know (ModelCoordinateMode).
	CoordinateMode   string `json:"coordinate_mode"`
	ModelCoordinates string `json:"model_coordinates"`
	// Backend is the desktop backend asked for (--backend): auto picks from
	// the session (Session, XDisplay).
	Backend        string    `json:"backend"`
	XDisplay       string    `json:"x_display"`       // "" = $DISPLAY
	XAuthority     string    `json:"x_authority"`     // $XAUTHORITY, else ~/.Xauthority (no knob: the session's)
	VirtualDisplay geom.Size `json:"virtual_display"` // zero = none
	VNC            string    `json:"vnc"`
	VNCPassword    string    `json:"vnc_password"` // never logged
	// The browser backend: the program, or a running browser to attach to;
	// a headed window, the viewport, a temporary profile, what dialogs get,
	// the folders uploads may come from.
	BrowserPath      string    `json:"browser_path"`
	BrowserURL       string    `json:"browser_url"`
	BrowserHeaded    bool      `json:"browser_headed"`
	BrowserViewport  geom.Size `json:"browser_viewport"`
	BrowserIsolated  bool      `json:"browser_isolated"`
	BrowserDialogs   string    `json:"browser_dialogs"`
	BrowserUserAgent string    `json:"browser_user_agent"`
	BrowserSameTab   bool      `json:"browser_same_tab"`
	BrowserFiles     []string  `json:"browser_files"`
	// The Android backend: the device's serial and the adb server's address.
	Device string `json:"device"`
	ADB    string `json:"adb"`
	// The iOS backend: WebDriverAgent's address; the HarmonyOS backend: the
	// hdc program (its device is Device's connect key).
	WDAURL string `json:"wda_url"`
	HDC    string `json:"hdc"`
	// Accessibility reads the accessibility trees applications expose
	// (AT-SPI2 on Linux): auto, on (also sets org.a11y.Status.IsEnabled so
	// that Chromium, Qt and GTK 4 expose theirs), off.
	Accessibility    string `json:"accessibility"`
	SessionBus       string `json:"session_bus"`       // $DBUS_SESSION_BUS_ADDRESS: where the accessibility bus is found (no knob: the session's)
	AccessibilityBus string `json:"accessibility_bus"` // $AT_SPI_BUS_ADDRESS ("" = ask org.a11y.Bus on the session bus; no knob)
	// Session is what the environment says about the desktop session (no
	// knob: the session's), from which the backend is picked.
	Session Session `json:"session"`

	// Screenshots.
	JPEGQuality           int    `json:"jpeg_quality"`
	MaxLongEdge           int    `json:"max_long_edge"`
	MaxImageBytes         int    `json:"max_image_bytes"`
	ImageFormat           string `json:"image_format"`
	ScreenshotAfterAction bool   `json:"screenshot_after_action"`

	// Text finding (OCR, model-free).
	OCRLangs     []string `json:"ocr_langs"`     // GUI_AGENT_OCR_LANGS: Tesseract languages, comma or + separated (eng, chi_sim, jpn, kor ...), default eng
	OCRTesseract string   `json:"ocr_tesseract"` // GUI_AGENT_OCR_TESSERACT: the tesseract program, a path or a name on PATH; "" = tesseract on PATH

	// Task loop.
	MaxSteps      int           `json:"max_steps"`
	StepDelay     time.Duration `json:"step_delay"`
	TaskTimeout   time.Duration `json:"task_timeout"`
	TokenBudget   int           `json:"token_budget"` // 0 = none
	KeepImages    int           `json:"keep_images"`
	OnBusy        string        `json:"on_busy"`
	HumanOverride bool          `json:"human_override"`
	// AskTimeout bounds the wait for a person's answer to one ask_user;
	// without an answer by then the run ends as blocked.
	AskTimeout time.Duration `json:"ask_timeout"`
	// Elements is what each agent step shows the model of the UI's elements
	// (the accessibility tree): off, text (the outline), marks (numbered
	// marks on the screenshot) or both.
	Elements string `json:"elements"`

	// Safety.
	KillSwitchFile string   `json:"kill_switch_file"`
	BlockedHotkeys []string `json:"blocked_hotkeys"` // extra combos
	AllowedHotkeys []string `json:"allowed_hotkeys"` // combos removed from the default blocklist
	ConfirmHotkeys []string `json:"confirm_hotkeys"` // combos sent only after a person says yes (a blocked combo stays blocked)

	// HTTP transport.
	HTTP        bool   `json:"http"`
	HTTPAddr    string `json:"http_addr"`
	HTTPToken   string `json:"http_token"`   // "" = generated at start; never logged
	AllowRemote bool   `json:"allow_remote"` // requires a token

	// MCP surface.
	Tools    []string `json:"tools"`     // tool names or groups to offer (nil = all)
	ReadOnly bool     `json:"read_only"` // offer only the observe group (Tools must be empty)

	// Many desktops (serve --http only).
	DesktopPerSession geom.Size     `json:"desktop_per_session"` // zero = one shared desktop
	SessionCommand    string        `json:"session_command"`
	MaxDesktops       int           `json:"max_desktops"`
	MetricsPublic     bool          `json:"metrics_public"`
	SessionKeepAlive  time.Duration `json:"session_keepalive"`

	// Records and logs.
	RunsDir     string `json:"runs_dir"`  // "" = DefaultRunsDir
	RunsKeep    int    `json:"runs_keep"` // finished run records kept
	RunsMaxMB   int    `json:"runs_max_mb"`
	StateDir    string `json:"state_dir"` // held-input ledgers; "" = the runs folder's parent
	DebugImages bool   `json:"debug_images"`
	LogLevel    string `json:"log_level"`
	LogFile     string `json:"log_file"` // "" = stderr
	// CacheDir holds flow caches; "" = FLOW.cache.yaml beside the flow file,
	// and for gui_run_flow FlowCacheDir's default.
	CacheDir  string `json:"cache_dir"`
	LogFormat string `json:"log_format"`

	// Settings a host application changes at run time (settings.go).
	SettingsFile string  `json:"settings_file"` // "" = none
	Sources      Sources `json:"-"`             // which layer set each value; absent = default

	// Credentials are each provider's own key and endpoint
	// (GUI_AGENT_<PROVIDER>_API_KEY, its SDK's variables: credentials.go);
	// CredentialFor gives a provider's.
	Credentials Credentials `json:"-"`
	// modelsGiven: the command names its models itself (eval's --model), so
	// a key without GUI_AGENT_PROVIDER is not half a model configuration.
	modelsGiven bool
	replaced    []string // keys WithModel replaced, still scrubbed
}

// FlowCacheDir is where caches of flows given as text (gui_run_flow) are
// kept: CacheDir, else "flow-cache" beside the runs folder.
func (c Config) FlowCacheDir() string {
	if c.CacheDir != "" {
		return c.CacheDir
	}
	return filepath.Join(filepath.Dir(c.RunsDir), "flow-cache")
}

// ModelCoordinateMode is the coordinate convention assumed for a model the
// profile table does not know: ModelCoordinates, else CoordinateMode when
// it names a normalized convention. GUI_AGENT_COORDINATE_MODE set both the
// MCP tools' default space and this before GUI_AGENT_MODEL_COORDINATES
// existed, so a setup that relied on it keeps reading its model's points
// the same way; Deprecations warns about it.
func (c Config) ModelCoordinateMode() string {
	if c.ModelCoordinates != "" {
		return c.ModelCoordinates
	}
	if c.coordinateModeForModel() {
		return c.CoordinateMode
	}
	return ""
}

// coordinateModeForModel reports whether CoordinateMode stands in for an
// unset ModelCoordinates: it names a convention other than image pixels
// (image pixels are what a model the table does not know gets anyway).
func (c Config) coordinateModeForModel() bool {
	if c.ModelCoordinates != "" || c.CoordinateMode == "" {
		return false
	}
	sp, err := geom.ParseSpace(c.CoordinateMode, "")
	return err == nil && sp != geom.SpaceImage && sp != geom.SpaceScreen
}

// Deprecations lists what c relies on that is deprecated, each with its
// replacement, for the start-up log.
func (c Config) Deprecations() []string {
	var out []string
	if c.coordinateModeForModel() {
		out = append(out, fmt.Sprintf("%s=%s also sets how a model guiagent does not know gives points, as it did before %s existed; that use is deprecated: set %s=%s for the model (and keep %s for the MCP tools' default space)",
			Var("CoordinateMode"), c.CoordinateMode, Var("ModelCoordinates"), Var("ModelCoordinates"), c.CoordinateMode, Var("CoordinateMode")))
	}
	return out
}

// Providers lists accepted provider values (the provider knobs'): the
// providers registered with internal/llm (internal/llm/providers links them in).
func Providers() []string { return llm.ProviderNames() }

// checkDisableActions accepts action kinds the model performs.
func checkDisableActions(kinds []string) error {
	for _, k := range kinds {
		if !slices.Contains(action.Kinds, action.Kind(k)) || k == string(action.AskUser) {
			return fmt.Errorf("%q is not an action the model performs: use %s", k, disableable())
		}
	}
	return nil
}

// disableable lists the action kinds GUI_AGENT_DISABLE_ACTIONS takes.
func disableable() string {
	var out []string
	for _, k := range action.Kinds {
		if k != action.AskUser {
			out = append(out, string(k))
		}
	}
	return strings.Join(out, ", ")
}

// Adapters lists accepted GUI_AGENT_ADAPTER values, the registered adapters.
func Adapters() []string { return llm.AdapterNames() }

// Default returns the configuration with every default of Knobs filled and
// nothing read.
func Default() Config {
	var c Config
	for _, k := range Knobs {
		if d := k.defaultText(); d != "" {
			if err := k.set(&c, d); err != nil {
				panic(fmt.Sprintf("config: the default of %s: %v", k.Name, err)) // TestKnobDefaults
			}
		}
	}
	return c
}

// Load reads environment variables through getenv, then the flags in args (flags
// win), fills defaults and validates. It returns the remaining positional args.
// Flags are the serve/demo flags; unknown flags are an error naming them.
func Load(name string, args []string, getenv func(string) string) (Config, []string, error) {
	return load(name, args, getenv, false)
}

// LoadWithModels is Load for a command that names its models itself
// (guiagent eval --model provider:model): GUI_AGENT_API_KEY or
// GUI_AGENT_BASE_URL without GUI_AGENT_PROVIDER is then no error (it serves
// no model: see credentials.go).
func LoadWithModels(name string, args []string, getenv func(string) string) (Config, []string, error) {
	return load(name, args, getenv, true)
}

func load(name string, args []string, getenv func(string) string, modelsGiven bool) (Config, []string, error) {
	c := Default()
	c.modelsGiven = modelsGiven
	if err := c.loadSettingsFile(getenv); err != nil {
		return c, nil, err
	}
	if err := c.loadEnv(getenv); err != nil {
		return c, nil, err
	}
	creds, err := readCredentials(getenv)
	c.Credentials = creds
	if err != nil {
		return c, nil, err
	}
	fs := newFlagSet(name, &c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, err
		}
		return c, nil, fmt.Errorf("%s: %w (run 'guiagent %s --help')", name, err, name)
	}
	c.markFlags(fs)
	c.FillSessionDefaults(getenv)
	c.fillMainCredential()
	// Validate normalizes c (the provider's case), so it must run before c is
	// copied into the results: within one return statement Go leaves the order
	// of reading c and calling c.Validate unspecified.
	err = c.Validate()
	return c, fs.Args(), err
}

// Session is the desktop session's own description of itself, read from its
// environment by FillSessionDefaults.
type Session struct {
	Type           string `json:"type"`            // $XDG_SESSION_TYPE: x11, wayland, tty, ...
	WaylandDisplay string `json:"wayland_display"` // $WAYLAND_DISPLAY
	CurrentDesktop string `json:"current_desktop"` // $XDG_CURRENT_DESKTOP: GNOME, KDE, sway, ...
	RuntimeDir     string `json:"runtime_dir"`     // $XDG_RUNTIME_DIR
	// Where a wlroots compositor says where windows are (the element tree on Wayland):
	SwaySock          string `json:"sway_sock,omitempty"`          // $SWAYSOCK
	HyprlandSignature string `json:"hyprland_signature,omitempty"` // $HYPRLAND_INSTANCE_SIGNATURE
}

// SessionOf reads the desktop session's variables through getenv.
func SessionOf(getenv func(string) string) Session {
	return Session{Type: getenv("XDG_SESSION_TYPE"), WaylandDisplay: getenv("WAYLAND_DISPLAY"),
		CurrentDesktop: getenv("XDG_CURRENT_DESKTOP"), RuntimeDir: getenv("XDG_RUNTIME_DIR"),
		SwaySock: getenv("SWAYSOCK"), HyprlandSignature: getenv("HYPRLAND_INSTANCE_SIGNATURE")}
}

// FillSessionDefaults fills the values whose defaults come from the session
// when they are empty: the session (Session), the X display ($DISPLAY) and
// its authority file, the D-Bus session and accessibility buses, RunsDir and
// StateDir.
func (c *Config) FillSessionDefaults(getenv func(string) string) {
	if c.Session == (Session{}) {
		c.Session = SessionOf(getenv)
	}
	if c.XDisplay == "" {
		c.XDisplay = XDisplay(getenv)
	}
	if c.XAuthority == "" {
		c.XAuthority = XAuthority(getenv)
	}
	if c.SessionBus == "" {
		c.SessionBus = getenv("DBUS_SESSION_BUS_ADDRESS")
	}
	if c.AccessibilityBus == "" {
		c.AccessibilityBus = getenv("AT_SPI_BUS_ADDRESS")
	}
	if c.ADB == "" {
		c.ADB = ADBServer(getenv)
	}
	if c.RunsDir == "" {
		c.RunsDir = DefaultRunsDir(getenv)
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Dir(DefaultRunsDir(getenv))
	}
}

// newFlagSet declares the flag of every knob that has one, for command name
// (serve, demo, doctor, release, run), over c's current values.
func newFlagSet(name string, c *Config) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, k := range Knobs {
		if k.Flag == "" {
			continue
		}
		f := k.field(c).Addr().Interface()
		switch p := f.(type) {
		case *string:
			fs.StringVar(p, k.Flag, *p, k.usage())
		case *bool:
			fs.BoolVar(p, k.Flag, *p, k.usage())
		case *int:
			fs.IntVar(p, k.Flag, *p, k.usage())
		default:
			fs.Var(&knobFlag{k: k, c: c}, k.Flag, k.usage())
		}
	}
	return fs
}

// usage is k's flag help: its Doc (backquotes but the first pair, which
// names the flag's value, removed), what it accepts, its variable and a
// default computed at start.
func (k Knob) usage() string {
	doc := k.Doc
	if i := strings.Index(doc, "`"); i >= 0 {
		if j := strings.Index(doc[i+1:], "`"); j >= 0 {
			cut := i + 1 + j + 1
			doc = doc[:cut] + strings.ReplaceAll(doc[cut:], "`", "")
		}
	}
	var notes []string
	if k.Kind == KindChoice {
		notes = append(notes, strings.Join(k.Choices(), ", "))
	}
	if k.Env != "" {
		notes = append(notes, k.Env)
	}
	if k.Shown != "" {
		notes = append(notes, "default "+strings.ReplaceAll(k.Shown, "`", ""))
	}
	if len(notes) == 0 {
		return doc
	}
	return doc + " (" + strings.Join(notes, "; ") + ")"
}

// knobFlag is the flag.Value of a knob of a kind the flag package lacks (a
// size, a list); given, it replaces the variable's value.
type knobFlag struct {
	k Knob
	c *Config
}

func (f *knobFlag) String() string {
	if f == nil || f.c == nil {
		return ""
	}
	return f.k.format(f.c)
}

func (f *knobFlag) Set(v string) error {
	if v == "" {
		return nil // --tools= or --virtual-display "": as if not given
	}
	if f.k.Kind == KindList && len(splitList(v)) == 0 {
		if f.k.empty != "" {
			return fmt.Errorf("--%s %q %s", f.k.Flag, v, f.k.empty)
		}
		return fmt.Errorf("--%s %q names nothing: give a comma-separated list", f.k.Flag, v)
	}
	if err := f.k.set(f.c, v); err != nil {
		return fmt.Errorf("--%s: %w", f.k.Flag, err)
	}
	return nil
}

// FlagSet returns the configuration flags of command name over the
// defaults, for `guiagent name --help` (cmd prints them).
func FlagSet(name string) *flag.FlagSet {
	c := Default()
	return newFlagSet(name, &c)
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Getenv reads the process environment. It is what the public package passes
// where the command passes its getenv: every value from the environment still
// enters through this package.
func Getenv(name string) string { return os.Getenv(name) }

// XDisplay is the X display of the session ($DISPLAY), the default of every
// --display flag; packages below cmd get it through their options.
func XDisplay(getenv func(string) string) string { return getenv("DISPLAY") }

// XAuthority is the X authority file: $XAUTHORITY, else ~/.Xauthority when
// HOME is set (what Xlib reads), else "".
func XAuthority(getenv func(string) string) string {
	if a := getenv("XAUTHORITY"); a != "" {
		return a
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".Xauthority")
	}
	return ""
}

// RunsDir is where run records are kept for commands that take no other
// configuration (runs, report): GUI_AGENT_RUNS_DIR, else DefaultRunsDir.
func RunsDir(getenv func(string) string) string {
	if d := strings.TrimSpace(getenv(Var("RunsDir"))); d != "" {
		return d
	}
	return DefaultRunsDir(getenv)
}

// DefaultRunsDir is where run records go on this system (RunsDirFor):
// %LOCALAPPDATA%\guiagent\runs on Windows, ~/Library/Application
// Support/guiagent/runs on macOS, $XDG_STATE_HOME/guiagent/runs or
// ~/.local/state/guiagent/runs elsewhere.
func DefaultRunsDir(getenv func(string) string) string {
	home := getenv("HOME")
	if runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return RunsDirFor(runtime.GOOS, getenv, home)
}

// loadEnv reads the variable of every knob that has one: a value that is
// not blank replaces the default (or the settings file's) and is recorded in
// c.Sources; a bad one is an error naming the variable and what it accepts.
func (c *Config) loadEnv(getenv func(string) string) error {
	var errs []error
	for _, k := range Knobs {
		if k.Env == "" {
			continue
		}
		v := strings.TrimSpace(getenv(k.Env))
		if v == "" {
			continue
		}
		c.source(k.key(), SourceEnv)
		if err := k.set(c, v); err != nil {
			if k.Kind == KindSize {
				errs = append(errs, fmt.Errorf("%s: %w", k.Env, err))
			} else {
				errs = append(errs, fmt.Errorf("%s=%q: %w", k.Env, v, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ocrLang is what a Tesseract language name looks like (eng, chi_sim, script/Latin).
var ocrLang = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(/[A-Za-z0-9_]+)?$`)

// ParseOCRLangs parses GUI_AGENT_OCR_LANGS: Tesseract language names
// separated by commas or "+" ("eng+jpn", "eng, chi_sim"), each once. Whether
// they are installed is checked when the OCR engine starts.
func ParseOCRLangs(v string) ([]string, error) {
	var langs []string
	for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '+' || r == ' ' }) {
		if !ocrLang.MatchString(l) {
			return nil, fmt.Errorf("GUI_AGENT_OCR_LANGS=%q: %q is not a Tesseract language name: use names such as eng, chi_sim, jpn, kor, separated by + or commas", v, l)
		}
		if !slices.Contains(langs, l) {
			langs = append(langs, l)
		}
	}
	if len(langs) == 0 {
		return nil, fmt.Errorf("GUI_AGENT_OCR_LANGS=%q names no language: use eng, or eng+jpn and the like", v)
	}
	return langs, nil
}

// ParseSize parses "WxH" (e.g. 1280x800).
func ParseSize(s string) (geom.Size, error) {
	w, h, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || wi < 64 || hi < 64 || wi > 16384 || hi > 16384 {
		return geom.Size{}, fmt.Errorf("%q is not a size: want WIDTHxHEIGHT such as 1280x800 (64 to 16384 each)", s)
	}
	return geom.Size{W: wi, H: hi}, nil
}

func oneOf(name, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s=%q: want one of %s", name, v, strings.Join(allowed, ", "))
}

// Validate checks every knob's value against what its knob accepts (Knobs:
// ranges, choices, URLs, sizes, coordinate modes; the provider is kept
// lowercase), then the values that depend on one another. It reports every
// problem at once, each naming its variable or flag.
func (c *Config) Validate() error {
	var errs []error
	for _, k := range Knobs {
		errs = append(errs, k.validate(c))
	}
	errs = append(errs, c.checkModelPair(), c.checkModels(), c.validateDesktops(), c.checkTools(), c.checkVNC(), c.checkHTTP())
	return errors.Join(errs...)
}

// checkModels checks the memory and grounding models against the main one.
func (c *Config) checkModels() error {
	var errs []error
	if c.Provider != "" && c.MemoryProvider != "" && c.MemoryProvider != c.Provider && c.MemoryAPIKey == "" && c.MemoryBaseURL == "" {
		errs = append(errs, fmt.Errorf("%s=%s differs from %s=%s: set %s (and %s for a compatible server) for it",
			Var("MemoryProvider"), c.MemoryProvider, Var("Provider"), c.Provider, Var("MemoryAPIKey"), Var("MemoryBaseURL")))
	}
	if c.GroundingModel != "" && c.Provider == "anthropic" && c.GroundingBaseURL == "" {
		errs = append(errs, fmt.Errorf("%s is called over an OpenAI-compatible endpoint (vLLM, Ollama, OpenRouter...), and the provider is anthropic: set %s (and %s if it needs one)",
			Var("GroundingModel"), Var("GroundingBaseURL"), Var("GroundingAPIKey")))
	}
	return errors.Join(errs...)
}

// checkTools refuses --read-only together with a tool selection.
func (c *Config) checkTools() error {
	if c.ReadOnly && len(c.Tools) > 0 {
		return fmt.Errorf("--read-only (%s) and --tools (%s=%s) are both set: --read-only means --tools observe; keep one",
			Var("ReadOnly"), Var("Tools"), strings.Join(c.Tools, ","))
	}
	return nil
}

// checkVNC checks the VNC address and gives a bare host the RFB default port.
func (c *Config) checkVNC() error {
	if c.VNC == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(c.VNC); err != nil {
		if strings.ContainsAny(c.VNC, " /") || strings.Count(c.VNC, ":") == 1 {
			return fmt.Errorf("--vnc/%s=%q: want host or host:port such as 192.168.1.20:5900", Var("VNC"), c.VNC)
		}
		c.VNC = net.JoinHostPort(strings.Trim(c.VNC, "[]"), "5900") // a bare host: the RFB default port
	}
	return nil
}

// checkHTTP checks the listen address against --allow-remote and the token.
func (c *Config) checkHTTP() error {
	var errs []error
	token := Var("HTTPToken")
	host, _, err := net.SplitHostPort(c.HTTPAddr)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("--addr/%s=%q: want host:port such as 127.0.0.1:60008", Var("HTTPAddr"), c.HTTPAddr))
	case !IsLoopbackHost(host) && !c.AllowRemote:
		errs = append(errs, fmt.Errorf("--addr %s is not a loopback address: guiagent listens on loopback only unless --allow-remote is given together with %s", c.HTTPAddr, token))
	}
	if c.AllowRemote && c.HTTPToken == "" {
		errs = append(errs, fmt.Errorf("--allow-remote requires %s: set a long random token so remote clients must present it", token))
	}
	if c.HTTPToken != "" && len(c.HTTPToken) < 16 {
		errs = append(errs, fmt.Errorf("%s is too short: use at least 16 characters (e.g. openssl rand -hex 32)", token))
	}
	return errors.Join(errs...)
}

// checkModelPair names the missing half of a half-configured model: a
// provider needs a model and a model a provider. Neither means no model
// (atomic tools only); a key or base URL alone names both.
func (c *Config) checkModelPair() error {
	provider, model := Var("Provider"), Var("Model")
	switch {
	case c.Provider != "" && c.Model == "":
		return fmt.Errorf("%s=%s is set but %s (--model) is not: set the model name too, or unset %s to run without a model", provider, c.Provider, model, provider)
	case c.Model != "" && c.Provider == "":
		return fmt.Errorf("%s=%s is set but %s (--provider) is not: set it to %s, or unset %s to run without a model", model, c.Model, provider, strings.Join(Providers(), ", "), model)
	case c.Model == "" && (c.APIKey != "" || c.BaseURL != "") && !c.modelsGiven:
		return fmt.Errorf("%s or %s is set but %s and %s are not: set both to use a model, or unset the key", Var("APIKey"), Var("BaseURL"), provider, model)
	}
	return nil
}

// IsLoopbackHost reports whether host names the loopback interface.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Redacted returns a copy safe to log or record: secrets replaced by secret.Marker.
func (c Config) Redacted() Config {
	for _, f := range c.secretFields() {
		if *f != "" {
			*f = secret.Marker
		}
	}
	return c
}

// secretFields lists every credential of c (the Secret knobs), the one
// place Redacted and Secrets read.
func (c *Config) secretFields() []*string {
	var out []*string
	for _, k := range Knobs {
		if k.Secret {
			out = append(out, k.field(c).Addr().Interface().(*string))
		}
	}
	return out
}

// LogValue keeps secrets out of slog output.
func (c Config) LogValue() slog.Value {
	r := c.Redacted()
	return slog.GroupValue(slog.String("provider", r.Provider), slog.String("model", r.Model),
		slog.String("api_key", r.APIKey), slog.String("adapter", r.Adapter))
}

// Secrets returns the secret strings of c (non-empty), for scrubbing records.
func (c Config) Secrets() []string {
	var s []string
	for _, f := range c.secretFields() {
		if *f != "" {
			s = append(s, *f)
		}
	}
	return append(s, c.credentialSecrets()...)
}

// validateDesktops checks the desktop-per-session settings against the
// transport and the other desktops.
func (c *Config) validateDesktops() error {
	var errs []error
	if c.DesktopPerSession == (geom.Size{}) {
		if c.SessionCommand != "" {
			errs = append(errs, fmt.Errorf("--session-command/%s needs --desktop-per-session WxH: it is started on each session's own desktop", Var("SessionCommand")))
		}
		return errors.Join(errs...)
	}
	if !c.HTTP {
		errs = append(errs, fmt.Errorf("--desktop-per-session/%s needs serve --http: over stdio there is one session, use --virtual-display WxH instead", Var("DesktopPerSession")))
	}
	if c.VNC != "" {
		errs = append(errs, errors.New("--desktop-per-session and --vnc exclude each other: per-session desktops are private Xvfb servers; drop one of them"))
	}
	switch c.Backend {
	case "", "auto", "x11":
	case "browser":
		if c.SessionCommand != "" {
			errs = append(errs, fmt.Errorf("--session-command/%s starts a program on each session's X display, but with --backend browser each session gets a browser context, not a display: drop one of them", Var("SessionCommand")))
		}
	default:
		errs = append(errs, fmt.Errorf("--desktop-per-session gives each session a private Xvfb (or, with --backend browser, a browser context): it does not work with --backend %s", c.Backend))
	}
	return errors.Join(errs...)
}

// ADBServer is the adb server's address as adb itself reads it:
// ANDROID_ADB_SERVER_ADDRESS (default 127.0.0.1) and ANDROID_ADB_SERVER_PORT
// (default 5037).
func ADBServer(getenv func(string) string) string {
	host, port := getenv("ANDROID_ADB_SERVER_ADDRESS"), getenv("ANDROID_ADB_SERVER_PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "5037"
	}
	return net.JoinHostPort(host, port)
}
