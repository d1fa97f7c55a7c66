package vision

import (
	"context"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm"
)

// Limits of a wait-for (gui_wait_for and the Go API's WaitFor).
const (
	WaitDefaultTimeout = 15 * time.Second
	WaitMaxTimeout     = 300 * time.Second
	WaitDefaultEvery   = time.Second
	WaitMinEvery       = 250 * time.Millisecond
)

// WaitResult is what a wait-for found.
type WaitResult struct {
	Met        bool
	Elapsed    time.Duration
	Checks     int // looks at the screen
	ModelCalls int
	Reason     string // the model's last reason ("not met after ..." at the timeout)
}

// Look is how WaitFor sees one display: Shoot captures a screenshot for the
// model (with its thumbnail), Thumb only the thumbnail of the screen now.
type Look struct {
	Shoot func(ctx context.Context) (llm.Image, imaging.Thumb, error)
	Thumb func(ctx context.Context) (imaging.Thumb, error)
	// Clock is the time the wait is measured in; nil is the wall clock.
	Clock Clock
}

// Clock is a source of time: Now, and a channel that receives once d has
// passed. Tests give WaitFor a clock of their own, so that how many checks
// fit in a timeout does not depend on how busy the machine is.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// wallClock is the real time.
type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// WaitFor asks seer whether condition holds every interval until it does or
// timeout passes. A check compares a thumbnail of the screen with the one of
// the screenshot the model last judged; only a changed screen is sent to the
// model again. Not met at the timeout is a normal answer, not an error.
func WaitFor(ctx context.Context, seer Seer, look Look, condition string, timeout, every time.Duration) (WaitResult, error) {
	clock := look.Clock
	if clock == nil {
		clock = wallClock{}
	}
	start := clock.Now()
	deadline := start.Add(timeout)
	var r WaitResult
	var judged *imaging.Thumb
	for {
		r.Checks++
		changed := judged == nil
		if !changed {
			th, err := look.Thumb(ctx)
			if err != nil {
				return r, err
			}
			changed = ScreenChanged(*judged, th)
		}
		if changed {
			img, th, err := look.Shoot(ctx)
			if err != nil {
				return r, err
			}
			v, u, err := seer.Assert(ctx, img, condition)
			r.ModelCalls += max(u.Calls, 1)
			if err != nil {
				return r, err
			}
			judged, r.Reason, r.Met = &th, v.Reason, v.Pass
		}
		now := clock.Now()
		r.Elapsed = now.Sub(start)
		if r.Met || !now.Add(every).Before(deadline) {
			if !r.Met {
				r.Reason = fmt.Sprintf("not met after %.1f s: %s", r.Elapsed.Seconds(), r.Reason)
			}
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("wait_for cancelled: %w", ctx.Err())
		case <-clock.After(every):
		}
	}
}

// ScreenChanged reports whether two thumbnails of a display differ in any
// cell by more than thumbNoise luma levels: a small text change (a status
// line) moves the cells it covers by tens of levels, an unchanged screen by none.
func ScreenChanged(a, b imaging.Thumb) bool {
	for i := range a {
		if d := int(a[i]) - int(b[i]); d > thumbNoise || -d > thumbNoise {
			return true
		}
	}
	return false
}

// thumbNoise is the thumbnail difference (luma levels per cell) that is not a change.
const thumbNoise = 2
