package windows

import (
	"context"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	win "golang.org/x/sys/windows"
)

const (
	cfUnicodeText = 13 // CF_UNICODETEXT
	gmemMoveable  = 0x0002
	// clipboardAttempts and clipboardRetry bound the wait for another program
	// to close the clipboard.
	clipboardAttempts = 20
	clipboardRetry    = 25 * time.Millisecond
)

// openClipboard opens the clipboard on the calling OS thread, retrying while
// another program holds it. The caller has locked the OS thread and must call
// CloseClipboard.
func openClipboard(ctx context.Context) error {
	var lastErr error
	for range clipboardAttempts {
		r, _, e := procOpenClipboard.Call(0)
		if r != 0 {
			return nil
		}
		lastErr = e
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(clipboardRetry):
		}
	}
	return fmt.Errorf("windows OpenClipboard: another program kept the clipboard open for %v (%v): close clipboard managers or remote-desktop clipboard sync and retry",
		clipboardAttempts*clipboardRetry, lastErr)
}

// ReadClipboard returns the clipboard's text (CF_UNICODETEXT) with line breaks
// as "\n", or "" when it holds no text.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	if err := b.ready(); err != nil {
		return "", err
	}
	b.clipMu.Lock()
	defer b.clipMu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := openClipboard(ctx); err != nil {
		return "", err
	}
	defer procCloseClipboard.Call()
	if r, _, _ := procIsClipboardFormatAvailable.Call(cfUnicodeText); r == 0 {
		return "", nil
	}
	h, _, e := procGetClipboardData.Call(cfUnicodeText)
	if h == 0 {
		return "", callErr("GetClipboardData", e)
	}
	p, _, e := procGlobalLock.Call(h)
	if p == 0 {
		return "", callErr("GlobalLock", e)
	}
	defer procGlobalUnlock.Call(h)
	size, _, _ := procGlobalSize.Call(h)
	units := unsafe.Slice((*uint16)(globalPointer(p)), size/2)
	return fromClipboardText(win.UTF16ToString(units)), nil
}

// WriteClipboard replaces the clipboard's content with text as
// CF_UNICODETEXT, with line breaks as "\r\n" as Windows programs expect.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	if err := b.ready(); err != nil {
		return err
	}
	units, err := win.UTF16FromString(toClipboardText(text))
	if err != nil {
		return fmt.Errorf("windows clipboard: the text contains a NUL character, which Windows text cannot hold: remove it")
	}
	b.clipMu.Lock()
	defer b.clipMu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := openClipboard(ctx); err != nil {
		return err
	}
	defer procCloseClipboard.Call()
	if r, _, e := procEmptyClipboard.Call(); r == 0 {
		return callErr("EmptyClipboard", e)
	}
	h, _, e := procGlobalAlloc.Call(gmemMoveable, uintptr(len(units)*2))
	if h == 0 {
		return callErr("GlobalAlloc", e)
	}
	p, _, e := procGlobalLock.Call(h)
	if p == 0 {
		procGlobalFree.Call(h)
		return callErr("GlobalLock", e)
	}
	copy(unsafe.Slice((*uint16)(globalPointer(p)), len(units)), units)
	procGlobalUnlock.Call(h)
	// On success the system owns the memory; on failure it is still ours.
	if r, _, e := procSetClipboardData.Call(cfUnicodeText, h); r == 0 {
		procGlobalFree.Call(h)
		return callErr("SetClipboardData", e)
	}
	return nil
}

// globalPointer turns the address GlobalLock returned (memory outside the Go
// heap, valid until GlobalUnlock) into a pointer.
func globalPointer(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }
