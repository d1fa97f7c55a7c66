package darwin

import "unsafe"

// This file is untagged so that the signatures can be checked on every OS
// (see api_test.go); only the darwin build binds and calls them.

// api holds the framework functions and constants the backend calls. Optional
// entries are nil (or zero) when the running macOS does not export them.
type api struct {
	// CoreFoundation
	CFRelease                         func(ref uintptr)
	CFGetTypeID                       func(ref uintptr) uint
	CFStringGetTypeID                 func() uint
	CFNumberGetTypeID                 func() uint
	CFDictionaryGetTypeID             func() uint
	CFDataGetLength                   func(data uintptr) int
	CFDataGetBytePtr                  func(data uintptr) unsafe.Pointer
	CFArrayGetCount                   func(arr uintptr) int
	CFArrayGetValueAtIndex            func(arr uintptr, idx int) uintptr
	CFDictionaryGetValue              func(dict, key uintptr) uintptr
	CFNumberGetValue                  func(num uintptr, typ int, out unsafe.Pointer) bool
	CFStringGetLength                 func(str uintptr) int
	CFStringGetMaximumSizeForEncoding func(length int, enc uint32) int
	CFStringGetCString                func(str uintptr, buf *byte, size int, enc uint32) bool
	CFDictionaryCreate                func(alloc uintptr, keys, values *uintptr, n int, keyCB, valueCB uintptr) uintptr

	// CoreGraphics: displays
	CGGetActiveDisplayList      func(max uint32, ids *uint32, count *uint32) int32
	CGMainDisplayID             func() uint32
	CGDisplayBounds             func(id uint32) cgRect
	CGDisplayIsBuiltin          func(id uint32) int32
	CGDisplayCopyDisplayMode    func(id uint32) uintptr
	CGDisplayModeGetPixelWidth  func(mode uintptr) uint
	CGDisplayModeGetPixelHeight func(mode uintptr) uint
	CGDisplayModeRelease        func(mode uintptr)

	// CoreGraphics: capture (deprecated in macOS 15; optional)
	CGDisplayCreateImageForRect    func(id uint32, r cgRect) uintptr
	CGWindowListCreateImage        func(r cgRect, opt uint32, window uint32, imageOpt uint32) uintptr
	CGPreflightScreenCaptureAccess func() bool
	CGRequestScreenCaptureAccess   func() bool
	CGImageGetWidth                func(img uintptr) uint
	CGImageGetHeight               func(img uintptr) uint
	CGImageGetBytesPerRow          func(img uintptr) uint
	CGImageGetBitsPerPixel         func(img uintptr) uint
	CGImageGetBitsPerComponent     func(img uintptr) uint
	CGImageGetBitmapInfo           func(img uintptr) uint32
	CGImageGetDataProvider         func(img uintptr) uintptr
	CGDataProviderCopyData         func(provider uintptr) uintptr
	CGImageRelease                 func(img uintptr)

	// CoreGraphics: events
	CGEventSourceCreate                    func(state int32) uintptr
	CGEventCreate                          func(source uintptr) uintptr
	CGEventGetLocation                     func(ev uintptr) cgPoint
	CGEventCreateMouseEvent                func(source uintptr, typ uint32, pos cgPoint, button uint32) uintptr
	CGEventCreateKeyboardEvent             func(source uintptr, code uint16, down bool) uintptr
	CGEventCreateScrollWheelEvent2         func(source uintptr, units uint32, count uint32, w1, w2, w3 int32) uintptr
	CGEventSetIntegerValueField            func(ev uintptr, field uint32, v int64)
	CGEventSetFlags                        func(ev uintptr, flags uint64)
	CGEventSetType                         func(ev uintptr, typ uint32)
	CGEventKeyboardSetUnicodeString        func(ev uintptr, n uint, s *uint16)
	CGEventPost                            func(tap uint32, ev uintptr)
	CGWindowListCopyWindowInfo             func(opt uint32, relativeTo uint32) uintptr
	CGRectMakeWithDictionaryRepresentation func(dict uintptr, r *cgRect) bool

	// ApplicationServices (HIServices)
	AXIsProcessTrusted            func() bool
	AXIsProcessTrustedWithOptions func(opts uintptr) bool

	// ApplicationServices: the element tree (ax_darwin.go)
	AXUIElementCreateApplication           func(pid int32) uintptr
	AXUIElementCopyAttributeValue          func(elem, attr uintptr, out *uintptr) int32
	AXUIElementCopyMultipleAttributeValues func(elem, attrs uintptr, options uint32, out *uintptr) int32
	AXUIElementPerformAction               func(elem, action uintptr) int32
	AXUIElementSetAttributeValue           func(elem, attr, value uintptr) int32
	AXUIElementSetMessagingTimeout         func(elem uintptr, seconds float32) int32
	AXValueGetValue                        func(value uintptr, typ uint32, out unsafe.Pointer) bool
	AXValueGetTypeID                       func() uint
	CFRetain                               func(ref uintptr) uintptr
	CFBooleanGetValue                      func(b uintptr) bool
	CFBooleanGetTypeID                     func() uint
	CFArrayGetTypeID                       func() uint
	CFArrayCreate                          func(alloc uintptr, values *uintptr, n int, callbacks uintptr) uintptr
	CFStringCreateWithCString              func(alloc uintptr, s *byte, enc uint32) uintptr

	// apiHandles holds the constants and library handles that only the darwin
	// build reads (an empty struct elsewhere).
	apiHandles //lint:ignore U1000 empty outside darwin (see api_darwin.go)
}
