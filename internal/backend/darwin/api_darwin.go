package darwin

// apiHandles holds the framework constants (CFStringRef values and addresses of
// callback structs) and library handles that only the darwin build binds.
type apiHandles struct {
	// Constants (CFStringRef values and addresses of callback structs).
	kCGWindowLayer, kCGWindowOwnerName, kCGWindowName, kCGWindowAlpha, kCGWindowBounds uintptr
	kAXTrustedCheckOptionPrompt, kCFBooleanTrue                                        uintptr
	kCFTypeDictionaryKeyCallBacks, kCFTypeDictionaryValueCallBacks                     uintptr
	kCFTypeArrayCallBacks, kCGWindowOwnerPID                                           uintptr

	appKit uintptr // AppKit handle (loads NSPasteboard and NSEvent into the ObjC runtime)
}
