package darwin

import (
	"context"
	"errors"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// Objective-C selectors used with the pasteboard.
var (
	selNew               = objc.RegisterName("new")
	selDrain             = objc.RegisterName("drain")
	selAlloc             = objc.RegisterName("alloc")
	selGeneralPasteboard = objc.RegisterName("generalPasteboard")
	selStringForType     = objc.RegisterName("stringForType:")
	selSetStringForType  = objc.RegisterName("setString:forType:")
	selClearContents     = objc.RegisterName("clearContents")
	selInitWithBytes     = objc.RegisterName("initWithBytes:length:encoding:")
	selUTF8String        = objc.RegisterName("UTF8String")
	selLengthOfBytes     = objc.RegisterName("lengthOfBytesUsingEncoding:")
)

// withPool runs fn on a locked OS thread inside an autorelease pool, so that
// the autoreleased objects AppKit returns are freed.
func withPool(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pool := objc.ID(objc.GetClass("NSAutoreleasePool")).Send(selNew)
	if pool != 0 {
		defer pool.Send(selDrain)
	}
	return fn()
}

// pasteboard returns the general pasteboard and the plain-text type.
func (b *Backend) pasteboard() (pb, textType objc.ID, err error) {
	a, err := b.apiReady()
	if err != nil {
		return 0, 0, err
	}
	cls := objc.GetClass("NSPasteboard")
	if cls == 0 {
		return 0, 0, errors.New("macOS clipboard: AppKit's NSPasteboard class is not loaded")
	}
	pb = objc.ID(cls).Send(selGeneralPasteboard)
	if pb == 0 {
		return 0, 0, errors.New("macOS clipboard: no general pasteboard: run guiagent inside a logged-in GUI session")
	}
	if addr, err := purego.Dlsym(a.appKit, "NSPasteboardTypeString"); err == nil && addr != 0 {
		textType = objc.ID(deref(addr))
	}
	if textType == 0 {
		textType = nsString("public.utf8-plain-text")
		if textType == 0 {
			return 0, 0, errors.New("macOS clipboard: cannot create an NSString")
		}
	}
	return pb, textType, nil
}

// nsString returns an autoreleased-pool-owned NSString copy of s (the caller
// must be inside withPool), or 0.
func nsString(s string) objc.ID {
	cls := objc.GetClass("NSString")
	if cls == 0 {
		return 0
	}
	bs := []byte(s)
	var p unsafe.Pointer
	if len(bs) > 0 {
		p = unsafe.Pointer(&bs[0])
	}
	str := objc.ID(cls).Send(selAlloc).Send(selInitWithBytes, p, uint(len(bs)), nsUTF8StringEncoding)
	runtime.KeepAlive(bs)
	if str == 0 {
		return 0
	}
	return str.Send(objc.RegisterName("autorelease"))
}

// ReadClipboard returns the text on the general pasteboard, or "" when it
// holds no text.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	b.clipMu.Lock()
	defer b.clipMu.Unlock()
	var out string
	err := withPool(func() error {
		pb, typ, err := b.pasteboard()
		if err != nil {
			return err
		}
		str := pb.Send(selStringForType, typ)
		if str == 0 {
			return nil
		}
		n := objc.Send[uint](str, selLengthOfBytes, nsUTF8StringEncoding)
		p := objc.Send[*byte](str, selUTF8String)
		if p == nil || n == 0 {
			return nil
		}
		out = string(unsafe.Slice(p, n))
		return nil
	})
	return out, err
}

// WriteClipboard replaces the general pasteboard's contents with text.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.clipMu.Lock()
	defer b.clipMu.Unlock()
	return withPool(func() error {
		pb, typ, err := b.pasteboard()
		if err != nil {
			return err
		}
		str := nsString(text)
		if str == 0 {
			return errors.New("macOS clipboard: cannot create an NSString from the text (is it valid UTF-8?)")
		}
		pb.Send(selClearContents)
		if !objc.Send[bool](pb, selSetStringForType, str, typ) {
			return errors.New("macOS clipboard: NSPasteboard refused the text (setString:forType: returned NO); another app may own the pasteboard, try again")
		}
		return nil
	})
}
