package platform

import (
	"context"

	"github.com/guiagent/guiagent/internal/desktop"
)

// openPortal is the stand-in until the portal backend lands (part 2).
func openPortal(_ context.Context, _ Options) (desktop.Screen, func() error, error) {
	return nil, nil, desktop.ErrUnsupported
}
