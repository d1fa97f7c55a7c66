//go:build windows

package trace

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock on f's first byte without waiting.
func lockFile(f *os.File) bool {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol) == nil
}

// lockedByOther reports whether f's first byte is locked through another handle.
func lockedByOther(f *os.File) bool {
	var ol windows.Overlapped
	h := windows.Handle(f.Fd())
	err := windows.LockFileEx(h, windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if err == nil {
		windows.UnlockFileEx(h, 0, 1, 0, &ol)
		return false
	}
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}
