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

// dpiAwarenessPerMonitor is DPI_AWARENESS_PER_MONITOR_AWARE, and
// processPerMonitorDPIAware PROCESS_PER_MONITOR_DPI_AWARE.
const (
	dpiAwarenessPerMonitor    = 2
	processPerMonitorDPIAware = 2
	hresultAccessDenied       = 0x80070005
)

var (
	dpiOnce sync.Once
	dpiMode string
	dpiErr  error
)

// ensurePerMonitorDPI makes the process per-monitor DPI aware, once per
// process (Windows allows setting it only once), and returns the mode in
// effect: "per-monitor-v2", "per-monitor", or "system" on Windows 7, which
// has no per-monitor DPI.
func ensurePerMonitorDPI() (string, error) {
	dpiOnce.Do(func() { dpiMode, dpiErr = setPerMonitorDPI() })
	return dpiMode, dpiErr
}

func setPerMonitorDPI() (string, error) {
	if procSetProcessDpiAwarenessContext.Find() == nil { // Windows 10 1703+
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
	if procSetProcessDpiAwareness.Find() == nil { // Windows 8.1+
		hr, _, _ := procSetProcessDpiAwareness.Call(processPerMonitorDPIAware)
		if hr == 0 {
			return "per-monitor", nil
		}
		if uint32(hr) == hresultAccessDenied {
			return currentAwareness(win.ERROR_ACCESS_DENIED)
		}
		return "", fmt.Errorf("windows SetProcessDpiAwareness: HRESULT 0x%08x", uint32(hr))
	}
	// Windows 7: one DPI for all monitors; system awareness means physical pixels.
	if procSetProcessDPIAware.Find() == nil {
		_, _, _ = procSetProcessDPIAware.Call()
	}
	return "system", nil
}

// currentAwareness accepts a process that is already per-monitor aware and
// explains how to fix any other awareness.
func currentAwareness(setErr error) (string, error) {
	if procGetThreadDpiAwarenessContext.Find() == nil && procGetAwarenessFromDpiAwarenessContext.Find() == nil {
		ctx, _, _ := procGetThreadDpiAwarenessContext.Call()
		a, _, _ := procGetAwarenessFromDpiAwarenessContext.Call(ctx)
		if int32(a) == dpiAwarenessPerMonitor {
			return "per-monitor", nil
		}
		return "", fmt.Errorf("windows: the process DPI awareness was already set to %s and cannot be changed to per-monitor (%v): "+
			"remove the dpiAware/dpiAwareness setting from the executable's manifest or the compatibility settings "+
			"(Properties > Compatibility > Change high DPI settings)", awarenessName(int32(a)), setErr)
	}
	return "", fmt.Errorf("windows: cannot make the process per-monitor DPI aware: %v", setErr)
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
