package windows

import "log/slog"

// Options configures a Backend. The zero value is ready to use.
type Options struct {
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// NoElements leaves the backend without its element source (UI
	// Automation): the accessibility setting off.
	NoElements bool
}
