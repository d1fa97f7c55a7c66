// Settling: the screen captured once it is still, and the waits for it.

package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
)

// captureSettled takes a screenshot once the screen stops changing (bounded).
func (ru *run) captureSettled(step int) (*imaging.Shot, string, error) {
	if ru.o.Settle.MaxWait < 0 {
		shot, err := ru.shootStep(step)
		return shot, "", err
	}
	// The wait compares thumbnails of bare captures (no scaling, no encoding);
	// only the settled screen is encoded for the model.
	thumb, err := ru.thumb()
	if err != nil {
		return nil, "", err
	}
	limit := time.Now().Add(ru.o.Settle.MaxWait)
	// After acting, an application may not have repainted yet: a screen still
	// identical to the one the actions were planned on is "still" but stale.
	// Give it a moment (bounded, so a step that really changed nothing costs
	// little) to show the change before waiting for stillness.
	if ru.prevActs && ru.prevShot != nil {
		changeBy := time.Now().Add(min(ru.o.Settle.MaxWait, expectChangeWait))
		for imaging.Diff(ru.prevShot.Thumb, thumb) < ru.stuck.threshold && time.Now().Before(changeBy) {
			if !sleepCtx(ru.ctx, ru.o.Settle.Interval) {
				return nil, "", context.Cause(ru.ctx)
			}
			if thumb, err = ru.thumb(); err != nil {
				return nil, "", err
			}
		}
	}
	warn := ""
	for {
		if !sleepCtx(ru.ctx, ru.o.Settle.Interval) {
			return nil, "", context.Cause(ru.ctx)
		}
		next, err := ru.thumb()
		if err != nil {
			return nil, "", err
		}
		if imaging.Diff(thumb, next) < ru.o.Settle.Threshold {
			break
		}
		thumb = next
		if time.Now().After(limit) {
			warn = fmt.Sprintf("the screen was still changing after %s; this screenshot may show a transition", ru.o.Settle.MaxWait)
			break
		}
	}
	shot, err := ru.shootStep(step)
	return shot, warn, err
}

// shootStep takes the step's screenshot of the whole display, with the
// step's element snapshot taken just before it (GUI_AGENT_ELEMENTS) and its
// marks drawn on it in marks mode.
func (ru *run) shootStep(step int) (*imaging.Shot, error) {
	ru.elements = ru.snapshotElements(step)
	o := ru.o.Shot
	if ru.o.Elements.marks() {
		o.Marks = ru.elements.marks()
	}
	ru.shotSeq++
	shot, err := ru.o.Shots.Shoot(ru.ctx, ru.o.Screen, ru.display, geom.Rect{}, o, fmt.Sprintf("%s-f%d", ru.id, ru.shotSeq))
	if err == nil && ru.elements != nil {
		ru.elements.marked = len(o.Marks)
	}
	return shot, err
}

// thumb captures the run's display and returns only its thumbnail.
func (ru *run) thumb() (imaging.Thumb, error) {
	return ru.o.Shots.Thumb(ru.ctx, ru.o.Screen, ru.display, geom.Rect{})
}

// shoot captures region (zero = the run's whole display).
func (ru *run) shoot(region geom.Rect) (*imaging.Shot, error) {
	ru.shotSeq++
	return ru.o.Shots.Shoot(ru.ctx, ru.o.Screen, ru.display, region, ru.o.Shot, fmt.Sprintf("%s-f%d", ru.id, ru.shotSeq))
}

// expectChangeWait bounds how long a step waits for its actions to show on
// screen before it takes the unchanged screen as the answer.
const expectChangeWait = 800 * time.Millisecond

// sleepCtx waits d or until ctx ends; it reports whether the full wait passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
