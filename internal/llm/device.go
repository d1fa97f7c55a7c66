package llm

// What the screen a model operates is, besides a desktop (Config.Device).
const (
	DeviceBrowser = "browser"
	DevicePhone   = "phone"
)

// DeviceInstructions is what a system prompt says of a screen that is not a
// desktop ("" for a desktop): a phone's gestures and keys, a browser tab's
// limits. The key names are ones every adapter passes through (xdotool
// names), so a native computer-use tool's key action reaches the phone's
// keys too.
func DeviceInstructions(device string) string {
	switch device {
	case DevicePhone:
		return "\nThe screen is a phone's touch screen, not a desktop: a click is a tap, a double click a double tap, a right click or a long mouse press a long press, a drag a swipe, and a scroll a swipe in the middle of the screen. There is no hover and no pointer. " +
			"To go back press the key XF86Back, to the home screen XF86HomePage, to the recent apps XF86TaskPane; Return submits a field. Text goes into the focused field, so tap the field first.\n"
	case DeviceBrowser:
		return "\nThe screen is one web page in a browser tab (its viewport), not a whole desktop: there is no address bar, window frame or taskbar on it, and everything you do goes to the page. Scroll to see more of the page.\n"
	}
	return ""
}
