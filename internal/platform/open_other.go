//go:build !linux && !windows && !darwin

package platform

import (
	"context"
	"fmt"
	"runtime"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Open returns an error: no desktop backend is built for this operating system yet.
func Open(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	ch, err := Select(o)
	if err != nil {
		return nil, nil, err
	}
	if open, ok := anywhere[ch.Backend]; ok {
		return open(ctx, o)
	}
	return nil, nil, fmt.Errorf("no desktop backend is built for %s yet: %w", runtime.GOOS, desktop.ErrUnsupported)
}
