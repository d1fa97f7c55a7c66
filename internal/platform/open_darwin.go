package platform

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Open would return the macOS backend; it is not built yet.
func Open(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	if o.VNC != "" {
		return openVNC(ctx, o)
	}
	return nil, nil, fmt.Errorf("the macOS desktop backend is not built yet: %w", desktop.ErrUnsupported)
}
