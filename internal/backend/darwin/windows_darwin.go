package darwin

import (
	"context"
	"errors"
	"unsafe"
)

// ActiveWindowTitle names the frontmost ordinary window as "title — App", or
// just the application when macOS hides the title (it does for processes
// without the Screen Recording permission). It returns "" when no window is
// on screen.
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	a, err := b.apiReady()
	if err != nil {
		return "", err
	}
	list := a.CGWindowListCopyWindowInfo(windowListOnScreenOnly|windowListExcludeDesktopElements, 0)
	if list == 0 {
		return "", errors.New("macOS: CGWindowListCopyWindowInfo returned nothing: run guiagent inside a logged-in GUI session")
	}
	defer a.CFRelease(list)
	n := a.CFArrayGetCount(list)
	ws := make([]windowInfo, 0, n)
	for i := range n {
		d := a.CFArrayGetValueAtIndex(list, i)
		if d == 0 || a.CFGetTypeID(d) != a.CFDictionaryGetTypeID() {
			continue
		}
		var w windowInfo
		layer, ok := a.cfInt(a.CFDictionaryGetValue(d, a.kCGWindowLayer))
		if !ok {
			continue
		}
		w.layer = int(layer)
		w.owner = a.cfString(a.CFDictionaryGetValue(d, a.kCGWindowOwnerName))
		w.name = a.cfString(a.CFDictionaryGetValue(d, a.kCGWindowName))
		if a.kCGWindowAlpha != 0 {
			w.alpha, w.hasAlpha = a.cfFloat(a.CFDictionaryGetValue(d, a.kCGWindowAlpha))
		}
		if a.kCGWindowBounds != 0 {
			if bd := a.CFDictionaryGetValue(d, a.kCGWindowBounds); bd != 0 {
				var r cgRect
				if a.CGRectMakeWithDictionaryRepresentation(bd, &r) {
					w.w, w.h, w.hasBounds = r.W, r.H, true
				}
			}
		}
		ws = append(ws, w)
	}
	return activeWindowTitle(ws), nil
}

// cfString converts a CFStringRef to Go; "" for 0 or a non-string.
func (a *api) cfString(s uintptr) string {
	if s == 0 || a.CFGetTypeID(s) != a.CFStringGetTypeID() {
		return ""
	}
	size := a.CFStringGetMaximumSizeForEncoding(a.CFStringGetLength(s), cfStringUTF8) + 1
	if size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	if !a.CFStringGetCString(s, &buf[0], size, cfStringUTF8) {
		return ""
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

// cfInt reads a CFNumberRef as an int64.
func (a *api) cfInt(n uintptr) (int64, bool) {
	if n == 0 || a.CFGetTypeID(n) != a.CFNumberGetTypeID() {
		return 0, false
	}
	var v int64
	ok := a.CFNumberGetValue(n, cfNumberSInt64, unsafe.Pointer(&v))
	return v, ok
}

// cfFloat reads a CFNumberRef as a float64.
func (a *api) cfFloat(n uintptr) (float64, bool) {
	if n == 0 || a.CFGetTypeID(n) != a.CFNumberGetTypeID() {
		return 0, false
	}
	var v float64
	ok := a.CFNumberGetValue(n, cfNumberFloat64, unsafe.Pointer(&v))
	return v, ok
}
