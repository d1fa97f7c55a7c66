package windows

import (
	"context"
	"unsafe"

	win "golang.org/x/sys/windows"
)

// ActiveWindowTitle returns the title of the foreground window, or "" when no
// window has focus (the desktop, or the secure desktop is active) or the
// window has no title.
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) {
	if err := b.ready(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	hwnd := win.GetForegroundWindow()
	if hwnd == 0 {
		return "", nil
	}
	n, _, _ := procGetWindowTextLengthW.Call(uintptr(hwnd))
	if n == 0 {
		return "", nil
	}
	buf := make([]uint16, n+1)
	got, _, e := procGetWindowTextW.Call(uintptr(hwnd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if got == 0 {
		if errno, ok := e.(win.Errno); ok && errno != 0 {
			return "", callErr("GetWindowTextW", e)
		}
		return "", nil
	}
	return win.UTF16ToString(buf[:got]), nil
}
