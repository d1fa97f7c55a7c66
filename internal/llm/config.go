package llm

import (
	"net/http"
	"time"

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
	// retried per Retry), whatever HTTPClient is; zero = 120 s.
	Timeout time.Duration
	// Retry is the retry policy for retryable provider errors.
	Retry RetryPolicy
	// MaxTokens caps output tokens per call; zero = 2048.
	MaxTokens int
	// KeepImages is how many screenshots a request carries (current included);
	// older ones become a line of text. Zero = 3.
	KeepImages int
	// Profile is the coordinate convention; the zero value means
	// geom.ProfileFor(Model) (with CoordinateMode applied by the caller).
	Profile *geom.Profile
	// ToolVersion selects a native tool version where there are several
	// (Anthropic: "computer_20250124" or "computer_20251124"); empty = by model.
	ToolVersion string
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
