package phone_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// log is a Finger that writes down what it is asked.
type log struct {
	mu    sync.Mutex
	calls []string
	touch bool
}

func (l *log) add(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
	return nil
}

func (l *log) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func (l *log) Tap(_ context.Context, p geom.GlobalPoint) error { return l.add(fmt.Sprint("tap ", p)) }
func (l *log) Swipe(_ context.Context, a, b geom.GlobalPoint, d time.Duration) error {
	return l.add(fmt.Sprintf("swipe %v %v %v", a, b, d.Round(100*time.Millisecond)))
}
func (l *log) Touch(_ context.Context, a string, p geom.GlobalPoint) error {
	return l.add(fmt.Sprint(a, " ", p))
}
func (l *log) CanTouch() bool { return l.touch }
func (l *log) Screen(context.Context) (geom.Rect, error) {
	return geom.Rect{W: 400, H: 800}, nil
}

func TestGestureKinds(t *testing.T) {
	ctx := context.Background()
	f := &log{}
	g := &phone.Gesture{F: f}
	p, q := geom.GlobalPoint{X: 10, Y: 20}, geom.GlobalPoint{X: 100, Y: 300}
	_ = g.MoveTo(ctx, p)
	_ = g.ButtonDown(ctx, desktop.Left)
	_ = g.ButtonUp(ctx, desktop.Left)
	_ = g.ButtonDown(ctx, desktop.Right)
	_ = g.ButtonUp(ctx, desktop.Right)
	_ = g.ButtonDown(ctx, desktop.Left)
	_ = g.MoveTo(ctx, q)
	_ = g.ButtonUp(ctx, desktop.Left)
	_ = g.Scroll(ctx, desktop.Down, 1)
	want := []string{"tap (10,20)", "swipe (10,20) (10,20) 800ms", "swipe (10,20) (100,300) 300ms", "swipe (100,360) (100,240) 300ms"}
	if got := f.get(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("gestures %q, want %q", got, want)
	}
	_ = g.ButtonDown(ctx, desktop.Middle)
	if err := g.ButtonUp(ctx, desktop.Middle); !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("middle button: %v, want unsupported", err)
	}
	if pos := g.Position(); pos != q {
		t.Errorf("Position %v, want the last move %v", pos, q)
	}
	if pos, err := g.CursorPosition(ctx); pos != q || err != nil {
		t.Errorf("CursorPosition %v, %v, want the last move %v", pos, err, q)
	}
}

func TestGestureHeldOpen(t *testing.T) {
	ctx := context.Background()
	f := &log{touch: true}
	g := &phone.Gesture{F: f, OpenAfter: 50 * time.Millisecond}
	_ = g.MoveTo(ctx, geom.GlobalPoint{X: 1, Y: 2})
	_ = g.ButtonDown(ctx, desktop.Left)
	time.Sleep(200 * time.Millisecond)
	_ = g.MoveTo(ctx, geom.GlobalPoint{X: 3, Y: 4})
	_ = g.ButtonUp(ctx, desktop.Left)
	want := "down (1,2)|move (3,4)|up (3,4)"
	if got := strings.Join(f.get(), "|"); got != want {
		t.Errorf("held press: %q, want %q", got, want)
	}
}

const dump = `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="1"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][2400,1080]"><node index="0" text="" resource-id="com.x:id/q" class="android.widget.EditText" package="com.x" content-desc="" hint="Search &amp; find" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" scrollable="false" long-clickable="true" password="false" selected="false" bounds="[100,50][900,150]" /><node index="1" text="" resource-id="" class="android.view.View" package="com.x" content-desc="Play" checkable="false" checked="false" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,200][200,400]" /><node index="2" text="Wi‑Fi" resource-id="" class="androidx.compose.ui.platform.ComposeView" package="com.x" content-desc="" checkable="true" checked="true" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,400][2400,500]" /></node></hierarchy>`

func TestSnapshotOfADump(t *testing.T) {
	roots, rot, err := phone.ParseUIAutomator([]byte(dump))
	if err != nil || rot != 1 || len(roots) != 1 || len(roots[0].Children) != 3 {
		t.Fatalf("parse: %v rotation %d roots %d", err, rot, len(roots))
	}
	snap, err := phone.Snapshot(context.Background(), phone.Tree{Source: "uiautomator", Roots: roots, Scale: 2}, desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range snap.Elements {
		got = append(got, fmt.Sprintf("%s %q %v %v", e.Role, e.Name, e.Box, e.States.List()))
	}
	want := []string{
		`textbox "Search & find" 400x50+50+25 [focused enabled editable]`,
		`button "Play" 100x100+0+100 []`,
		`checkbox "Wi‑Fi" 1200x50+0+200 [enabled checked]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("snapshot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n, ok := phone.Find(roots, snap.Elements[0].Handle)
	if !ok || n.ResourceID != "com.x:id/q" {
		t.Errorf("Find(handle of the field) = %+v, %v", n, ok)
	}
	if phone.ParseBounds("[1,2][3,4]") != image.Rect(1, 2, 3, 4) {
		t.Error("ParseBounds")
	}
}

// still is a Finger with no touch events, as on Android 10, WebDriverAgent
// and uitest.
type still struct{ log }

func (s *still) Touch(context.Context, string, geom.GlobalPoint) error {
	return fmt.Errorf("this test phone has no touch-down command: %w", desktop.ErrUnsupported)
}

// TestGestureCanHold: a phone with touch events can hold a press across
// calls; one without says why and what to use instead, and sends nothing.
func TestGestureCanHold(t *testing.T) {
	ctx := context.Background()
	if err := (&phone.Gesture{F: &log{touch: true}}).CanHold(ctx); err != nil {
		t.Errorf("with touch events: %v", err)
	}
	f := &still{}
	err := (&phone.Gesture{F: f}).CanHold(ctx)
	if !errors.Is(err, desktop.ErrUnsupported) || !strings.Contains(err.Error(), "no touch-down command") || !strings.Contains(err.Error(), "gui_drag") {
		t.Errorf("without touch events: %v, want the phone's reason and the tools to use instead", err)
	}
	if calls := f.get(); len(calls) != 0 {
		t.Errorf("asking sent %q", calls)
	}
}

// carrier is a Finger that tells a drag from a swipe, as uitest does.
type carrier struct{ log }

func (c *carrier) Drag(_ context.Context, a, b geom.GlobalPoint, d time.Duration) error {
	return c.add(fmt.Sprintf("drag %v %v %v", a, b, d.Round(100*time.Millisecond)))
}

// TestGestureDragsWithADragger: a press moved and released is the
// device's drag where it has one; a scroll stays a swipe.
func TestGestureDragsWithADragger(t *testing.T) {
	ctx := context.Background()
	f := &carrier{}
	g := &phone.Gesture{F: f}
	_ = g.MoveTo(ctx, geom.GlobalPoint{X: 10, Y: 20})
	_ = g.ButtonDown(ctx, desktop.Left)
	_ = g.MoveTo(ctx, geom.GlobalPoint{X: 100, Y: 300})
	_ = g.ButtonUp(ctx, desktop.Left)
	_ = g.Scroll(ctx, desktop.Down, 1)
	want := "drag (10,20) (100,300) 300ms|swipe (100,360) (100,240) 300ms"
	if got := strings.Join(f.get(), "|"); got != want {
		t.Errorf("gestures %q, want %q", got, want)
	}
}
