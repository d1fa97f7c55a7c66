// Package platform picks and starts the desktop backend for this operating
// system and session, and starts private virtual X displays (Xvfb, Xorg with
// the dummy driver) for headless use and for tests.
package platform

import (
	"errors"

	"github.com/guiagent/guiagent/internal/geom"
)

// Options selects the desktop Open connects to.
type Options struct {
	// Display is the X display to use (config fills it from --display or
	// $DISPLAY); "" means none is known, so Open starts a private Xvfb when
	// VirtualDisplay or ForceVirtual asks for one, else fails with
	// ErrNoDisplay. Ignored outside X11.
	Display string
	// XAuthority is the X authority file of Display (config fills it from
	// $XAUTHORITY or ~/.Xauthority). Ignored outside X11.
	XAuthority string
	// VirtualDisplay, when non-zero, is the size of a private Xvfb that Open
	// starts when no display is reachable (or always, with ForceVirtual).
	VirtualDisplay geom.Size
	// ForceVirtual starts a private Xvfb even when a display is reachable. Its
	// size is VirtualDisplay, or 1280x800 when that is zero.
	ForceVirtual bool
	// VNC, when set ("host:port"), drives that remote desktop over VNC instead
	// of the local one, on every operating system; the X11 settings above are
	// then ignored.
	VNC string
	// VNCPassword is the password for VNC Authentication; "" means none.
	VNCPassword string
	// Accessibility is GUI_AGENT_ACCESSIBILITY: with auto or on the X11
	// backend gets an AT-SPI2 client as its element source (on also sets
	// org.a11y.Status.IsEnabled); off or "" gives it none. On Windows (UI
	// Automation) and macOS (AX) the backend is its own element source;
	// off turns it off.
	Accessibility string
	// SessionBus and AccessibilityBus are the D-Bus session bus address and
	// AT_SPI_BUS_ADDRESS (config fills them from the environment).
	SessionBus, AccessibilityBus string
}

// ErrNoDisplay is returned by Open when no display is reachable and no
// virtual display was requested.
var ErrNoDisplay = errors.New("no X display is reachable")
