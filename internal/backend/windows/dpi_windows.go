package windows

import (
	"errors"
	"fmt"
	"sync"

	win "golang.org/x/sys/windows"
)

// DPI_AWARENESS_CONTEXT handles (negative pseudo-handles).
var (
	dpiContextPerMonitorV1 = ^uintptr(2) // -3
	dpiContextPerMonitorV2 = ^uintptr(3) // -4
)

// dpiAwarenessPerMonitor is DPI_AWARENESS_PER_MONITOR_AWARE.
const dpiAwarenessPerMonitor = 2

var (
	dpiOnce sync.Once
	dpiMode string
	dpiErr  error
)

// ensurePerMonitorDPI makes the process per-monitor DPI aware, once per
// process (Windows allows setting it only once), and returns the mode in
// effect: "per-monitor-v2" or "per-monitor".
func ensurePerMonitorDPI() (string, error) {
	dpiOnce.Do(func() { dpiMode, dpiErr = setPerMonitorDPI() })
	return dpiMode, dpiErr
}

// setPerMonitorDPI asks for per-monitor awareness version 2, else version 1
// (Wine 8 has only version 1). Start has checked that
// SetProcessDpiAwarenessContext exists (Windows 10 version 1703 and later).
func setPerMonitorDPI() (string, error) {
	r, _, err := procSetProcessDpiAwarenessContext.Call(dpiContextPerMonitorV2)
	if r != 0 {
		return "per-monitor-v2", nil
	}
	if !errors.Is(err, win.ERROR_ACCESS_DENIED) {
		if r, _, _ := procSetProcessDpiAwarenessContext.Call(dpiContextPerMonitorV1); r != 0 {
			return "per-monitor", nil
		}
	}
	// Already set (by a manifest or an earlier call): accept per-monitor.
	return currentAwareness(err)
}

// currentAwareness accepts a process that is already per-monitor aware and
// explains how to fix any other awareness.
func currentAwareness(setErr error) (string, error) {
	ctx, _, _ := procGetThreadDpiAwarenessContext.Call()
	a, _, _ := procGetAwarenessFromDpiAwarenessContext.Call(ctx)
	if int32(a) == dpiAwarenessPerMonitor {
		return "per-monitor", nil
	}
	return "", fmt.Errorf("windows: the process DPI awareness was already set to %s and cannot be changed to per-monitor (%v): "+
		"remove the dpiAware/dpiAwareness setting from the executable's manifest or the compatibility settings "+
		"(Properties > Compatibility > Change high DPI settings)", awarenessName(int32(a)), setErr)
}

func awarenessName(a int32) string {
	switch a {
	case 0:
		return "unaware"
	case 1:
		return "system-aware"
	case 2:
		return "per-monitor"
	}
	return fmt.Sprintf("awareness %d", a)
}
