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
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/secret"
)

// Config is guiagent's whole configuration. Zero values are never used directly:
// Load fills every default.
type Config struct {
	// Model provider.
	Provider         string        `json:"provider"`           // GUI_AGENT_PROVIDER: openai | anthropic | gemini
	Model            string        `json:"model"`              // GUI_AGENT_MODEL
	APIKey           string        `json:"api_key"`            // GUI_AGENT_API_KEY (never logged)
	BaseURL          string        `json:"base_url"`           // GUI_AGENT_BASE_URL
	Adapter          string        `json:"adapter"`            // GUI_AGENT_ADAPTER: generic | anthropic-computer | openai-computer | ui-tars ("" = by provider and model)
	MemoryModel      string        `json:"memory_model"`       // GUI_AGENT_MEMORY_MODEL ("" = Model)
	MemoryProvider   string        `json:"memory_provider"`    // GUI_AGENT_MEMORY_PROVIDER ("" = Provider)
	MemoryBaseURL    string        `json:"memory_base_url"`    // GUI_AGENT_MEMORY_BASE_URL ("" = BaseURL when the memory provider is the main one, else that provider's default)
	MemoryAPIKey     string        `json:"memory_api_key"`     // GUI_AGENT_MEMORY_API_KEY ("" = APIKey when the memory provider is the main one; never logged)
	GroundingModel   string        `json:"grounding_model"`    // GUI_AGENT_GROUNDING_MODEL ("" = none)
	GroundingBaseURL string        `json:"grounding_base_url"` // GUI_AGENT_GROUNDING_BASE_URL: OpenAI-compatible endpoint of the grounding model ("" = BaseURL)
	GroundingAPIKey  string        `json:"grounding_api_key"`  // GUI_AGENT_GROUNDING_API_KEY ("" = APIKey; never logged)
	ToolVersion      string        `json:"tool_version"`       // GUI_AGENT_TOOL_VERSION (Anthropic computer tool version)
	ModelTimeout     time.Duration `json:"model_timeout"`      // GUI_AGENT_MODEL_TIMEOUT_S, 1-600, default 120

	// Desktop.
	DisplayIndex   string    `json:"display_index"`   // GUI_AGENT_DISPLAY_INDEX: default display id ("" = primary)
	CoordinateMode string    `json:"coordinate_mode"` // GUI_AGENT_COORDINATE_MODE (geom.CoordinateModes; "" = by model)
	XDisplay       string    `json:"x_display"`       // --display / $DISPLAY
	XAuthority     string    `json:"x_authority"`     // $XAUTHORITY, else ~/.Xauthority
	VirtualDisplay geom.Size `json:"virtual_display"` // --virtual-display / GUI_AGENT_VIRTUAL_DISPLAY WxH: private Xvfb when no display is reachable (zero = none)
	VNC            string    `json:"vnc"`             // --vnc / GUI_AGENT_VNC host:port: drive a remote desktop over VNC instead
	VNCPassword    string    `json:"vnc_password"`    // GUI_AGENT_VNC_PASSWORD (never logged)
	// Accessibility is GUI_AGENT_ACCESSIBILITY: auto (default) reads the
	// accessibility trees applications expose (AT-SPI2 on Linux), on also sets
	// org.a11y.Status.IsEnabled so that Chromium, Qt and GTK 4 expose theirs,
	// off reads none.
	Accessibility    string `json:"accessibility"`
	SessionBus       string `json:"session_bus"`       // $DBUS_SESSION_BUS_ADDRESS: where the accessibility bus is found
	AccessibilityBus string `json:"accessibility_bus"` // $AT_SPI_BUS_ADDRESS ("" = ask org.a11y.Bus on the session bus)

	// Screenshots.
	JPEGQuality           int    `json:"jpeg_quality"`            // GUI_AGENT_JPEG_QUALITY 1-100, default 75
	MaxLongEdge           int    `json:"max_long_edge"`           // GUI_AGENT_MAX_LONG_EDGE 64-8192, default 1920
	MaxImageBytes         int    `json:"max_image_bytes"`         // GUI_AGENT_MAX_IMAGE_BYTES 32768-20000000, default 750000 (about 1 MB once base64-encoded in a tool result)
	ImageFormat           string `json:"image_format"`            // GUI_AGENT_IMAGE_FORMAT jpeg | png, default jpeg
	ScreenshotAfterAction bool   `json:"screenshot_after_action"` // GUI_AGENT_SCREENSHOT_AFTER_ACTION

	// Task loop.
	MaxSteps      int           `json:"max_steps"`      // GUI_AGENT_MAX_STEPS 1-500, default 50
	StepDelay     time.Duration `json:"step_delay"`     // GUI_AGENT_STEP_DELAY_MS 0-10000, default 0
	TaskTimeout   time.Duration `json:"task_timeout"`   // GUI_AGENT_TASK_TIMEOUT_S 1-86400, default 600
	TokenBudget   int           `json:"token_budget"`   // GUI_AGENT_TOKEN_BUDGET (0 = none)
	KeepImages    int           `json:"keep_images"`    // GUI_AGENT_SCREENSHOT_KEEP 1-10, default 3
	OnBusy        string        `json:"on_busy"`        // GUI_AGENT_ON_BUSY queue | preempt | reject
	HumanOverride bool          `json:"human_override"` // GUI_AGENT_HUMAN_OVERRIDE, default true
	// AskTimeout bounds the wait for a person's answer to one ask_user
	// (GUI_AGENT_ASK_TIMEOUT_S 1-86400, default 300); without an answer by
	// then the run ends as blocked.
	AskTimeout time.Duration `json:"ask_timeout"`

	// Safety.
	KillSwitchFile string   `json:"kill_switch_file"` // GUI_AGENT_KILL_SWITCH_FILE
	BlockedHotkeys []string `json:"blocked_hotkeys"`  // GUI_AGENT_BLOCKED_HOTKEYS: extra combos, comma separated
	AllowedHotkeys []string `json:"allowed_hotkeys"`  // GUI_AGENT_ALLOWED_HOTKEYS: combos removed from the default blocklist
	ConfirmHotkeys []string `json:"confirm_hotkeys"`  // GUI_AGENT_CONFIRM_HOTKEYS: combos sent only after a person says yes (a blocked combo stays blocked)

	// HTTP transport.
	HTTP        bool   `json:"http"`         // serve --http
	HTTPAddr    string `json:"http_addr"`    // --addr / GUI_AGENT_HTTP_ADDR, default 127.0.0.1:60008
	HTTPToken   string `json:"http_token"`   // GUI_AGENT_HTTP_TOKEN ("" = generated at start; never logged)
	AllowRemote bool   `json:"allow_remote"` // --allow-remote / GUI_AGENT_ALLOW_REMOTE (requires a token)

	// MCP surface.
	Tools    []string `json:"tools"`     // --tools / GUI_AGENT_TOOLS: tool names or groups to offer, comma separated (nil = all)
	ReadOnly bool     `json:"read_only"` // --read-only / GUI_AGENT_READ_ONLY: offer only the observe group (Tools must be empty)

	// Many desktops (serve --http only).
	DesktopPerSession geom.Size     `json:"desktop_per_session"` // --desktop-per-session / GUI_AGENT_DESKTOP_PER_SESSION WxH: a private Xvfb per MCP session (zero = one shared desktop)
	SessionCommand    string        `json:"session_command"`     // --session-command / GUI_AGENT_SESSION_COMMAND: started on each new session desktop
	MaxDesktops       int           `json:"max_desktops"`        // --max-desktops / GUI_AGENT_MAX_DESKTOPS 1-4096, default the number of CPUs
	MetricsPublic     bool          `json:"metrics_public"`      // --metrics-public / GUI_AGENT_METRICS_PUBLIC: /metrics without the token
	SessionKeepAlive  time.Duration `json:"session_keepalive"`   // GUI_AGENT_SESSION_KEEPALIVE_S 1-3600, default 10: with --desktop-per-session, ping each client this often; one without an answer loses its session and desktop

	// Records and logs.
	RunsDir     string `json:"runs_dir"`     // GUI_AGENT_RUNS_DIR, default DefaultRunsDir
	RunsKeep    int    `json:"runs_keep"`    // GUI_AGENT_RUNS_KEEP: finished run records kept, 1-100000, default 200
	RunsMaxMB   int    `json:"runs_max_mb"`  // GUI_AGENT_RUNS_MAX_MB: total size of finished run records, 1-1048576 MB, default 2048
	StateDir    string `json:"state_dir"`    // GUI_AGENT_STATE_DIR (held-input ledgers), default the runs folder's parent
	DebugImages bool   `json:"debug_images"` // GUI_AGENT_DEBUG_IMAGES, default true
	LogLevel    string `json:"log_level"`    // GUI_AGENT_LOG_LEVEL debug | info | warn | error
	LogFile     string `json:"log_file"`     // GUI_AGENT_LOG_FILE ("" = stderr)
	// CacheDir holds flow caches (GUI_AGENT_CACHE_DIR); "" = FLOW.cache.yaml
	// beside the flow file, and for gui_run_flow FlowCacheDir's default.
	CacheDir  string `json:"cache_dir"`
	LogFormat string `json:"log_format"` // GUI_AGENT_LOG_FORMAT text | json

	// Settings a host application changes at run time (settings.go).
	SettingsFile string  `json:"settings_file"` // GUI_AGENT_SETTINGS_FILE, default os.UserConfigDir()/guiagent/settings.json ("" = none)
	Sources      Sources `json:"-"`             // which layer set each value; absent = default
}

// FlowCacheDir is where caches of flows given as text (gui_run_flow) are
// kept: CacheDir, else "flow-cache" beside the runs folder.
func (c Config) FlowCacheDir() string {
	if c.CacheDir != "" {
		return c.CacheDir
	}
	return filepath.Join(filepath.Dir(c.RunsDir), "flow-cache")
}

// Providers lists accepted GUI_AGENT_PROVIDER values.
var Providers = []string{"openai", "anthropic", "gemini"}

// Adapters lists accepted GUI_AGENT_ADAPTER values.
var Adapters = []string{"generic", "anthropic-computer", "openai-computer", "ui-tars"}

// Default returns the configuration with every default filled and nothing read.
func Default() Config {
	return Config{
		ModelTimeout:     llm.DefaultTimeout,
		JPEGQuality:      imaging.DefaultQuality,
		MaxLongEdge:      imaging.DefaultMaxLongEdge,
		MaxImageBytes:    imaging.DefaultMaxBytes,
		ImageFormat:      "jpeg",
		MaxSteps:         50,
		TaskTimeout:      600 * time.Second,
		AskTimeout:       300 * time.Second,
		KeepImages:       llm.DefaultKeepImages,
		OnBusy:           "queue",
		Accessibility:    "auto",
		HumanOverride:    true,
		HTTPAddr:         "127.0.0.1:60008",
		DebugImages:      true,
		RunsKeep:         200,
		RunsMaxMB:        2048,
		LogLevel:         "info",
		LogFormat:        "text",
		MaxDesktops:      runtime.NumCPU(),
		SessionKeepAlive: 10 * time.Second,
	}
}

// Load reads environment variables through getenv, then the flags in args (flags
// win), fills defaults and validates. It returns the remaining positional args.
// Flags are the serve/demo flags; unknown flags are an error naming them.
func Load(name string, args []string, getenv func(string) string) (Config, []string, error) {
	c := Default()
	if err := c.loadSettingsFile(getenv); err != nil {
		return c, nil, err
	}
	if err := c.loadEnv(getenv); err != nil {
		return c, nil, err
	}
	fs, vd, tools, dps := newFlagSet(name, &c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, err
		}
		return c, nil, fmt.Errorf("%s: %w (run 'guiagent %s --help')", name, err, name)
	}
	if err := c.applyToolFlags(*tools); err != nil {
		return c, nil, err
	}
	c.markFlags(fs)
	if *dps != "" {
		s, err := ParseSize(*dps)
		if err != nil {
			return c, nil, fmt.Errorf("--desktop-per-session: %w", err)
		}
		c.DesktopPerSession = s
	}
	if *vd != "" {
		s, err := ParseSize(*vd)
		if err != nil {
			return c, nil, fmt.Errorf("--virtual-display: %w", err)
		}
		c.VirtualDisplay = s
	}
	c.FillSessionDefaults(getenv)
	// Validate normalizes c (the provider's case), so it must run before c is
	// copied into the results: within one return statement Go leaves the order
	// of reading c and calling c.Validate unspecified.
	err := c.Validate()
	return c, fs.Args(), err
}

// FillSessionDefaults fills the values whose defaults come from the session
// when they are empty: the X display ($DISPLAY) and its authority file, the
// D-Bus session and accessibility buses, RunsDir and StateDir.
func (c *Config) FillSessionDefaults(getenv func(string) string) {
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
	if c.RunsDir == "" {
		c.RunsDir = DefaultRunsDir(getenv)
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Dir(DefaultRunsDir(getenv))
	}
}

// newFlagSet declares every configuration flag of name (serve, demo, doctor,
// release) over c's current values. vd and tools hold --virtual-display and
// --tools as given, parsed by Load.
func newFlagSet(name string, c *Config) (fs *flag.FlagSet, vd, tools, dps *string) {
	fs = flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&c.HTTP, "http", c.HTTP, "serve MCP over Streamable HTTP instead of stdio")
	fs.StringVar(&c.HTTPAddr, "addr", c.HTTPAddr, "HTTP listen `host:port` (loopback unless --allow-remote; GUI_AGENT_HTTP_ADDR)")
	fs.BoolVar(&c.AllowRemote, "allow-remote", c.AllowRemote, "allow a non-loopback --addr (requires GUI_AGENT_HTTP_TOKEN; GUI_AGENT_ALLOW_REMOTE)")
	fs.StringVar(&c.XDisplay, "display", c.XDisplay, "X `display` to drive, e.g. :1 (default $DISPLAY)")
	fs.StringVar(&c.VNC, "vnc", c.VNC, "drive a remote desktop over VNC at `host[:port]` (default port 5900; password in GUI_AGENT_VNC_PASSWORD; GUI_AGENT_VNC)")
	vd = fs.String("virtual-display", "", "when no X display is reachable, start a private Xvfb of this `size`, e.g. 1280x800 (GUI_AGENT_VIRTUAL_DISPLAY)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "`level`: debug, info, warn or error (GUI_AGENT_LOG_LEVEL)")
	fs.StringVar(&c.LogFile, "log-file", c.LogFile, "write logs to this `file` instead of stderr (GUI_AGENT_LOG_FILE)")
	fs.StringVar(&c.RunsDir, "runs-dir", c.RunsDir, "`dir`ectory of run records (GUI_AGENT_RUNS_DIR; default $XDG_STATE_HOME/guiagent/runs)")
	fs.StringVar(&c.Model, "model", c.Model, "model `name` (GUI_AGENT_MODEL)")
	fs.StringVar(&c.Provider, "provider", c.Provider, "model `provider`: openai, anthropic or gemini (GUI_AGENT_PROVIDER)")
	tools = fs.String("tools", "", "offer only these tools: comma `list` of tool names or groups, listed below (GUI_AGENT_TOOLS)")
	fs.BoolVar(&c.ReadOnly, "read-only", c.ReadOnly, "offer only the observe tools: no input, no clipboard writes, no tasks (GUI_AGENT_READ_ONLY)")
	dps = fs.String("desktop-per-session", "", "serve --http only: give each MCP session its own private Xvfb of this `size`, e.g. 1280x800 (GUI_AGENT_DESKTOP_PER_SESSION)")
	fs.StringVar(&c.SessionCommand, "session-command", c.SessionCommand, "with --desktop-per-session: a `command` (sh -c) started on each new desktop; its output goes to desktops/<session>/session-command.log (GUI_AGENT_SESSION_COMMAND)")
	fs.IntVar(&c.MaxDesktops, "max-desktops", c.MaxDesktops, "with --desktop-per-session: at most this many desktops at once (GUI_AGENT_MAX_DESKTOPS; default: the number of CPUs)")
	fs.BoolVar(&c.MetricsPublic, "metrics-public", c.MetricsPublic, "serve /metrics without the bearer token (GUI_AGENT_METRICS_PUBLIC)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log `format`: text or json (GUI_AGENT_LOG_FORMAT)")
	return fs, vd, tools, dps
}

// PrintFlags writes the configuration flags of command name, one per entry
// with its default, to w (for `guiagent name --help`).
func PrintFlags(name string, w io.Writer) {
	c := Default()
	fs, _, _, _ := newFlagSet(name, &c)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// applyToolFlags parses --tools (it replaces GUI_AGENT_TOOLS when given) into
// c.Tools and refuses it together with --read-only. Names are checked by the
// server, which defines the tools and groups.
func (c *Config) applyToolFlags(tools string) error {
	if tools != "" {
		c.Tools = splitList(tools)
		if len(c.Tools) == 0 {
			return fmt.Errorf("--tools %q names no tool: give tool names or groups, comma separated (see guiagent serve --help)", tools)
		}
	}
	if c.ReadOnly && len(c.Tools) > 0 {
		return fmt.Errorf("--read-only (GUI_AGENT_READ_ONLY) and --tools (GUI_AGENT_TOOLS=%s) are both set: --read-only means --tools observe; keep one", strings.Join(c.Tools, ","))
	}
	return nil
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
	if d := strings.TrimSpace(getenv("GUI_AGENT_RUNS_DIR")); d != "" {
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

type envReader struct {
	getenv func(string) string
	errs   []error
	c      *Config // its Sources record each variable found
}

func (r *envReader) str(name string, dst *string) {
	if v, ok := r.lookup(name); ok {
		*dst = v
	}
}

func (r *envReader) lookup(name string) (string, bool) {
	v := strings.TrimSpace(r.getenv("GUI_AGENT_" + name))
	if v != "" {
		r.c.source(name, SourceEnv)
	}
	return v, v != ""
}

func (r *envReader) int(name string, dst *int, lo, hi int) {
	v, ok := r.lookup(name)
	if !ok {
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.errs = append(r.errs, fmt.Errorf("GUI_AGENT_%s=%q: want a whole number from %d to %d", name, v, lo, hi))
		return
	}
	*dst = n
}

func (r *envReader) dur(name string, dst *time.Duration, unit time.Duration, lo, hi int) {
	n := -1
	r.int(name, &n, lo, hi)
	if n >= 0 {
		*dst = time.Duration(n) * unit
	}
}

func (r *envReader) bool(name string, dst *bool) {
	v, ok := r.lookup(name)
	if !ok {
		return
	}
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		*dst = true
	case "0", "false", "no", "off":
		*dst = false
	default:
		r.errs = append(r.errs, fmt.Errorf("GUI_AGENT_%s=%q: want true or false (1/0, yes/no, on/off)", name, v))
	}
}

func (r *envReader) list(name string, dst *[]string) {
	if v, ok := r.lookup(name); ok {
		*dst = append(*dst, splitList(v)...)
	}
}

func (c *Config) loadEnv(getenv func(string) string) error {
	r := &envReader{getenv: getenv, c: c}
	r.str("PROVIDER", &c.Provider)
	r.str("MODEL", &c.Model)
	r.str("API_KEY", &c.APIKey)
	r.str("BASE_URL", &c.BaseURL)
	r.str("ADAPTER", &c.Adapter)
	r.str("MEMORY_MODEL", &c.MemoryModel)
	r.str("MEMORY_PROVIDER", &c.MemoryProvider)
	r.str("MEMORY_BASE_URL", &c.MemoryBaseURL)
	r.str("MEMORY_API_KEY", &c.MemoryAPIKey)
	r.str("GROUNDING_MODEL", &c.GroundingModel)
	r.str("GROUNDING_BASE_URL", &c.GroundingBaseURL)
	r.str("GROUNDING_API_KEY", &c.GroundingAPIKey)
	r.str("TOOL_VERSION", &c.ToolVersion)
	r.dur("MODEL_TIMEOUT_S", &c.ModelTimeout, time.Second, 1, 600)
	r.str("DISPLAY_INDEX", &c.DisplayIndex)
	r.str("COORDINATE_MODE", &c.CoordinateMode)
	r.str("VNC", &c.VNC)
	r.str("VNC_PASSWORD", &c.VNCPassword)
	r.str("ACCESSIBILITY", &c.Accessibility)
	if v, ok := r.lookup("VIRTUAL_DISPLAY"); ok {
		s, err := ParseSize(v)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("GUI_AGENT_VIRTUAL_DISPLAY: %w", err))
		}
		c.VirtualDisplay = s
	}
	r.int("JPEG_QUALITY", &c.JPEGQuality, 1, 100)
	r.int("MAX_LONG_EDGE", &c.MaxLongEdge, 64, 8192)
	r.int("MAX_IMAGE_BYTES", &c.MaxImageBytes, 32768, 20_000_000)
	r.str("IMAGE_FORMAT", &c.ImageFormat)
	r.bool("SCREENSHOT_AFTER_ACTION", &c.ScreenshotAfterAction)
	r.int("MAX_STEPS", &c.MaxSteps, 1, 500)
	r.dur("STEP_DELAY_MS", &c.StepDelay, time.Millisecond, 0, 10000)
	r.dur("TASK_TIMEOUT_S", &c.TaskTimeout, time.Second, 1, 86400)
	r.int("TOKEN_BUDGET", &c.TokenBudget, 0, 1<<30)
	r.int("SCREENSHOT_KEEP", &c.KeepImages, 1, 10)
	r.str("ON_BUSY", &c.OnBusy)
	r.bool("HUMAN_OVERRIDE", &c.HumanOverride)
	r.dur("ASK_TIMEOUT_S", &c.AskTimeout, time.Second, 1, 86400)
	r.str("KILL_SWITCH_FILE", &c.KillSwitchFile)
	r.list("BLOCKED_HOTKEYS", &c.BlockedHotkeys)
	r.list("ALLOWED_HOTKEYS", &c.AllowedHotkeys)
	r.list("CONFIRM_HOTKEYS", &c.ConfirmHotkeys)
	r.str("HTTP_ADDR", &c.HTTPAddr)
	r.str("HTTP_TOKEN", &c.HTTPToken)
	r.bool("ALLOW_REMOTE", &c.AllowRemote)
	r.list("TOOLS", &c.Tools)
	r.bool("READ_ONLY", &c.ReadOnly)
	r.str("RUNS_DIR", &c.RunsDir)
	r.int("RUNS_KEEP", &c.RunsKeep, 1, 100_000)
	r.int("RUNS_MAX_MB", &c.RunsMaxMB, 1, 1<<20)
	r.str("STATE_DIR", &c.StateDir)
	r.bool("DEBUG_IMAGES", &c.DebugImages)
	r.str("LOG_LEVEL", &c.LogLevel)
	r.str("LOG_FILE", &c.LogFile)
	r.str("CACHE_DIR", &c.CacheDir)
	r.str("LOG_FORMAT", &c.LogFormat)
	if v, ok := r.lookup("DESKTOP_PER_SESSION"); ok {
		s, err := ParseSize(v)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("GUI_AGENT_DESKTOP_PER_SESSION: %w", err))
		}
		c.DesktopPerSession = s
	}
	r.str("SESSION_COMMAND", &c.SessionCommand)
	r.int("MAX_DESKTOPS", &c.MaxDesktops, 1, 4096)
	r.bool("METRICS_PUBLIC", &c.MetricsPublic)
	r.dur("SESSION_KEEPALIVE_S", &c.SessionKeepAlive, time.Second, 1, 3600)
	return errors.Join(r.errs...)
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

// Validate checks values that are not simple ranges.
func (c *Config) Validate() error {
	var errs []error
	c.Provider = strings.ToLower(c.Provider)
	c.MemoryProvider = strings.ToLower(c.MemoryProvider)
	if c.Provider != "" {
		errs = append(errs, oneOf("GUI_AGENT_PROVIDER", c.Provider, Providers))
	}
	errs = append(errs, c.checkModelPair())
	if c.MemoryProvider != "" {
		errs = append(errs, oneOf("GUI_AGENT_MEMORY_PROVIDER", c.MemoryProvider, Providers))
	}
	if c.Adapter != "" {
		errs = append(errs, oneOf("GUI_AGENT_ADAPTER", c.Adapter, Adapters))
	}
	if c.CoordinateMode != "" {
		if _, err := (geom.Profile{}).WithMode(c.CoordinateMode); err != nil {
			errs = append(errs, fmt.Errorf("GUI_AGENT_COORDINATE_MODE: %w", err))
		}
	}
	errs = append(errs, oneOf("GUI_AGENT_IMAGE_FORMAT", c.ImageFormat, []string{"jpeg", "png"}))
	errs = append(errs, oneOf("GUI_AGENT_ON_BUSY", c.OnBusy, []string{"queue", "preempt", "reject"}))
	c.Accessibility = strings.ToLower(c.Accessibility)
	errs = append(errs, oneOf("GUI_AGENT_ACCESSIBILITY", c.Accessibility, []string{"auto", "on", "off"}))
	errs = append(errs, oneOf("GUI_AGENT_LOG_LEVEL", c.LogLevel, []string{"debug", "info", "warn", "error"}))
	errs = append(errs, oneOf("GUI_AGENT_LOG_FORMAT", c.LogFormat, []string{"text", "json"}))
	errs = append(errs, c.validateDesktops())
	for _, u := range []struct{ name, url string }{{"GUI_AGENT_BASE_URL", c.BaseURL}, {"GUI_AGENT_GROUNDING_BASE_URL", c.GroundingBaseURL}, {"GUI_AGENT_MEMORY_BASE_URL", c.MemoryBaseURL}} {
		if u.url != "" && !strings.HasPrefix(u.url, "http://") && !strings.HasPrefix(u.url, "https://") {
			errs = append(errs, fmt.Errorf("%s=%q: want an http:// or https:// URL", u.name, u.url))
		}
	}
	if c.Provider != "" && c.MemoryProvider != "" && c.MemoryProvider != c.Provider && c.MemoryAPIKey == "" && c.MemoryBaseURL == "" {
		errs = append(errs, fmt.Errorf("GUI_AGENT_MEMORY_PROVIDER=%s differs from GUI_AGENT_PROVIDER=%s: set GUI_AGENT_MEMORY_API_KEY (and GUI_AGENT_MEMORY_BASE_URL for a compatible server) for it", c.MemoryProvider, c.Provider))
	}
	if c.GroundingModel != "" && c.Provider == "anthropic" && c.GroundingBaseURL == "" {
		errs = append(errs, errors.New("GUI_AGENT_GROUNDING_MODEL is called over an OpenAI-compatible endpoint (vLLM, Ollama, OpenRouter...), and the provider is anthropic: set GUI_AGENT_GROUNDING_BASE_URL (and GUI_AGENT_GROUNDING_API_KEY if it needs one)"))
	}
	if c.VNC != "" {
		if _, _, err := net.SplitHostPort(c.VNC); err != nil {
			if strings.ContainsAny(c.VNC, " /") || strings.Count(c.VNC, ":") == 1 {
				errs = append(errs, fmt.Errorf("--vnc/GUI_AGENT_VNC=%q: want host or host:port such as 192.168.1.20:5900", c.VNC))
			} else {
				c.VNC = net.JoinHostPort(strings.Trim(c.VNC, "[]"), "5900") // a bare host: the RFB default port
			}
		}
	}
	host, _, err := net.SplitHostPort(c.HTTPAddr)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("--addr/GUI_AGENT_HTTP_ADDR=%q: want host:port such as 127.0.0.1:60008", c.HTTPAddr))
	case !IsLoopbackHost(host) && !c.AllowRemote:
		errs = append(errs, fmt.Errorf("--addr %s is not a loopback address: guiagent listens on loopback only unless --allow-remote is given together with GUI_AGENT_HTTP_TOKEN", c.HTTPAddr))
	}
	if c.AllowRemote && c.HTTPToken == "" {
		errs = append(errs, errors.New("--allow-remote requires GUI_AGENT_HTTP_TOKEN: set a long random token so remote clients must present it"))
	}
	if c.HTTPToken != "" && len(c.HTTPToken) < 16 {
		errs = append(errs, errors.New("GUI_AGENT_HTTP_TOKEN is too short: use at least 16 characters (e.g. openssl rand -hex 32)"))
	}
	return errors.Join(errs...)
}

// checkModelPair names the missing half of a half-configured model: a
// provider needs a model and a model a provider. Neither means no model
// (atomic tools only); a key or base URL alone names both.
func (c *Config) checkModelPair() error {
	switch {
	case c.Provider != "" && c.Model == "":
		return fmt.Errorf("GUI_AGENT_PROVIDER=%s is set but GUI_AGENT_MODEL (--model) is not: set the model name too, or unset GUI_AGENT_PROVIDER to run without a model", c.Provider)
	case c.Model != "" && c.Provider == "":
		return fmt.Errorf("GUI_AGENT_MODEL=%s is set but GUI_AGENT_PROVIDER (--provider) is not: set it to %s, or unset GUI_AGENT_MODEL to run without a model", c.Model, strings.Join(Providers, ", "))
	case c.Model == "" && (c.APIKey != "" || c.BaseURL != ""):
		return errors.New("GUI_AGENT_API_KEY or GUI_AGENT_BASE_URL is set but GUI_AGENT_PROVIDER and GUI_AGENT_MODEL are not: set both to use a model, or unset the key")
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

// secretFields lists every credential of c, the one place Redacted and Secrets read.
func (c *Config) secretFields() []*string {
	return []*string{&c.APIKey, &c.HTTPToken, &c.VNCPassword, &c.GroundingAPIKey, &c.MemoryAPIKey}
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
	return s
}

// validateDesktops checks the desktop-per-session settings.
func (c *Config) validateDesktops() error {
	var errs []error
	if c.MaxDesktops < 1 || c.MaxDesktops > 4096 {
		errs = append(errs, fmt.Errorf("--max-desktops/GUI_AGENT_MAX_DESKTOPS=%d: want 1-4096", c.MaxDesktops))
	}
	if c.DesktopPerSession == (geom.Size{}) {
		if c.SessionCommand != "" {
			errs = append(errs, errors.New("--session-command/GUI_AGENT_SESSION_COMMAND needs --desktop-per-session WxH: it is started on each session's own desktop"))
		}
		return errors.Join(errs...)
	}
	if !c.HTTP {
		errs = append(errs, errors.New("--desktop-per-session/GUI_AGENT_DESKTOP_PER_SESSION needs serve --http: over stdio there is one session, use --virtual-display WxH instead"))
	}
	if c.VNC != "" {
		errs = append(errs, errors.New("--desktop-per-session and --vnc exclude each other: per-session desktops are private Xvfb servers; drop one of them"))
	}
	return errors.Join(errs...)
}
