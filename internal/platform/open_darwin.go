package platform

import (
	"context"
	"errors"
	"fmt"

	"github.com/guiagent/guiagent/internal/backend/darwin"
	"github.com/guiagent/guiagent/internal/desktop"
)

// Open starts the macOS backend on the desktop of the logged-in user and
// returns it with a function that closes it; with o.VNC it drives that remote
// desktop instead. Session.XDisplay and VirtualDisplay are X11 settings and are ignored
// (XQuartz sets $DISPLAY on many Macs, and the native desktop is still the one
// meant); ForceVirtual (a private Xvfb demanded with --virtual-display) is an
// error, since macOS has no Xvfb.
func Open(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	ch, err := Select(o)
	if err != nil {
		return nil, nil, err
	}
	if open, ok := anywhere[ch.Backend]; ok {
		return open(ctx, o)
	}
	if o.ForceVirtual {
		return nil, nil, fmt.Errorf("a private virtual display (Xvfb) is only available on Linux: drop --virtual-display to drive this Mac's desktop: %w", desktop.ErrUnsupported)
	}
	b := darwin.New(darwin.Options{NoElements: o.Accessibility == "off"})
	if err := b.Start(ctx); err != nil {
		return nil, nil, errors.Join(err, b.Close())
	}
	return b, b.Close, nil
}
