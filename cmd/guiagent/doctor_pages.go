package main

import (
	"context"
	"strings"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/backend/android"
	"github.com/guiagent/guiagent/internal/backend/browser"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/platform"
)

// checkBrowser says which browser the browser backend launches and its
// version, or attaches to; with another backend it is a row of --all.
func checkBrowser(c config.Config, cs *checks) {
	chosen := c.Backend == string(platform.Browser)
	if c.BrowserURL != "" {
		if chosen {
			cs.add("ok", "browser", "attaches to the browser at "+c.BrowserURL+" (only the tabs guiagent opens are touched)", "")
		}
		return
	}
	path, version, err := browser.Find(c.BrowserPath)
	switch {
	case err != nil && chosen:
		cs.add("FAIL", "browser", err.Error(), "apt-get install chromium, or pass --browser-path to Chrome or Chromium")
	case err != nil:
		cs.addExtra("info", "browser", "none for --backend browser: "+err.Error())
	case chosen:
		cs.add("ok", "browser", path+": "+version, "")
	default:
		cs.addExtra("ok", "browser", path+": "+version+" (for --backend browser)")
	}
}

// checkAndroid reports the adb server, its devices and the phone the
// Android backend would drive, when it is the backend chosen.
func checkAndroid(ctx context.Context, c config.Config, cs *checks) {
	if c.Backend != string(platform.Android) {
		return
	}
	r := android.Check(ctx, platform.AndroidOptionsOf(app.PlatformOptions(c)))
	level, fix := "ok", ""
	if !r.OK() {
		level, fix = "FAIL", "see the problem above"
	}
	cs.add(level, "android", strings.Join(r.Lines(), "; "), fix)
}
