package platform

import (
	"context"
	"os/exec"
	"path/filepath"

	"github.com/guiagent/guiagent/internal/backend/android"
	"github.com/guiagent/guiagent/internal/backend/browser"
	"github.com/guiagent/guiagent/internal/desktop"
)

// anywhere are the backends that run on every system: what they drive is
// not this machine's desktop (a remote desktop, a browser, a phone).
var anywhere = map[Backend]func(context.Context, Options) (desktop.Screen, func() error, error){
	VNC:     openVNC,
	Browser: openBrowser,
	Android: openAndroid,
}

// BrowserOptionsOf is the browser package's options for o: the profile
// kept in the state folder unless isolated, downloads into it too.
func BrowserOptionsOf(o Options) browser.Options {
	b := o.Browser
	bo := browser.Options{Path: b.Path, URL: b.URL, AllowRemote: b.AllowRemote, Headed: b.Headed, Isolated: b.Isolated,
		Viewport: b.Viewport, Dialogs: b.Dialogs, AskDialog: b.Ask, UploadDirs: b.Files, UploadVar: b.FilesSetting,
		DownloadDir: b.DownloadDir}
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
	b, err := browser.Open(ctx, BrowserOptionsOf(o))
	if err != nil {
		return nil, nil, err
	}
	return b, b.Close, nil
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
	b, err := android.Open(ctx, AndroidOptionsOf(o))
	if err != nil {
		return nil, nil, err
	}
	return b, b.Close, nil
}
