package windows

import (
	"errors"
	"fmt"
	"syscall"

	win "golang.org/x/sys/windows"
)

// Win32 entry points, loaded on first use from the system directory.
var (
	user32   = win.NewLazySystemDLL("user32.dll")
	gdi32    = win.NewLazySystemDLL("gdi32.dll")
	kernel32 = win.NewLazySystemDLL("kernel32.dll")
	shcore   = win.NewLazySystemDLL("shcore.dll")

	procSetProcessDpiAwarenessContext       = user32.NewProc("SetProcessDpiAwarenessContext")
	procGetThreadDpiAwarenessContext        = user32.NewProc("GetThreadDpiAwarenessContext")
	procGetAwarenessFromDpiAwarenessContext = user32.NewProc("GetAwarenessFromDpiAwarenessContext")
	procEnumDisplayMonitors                 = user32.NewProc("EnumDisplayMonitors")
	procGetMonitorInfoW                     = user32.NewProc("GetMonitorInfoW")
	procGetSystemMetrics                    = user32.NewProc("GetSystemMetrics")
	procSendInput                           = user32.NewProc("SendInput")
	procGetCursorPos                        = user32.NewProc("GetCursorPos")
	procSetCursorPos                        = user32.NewProc("SetCursorPos")
	procGetWindowTextW                      = user32.NewProc("GetWindowTextW")
	procGetWindowTextLengthW                = user32.NewProc("GetWindowTextLengthW")
	procGetDC                               = user32.NewProc("GetDC")
	procReleaseDC                           = user32.NewProc("ReleaseDC")
	procVkKeyScanW                          = user32.NewProc("VkKeyScanW")
	procMapVirtualKeyW                      = user32.NewProc("MapVirtualKeyW")
	procOpenClipboard                       = user32.NewProc("OpenClipboard")
	procCloseClipboard                      = user32.NewProc("CloseClipboard")
	procEmptyClipboard                      = user32.NewProc("EmptyClipboard")
	procGetClipboardData                    = user32.NewProc("GetClipboardData")
	procSetClipboardData                    = user32.NewProc("SetClipboardData")
	procIsClipboardFormatAvailable          = user32.NewProc("IsClipboardFormatAvailable")

	procGetDpiForMonitor = shcore.NewProc("GetDpiForMonitor")

	procCreateCompatibleDC     = gdi32.NewProc("CreateCompatibleDC")
	procCreateCompatibleBitmap = gdi32.NewProc("CreateCompatibleBitmap")
	procSelectObject           = gdi32.NewProc("SelectObject")
	procBitBlt                 = gdi32.NewProc("BitBlt")
	procGetDIBits              = gdi32.NewProc("GetDIBits")
	procDeleteObject           = gdi32.NewProc("DeleteObject")
	procDeleteDC               = gdi32.NewProc("DeleteDC")

	procGlobalAlloc  = kernel32.NewProc("GlobalAlloc")
	procGlobalFree   = kernel32.NewProc("GlobalFree")
	procGlobalLock   = kernel32.NewProc("GlobalLock")
	procGlobalUnlock = kernel32.NewProc("GlobalUnlock")
	procGlobalSize   = kernel32.NewProc("GlobalSize")
)

// requiredProcs must exist for Start to succeed: Windows 10 version 1703
// (the first with SetProcessDpiAwarenessContext) and later have them.
var requiredProcs = []*win.LazyProc{
	procSetProcessDpiAwarenessContext, procGetThreadDpiAwarenessContext, procGetAwarenessFromDpiAwarenessContext,
	procGetDpiForMonitor,
	procEnumDisplayMonitors, procGetMonitorInfoW, procGetSystemMetrics, procSendInput,
	procGetCursorPos, procSetCursorPos, procGetWindowTextW, procGetWindowTextLengthW,
	procGetDC, procReleaseDC, procVkKeyScanW, procMapVirtualKeyW,
	procOpenClipboard, procCloseClipboard, procEmptyClipboard, procGetClipboardData,
	procSetClipboardData, procIsClipboardFormatAvailable,
	procCreateCompatibleDC, procCreateCompatibleBitmap, procSelectObject, procBitBlt,
	procGetDIBits, procDeleteObject, procDeleteDC,
	procGlobalAlloc, procGlobalFree, procGlobalLock, procGlobalUnlock, procGlobalSize,
}

// GetSystemMetrics indexes.
const (
	smXVirtualScreen  = 76
	smYVirtualScreen  = 77
	smCXVirtualScreen = 78
	smCYVirtualScreen = 79
)

// winRect is RECT.
type winRect struct{ Left, Top, Right, Bottom int32 }

// winPoint is POINT.
type winPoint struct{ X, Y int32 }

// callErr names a failed Win32 call with the error it set, or a generic
// message when it set none.
func callErr(name string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) && errno == 0 {
		return fmt.Errorf("windows %s failed", name)
	}
	return fmt.Errorf("windows %s: %w", name, err)
}

func getSystemMetrics(index int) int {
	r, _, _ := procGetSystemMetrics.Call(uintptr(index))
	return int(int32(r))
}

// virtualScreen returns the bounding rectangle of all monitors in physical
// pixels (per-monitor-aware processes see physical coordinates).
func virtualScreen() physRect {
	return physRect{
		X: getSystemMetrics(smXVirtualScreen), Y: getSystemMetrics(smYVirtualScreen),
		W: getSystemMetrics(smCXVirtualScreen), H: getSystemMetrics(smCYVirtualScreen),
	}
}
