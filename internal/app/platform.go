package app

import (
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform"
)

// PlatformOptions is the one translation of a configuration into the
// options platform.Open picks and starts a backend from: app, doctor and
// release open their desktop through it (TestOnePlatformOptions holds every
// other platform.Options literal out). A display given by flag or Go option
// (--display :1) asks for X11 when the backend is auto.
func PlatformOptions(c config.Config) platform.Options {
	o := platform.Options{
		Backend:        platform.Backend(c.Backend),
		BackendSetting: backendSetting(c),
		Session: platform.Session{Type: c.Session.Type, WaylandDisplay: c.Session.WaylandDisplay, XDisplay: c.XDisplay,
			CurrentDesktop: c.Session.CurrentDesktop, RuntimeDir: c.Session.RuntimeDir,
			SwaySock: c.Session.SwaySock, HyprlandSignature: c.Session.HyprlandSignature},
		XAuthority:     c.XAuthority,
		VirtualDisplay: c.VirtualDisplay,
		VNC:            c.VNC, VNCPassword: c.VNCPassword,
		Accessibility: c.Accessibility, SessionBus: c.SessionBus, AccessibilityBus: c.AccessibilityBus,
		StateDir: c.StateDir, StateSetting: config.Var("StateDir"),
		Browser: platform.BrowserOptions{Path: c.BrowserPath, URL: c.BrowserURL, AllowRemote: c.AllowRemote,
			Headed: c.BrowserHeaded, Isolated: c.BrowserIsolated, Viewport: c.BrowserViewport, Dialogs: c.BrowserDialogs,
			UserAgent: c.BrowserUserAgent, SameTab: c.BrowserSameTab,
			Files: c.BrowserFiles, FilesSetting: config.Var("BrowserFiles")},
		Android: platform.AndroidOptions{Serial: c.Device, ADB: c.ADB},
		IOS:     platform.IOSOptions{URL: c.WDAURL},
		Harmony: platform.HarmonyOptions{HDC: c.HDC, HDCSetting: config.Var("HDC"), Target: c.Device},
	}
	if o.Backend == "" || o.Backend == platform.Auto {
		switch c.SourceOf("XDisplay") {
		case config.SourceFlag, config.SourceOptions:
			o.Backend, o.BackendSetting = platform.X11, "--display "+c.XDisplay+" picks "
		}
	}
	return o
}

// backendSetting names where c's backend came from, as the start of a
// sentence ending in the backend's name: "--backend x11", "GUI_AGENT_BACKEND=x11".
func backendSetting(c config.Config) string {
	switch c.SourceOf("Backend") {
	case config.SourceFlag:
		return "--backend "
	case config.SourceOptions:
		return "Options.Backend "
	}
	return config.Var("Backend") + "="
}

// privateX11Options are the options of a private X display this process
// started (a desktop per MCP session, bench): X11 on that display, nothing
// from the user's session.
func privateX11Options(display string) platform.Options {
	return platform.Options{Backend: platform.X11, BackendSetting: "a private display: ", Session: platform.Session{XDisplay: display}}
}

// BenchOptions are the options of `guiagent bench capture`: X11 on display
// (with xauthority), or a private Xvfb of size when it is not zero.
func BenchOptions(display, xauthority string, size geom.Size) platform.Options {
	o := privateX11Options(display)
	o.XAuthority = xauthority
	if size != (geom.Size{}) {
		o.VirtualDisplay, o.ForceVirtual = size, true
	}
	return o
}
