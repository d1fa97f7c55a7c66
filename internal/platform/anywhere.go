package platform

import (
	"context"
	"os/exec"
	"path/filepath"

	"github.com/guiagent/guiagent/internal/backend/android"
	"github.com/guiagent/guiagent/internal/backend/browser"
	"github.com/guiagent/guiagent/internal/backend/harmony"
	"github.com/guiagent/guiagent/internal/backend/ios"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// anywhere are the backends that run on every system: what they drive is
// not this machine's desktop (a remote desktop, a browser, a phone).
var anywhere = map[Backend]func(context.Context, Options) (desktop.Screen, func() error, error){
	VNC:     openVNC,
	Browser: openBrowser,
	Android: openAndroid,
	IOS:     openIOS,
	Harmony: openHarmony,
}

// opened is a backend Open returned, with its Close, or the error.
func opened[B desktop.Screen](b B, err error) (desktop.Screen, func() error, error) {
	if err != nil {
		return nil, nil, err
	}
	return b, b.Close, nil
}

// IOSOptionsOf is the ios package's options for o.
func IOSOptionsOf(o Options) ios.Options { return ios.Options{URL: o.IOS.URL} }

// openIOS reaches WebDriverAgent and creates the session.
func openIOS(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	return opened(ios.Open(ctx, IOSOptionsOf(o)))
}

// HarmonyOptionsOf is the harmony package's options for o.
func HarmonyOptionsOf(o Options) harmony.Options {
	h := o.Harmony
	return harmony.Options{HDC: h.HDC, HDCSetting: h.HDCSetting, Target: h.Target}
}

// openHarmony finds hdc and the device.
func openHarmony(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	return opened(harmony.Open(ctx, HarmonyOptionsOf(o)))
}

// BrowserOptionsOf is the browser package's options for o: the profile
// kept in the state folder unless isolated, downloads into it too.
func BrowserOptionsOf(o Options) browser.Options {
	b := o.Browser
	bo := browser.Options{Path: b.Path, URL: b.URL, AllowRemote: b.AllowRemote, Headed: b.Headed, Isolated: b.Isolated,
		Viewport: b.Viewport, Dialogs: b.Dialogs, AskDialog: b.Ask, UploadDirs: b.Files, UploadVar: b.FilesSetting,
		DownloadDir: b.DownloadDir, UserAgent: b.UserAgent, SameTab: b.SameTab}
	if !b.Isolated && o.StateDir != "" {
		bo.ProfileDir = filepath.Join(o.StateDir, "browser-profile")
	}
	if bo.DownloadDir == "" && o.StateDir != "" {
		bo.DownloadDir = filepath.Join(o.StateDir, "downloads")
	}
	return bo
}

// openBrowser launches (or attaches to) the browser and opens its page.
func openBrowser(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	return opened(browser.Open(ctx, BrowserOptionsOf(o)))
}

// AndroidOptionsOf is the android package's options for o: adb is started
// when nothing answers at a local address and the program is on PATH, as
// adb itself does.
func AndroidOptionsOf(o Options) android.Options {
	ao := android.Options{ADB: o.Android.ADB, Serial: o.Android.Serial}
	if p, err := exec.LookPath("adb"); err == nil {
		ao.ADBPath = p
	}
	return ao
}

// openAndroid connects to the phone through the adb server.
func openAndroid(ctx context.Context, o Options) (desktop.Screen, func() error, error) {
	return opened(android.Open(ctx, AndroidOptionsOf(o)))
}

// SharedBrowser is one browser whose contexts are the desktops of a fleet:
// each MCP session gets a browser context of its own (cookies, storage and
// cache apart) in one browser process, not a browser per session.
type SharedBrowser struct{ b *browser.Browser }

// LaunchSharedBrowser launches (or attaches to) the browser o configures.
func LaunchSharedBrowser(ctx context.Context, o Options) (*SharedBrowser, error) {
	bo := BrowserOptionsOf(o)
	bo.ProfileDir = "" // contexts keep nothing between sessions
	bo.Isolated = true
	b, err := browser.Launch(ctx, bo)
	if err != nil {
		return nil, err
	}
	return &SharedBrowser{b: b}, nil
}

// Open opens a new browser context with a viewport of size, as a desktop;
// the function it returns disposes of the context.
func (s *SharedBrowser) Open(ctx context.Context, size geom.Size) (desktop.Screen, func() error, error) {
	return opened(s.b.NewContext(ctx, size))
}

// Close closes the browser (a browser it attached to is left running).
func (s *SharedBrowser) Close() error { return s.b.Close() }
