package darwin

import (
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
)

// defaultDoubleClickInterval is used when the system's interval is unknown.
const defaultDoubleClickInterval = 500 * time.Millisecond

// clickSlopPoints is how far (in points, each axis) a press may be from the
// previous one and still continue a multi-click.
const clickSlopPoints = 4

// clickCounter computes the click state (1 single, 2 double, 3 triple...)
// that macOS applications read from mouse events: a press continues the
// previous click sequence when it uses the same button, lands within
// clickSlopPoints of it and comes within the double-click interval of the
// previous press. It is not safe for concurrent use.
type clickCounter struct {
	interval time.Duration

	button desktop.Button
	x, y   float64
	at     time.Time
	count  int
	// upCount remembers, per button, the state its next release must carry.
	upCount map[desktop.Button]int
}

// down registers a press of b at (x, y) points at time now and returns its
// click state.
func (c *clickCounter) down(b desktop.Button, x, y float64, now time.Time) int {
	interval := c.interval
	if interval <= 0 {
		interval = defaultDoubleClickInterval
	}
	if c.count > 0 && b == c.button && now.Sub(c.at) <= interval && now.Sub(c.at) >= 0 &&
		abs(x-c.x) <= clickSlopPoints && abs(y-c.y) <= clickSlopPoints {
		c.count++
	} else {
		c.count = 1
	}
	c.button, c.x, c.y, c.at = b, x, y, now
	if c.upCount == nil {
		c.upCount = map[desktop.Button]int{}
	}
	c.upCount[b] = c.count
	return c.count
}

// up returns the click state of the release of b: that of its press, or 1
// when the press was not seen.
func (c *clickCounter) up(b desktop.Button) int {
	if n, ok := c.upCount[b]; ok {
		delete(c.upCount, b)
		return n
	}
	return 1
}

// moved ends the click sequence when the pointer leaves the slop area, as a
// real mouse does.
func (c *clickCounter) moved(x, y float64) {
	if c.count > 0 && (abs(x-c.x) > clickSlopPoints || abs(y-c.y) > clickSlopPoints) {
		c.count = 0
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
