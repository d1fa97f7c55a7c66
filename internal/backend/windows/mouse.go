package windows

import (
	"fmt"

	"github.com/guiagent/guiagent/internal/desktop"
)

// buttonFlags returns the down and up flags of a button.
func buttonFlags(bt desktop.Button) (down, up uint32, err error) {
	switch bt {
	case desktop.Left:
		return mouseLeftDown, mouseLeftUp, nil
	case desktop.Middle:
		return mouseMiddleDown, mouseMiddleUp, nil
	case desktop.Right:
		return mouseRightDown, mouseRightUp, nil
	}
	return 0, 0, fmt.Errorf("windows: unknown mouse button %d: use left, middle or right", bt)
}

// scrollEvents returns one wheel event per notch (at least one): WHEEL_DELTA
// forward for up, backward for down, and the horizontal wheel for left
// (negative) and right (positive).
func scrollEvents(d desktop.Direction, notches int) ([]input, error) {
	var flags uint32
	var delta int32
	switch d {
	case desktop.Up:
		flags, delta = mouseWheel, wheelDelta
	case desktop.Down:
		flags, delta = mouseWheel, -wheelDelta
	case desktop.LeftD:
		flags, delta = mouseHWheel, -wheelDelta
	case desktop.RightD:
		flags, delta = mouseHWheel, wheelDelta
	default:
		return nil, fmt.Errorf("windows: unknown scroll direction %q: use up, down, left or right", d)
	}
	ev := make([]input, max(notches, 1))
	for i := range ev {
		ev[i] = mouseEvent(flags, 0, 0, uint32(delta))
	}
	return ev, nil
}
