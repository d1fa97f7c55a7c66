//go:build !darwin

package darwin

import (
	"context"
	"fmt"
	"image"
	"log/slog"
	"runtime"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Backend is the macOS backend; outside macOS every call returns
// desktop.ErrUnsupported.
type Backend struct {
	opts Options
	log  *slog.Logger
}

// apiHandles is empty outside macOS.
type apiHandles struct{} //lint:ignore U1000 embedded in api, whose signatures are checked on every OS; only the darwin build binds the handles

func unsupported() error {
	return fmt.Errorf("the macOS desktop backend runs only on macOS, not %s: %w", runtime.GOOS, desktop.ErrUnsupported)
}

// Start returns desktop.ErrUnsupported outside macOS.
func (b *Backend) Start(ctx context.Context) error { return unsupported() }

// Close does nothing outside macOS.
func (b *Backend) Close() error { return nil }

// Displays returns desktop.ErrUnsupported outside macOS.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) { return nil, unsupported() }

// Capture returns desktop.ErrUnsupported outside macOS.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	return nil, unsupported()
}

// MoveTo returns desktop.ErrUnsupported outside macOS.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error { return unsupported() }

// ButtonDown returns desktop.ErrUnsupported outside macOS.
func (b *Backend) ButtonDown(ctx context.Context, bt desktop.Button) error { return unsupported() }

// ButtonUp returns desktop.ErrUnsupported outside macOS.
func (b *Backend) ButtonUp(ctx context.Context, bt desktop.Button) error { return unsupported() }

// Scroll returns desktop.ErrUnsupported outside macOS.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	return unsupported()
}

// CursorPosition returns desktop.ErrUnsupported outside macOS.
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	return geom.GlobalPoint{}, unsupported()
}

// KeyDown returns desktop.ErrUnsupported outside macOS.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error { return unsupported() }

// KeyUp returns desktop.ErrUnsupported outside macOS.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error { return unsupported() }

// TypeText returns desktop.ErrUnsupported outside macOS.
func (b *Backend) TypeText(ctx context.Context, text string) error { return unsupported() }

// ReadClipboard returns desktop.ErrUnsupported outside macOS.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) { return "", unsupported() }

// WriteClipboard returns desktop.ErrUnsupported outside macOS.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error { return unsupported() }

// ActiveWindowTitle returns desktop.ErrUnsupported outside macOS.
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) { return "", unsupported() }

// Describe reports that the backend is unavailable on this OS.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	return map[string]string{"state": "unavailable: the macOS backend runs only on macOS, not " + runtime.GOOS}
}
