package platform

import (
	"context"

	"github.com/guiagent/guiagent/internal/backend/vnc"
	"github.com/guiagent/guiagent/internal/desktop"
)

// openVNC connects to the VNC server o.VNC and returns the started backend
// with its closer. Every OS's Open calls it first when o.VNC is set.
func openVNC(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	b := vnc.New(vnc.Options{Addr: o.VNC, Password: o.VNCPassword})
	if err := b.Start(ctx); err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	return b, b.Close, nil
}
