package windows_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/platform/winetest"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// TestConformanceUnderWine cross-compiles this package's tests for Windows and
// runs TestConformance (conformance_windows_test.go) under Wine on private X
// servers: one monitor at 100% and at 150% (LogPixels 144), and two monitors
// side by side (Xorg dummy) with the primary on the right, so that the left one
// has negative global coordinates.
func TestConformanceUnderWine(t *testing.T) {
	prefix := winetest.NewPrefix(t)
	exe := buildWindowsTest(t)
	runs := []struct {
		name string
		dpi  int
		dual bool
		// layout is what the Windows side must log as the backend's layout
		// (layout.describe), proving the X server and DPI took effect.
		layout string
		// skips are the subtests that may be skipped, for Wine-only reasons.
		skips []string
	}{
		{"OneMonitor100", 96, false, "0:1920x1080+0+0@1", singleSkips},
		{"OneMonitor150", 144, false, "0:1280x720+0+0@1.5", singleSkips},
		{"TwoMonitorsNegativeOrigin", 96, true, "0:1920x1080-1920+0@1 1:1920x1080+0+0@1", append(singleSkips, "Scroll")},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			var vd *platform.VirtualDisplay
			if r.dual {
				vd = startDualRightPrimary(t)
			} else {
				vd = xvfbtest.Start(t, 1920, 1080)
			}
			prefix.SetLogPixels(t, r.dpi)
			prefix.Stop(t) // new settings and a new desktop process on this display
			out := runUnderWine(t, prefix, vd.Display, exe, "-test.run", "^TestConformance$", "-test.v", "-test.count=1")
			if !strings.Contains(out, "layout "+r.layout) {
				t.Errorf("the Windows side did not report layout %q: the X server or the DPI setting did not take effect", r.layout)
			}
			checkSubtests(t, out, r.skips)
		})
	}
}

// singleSkips are the subtests conformance_windows_test.go skips under Wine on one monitor.
var singleSkips = []string{"MoveThenCursorPosition", "ModifierClick", "CancelMidAction"}

// startDualRightPrimary starts an Xorg dummy server with two monitors side by
// side and makes the right one primary.
func startDualRightPrimary(t *testing.T) *platform.VirtualDisplay {
	t.Helper()
	vd := xvfbtest.StartDual(t)
	// Wine 8.0 sees only the first monitor of the dummy driver until a client
	// has read every output's properties once (xrandr --verbose does).
	for _, args := range [][]string{{"--verbose"}, {"--output", "DUMMY1", "--primary"}} {
		cmd := exec.Command("xrandr", args...)
		cmd.Env = append(os.Environ(), "DISPLAY="+vd.Display)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("xrandr %s on %s: %v: %s", strings.Join(args, " "), vd.Display, err, out)
		}
	}
	return vd
}

// buildWindowsTest cross-compiles this package's test binary for Windows.
func buildWindowsTest(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "windows.test.exe")
	cmd := exec.Command("go", "test", "-c", "-o", exe, ".")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cross-compile the Windows test binary: %v\n%s", err, out)
	}
	return exe
}

// runUnderWine runs exe under Wine on display, logs its output and fails the
// test when it fails.
func runUnderWine(t *testing.T, p *winetest.Prefix, display, exe string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := p.Command(ctx, display, exe, args...)
	start := time.Now()
	out, err := winetest.RunLogged(cmd)
	p.Stop(t)
	t.Logf("wine %s %s (%v):\n%s", filepath.Base(exe), strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("the Windows test binary failed under Wine: %v (output above)", err)
	}
	return out
}

var subtestLine = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP): TestConformance/(\S+)`)

// checkSubtests checks that every conformance subtest ran, and that a skipped
// one was skipped for a Wine-only reason; it logs the table.
func checkSubtests(t *testing.T, out string, skips []string) {
	t.Helper()
	var table strings.Builder
	passed := 0
	for _, m := range subtestLine.FindAllStringSubmatch(out, -1) {
		status, name := m[1], m[2]
		fmt.Fprintf(&table, "  %-24s %s\n", name, status)
		switch status {
		case "PASS":
			passed++
		case "SKIP":
			reason := regexp.MustCompile(`=== RUN\s+TestConformance/` + name + `\n\s+\S+: skipped under Wine [^:]+: (.+)`).FindStringSubmatch(out)
			if !slices.Contains(skips, name) || reason == nil {
				t.Errorf("subtest %s was skipped; only %v may be, and only with a Wine-only reason", name, skips)
			}
		case "FAIL":
			t.Errorf("subtest %s failed under Wine", name)
		}
	}
	t.Logf("conformance subtests under Wine:\n%s", table.String())
	if passed < 11 {
		t.Errorf("%d conformance subtests passed under Wine, want at least 11", passed)
	}
}

// TestElementsUnderWine runs TestElements (elements_windows_test.go) under
// Wine at 100% and 150%: a form with Win32 buttons, an edit control and a
// label read through UI Automation (Wine's uiautomationcore over its MSAA
// proxies of the standard controls).
func TestElementsUnderWine(t *testing.T) {
	prefix := winetest.NewPrefix(t)
	exe := buildWindowsTest(t)
	for _, r := range []struct {
		name string
		dpi  int
	}{{"100", 96}, {"150", 144}} {
		t.Run(r.name, func(t *testing.T) {
			vd := xvfbtest.Start(t, 1920, 1080)
			prefix.SetLogPixels(t, r.dpi)
			prefix.Stop(t)
			out := runUnderWine(t, prefix, vd.Display, exe, "-test.run", "^TestElements$", "-test.v", "-test.count=1")
			checkElementChecks(t, out)
		})
	}
}

var uiaCheckLine = regexp.MustCompile(`uia-check (\S+) (ok|FAIL)`)

// checkElementChecks fails on a failed check and requires one of two sets:
// the whole walk (a Wine with IUIAutomation), or, under Wine 8.0, which has
// none, the clean "not available" path.
func checkElementChecks(t *testing.T, out string) {
	t.Helper()
	got := map[string]string{}
	for _, m := range uiaCheckLine.FindAllStringSubmatch(out, -1) {
		got[m[1]] = m[2]
		if m[2] == "FAIL" {
			t.Errorf("check %s failed under Wine (output above)", m[1])
		}
	}
	full := []string{"snapshot", "window", "focused-window", "button-ok", "box-ok", "button-cancel", "box-cancel",
		"edit", "edit-value", "edit-name-from-label", "edit-focused", "edit-box", "set-value", "invoke", "set-value-unsupported", "max-elements", "stale-handle"}
	unavailable := []string{"unavailable", "unavailable-again", "backend-still-works"}
	all := func(names []string) bool {
		for _, n := range names {
			if got[n] != "ok" {
				return false
			}
		}
		return true
	}
	switch {
	case all(full):
		t.Logf("UI Automation walked the form under Wine: %d checks passed", len(full))
	case all(unavailable) && strings.Contains(out, "Wine 8."):
		t.Logf("Wine 8 has no IUIAutomation: the snapshot failed with the reason, at once, and the backend kept working")
	default:
		t.Errorf("neither the full set of element checks %v nor (under Wine 8) the unavailable set %v passed; got %v", full, unavailable, got)
	}
}
