package main

import (
	"context"
	"strings"

	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/backend/harmony"
	"github.com/guiagent/guiagent/internal/backend/ios"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/platform"
)

// checkPhones reports the iOS and HarmonyOS backends: with --backend ios,
// whether WebDriverAgent answers, its version, the device's name, iOS
// version, screen size and scale; with --backend harmony, hdc, the devices
// connected and the one it would drive. With another backend, whether hdc
// is on PATH is a row of --all.
func checkPhones(ctx context.Context, c config.Config, cs *checks) {
	po := app.PlatformOptions(c)
	switch c.Backend {
	case string(platform.IOS):
		r := ios.Check(ctx, platform.IOSOptionsOf(po))
		level, fix := "ok", ""
		if !r.OK() {
			level, fix = "FAIL", "see the problem above"
		}
		cs.add(level, "ios", strings.Join(r.Lines(), "; "), fix)
	case string(platform.Harmony):
		r := harmony.Check(ctx, platform.HarmonyOptionsOf(po))
		level, fix := "ok", ""
		switch {
		case r.NoHDC:
			level, fix = "FAIL", "install the HarmonyOS SDK's toolchains and put hdc on PATH, or set "+config.Var("HDC")
		case !r.OK():
			level, fix = "FAIL", "see the problem above"
		}
		cs.add(level, "harmony", strings.Join(r.Lines(), "; "), fix)
	default:
		if p, err := harmony.FindHDC(platform.HarmonyOptionsOf(po)); err != nil {
			cs.addExtra("info", "hdc", "none for --backend harmony: "+err.Error())
		} else {
			cs.addExtra("ok", "hdc", p+" (for --backend harmony)")
		}
	}
}
