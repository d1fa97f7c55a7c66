package platform

import (
	"context"
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Open would return the Windows backend; it is not built yet.
func Open(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	return nil, nil, fmt.Errorf("the Windows desktop backend is not built yet: %w", desktop.ErrUnsupported)
}
