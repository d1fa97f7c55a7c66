package platform

import (
	"context"
	"fmt"

	winbackend "github.com/guiagent/guiagent/internal/backend/windows"
	"github.com/guiagent/guiagent/internal/desktop"
)

// Open starts the Windows backend on the desktop of the session this process
// runs in and returns it with a function that closes it. Session.XDisplay and
// VirtualDisplay are X11 settings and are ignored; ForceVirtual (a private
// Xvfb demanded with --virtual-display) is an error, since Windows has no Xvfb.
func Open(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	ch, err := Select(o)
	if err != nil {
		return nil, nil, err
	}
	if open, ok := anywhere[ch.Backend]; ok {
		return open(ctx, o)
	}
	if o.ForceVirtual {
		return nil, nil, fmt.Errorf("a private virtual display (Xvfb) is only available on Linux: drop --virtual-display to drive this Windows desktop: %w", desktop.ErrUnsupported)
	}
	b := winbackend.New(winbackend.Options{NoElements: o.Accessibility == "off"})
	if err := b.Start(ctx); err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	return b, b.Close, nil
}
