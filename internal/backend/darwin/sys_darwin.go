package darwin

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Framework binaries loaded with dlopen.
const (
	pathCoreFoundation      = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
	pathCoreGraphics        = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
	pathApplicationServices = "/System/Library/Frameworks/ApplicationServices.framework/ApplicationServices"
	pathAppKit              = "/System/Library/Frameworks/AppKit.framework/AppKit"
)

// Quartz constants.
const (
	eventSourceHIDSystemState int32  = 1 // kCGEventSourceStateHIDSystemState
	hidEventTap               uint32 = 0 // kCGHIDEventTap

	evLeftMouseDown     uint32 = 1
	evLeftMouseUp       uint32 = 2
	evRightMouseDown    uint32 = 3
	evRightMouseUp      uint32 = 4
	evMouseMoved        uint32 = 5
	evLeftMouseDragged  uint32 = 6
	evRightMouseDragged uint32 = 7
	evFlagsChanged      uint32 = 12
	evOtherMouseDown    uint32 = 25
	evOtherMouseUp      uint32 = 26
	evOtherMouseDragged uint32 = 27

	mouseButtonLeft   uint32 = 0
	mouseButtonRight  uint32 = 1
	mouseButtonCenter uint32 = 2

	fieldMouseClickState uint32 = 1 // kCGMouseEventClickState

	scrollUnitLine uint32 = 1 // kCGScrollEventUnitLine

	windowListOnScreenOnly           uint32 = 1 << 0
	windowListExcludeDesktopElements uint32 = 1 << 4
	windowImageBestResolution        uint32 = 1 << 3

	cfNumberSInt64         = 4
	cfNumberFloat64        = 6
	cfStringUTF8    uint32 = 0x08000100

	nsUTF8StringEncoding uint = 4
)

var (
	apiOnce   sync.Once
	apiLoaded *api
	apiErr    error
)

// loadAPI opens the frameworks and binds every function once per process.
func loadAPI() (*api, error) {
	apiOnce.Do(func() { apiLoaded, apiErr = bindAPI() })
	return apiLoaded, apiErr
}

// binder collects the symbols a framework lacks.
type binder struct {
	missing []string
}

// fn binds the C function name in lib to fptr; required names that are
// missing are recorded, optional ones leave fptr nil.
func (bd *binder) fn(lib uintptr, name string, fptr any, required bool) {
	addr, err := purego.Dlsym(lib, name)
	if err != nil || addr == 0 {
		if required {
			bd.missing = append(bd.missing, name)
		}
		return
	}
	purego.RegisterFunc(fptr, addr)
}

// ptrVar reads the pointer stored in the global variable name of lib (how
// CFStringRef constants such as kCGWindowLayer are exported).
func (bd *binder) ptrVar(lib uintptr, name string, required bool) uintptr {
	addr, err := purego.Dlsym(lib, name)
	if err != nil || addr == 0 {
		if required {
			bd.missing = append(bd.missing, name)
		}
		return 0
	}
	return deref(addr)
}

// addr returns the address of the global name in lib (for structs passed by
// pointer, such as kCFTypeDictionaryKeyCallBacks).
func (bd *binder) addr(lib uintptr, name string, required bool) uintptr {
	a, err := purego.Dlsym(lib, name)
	if (err != nil || a == 0) && required {
		bd.missing = append(bd.missing, name)
	}
	return a
}

// deref reads the pointer-sized value at address a, which the dynamic linker
// gave us for a global variable in a loaded framework.
func deref(a uintptr) uintptr {
	return **(**uintptr)(unsafe.Pointer(&a))
}

func bindAPI() (*api, error) {
	open := func(path string) (uintptr, error) {
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			return 0, fmt.Errorf("macOS backend: load %s: %w (is this macOS 10.15 or later?)", path, err)
		}
		return h, nil
	}
	cf, err := open(pathCoreFoundation)
	if err != nil {
		return nil, err
	}
	cg, err := open(pathCoreGraphics)
	if err != nil {
		return nil, err
	}
	as, err := open(pathApplicationServices)
	if err != nil {
		return nil, err
	}
	ak, err := open(pathAppKit)
	if err != nil {
		return nil, err
	}
	a := &api{}
	a.appKit = ak
	var bd binder
	bd.fn(cf, "CFRelease", &a.CFRelease, true)
	bd.fn(cf, "CFGetTypeID", &a.CFGetTypeID, true)
	bd.fn(cf, "CFStringGetTypeID", &a.CFStringGetTypeID, true)
	bd.fn(cf, "CFNumberGetTypeID", &a.CFNumberGetTypeID, true)
	bd.fn(cf, "CFDictionaryGetTypeID", &a.CFDictionaryGetTypeID, true)
	bd.fn(cf, "CFDataGetLength", &a.CFDataGetLength, true)
	bd.fn(cf, "CFDataGetBytePtr", &a.CFDataGetBytePtr, true)
	bd.fn(cf, "CFArrayGetCount", &a.CFArrayGetCount, true)
	bd.fn(cf, "CFArrayGetValueAtIndex", &a.CFArrayGetValueAtIndex, true)
	bd.fn(cf, "CFDictionaryGetValue", &a.CFDictionaryGetValue, true)
	bd.fn(cf, "CFNumberGetValue", &a.CFNumberGetValue, true)
	bd.fn(cf, "CFStringGetLength", &a.CFStringGetLength, true)
	bd.fn(cf, "CFStringGetMaximumSizeForEncoding", &a.CFStringGetMaximumSizeForEncoding, true)
	bd.fn(cf, "CFStringGetCString", &a.CFStringGetCString, true)
	bd.fn(cf, "CFDictionaryCreate", &a.CFDictionaryCreate, true)
	a.kCFBooleanTrue = bd.ptrVar(cf, "kCFBooleanTrue", true)
	a.kCFTypeDictionaryKeyCallBacks = bd.addr(cf, "kCFTypeDictionaryKeyCallBacks", true)
	a.kCFTypeDictionaryValueCallBacks = bd.addr(cf, "kCFTypeDictionaryValueCallBacks", true)

	bd.fn(cg, "CGGetActiveDisplayList", &a.CGGetActiveDisplayList, true)
	bd.fn(cg, "CGMainDisplayID", &a.CGMainDisplayID, true)
	bd.fn(cg, "CGDisplayBounds", &a.CGDisplayBounds, true)
	bd.fn(cg, "CGDisplayIsBuiltin", &a.CGDisplayIsBuiltin, true)
	bd.fn(cg, "CGDisplayCopyDisplayMode", &a.CGDisplayCopyDisplayMode, true)
	bd.fn(cg, "CGDisplayModeGetPixelWidth", &a.CGDisplayModeGetPixelWidth, true)
	bd.fn(cg, "CGDisplayModeGetPixelHeight", &a.CGDisplayModeGetPixelHeight, true)
	bd.fn(cg, "CGDisplayModeRelease", &a.CGDisplayModeRelease, true)

	bd.fn(cg, "CGDisplayCreateImageForRect", &a.CGDisplayCreateImageForRect, false)
	bd.fn(cg, "CGWindowListCreateImage", &a.CGWindowListCreateImage, false)
	bd.fn(cg, "CGPreflightScreenCaptureAccess", &a.CGPreflightScreenCaptureAccess, false)
	bd.fn(cg, "CGRequestScreenCaptureAccess", &a.CGRequestScreenCaptureAccess, false)
	bd.fn(cg, "CGImageGetWidth", &a.CGImageGetWidth, true)
	bd.fn(cg, "CGImageGetHeight", &a.CGImageGetHeight, true)
	bd.fn(cg, "CGImageGetBytesPerRow", &a.CGImageGetBytesPerRow, true)
	bd.fn(cg, "CGImageGetBitsPerPixel", &a.CGImageGetBitsPerPixel, true)
	bd.fn(cg, "CGImageGetBitsPerComponent", &a.CGImageGetBitsPerComponent, true)
	bd.fn(cg, "CGImageGetBitmapInfo", &a.CGImageGetBitmapInfo, true)
	bd.fn(cg, "CGImageGetDataProvider", &a.CGImageGetDataProvider, true)
	bd.fn(cg, "CGDataProviderCopyData", &a.CGDataProviderCopyData, true)
	bd.fn(cg, "CGImageRelease", &a.CGImageRelease, true)

	bd.fn(cg, "CGEventSourceCreate", &a.CGEventSourceCreate, true)
	bd.fn(cg, "CGEventCreate", &a.CGEventCreate, true)
	bd.fn(cg, "CGEventGetLocation", &a.CGEventGetLocation, true)
	bd.fn(cg, "CGEventCreateMouseEvent", &a.CGEventCreateMouseEvent, true)
	bd.fn(cg, "CGEventCreateKeyboardEvent", &a.CGEventCreateKeyboardEvent, true)
	bd.fn(cg, "CGEventCreateScrollWheelEvent2", &a.CGEventCreateScrollWheelEvent2, false)
	bd.fn(cg, "CGEventSetIntegerValueField", &a.CGEventSetIntegerValueField, true)
	bd.fn(cg, "CGEventSetFlags", &a.CGEventSetFlags, true)
	bd.fn(cg, "CGEventSetType", &a.CGEventSetType, true)
	bd.fn(cg, "CGEventKeyboardSetUnicodeString", &a.CGEventKeyboardSetUnicodeString, true)
	bd.fn(cg, "CGEventPost", &a.CGEventPost, true)
	bd.fn(cg, "CGWindowListCopyWindowInfo", &a.CGWindowListCopyWindowInfo, true)
	bd.fn(cg, "CGRectMakeWithDictionaryRepresentation", &a.CGRectMakeWithDictionaryRepresentation, true)
	a.kCGWindowLayer = bd.ptrVar(cg, "kCGWindowLayer", true)
	a.kCGWindowOwnerName = bd.ptrVar(cg, "kCGWindowOwnerName", true)
	a.kCGWindowName = bd.ptrVar(cg, "kCGWindowName", true)
	a.kCGWindowAlpha = bd.ptrVar(cg, "kCGWindowAlpha", false)
	a.kCGWindowBounds = bd.ptrVar(cg, "kCGWindowBounds", false)

	bd.fn(as, "AXIsProcessTrusted", &a.AXIsProcessTrusted, true)
	bd.fn(as, "AXIsProcessTrustedWithOptions", &a.AXIsProcessTrustedWithOptions, false)
	a.kAXTrustedCheckOptionPrompt = bd.ptrVar(as, "kAXTrustedCheckOptionPrompt", false)

	bindAX(&bd, a, cf, cg, as)

	if len(bd.missing) > 0 {
		return nil, errors.New("macOS backend: this macOS lacks " + strings.Join(bd.missing, ", ") + ": guiagent needs macOS 10.15 or later")
	}
	return a, nil
}

// bindAX binds the element tree's functions (ax_darwin.go): optional, so
// that input and capture work without them.
func bindAX(bd *binder, a *api, cf, cg, as uintptr) {
	bd.fn(as, "AXUIElementCreateApplication", &a.AXUIElementCreateApplication, false)
	bd.fn(as, "AXUIElementCopyAttributeValue", &a.AXUIElementCopyAttributeValue, false)
	bd.fn(as, "AXUIElementCopyMultipleAttributeValues", &a.AXUIElementCopyMultipleAttributeValues, false)
	bd.fn(as, "AXUIElementPerformAction", &a.AXUIElementPerformAction, false)
	bd.fn(as, "AXUIElementSetAttributeValue", &a.AXUIElementSetAttributeValue, false)
	bd.fn(as, "AXUIElementSetMessagingTimeout", &a.AXUIElementSetMessagingTimeout, false)
	bd.fn(as, "AXValueGetValue", &a.AXValueGetValue, false)
	bd.fn(as, "AXValueGetTypeID", &a.AXValueGetTypeID, false)
	bd.fn(cf, "CFRetain", &a.CFRetain, true)
	bd.fn(cf, "CFBooleanGetValue", &a.CFBooleanGetValue, true)
	bd.fn(cf, "CFBooleanGetTypeID", &a.CFBooleanGetTypeID, true)
	bd.fn(cf, "CFArrayGetTypeID", &a.CFArrayGetTypeID, true)
	bd.fn(cf, "CFArrayCreate", &a.CFArrayCreate, true)
	bd.fn(cf, "CFStringCreateWithCString", &a.CFStringCreateWithCString, true)
	a.kCFTypeArrayCallBacks = bd.addr(cf, "kCFTypeArrayCallBacks", true)
	a.kCGWindowOwnerPID = bd.ptrVar(cg, "kCGWindowOwnerPID", false)
}
