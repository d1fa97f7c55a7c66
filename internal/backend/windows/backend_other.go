//go:build !windows

package windows

import (
	"context"
	"fmt"
	"image"
	"runtime"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Backend is the Windows desktop backend. On other operating systems it only
// reports desktop.ErrUnsupported.
type Backend struct{ opts Options }

var _ desktop.Screen = (*Backend)(nil)

// New returns a backend that cannot start outside Windows.
func New(o Options) *Backend { return &Backend{opts: o} }

func unsupported() error {
	return fmt.Errorf("the Windows desktop backend runs only on Windows, not %s: %w", runtime.GOOS, desktop.ErrUnsupported)
}

// Name returns "windows".
func (b *Backend) Name() string { return "windows" }

// DisplayName returns "": Windows has one interactive desktop per session.
func (b *Backend) DisplayName() string { return "" }

// Start returns desktop.ErrUnsupported outside Windows.
func (b *Backend) Start(ctx context.Context) error { return unsupported() }

// Displays returns desktop.ErrUnsupported outside Windows.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) { return nil, unsupported() }

// Capture returns desktop.ErrUnsupported outside Windows.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	return nil, unsupported()
}

// Close does nothing outside Windows.
func (b *Backend) Close() error { return nil }
