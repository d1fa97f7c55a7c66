// Package fake is an in-memory desktop backend for tests: displays with
// framebuffers that tests draw into, and a recorder of every input primitive
// (with the pointer position and the modifiers held), pressed-key and
// pressed-button tracking, a typed-text buffer, a clipboard, an active window
// title, an element tree (SetElements) and injectable failures.
//
// A Backend is safe for concurrent use.
package fake

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Interface guards.
var (
	_ desktop.Screen    = (*Backend)(nil)
	_ desktop.Pointer   = (*Backend)(nil)
	_ desktop.Keyboard  = (*Backend)(nil)
	_ desktop.Clipboard = (*Backend)(nil)
	_ desktop.Windows   = (*Backend)(nil)
	_ desktop.Describer = (*Backend)(nil)
)

// Operation names, used in Event.Op and in FailNext / FailAfter.
const (
	OpMove       = "move"
	OpButtonDown = "button_down"
	OpButtonUp   = "button_up"
	OpScroll     = "scroll"
	OpKeyDown    = "key_down"
	OpKeyUp      = "key_up"
	OpType       = "type"
	// The following operations are not input: they can fail but are not recorded.
	OpCapture        = "capture"
	OpDisplays       = "displays"
	OpCursorPosition = "cursor_position"
	OpReadClipboard  = "read_clipboard"
	OpWriteClipboard = "write_clipboard"
	OpActiveWindow   = "active_window"
)

var knownOps = []string{OpMove, OpButtonDown, OpButtonUp, OpScroll, OpKeyDown, OpKeyUp, OpType,
	OpCapture, OpDisplays, OpCursorPosition, OpReadClipboard, OpWriteClipboard, OpActiveWindow, OpElements}

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("fake desktop is closed: create a new one with fake.New")

// Event is one input primitive as the fake received it.
type Event struct {
	// Seq numbers events from 1 in arrival order.
	Seq int
	// Op is one of OpMove, OpButtonDown, OpButtonUp, OpScroll, OpKeyDown, OpKeyUp, OpType.
	Op string
	// At is the pointer position (global logical pixels) when the primitive ran;
	// for OpMove it is the new position.
	At geom.GlobalPoint
	// Button is set for button events.
	Button desktop.Button
	// Key is set for key events.
	Key desktop.Key
	// Direction and Notches are set for scroll events.
	Direction desktop.Direction
	Notches   int
	// Text is set for OpType.
	Text string
	// Modifiers lists the modifier keys held before the primitive (short names:
	// ctrl, shift, alt, super), sorted.
	Modifiers []string
}

// String renders e compactly for test failure messages, e.g. "key_down(Control_L)".
func (e Event) String() string {
	switch e.Op {
	case OpMove:
		return "move" + e.At.String()
	case OpButtonDown, OpButtonUp:
		return e.Op + "(" + e.Button.String() + ")" + e.At.String()
	case OpKeyDown, OpKeyUp:
		return e.Op + "(" + string(e.Key) + ")"
	case OpScroll:
		return fmt.Sprintf("scroll(%s,%d)%s", e.Direction, e.Notches, e.At)
	case OpType:
		return "type(" + strconv.Quote(e.Text) + ")"
	}
	return e.Op
}

// Options configures a Backend. The zero value gives one 1920x1080 primary
// display at scale 1.
type Options struct {
	// Displays is the desktop layout in global logical pixels: any arrangement,
	// negative origins and scale factors allowed. Empty IDs become "0", "1", ...
	// When none is marked primary, the first one is.
	Displays []geom.Display
	// Background fills every framebuffer at start; the zero value is opaque black.
	Background color.RGBA
	// PrimitiveDelay makes every input primitive take this long (to widen races in
	// concurrency tests). Zero means no delay.
	PrimitiveDelay time.Duration
}

type failure struct {
	skip int
	err  error
}

// Backend is the fake desktop. Create it with New.
type Backend struct {
	delay time.Duration

	mu        sync.Mutex
	displays  []geom.Display
	fb        map[string]*image.RGBA // physical pixels per display id
	events    []Event
	seq       int
	cursor    geom.GlobalPoint
	keys      []desktop.Key
	buttons   []desktop.Button
	typed     []byte
	clipboard string
	title     string
	elements  []desktop.Element
	pressed   []string
	fails     map[string][]failure
	hook      func(Event)
	closed    bool
	echo      bool          // EchoesPointer
	changed   chan struct{} // closed and replaced whenever an event is recorded
	captures  int
}

// New returns a Backend with the given layout; it has no side effects.
func New(o Options) *Backend {
	ds := slices.Clone(o.Displays)
	if len(ds) == 0 {
		ds = []geom.Display{{ID: "0", Name: "FAKE-0", Bounds: geom.Rect{W: 1920, H: 1080}, Scale: 1, Primary: true}}
	}
	primary := false
	for i := range ds {
		if ds[i].ID == "" {
			ds[i].ID = strconv.Itoa(i)
		}
		if ds[i].Name == "" {
			ds[i].Name = "FAKE-" + ds[i].ID
		}
		if ds[i].Scale <= 0 {
			ds[i].Scale = 1
		}
		primary = primary || ds[i].Primary
	}
	if !primary {
		ds[0].Primary = true
	}
	b := &Backend{
		delay:    o.PrimitiveDelay,
		displays: ds,
		fb:       make(map[string]*image.RGBA, len(ds)),
		fails:    map[string][]failure{},
		title:    "Fake Window",
		changed:  make(chan struct{}),
	}
	bg := o.Background
	if bg == (color.RGBA{}) {
		bg = color.RGBA{A: 255}
	}
	for _, d := range ds {
		ps := d.PhysicalSize()
		img := image.NewRGBA(image.Rect(0, 0, ps.W, ps.H))
		draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
		b.fb[d.ID] = img
	}
	for _, d := range ds {
		if d.Primary {
			b.cursor = geom.GlobalPoint{X: d.Bounds.X + d.Bounds.W/2, Y: d.Bounds.Y + d.Bounds.H/2}
		}
	}
	return b
}

// Name returns "fake".
func (b *Backend) Name() string { return "fake" }

// DisplayName returns "": the fake is one desktop in memory.
func (b *Backend) DisplayName() string { return "" }

// Close marks the backend closed; later calls return ErrClosed. It is idempotent.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// Displays returns the configured layout.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpDisplays); err != nil {
		return nil, err
	}
	return slices.Clone(b.displays), nil
}

// physSpan maps the logical span [lo, hi) of a display with scale s to device pixels.
func physSpan(lo, hi int, s float64) (int, int) {
	return int(math.Round(float64(lo) * s)), int(math.Round(float64(hi) * s))
}

// physRect maps r (local logical pixels of a display with scale s) to device pixels.
func physRect(r geom.Rect, s float64) image.Rectangle {
	x0, x1 := physSpan(r.X, r.X+r.W, s)
	y0, y1 := physSpan(r.Y, r.Y+r.H, s)
	return image.Rect(x0, y0, x1, y1)
}

// Capture copies region (global logical pixels, inside one display) at physical
// resolution, reusing dst when its buffer is large enough (see desktop.ReuseRGBA).
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpCapture); err != nil {
		return nil, err
	}
	if region.Empty() {
		return nil, fmt.Errorf("capture region %v is empty: give a width and height of at least 1", region)
	}
	var d geom.Display
	found := false
	for _, c := range b.displays {
		if c.Bounds.Intersect(region) == region {
			d, found = c, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("capture region %v is not inside one display (%s): capture each display separately", region, b.layoutLocked())
	}
	src := b.fb[d.ID]
	local := geom.Rect{X: region.X - d.Bounds.X, Y: region.Y - d.Bounds.Y, W: region.W, H: region.H}
	pr := physRect(local, d.ScaleFactor()).Intersect(src.Bounds())
	w, h := pr.Dx(), pr.Dy()
	out := desktop.ReuseRGBA(dst, w, h)
	draw.Draw(out, out.Bounds(), src, pr.Min, draw.Src)
	b.captures++
	return out, nil
}

// Captures counts the captures served so far: a test waits on it for "the
// screen was looked at n more times" instead of sleeping.
func (b *Backend) Captures() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.captures
}

func (b *Backend) layoutLocked() string {
	s := ""
	for i, d := range b.displays {
		if i > 0 {
			s += ", "
		}
		s += d.ID + "=" + d.Bounds.String()
	}
	return s
}

// Fill paints r (global logical pixels, may span displays) with c on every
// display it touches, at physical resolution.
func (b *Backend) Fill(r geom.Rect, c color.RGBA) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.displays {
		in := d.Bounds.Intersect(r)
		if in.Empty() {
			continue
		}
		local := geom.Rect{X: in.X - d.Bounds.X, Y: in.Y - d.Bounds.Y, W: in.W, H: in.H}
		img := b.fb[d.ID]
		draw.Draw(img, physRect(local, d.ScaleFactor()).Intersect(img.Bounds()), image.NewUniform(c), image.Point{}, draw.Src)
	}
}

// SetImage draws img (physical pixels) onto display id's framebuffer with its
// top-left at the display's top-left; pixels beyond the display are dropped.
func (b *Backend) SetImage(displayID string, img image.Image) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	fb, ok := b.fb[displayID]
	if !ok {
		return fmt.Errorf("fake: no display %q (have %s)", displayID, b.layoutLocked())
	}
	draw.Draw(fb, fb.Bounds(), img, img.Bounds().Min, draw.Src)
	return nil
}

// Image returns a copy of display id's framebuffer (physical pixels), or nil for an unknown id.
func (b *Backend) Image(displayID string) *image.RGBA {
	b.mu.Lock()
	defer b.mu.Unlock()
	fb, ok := b.fb[displayID]
	if !ok {
		return nil
	}
	out := image.NewRGBA(fb.Bounds())
	copy(out.Pix, fb.Pix)
	return out
}

// check fails when closed, when ctx is done or when a failure is queued for op.
// Caller holds mu.
func (b *Backend) check(ctx context.Context, op string) error {
	if b.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q := b.fails[op]
	if len(q) == 0 {
		return nil
	}
	if q[0].skip > 0 {
		q[0].skip--
		return nil
	}
	err := q[0].err
	b.fails[op] = q[1:]
	return err
}

// FailNext makes the next call of op (one of the Op constants) return err
// without effect. Calls queue: FailNext twice fails the next two calls.
// It panics on an unknown op, a mistake in the test.
func (b *Backend) FailNext(op string, err error) { b.FailAfter(op, 0, err) }

// FailAfter lets skip calls of op succeed, then makes the following one return
// err without effect: a primitive that fails midway through an action.
func (b *Backend) FailAfter(op string, skip int, err error) {
	if !slices.Contains(knownOps, op) {
		panic(fmt.Sprintf("fake: unknown op %q; use one of %v", op, knownOps))
	}
	if err == nil {
		err = fmt.Errorf("fake: injected failure of %s", op)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails[op] = append(b.fails[op], failure{skip: skip, err: err})
}

// OnEvent calls fn after each recorded input primitive, outside the backend's
// lock (fn may call the backend). Pass nil to remove it.
func (b *Backend) OnEvent(fn func(Event)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hook = fn
}

// input runs one input primitive: delay, check, apply, record, notify.
func (b *Backend) input(ctx context.Context, op string, apply func(e *Event) error) error {
	if b.delay > 0 {
		t := time.NewTimer(b.delay)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	b.mu.Lock()
	if err := b.check(ctx, op); err != nil {
		b.mu.Unlock()
		return err
	}
	e := Event{Op: op, At: b.cursor, Modifiers: b.modifiersLocked()}
	if err := apply(&e); err != nil {
		b.mu.Unlock()
		return err
	}
	b.seq++
	e.Seq = b.seq
	b.events = append(b.events, e)
	close(b.changed)
	b.changed = make(chan struct{})
	hook := b.hook
	b.mu.Unlock()
	if hook != nil {
		hook(e)
	}
	return nil
}

func (b *Backend) modifiersLocked() []string {
	var mods []string
	for _, k := range b.keys {
		if k.IsModifier() {
			if s := k.ShortName(); !slices.Contains(mods, s) {
				mods = append(mods, s)
			}
		}
	}
	sort.Strings(mods)
	return mods
}

// MoveTo puts the pointer at p (global logical pixels). Points off every display
// are an error, as on a real desktop the pointer cannot go there.
func (b *Backend) MoveTo(ctx context.Context, p geom.GlobalPoint) error {
	return b.input(ctx, OpMove, func(e *Event) error {
		if _, ok := geom.DisplayAt(b.displays, p); !ok {
			return fmt.Errorf("move to %v: the point is on no display (%s); clamp it to a display first", p, b.layoutLocked())
		}
		b.cursor = p
		e.At = p
		return nil
	})
}

// ButtonDown presses btn at the current position.
func (b *Backend) ButtonDown(ctx context.Context, btn desktop.Button) error {
	return b.input(ctx, OpButtonDown, func(e *Event) error {
		if err := validButton(btn); err != nil {
			return err
		}
		e.Button = btn
		if !slices.Contains(b.buttons, btn) {
			b.buttons = append(b.buttons, btn)
		}
		return nil
	})
}

// ButtonUp releases btn at the current position (releasing a button that is up is allowed).
func (b *Backend) ButtonUp(ctx context.Context, btn desktop.Button) error {
	return b.input(ctx, OpButtonUp, func(e *Event) error {
		if err := validButton(btn); err != nil {
			return err
		}
		e.Button = btn
		if i := slices.Index(b.buttons, btn); i >= 0 {
			b.buttons = slices.Delete(b.buttons, i, i+1)
		}
		return nil
	})
}

func validButton(btn desktop.Button) error {
	switch btn {
	case desktop.Left, desktop.Middle, desktop.Right:
		return nil
	}
	return fmt.Errorf("unknown mouse button %d: use desktop.Left, Middle or Right", int(btn))
}

// Scroll turns the wheel notches times in d at the current position.
func (b *Backend) Scroll(ctx context.Context, d desktop.Direction, notches int) error {
	return b.input(ctx, OpScroll, func(e *Event) error {
		if _, err := desktop.ParseDirection(string(d)); err != nil {
			return err
		}
		if notches < 1 {
			return fmt.Errorf("scroll by %d notches: give at least 1", notches)
		}
		e.Direction, e.Notches = d, notches
		return nil
	})
}

// CursorPosition returns the pointer position (global logical pixels).
func (b *Backend) CursorPosition(ctx context.Context) (geom.GlobalPoint, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpCursorPosition); err != nil {
		return geom.GlobalPoint{}, err
	}
	return b.cursor, nil
}

// EchoPointer makes the backend a PointerEcho that echoes (on) or observes
// (off, the default) the pointer.
func (b *Backend) EchoPointer(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.echo = on
}

// EchoesPointer implements desktop.PointerEcho.
func (b *Backend) EchoesPointer() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.echo
}

// SetCursor moves the pointer as a human would: the position changes but no
// input primitive is recorded.
func (b *Backend) SetCursor(p geom.GlobalPoint) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cursor = p
}

// KeyDown presses k.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	return b.input(ctx, OpKeyDown, func(e *Event) error {
		if k == "" {
			return errors.New("key down: empty key name; parse names with desktop.ParseKey")
		}
		e.Key = k
		if !slices.Contains(b.keys, k) {
			b.keys = append(b.keys, k)
		}
		return nil
	})
}

// KeyUp releases k (releasing a key that is up is allowed).
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	return b.input(ctx, OpKeyUp, func(e *Event) error {
		if k == "" {
			return errors.New("key up: empty key name; parse names with desktop.ParseKey")
		}
		e.Key = k
		if i := slices.Index(b.keys, k); i >= 0 {
			b.keys = slices.Delete(b.keys, i, i+1)
		}
		return nil
	})
}

// TypeText appends text to the typed-text buffer (see Typed). It does not touch
// the clipboard.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	return b.input(ctx, OpType, func(e *Event) error {
		e.Text = text
		b.typed = append(b.typed, text...)
		return nil
	})
}

// ReadClipboard returns the clipboard text.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpReadClipboard); err != nil {
		return "", err
	}
	return b.clipboard, nil
}

// WriteClipboard replaces the clipboard text.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpWriteClipboard); err != nil {
		return err
	}
	b.clipboard = text
	return nil
}

// ActiveWindowTitle returns the title set by SetActiveWindow ("Fake Window" at start).
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(ctx, OpActiveWindow); err != nil {
		return "", err
	}
	return b.title, nil
}

// SetActiveWindow sets the title ActiveWindowTitle reports.
func (b *Backend) SetActiveWindow(title string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.title = title
}

// Describe reports the backend and its layout.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return map[string]string{"backend": "fake", "displays": strconv.Itoa(len(b.displays)), "layout": b.layoutLocked()}
}

// Events returns every recorded input primitive in order.
func (b *Backend) Events() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.events)
}

// WaitEvents waits until more than after events were recorded in total (or ctx
// ends) and returns the events after the first after ones.
func (b *Backend) WaitEvents(ctx context.Context, after int) []Event {
	for {
		b.mu.Lock()
		if len(b.events) > after {
			out := slices.Clone(b.events[after:])
			b.mu.Unlock()
			return out
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		}
	}
}

// ResetEvents forgets recorded events (the sequence numbers keep counting).
func (b *Backend) ResetEvents() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = nil
}

// Pressed returns the keys and buttons currently held down, in press order.
func (b *Backend) Pressed() ([]desktop.Key, []desktop.Button) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.keys), slices.Clone(b.buttons)
}

// Typed returns everything TypeText entered since the start or the last ResetTyped.
func (b *Backend) Typed() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.typed)
}

// ResetTyped empties the typed-text buffer.
func (b *Backend) ResetTyped() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.typed = nil
}
