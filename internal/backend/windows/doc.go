// Package windows is the desktop backend for Windows, written in pure Go over
// golang.org/x/sys/windows (no cgo): GDI capture, SendInput for the mouse and
// keyboard, the CF_UNICODETEXT clipboard and the foreground window's title.
//
// It needs Windows 10 version 1703 or later (Go itself needs Windows 10).
//
// Status: the desktop conformance suite runs against it under Wine 8 in CI
// (conformance_windows_test.go, started from Linux by wine_linux_test.go) at
// 100% and 150% DPI and on two monitors with a negative origin; it has not yet
// run on a real Windows desktop. The pure parts (display layout, coordinate
// mapping, absolute-move normalization, virtual-key table, typing plan, pixel
// conversion, INPUT struct layout) are unit-tested on every OS.
//
// # Coordinates and DPI
//
// Start makes the process per-monitor DPI aware (version 2, or version 1
// where only that exists, as under Wine), so that every Win32 coordinate the backend sees or
// sends (monitor rectangles, the cursor, SendInput, BitBlt) is in physical
// device pixels of the virtual screen. guiagent's global space is logical:
// each display's Bounds is its physical size divided by its scale (effective
// DPI / 96), with the primary display at (0,0) and displays left of or above
// it at negative coordinates.
//
// Windows has no single logical desktop when monitors use different scales:
// a monitor at physical x=3840 right of a 3840-pixel primary at 150% starts
// at logical x=2560 if measured in the primary's scale, but at 3840 in its
// own. This backend builds the logical layout the way browsers do: the
// primary is placed at the origin, then every monitor that shares an edge
// with an already placed one is attached to that same edge in logical space
// (a monitor touching the primary's right edge starts exactly at the
// primary's logical right edge), and its offset along the shared edge is the
// physical offset divided by the placed neighbour's scale. Monitors touching
// no other one are placed at their physical offset from the primary divided
// by the primary's scale. If attaching would make two logical rectangles
// overlap (possible in grids of mixed-scale monitors), the newcomer is pushed
// away from its neighbour until it does not. The result keeps adjacency (the
// pointer crosses from one display to the next in logical space too) and
// makes every global point belong to at most one display. Points map between
// spaces through the display that contains them, pixel centre to pixel centre,
// so a logical point survives the round trip through physical pixels.
//
// Absolute pointer moves are sent with MOUSEEVENTF_ABSOLUTE|
// MOUSEEVENTF_VIRTUALDESK, normalized to 0..65535 over the physical virtual
// screen (SM_XVIRTUALSCREEN...) at the target pixel's centre; when the cursor
// lands elsewhere (rounding differences between Windows versions) SetCursorPos
// puts it on the exact pixel.
//
// Input from this backend is blocked by UIPI when the foreground window
// belongs to a process of higher integrity (an elevated program): run
// guiagent elevated to drive such windows. Nothing reaches the secure desktop
// (UAC prompts, the lock screen).
package windows
