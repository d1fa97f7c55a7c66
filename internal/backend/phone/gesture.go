// Package phone holds what the phone backends (Android over adb, iOS over
// WebDriverAgent, HarmonyOS over hdc) share: turning the desktop
// contract's pointer primitives into touch gestures (Gesture) and a
// uiautomator-like view tree into desktop elements (Snapshot).
package phone

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Finger is what a phone can do with one finger. Points are global logical
// pixels; the backend maps them to its device's pixels.
type Finger interface {
	// Tap touches p briefly.
	Tap(ctx context.Context, p geom.GlobalPoint) error
	// Swipe touches from, moves to to over d, and lifts (from == to with a
	// long d is a long press).
	Swipe(ctx context.Context, from, to geom.GlobalPoint, d time.Duration) error
	// Touch sends one touch event ("down", "move", "up") and leaves the
	// finger as it says, for a press that spans separate calls. Where the
	// device cannot (CanTouch is false) it sends nothing and returns why,
	// wrapping desktop.ErrUnsupported.
	Touch(ctx context.Context, action string, p geom.GlobalPoint) error
	// CanTouch reports whether Touch works on this device.
	CanTouch() bool
	// Screen is the screen's extent, for scrolling.
	Screen(ctx context.Context) (geom.Rect, error)
}

// Dragger is a Finger whose device tells a drag (press, hold, then move:
// an item picked up and carried) from a swipe (a fling, which scrolls):
// Gesture drags a press moved and released with Drag, and scrolls with
// Swipe. A Finger without it swipes for both (Android's `input swipe` over
// a duration is both).
type Dragger interface {
	Drag(ctx context.Context, from, to geom.GlobalPoint, d time.Duration) error
}

// Gesture turns ButtonDown, MoveTo and ButtonUp into touch gestures: a
// press and release in place is one tap; a press, moves and a release is
// a swipe along the path's ends over the time it took; a press held long
// (LongPress) or made with the right button is a long press. Nothing is
// sent at ButtonDown: a press held open past OpenAfter (a mouse_down tool
// call, left down across calls) is put down for real with Touch where the
// device can, and its moves and release follow as touch events.
type Gesture struct {
	F Finger
	// OpenAfter is how long a press may wait for its release before the
	// finger goes down on the device; zero means 300ms.
	OpenAfter time.Duration
	// LongPress is the hold from which a press in place is a long press;
	// zero means 500ms (Android's long-press timeout). LongHold is how long
	// a long press holds; zero means 800ms.
	LongPress, LongHold time.Duration
	// ScrollStep is the finger's travel per wheel notch, as a fraction of
	// the screen's height (or width); zero means 0.15.
	ScrollStep float64

	mu      sync.Mutex
	pos     geom.GlobalPoint
	down    bool
	button  desktop.Button
	start   geom.GlobalPoint
	at      time.Time
	open    bool // the finger is down on the device
	openErr error
	timer   *time.Timer
	gen     int
}

func (g *Gesture) openAfter() time.Duration { return def(g.OpenAfter, 300*time.Millisecond) }
func (g *Gesture) longPress() time.Duration { return def(g.LongPress, 500*time.Millisecond) }
func (g *Gesture) longHold() time.Duration  { return def(g.LongHold, 800*time.Millisecond) }

func def(d, v time.Duration) time.Duration {
	if d <= 0 {
		return v
	}
	return d
}

// Position is where the pointer was last put (the phone shows none).
func (g *Gesture) Position() geom.GlobalPoint {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pos
}

// CursorPosition is Position, as desktop.Pointer asks it: a backend that
// embeds a Gesture is a desktop.Pointer through it.
func (g *Gesture) CursorPosition(context.Context) (geom.GlobalPoint, error) {
	return g.Position(), nil
}

// MoveTo moves the pointer; with the finger down it is part of a swipe.
func (g *Gesture) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pos = p
	if g.down && g.open {
		return g.F.Touch(ctx, "move", p)
	}
	return nil
}

// CanHold implements desktop.Holder: a press held across calls (a
// mouse_down, then a mouse_up) needs the device's touch events; without
// them it is refused with the device's reason, and the tools that press
// and release in one call (click, drag, a long press as a right click)
// still work.
func (g *Gesture) CanHold(ctx context.Context) error {
	if g.F.CanTouch() {
		return nil
	}
	why := g.F.Touch(ctx, "down", g.Position()) // it sends nothing here: it says why
	if why == nil {
		why = fmt.Errorf("this phone cannot hold a finger down across calls: %w", desktop.ErrUnsupported)
	}
	return fmt.Errorf("%w; use gui_drag for a swipe, or a right click (gui_click with button right) for a long press", why)
}

// ButtonDown starts a press at the pointer's position.
func (g *Gesture) ButtonDown(ctx context.Context, b desktop.Button) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down {
		return fmt.Errorf("a finger is already down (%s button): release it first", g.button)
	}
	g.down, g.button, g.start, g.at, g.open, g.openErr = true, b, g.pos, time.Now(), false, nil
	g.gen++
	if g.F.CanTouch() && b != desktop.Right {
		gen := g.gen
		g.timer = time.AfterFunc(g.openAfter(), func() { g.putDown(gen) })
	}
	return nil
}

// putDown puts the finger of a press still open on the device.
func (g *Gesture) putDown(gen int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.down || g.gen != gen || g.open {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.F.Touch(ctx, "down", g.start); err != nil {
		g.openErr = err
		return
	}
	g.open = true
	if g.pos != g.start {
		g.openErr = g.F.Touch(ctx, "move", g.pos)
	}
}

// ButtonUp ends the press: a tap, a swipe, a long press, or the release
// of a finger already down.
func (g *Gesture) ButtonUp(ctx context.Context, b desktop.Button) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.down {
		return nil
	}
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	g.down = false
	held := time.Since(g.at)
	if g.open {
		g.open = false
		return g.F.Touch(ctx, "up", g.pos)
	}
	switch {
	case g.pos != g.start:
		d := min(max(held, 300*time.Millisecond), 10*time.Second)
		if dr, ok := g.F.(Dragger); ok {
			return dr.Drag(ctx, g.start, g.pos, d)
		}
		return g.F.Swipe(ctx, g.start, g.pos, d)
	case g.button == desktop.Right || held >= g.longPress():
		return g.F.Swipe(ctx, g.start, g.start, min(max(held, g.longHold()), 10*time.Second))
	case g.button == desktop.Middle:
		return fmt.Errorf("a touch screen has no middle button: %w", desktop.ErrUnsupported)
	}
	return g.F.Tap(ctx, g.start)
}

// Scroll swipes notches steps at the pointer's position (the screen's
// middle before any move): scrolling down moves the finger up, as a
// finger scrolls a list.
func (g *Gesture) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down {
		return errors.New("cannot scroll while a finger is down: release it first")
	}
	scr, err := g.F.Screen(ctx)
	if err != nil {
		return err
	}
	step := g.ScrollStep
	if step <= 0 {
		step = 0.15
	}
	c := g.pos
	if c == (geom.GlobalPoint{}) || !scr.Contains(c) {
		c = geom.GlobalPoint{X: scr.X + scr.W/2, Y: scr.Y + scr.H/2}
	}
	n := max(notches, 1)
	dx, dy := 0, 0
	switch d {
	case desktop.Down:
		dy = -int(float64(scr.H) * step * float64(n))
	case desktop.Up:
		dy = int(float64(scr.H) * step * float64(n))
	case desktop.RightD:
		dx = -int(float64(scr.W) * step * float64(n))
	case desktop.LeftD:
		dx = int(float64(scr.W) * step * float64(n))
	default:
		return fmt.Errorf("unknown scroll direction %q", d)
	}
	from := scr.Clamp(geom.GlobalPoint{X: c.X - dx/2, Y: c.Y - dy/2})
	to := scr.Clamp(geom.GlobalPoint{X: c.X + dx/2, Y: c.Y + dy/2})
	return g.F.Swipe(ctx, from, to, 300*time.Millisecond)
}
