// Package platform picks and starts the desktop backend for this operating
// system and session, and starts private virtual X displays (Xvfb, Xorg with
// the dummy driver) for headless use and for tests. Which backend a session
// gets is one table (select.go): Select says which and why, Open starts it.
package platform

import (
	"context"
	"errors"

	"github.com/guiagent/guiagent/internal/geom"
)

// Backend names a desktop backend Open can start.
type Backend string

// The backends. Auto (or "") lets Select decide from the session.
const (
	Auto    Backend = "auto"
	X11     Backend = "x11"
	Wayland Backend = "wayland" // native, on wlroots compositors (sway, Hyprland, ...)
	Portal  Backend = "portal"  // xdg-desktop-portal over D-Bus (GNOME, KDE)
	VNC     Backend = "vnc"
	Windows Backend = "windows"
	Darwin  Backend = "darwin"
	Browser Backend = "browser" // a Chromium page over the DevTools protocol, on any system
	Android Backend = "android" // a phone over adb, on any system
	IOS     Backend = "ios"     // an iPhone or iPad through WebDriverAgent, on any system
	Harmony Backend = "harmony" // a HarmonyOS device through hdc, on any system
)

// Phone reports whether b drives a phone (a touch screen with apps).
func (b Backend) Phone() bool { return b == Android || b == IOS || b == Harmony }

// Session is what the environment says about the desktop session; config
// fills it from the variables named in the comments.
type Session struct {
	Type           string // $XDG_SESSION_TYPE: x11, wayland, tty, ...
	WaylandDisplay string // $WAYLAND_DISPLAY, e.g. wayland-1
	XDisplay       string // $DISPLAY, or --display, e.g. :0
	CurrentDesktop string // $XDG_CURRENT_DESKTOP, e.g. GNOME, KDE, sway
	RuntimeDir     string // $XDG_RUNTIME_DIR, where the Wayland socket is
	// SwaySock ($SWAYSOCK) and HyprlandSignature
	// ($HYPRLAND_INSTANCE_SIGNATURE) reach the compositor's IPC, which says
	// where windows are: the Wayland backend's element tree needs it.
	SwaySock, HyprlandSignature string
}

// Options selects the desktop Open connects to.
type Options struct {
	// Backend is the backend asked for (--backend); "" or Auto means the
	// one Select picks from Session.
	Backend Backend
	// BackendSetting begins the sentence that says which setting chose
	// Backend, ending in its name: "--backend " or "GUI_AGENT_BACKEND=" for
	// "--backend x11"; "" means "--backend ".
	BackendSetting string
	// Session is the desktop session guiagent runs in.
	Session Session
	// XAuthority is the X authority file of Session.XDisplay (config fills it
	// from $XAUTHORITY or ~/.Xauthority). X11 only.
	XAuthority string
	// VirtualDisplay, when non-zero, is the size of a private Xvfb that Open
	// starts when no display is reachable (or always, with ForceVirtual).
	VirtualDisplay geom.Size
	// ForceVirtual starts a private Xvfb even when a display is reachable. Its
	// size is VirtualDisplay, or 1280x800 when that is zero.
	ForceVirtual bool
	// VNC, when set ("host:port"), drives that remote desktop over VNC instead
	// of the local one, on every operating system.
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
	// StateDir is where backends keep what must outlive the process (the
	// portal's restore token, the browser's profile); StateSetting names its
	// setting in messages.
	StateDir, StateSetting string
	// Browser configures the browser backend; Android, IOS and Harmony the
	// phones'.
	Browser BrowserOptions
	Android AndroidOptions
	IOS     IOSOptions
	Harmony HarmonyOptions
}

// IOSOptions configure the iOS backend.
type IOSOptions struct {
	// URL is WebDriverAgent's address ("": http://127.0.0.1:8100).
	URL string
}

// HarmonyOptions configure the HarmonyOS backend.
type HarmonyOptions struct {
	// HDC is the hdc program ("": hdc on PATH), HDCSetting its setting's
	// name for messages; Target the device's connect key ("": the only one).
	HDC, HDCSetting, Target string
}

// BrowserOptions configure the browser backend.
type BrowserOptions struct {
	// Path is the program ("" finds chromium, chromium-browser or
	// google-chrome on PATH); URL a running browser's DevTools address to
	// attach to instead, refused off loopback unless AllowRemote.
	Path, URL   string
	AllowRemote bool
	// Headed shows the window; Isolated uses a temporary profile (else one
	// kept in StateDir/browser-profile); Viewport is in CSS pixels.
	Headed, Isolated bool
	Viewport         geom.Size
	// UserAgent is the user agent pages see ("" the browser's own);
	// SameTab keeps a page's new pages in its own tab.
	UserAgent string
	SameTab   bool
	// Dialogs is ask, accept or dismiss; Ask asks a person for "ask" (nil:
	// dismissed).
	Dialogs string
	Ask     func(ctx context.Context, kind, message string) (accept bool, text string, err error)
	// Files are the folders gui_upload may take files from; FilesSetting
	// names their setting in errors.
	Files        []string
	FilesSetting string
	// DownloadDir receives downloads ("": StateDir/downloads).
	DownloadDir string
}

// AndroidOptions configure the Android backend.
type AndroidOptions struct {
	// Serial names the device ("": the only one attached); ADB is the adb
	// server's host:port.
	Serial, ADB string
}

// ErrNoDisplay is returned by Open when no display is reachable and no
// virtual display was requested.
var ErrNoDisplay = errors.New("no desktop session is reachable")
