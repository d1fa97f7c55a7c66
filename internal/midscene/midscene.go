// Package midscene reads Midscene's YAML scripts ("Automate with scripts in
// YAML") and translates them into guiagent flows: a Plan holds the flow
// (internal/flow's steps, run by the same Runner as any flow, so the
// verified replay cache, targets found in the accessibility tree and by
// OCR, the run's record and report all apply), the platform it needs
// (the browser backend with a start URL and viewport for web:, the
// Android backend with a device and an app to launch for android:, this
// desktop for computer:) and where the named answers go (output:).
//
// The format followed is Midscene's own definition, read at
// web-infra-dev/midscene commit dfc5a5f6ce41abb4f01d4be8c4d998ffa2b5a8c1
// (2026-08-21, @midscene/core 1.11.0): MidsceneYamlScript and its flow items
// in packages/core/src/yaml.ts, how the player runs them
// (packages/core/src/yaml/player.ts, yaml/utils.ts: ${ENV} interpolation,
// web target resolution, locate parameters), the CLI's setup of each
// platform (packages/cli/src/create-yaml-player.ts,
// packages/web-integration/src/puppeteer/agent-launcher.ts) and the action
// space (packages/core/src/device/index.ts), and the documentation page
// apps/site/docs/en/automate-with-scripts-in-yaml.mdx.
//
// What guiagent cannot honour is an error that names the field, with its
// line and column, before anything runs: nothing is silently ignored.
package midscene

import (
	"time"

	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/geom"
)

// Platforms a script runs on.
const (
	Web      = "web"
	Android  = "android"
	IOS      = "ios"
	Computer = "computer"
	Harmony  = "harmony"
)

// DefaultViewport is Midscene's browser viewport when the script gives none
// (packages/web-integration/src/common/viewport.ts).
var DefaultViewport = geom.Size{W: 1440, H: 800}

// DefaultNetworkIdle is how long the start page may take to go quiet
// before the script goes on anyway (Midscene's
// DEFAULT_WAIT_FOR_NETWORK_IDLE_TIMEOUT).
const DefaultNetworkIdle = 2 * time.Second

// DefaultWaitFor is aiWaitFor's timeout when the item gives none (the
// agent's, 15 s).
const DefaultWaitFor = 15 * time.Second

// notchPixels is how many pixels one wheel notch scrolls (the browser
// backend's), to turn a Midscene scroll distance into notches.
const notchPixels = 100

// defaultNotches is a scroll without a distance.
const defaultNotches = 5

// Options configure Parse.
type Options struct {
	// Vars and Getenv give ${NAME} in the script its value (Vars, from
	// --var, first). Outside tasks a name neither defines is an error, as in
	// Midscene; inside tasks it stays as written.
	Vars   map[string]string
	Getenv func(string) string
	// AllowJavaScript lets javascript items run (--allow-javascript).
	AllowJavaScript bool
	// Backends are the --backend values this build accepts
	// (platform.Backends): ios: needs "ios" among them.
	Backends []string
	// Name names the run when agent.testId does not (the script's file name
	// without its extension).
	Name string
	// ReadFile reads the cookie file of web.cookie; nil = os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// DirExists checks web.serve; nil = os.Stat.
	DirExists func(string) bool
}

// Plan is a script translated: the flow to run and what it runs on.
type Plan struct {
	// Name is the flow's name (agent.testId, else Options.Name).
	Name string
	// Platform is Web, Android, IOS, Harmony or Computer; Section the key
	// that named it (page, browser, web, target, android, ios, harmony,
	// computer).
	Platform, Section string
	// Backend is the --backend the script needs ("browser", "android",
	// "ios", "harmony"), or "" for the desktop configured (computer:).
	Backend string
	// Web: the start URL (relative to Serve when Serve is set), the folder
	// served on loopback, the viewport, and a running browser to attach to
	// (cdpEndpoint, as --browser-url's http address).
	URL, Serve string
	Viewport   geom.Size
	BrowserURL string
	// UserAgent is the user agent pages see ("" the browser's own);
	// SameTab loads what a page opens in a new tab in its own tab
	// (forceSameTabNavigation, true unless the script says false).
	UserAgent string
	SameTab   bool
	// Android: the device's serial (deviceId) and the adb server
	// (remoteAdbHost:remoteAdbPort; "" = the configured one); HarmonyOS:
	// the device's connect key (deviceId) and the hdc program (hdcPath).
	Device, ADB, HDC string
	// WDAURL is iOS's WebDriverAgent (http://wdaHost:wdaPort).
	WDAURL string
	// Output is the JSON file the named answers are written to ("" = none).
	Output string
	// Cache is what agent.cache says.
	Cache Cache
	// MaxSteps bounds each agent task (agent.replanningCycleLimit; 0 = the
	// configured limit).
	MaxSteps int
	// Flow is the translation.
	Flow *flow.Flow
	// Vars are to be passed to the flow runner: --var values, and each
	// ${NAME} left in the tasks as itself.
	Vars map[string]string
	// Results are the steps whose answers go into the output, in order.
	Results []Result

	navStep int // index in Flow.Steps of the start navigation; -1 none
}

// Cache is a script's cache setting (agent.cache).
type Cache struct {
	// Set says the script has one; Off is cache: false.
	Set, Off bool
	// Strategy is its strategy (read-write when not given).
	Strategy flow.Strategy
	// ID names the cache file (ID.cache.yaml); "" = the script's name.
	ID string
	// Dir is the folder of the cache file (cacheDir); "" = beside the script.
	Dir string
}

// Result is a step whose answer goes into the output.
type Result struct {
	// Step is the flow step (Step.Index).
	Step int
	// Name is the output key; "" takes the next number, as Midscene does.
	Name string
	// Kind is how the answer is written: ResultAssert or ResultData.
	Kind string
	// Message is an assert's errorMessage, else its statement.
	Message string
}

// Result kinds.
const (
	ResultAssert = "assert" // {pass, thought, message}
	ResultData   = "data"   // the step's Data as it is (query, number, string, boolean, ask, javascript)
)
