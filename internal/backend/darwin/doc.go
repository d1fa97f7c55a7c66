// Package darwin is the desktop backend for macOS, written in pure Go: it calls
// CoreGraphics, CoreFoundation, ApplicationServices and AppKit through
// github.com/ebitengine/purego (and purego/objc for the Objective-C runtime),
// so it needs no cgo and cross-compiles from any OS.
//
// Status: built and vetted by cross-compilation (GOOS=darwin, amd64 and
// arm64); not yet exercised on a real Mac. The pure parts (virtual key code
// table, modifier flags, click counting, typing plan, display layout and scale
// math, region location, pixel conversion, window choice) are unit-tested on
// every OS; the calls into the system frameworks are not tested anywhere yet.
//
// # Coordinates
//
// Quartz global display coordinates are already guiagent's global space:
// points (logical pixels) with the origin at the top-left of the main display
// (the one with the menu bar), y growing downwards, and negative coordinates
// for displays left of or above it. Displays lists CGGetActiveDisplayList with
// CGDisplayBounds as Bounds and the backing scale (pixel width of the current
// display mode over its width in points; 2 on Retina) as Scale. Capture
// returns device pixels (CGDisplayCreateImageForRect, falling back to
// CGWindowListCreateImage), converted from the image's pixel format (BGRA
// little-endian in practice, 10-bit formats too) into an *image.RGBA.
//
// # Permissions
//
// macOS guards both halves of the product:
//   - Screen Recording (System Settings > Privacy & Security > Screen &
//     System Audio Recording): without it captures fail with ErrScreenRecording
//     (CGPreflightScreenCaptureAccess is false or the capture is nil).
//   - Accessibility (System Settings > Privacy & Security > Accessibility):
//     without it (AXIsProcessTrusted is false) every input call fails with
//     ErrAccessibility instead of being silently dropped by the system.
//
// The permission belongs to the app that launched guiagent (Terminal, iTerm,
// the MCP host) or to the guiagent binary itself when it runs on its own;
// after granting it, restart that app. Options.PromptForPermissions makes
// Start ask macOS to show both prompts.
//
// On macOS 15 the CoreGraphics capture calls are deprecated in favour of
// ScreenCaptureKit and the system may periodically ask the user to confirm
// that guiagent can keep recording the screen; they still work, and the
// backend reports a clear error if a future release removes them.
//
// # Input
//
// Input is posted with CGEventPost at the HID event tap. Keys map to ANSI
// (US layout) virtual key codes; on other layouts the physical key of the US
// letter is pressed, which matters for hotkeys only: TypeText sends the text
// itself as Unicode strings (CGEventKeyboardSetUnicodeString, 20 UTF-16 units
// per event) and is layout independent. Modifier state is tracked by the
// backend and set explicitly on every event (CGEventSetFlags), so a held
// command key turns a click into a command-click. Consecutive presses of one
// button at one place within the system double-click interval carry click
// states 1, 2, 3, which applications need to see double and triple clicks.
// "super" is the command key, "alt" is option.
package darwin
