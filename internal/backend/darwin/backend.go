package darwin

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Options configures a Backend. The zero value is ready to use.
type Options struct {
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// PromptForPermissions makes Start ask macOS to show its Accessibility and
	// Screen Recording prompts when either permission is missing. When false
	// (the default) nothing is shown and the calls that need a permission fail
	// with an error naming the setting to grant.
	PromptForPermissions bool
	// NoElements leaves the backend without its element source (the AX
	// API): the accessibility setting off.
	NoElements bool
}

// Errors callers test for with errors.Is.
var (
	// ErrAccessibility: macOS refuses synthetic input because the process lacks
	// the Accessibility permission.
	ErrAccessibility = errors.New("macOS Accessibility permission is missing")
	// ErrScreenRecording: macOS refuses screen capture because the process
	// lacks the Screen Recording permission.
	ErrScreenRecording = errors.New("macOS Screen Recording permission is missing")
)

// Capability guards.
var (
	_ desktop.Screen    = (*Backend)(nil)
	_ desktop.Pointer   = (*Backend)(nil)
	_ desktop.Keyboard  = (*Backend)(nil)
	_ desktop.Clipboard = (*Backend)(nil)
	_ desktop.Windows   = (*Backend)(nil)
	_ desktop.Describer = (*Backend)(nil)
)

// New returns a backend. It has no side effects; call Start.
func New(o Options) *Backend {
	l := o.Logger
	if l == nil {
		l = slog.Default()
	}
	return &Backend{opts: o, log: l.With("backend", "darwin")}
}

// Name returns "darwin".
func (b *Backend) Name() string { return "darwin" }

// DisplayName returns "": a Mac has one desktop per session.
func (b *Backend) DisplayName() string { return "" }

// whoNeedsPermission names the program macOS attributes the permission to.
func whoNeedsPermission() string {
	exe, err := os.Executable()
	if err != nil || exe == "" {
		exe = "guiagent"
	}
	return fmt.Sprintf("the app that started guiagent (Terminal, iTerm, or your MCP host), or %s when it runs on its own", exe)
}

// accessibilityError explains how to grant the Accessibility permission.
func accessibilityError() error {
	return fmt.Errorf("%w, so macOS would drop mouse and keyboard input: grant it to %s in System Settings > Privacy & Security > Accessibility, then restart that app",
		ErrAccessibility, whoNeedsPermission())
}

// screenRecordingError explains how to grant the Screen Recording permission.
func screenRecordingError(detail string) error {
	return fmt.Errorf("%w (%s): grant it to %s in System Settings > Privacy & Security > Screen Recording (\"Screen & System Audio Recording\" on macOS 15), then restart that app",
		ErrScreenRecording, detail, whoNeedsPermission())
}
