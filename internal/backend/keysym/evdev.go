package keysym

import (
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// EvdevButton returns the Linux input event code (linux/input-event-codes.h)
// of a mouse button: BTN_LEFT, BTN_RIGHT or BTN_MIDDLE. The Wayland virtual
// pointer and the RemoteDesktop portal name buttons by these codes.
func EvdevButton(b desktop.Button) (uint32, error) {
	switch b {
	case desktop.Left:
		return 0x110, nil
	case desktop.Right:
		return 0x111, nil
	case desktop.Middle:
		return 0x112, nil
	}
	return 0, fmt.Errorf("unknown mouse button %d: use left, right or middle", b)
}
