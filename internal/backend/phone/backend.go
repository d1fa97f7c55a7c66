package phone

import "github.com/guiagent/guiagent/internal/desktop"

// Backend is what every phone backend is: a screen, a pointer (its
// embedded Gesture) whose position only echoes guiagent's moves, a
// keyboard (its Keys), an element source and actor over its view tree
// (Handle, Lookup), apps, and a touch device that describes itself.
type Backend interface {
	desktop.Screen
	desktop.Pointer
	desktop.Keyboard
	desktop.PointerEcho
	desktop.ElementSource
	desktop.ElementActor
	desktop.Apps
	desktop.Touch
	desktop.Describer
}
