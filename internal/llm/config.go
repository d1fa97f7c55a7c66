package llm

import (
	"net/http"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// Config is what every provider adapter is built from. Zero values are documented per field.
type Config struct {
	// Provider is "openai", "anthropic" or "gemini".
	Provider string
	// Model is the provider's model name.
	Model string
	// APIKey is the credential. It must never appear in logs, errors or records.
	APIKey string
	// BaseURL is given the way the provider's SDK takes it: OpenAI and compatible
	// servers up to and including /v1; Anthropic the host root. Empty = the provider default.
	BaseURL string
	// HTTPClient is used for requests; nil = a default client.
	HTTPClient *http.Client
	// Timeout bounds each attempt of a request (a hung attempt fails, and is
	// retried per Retry), whatever HTTPClient is; zero = DefaultTimeout.
	Timeout time.Duration
	// Retry is the retry policy for retryable provider errors.
	Retry RetryPolicy
	// MaxTokens caps output tokens per call; zero = DefaultMaxTokens.
	MaxTokens int
	// KeepImages is how many screenshots a request carries (current included);
	// older ones become a line of text. Zero = DefaultKeepImages.
	KeepImages int
	// Profile is the coordinate convention; nil means the adapter's own,
	// ProfileFor(adapter name, Model, ""). Callers that apply a coordinate mode
	// pass ProfileFor's result here.
	Profile *geom.Profile
	// ToolVersion selects a native tool version where there are several
	// (Anthropic: "computer_toolset_20260801", "computer_20251124" or
	// "computer_20250124"; OpenAI: "computer" or "computer_use_preview");
	// empty = by model (the provider's rules).
	ToolVersion string
	// Disabled are action kinds the deployment withholds from the model
	// (GUI_AGENT_DISABLE_ACTIONS: zoom, mouse_down, ...): a native adapter
	// declares the members or functions that perform them off where its wire
	// can (Anthropic's toolset configs, Gemini's excluded functions), and
	// refuses them if the model calls them anyway.
	Disabled []action.Kind
	// Refs says the observations carry the UI's elements (an outline or
	// marks: GUI_AGENT_ELEMENTS), so the prompt tells the model that an
	// action may name its element by ref (RefInstructions). Adapters whose
	// wire has no place for a ref ignore it.
	Refs bool
	// Device is what the screen is: "" a desktop, DeviceBrowser a web page
	// in a browser tab, DevicePhone a phone's touch screen. Adapters add
	// DeviceInstructions to their system prompt.
	Device string
	// Vars names the configuration variables this Config came from, so that
	// an error says what to set: internal/app fills them from the knob
	// table, a memory or grounding model with its own.
	Vars Vars
}

// Vars are the configuration variables of one model's Config. An empty one
// reads as the Config field ("Config.APIKey").
type Vars struct{ Model, APIKey, BaseURL, Timeout, ToolVersion, DisableActions string }

func orField(v, field string) string {
	if v == "" {
		return "Config." + field
	}
	return v
}

// ModelVar names the variable of the model's name.
func (v Vars) ModelVar() string { return orField(v.Model, "Model") }

// APIKeyVar names the variable of the model's key.
func (v Vars) APIKeyVar() string { return orField(v.APIKey, "APIKey") }

// BaseURLVar names the variable of the model's endpoint.
func (v Vars) BaseURLVar() string { return orField(v.BaseURL, "BaseURL") }

// ToolVersionVar names the variable of the native tool version.
func (v Vars) ToolVersionVar() string { return orField(v.ToolVersion, "ToolVersion") }

// DisableActionsVar names the variable of the actions withheld from the model.
func (v Vars) DisableActionsVar() string { return orField(v.DisableActions, "Disabled") }

// TimeoutVar names the variable of the bound on one request.
func (v Vars) TimeoutVar() string { return orField(v.Timeout, "Timeout") }

// Defaults of a model call, the one place they are set.
const (
	// DefaultTimeout bounds one attempt of a request.
	DefaultTimeout = 120 * time.Second
	// DefaultMaxTokens caps the output tokens of one call.
	DefaultMaxTokens = 2048
	// DefaultKeepImages is how many screenshots one call carries, the current
	// one included (the agent keeps as many, the adapters prune to it).
	DefaultKeepImages = 3
)

// WithDefaults returns c with zero Timeout, MaxTokens and KeepImages set to
// their defaults.
func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.KeepImages <= 0 {
		c.KeepImages = DefaultKeepImages
	}
	return c
}

// Adapter names (the adapter knob's values).
const (
	AdapterGeneric        = "generic"
	AdapterUITARS         = "ui-tars"
	AdapterAnthropic      = "anthropic-computer"
	AdapterOpenAIComputer = "openai-computer"
	AdapterGemini         = "gemini-computer"
)

// ProfileFor returns the coordinate profile that adapter uses for model: the
// one place a model's convention is chosen.
//
//   - a registered rule of adapter matching model that names a profile row
//     (RuleFor): that row (claude-opus-4-7 reads larger images than other
//     Claude models);
//   - else the adapter's own row (AdapterSpec.Profile), whatever the model is
//     called: native tools speak in their own convention (anthropic-computer
//     and openai-computer in pixels of the image sent, gemini-computer on the
//     0-999 grid);
//   - ui-tars: the model's UI-TARS row, or "ui-tars-1.5" (smart-resized pixels,
//     the open 1.5 weights) for a name the table does not know as UI-TARS;
//   - generic (and anything else): the model's row of geom.Profiles; mode
//     (the model coordinates knob), when set, overrides the convention of a
//     model the table does not know (the "default" row).
func ProfileFor(adapter, model, mode string) (geom.Profile, error) {
	if r := RuleFor(adapter, model); r.Profile != "" {
		return profileRow(r.Profile), nil
	}
	if a, ok := AdapterNamed(adapter); ok && a.Profile != "" {
		return profileRow(a.Profile), nil
	}
	row := geom.ProfileFor(model)
	if adapter == AdapterUITARS {
		if row.Name != "ui-tars" && row.Name != "ui-tars-1.5" {
			row = profileRow("ui-tars-1.5")
		}
		return row, nil
	}
	if mode != "" && row.Name == "default" {
		return row.WithMode(mode)
	}
	return row, nil
}

// ProfileOf returns c.Profile, or ProfileFor(adapter, c.Model, "").
func (c Config) ProfileOf(adapter string) geom.Profile {
	if c.Profile != nil {
		return *c.Profile
	}
	p, _ := ProfileFor(adapter, c.Model, "") // no mode: never an error
	return p
}

// profileRow returns the row of geom.Profiles named name.
func profileRow(name string) geom.Profile {
	for _, p := range geom.Profiles {
		if p.Name == name {
			return p
		}
	}
	panic("geom.Profiles has no row " + name)
}

// RetryPolicy says how provider calls are retried: retryable errors (see
// APIError.Retryable, timeouts, connection resets) are retried with capped
// exponential backoff and full jitter, honouring Retry-After (capped by Max),
// and the wait is interrupted by cancellation.
type RetryPolicy struct {
	// Attempts is the total number of tries; zero = 4.
	Attempts int
	// Base is the first backoff; zero = 500 ms.
	Base time.Duration
	// Max caps one wait (including Retry-After); zero = 30 s.
	Max time.Duration
	// OnRetry, when set, is called before each wait with the 1-based number of
	// the attempt that failed, its error and the wait (for logs and progress).
	OnRetry func(attempt int, err error, wait time.Duration)
}
