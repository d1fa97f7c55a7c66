package darwin

import (
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
)

// windowInfo is one entry of CGWindowListCopyWindowInfo, front to back.
type windowInfo struct {
	layer     int
	owner     string // kCGWindowOwnerName: the application
	name      string // kCGWindowName: the title (empty without Screen Recording permission)
	alpha     float64
	hasAlpha  bool
	w, h      float64 // kCGWindowBounds size in points
	hasBounds bool
}

// minWindowPoints is the smallest side a window needs to count as the one the
// user works in (excludes status items and invisible helper windows).
const minWindowPoints = 40

// activeWindowTitle picks the frontmost ordinary window (layer 0, visible,
// not tiny) of a front-to-back window list and names it "title — App" (just
// the title when it already names the application), or just the application
// when the title is empty (macOS hides titles from
// processes without the Screen Recording permission). It returns "" when no
// window qualifies.
func activeWindowTitle(ws []windowInfo) string {
	for _, w := range ws {
		if w.layer != 0 || (w.hasAlpha && w.alpha <= 0) {
			continue
		}
		if w.hasBounds && (w.w < minWindowPoints || w.h < minWindowPoints) {
			continue
		}
		switch {
		case w.name != "" && w.owner != "" && !strings.Contains(strings.ToLower(w.name), strings.ToLower(w.owner)):
			return w.name + " — " + w.owner
		case w.name != "":
			return w.name
		default:
			return w.owner
		}
	}
	return ""
}

// scrollWheels returns the wheel deltas (lines) of one notch in direction d:
// wheel1 is vertical, positive up; wheel2 is horizontal, positive left, as
// CGEventCreateScrollWheelEvent2 expects.
func scrollWheels(d desktop.Direction) (wheel1, wheel2 int32, err error) {
	switch d {
	case desktop.Up:
		return 1, 0, nil
	case desktop.Down:
		return -1, 0, nil
	case desktop.LeftD:
		return 0, 1, nil
	case desktop.RightD:
		return 0, -1, nil
	}
	return 0, 0, fmt.Errorf("macOS: unknown scroll direction %q: use up, down, left or right", d)
}
