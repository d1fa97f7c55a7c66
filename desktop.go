package guiagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // Screenshot.Image decodes JPEG
	_ "image/png"  // and PNG
	"strings"
	"sync/atomic"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/safety"
)

// Rect is a rectangle in screen pixels: logical pixels of the virtual
// desktop, origin at the primary display's top-left (may be negative).
type Rect struct{ X, Y, Width, Height int }

// Display is one monitor.
type Display struct {
	// ID names it in Options.Display, ScreenshotOptions.Display and OnDisplay.
	ID   string
	Name string
	// Bounds is where it lies in screen pixels.
	Bounds Rect
	// ScaleFactor is device pixels per screen pixel (1, 1.25, 2...).
	ScaleFactor float64
	Primary     bool
}

// Displays lists the monitors, as gui_list_displays does.
func (a *Agent) Displays(ctx context.Context) ([]Display, error) {
	ds, err := a.app.Screen().Displays(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Display, len(ds))
	for i, d := range ds {
		out[i] = Display{ID: d.ID, Name: d.Name, Bounds: Rect{d.Bounds.X, d.Bounds.Y, d.Bounds.W, d.Bounds.H}, ScaleFactor: d.ScaleFactor(), Primary: d.Primary}
	}
	return out, nil
}

// ScreenshotOptions choose what Screenshot captures and how it encodes it.
// Zero fields take the Agent's Options (and their defaults).
type ScreenshotOptions struct {
	// Display is the display id; "" means Options.Display, else the primary.
	Display string
	// MaxLongEdge caps the image's long edge in pixels (64-8192).
	MaxLongEdge int
	// Format is "jpeg" or "png".
	Format string
	// Quality is the JPEG quality, 1-100.
	Quality int
}

// Screenshot is one capture of a display, encoded. Its Point method turns
// pixels of this image into points the input methods accept.
type Screenshot struct {
	// Data is the encoded image; MIME is "image/jpeg" or "image/png".
	Data []byte
	MIME string
	// Width and Height are the image's size in pixels.
	Width, Height int
	// Display is the id of the display captured; Screen is the part of the
	// screen the image shows, in screen pixels.
	Display string
	Screen  Rect

	frame geom.Frame
	thumb imaging.Thumb
}

var shotSeq atomic.Uint64

// Screenshot captures a display.
func (a *Agent) Screenshot(ctx context.Context, o ScreenshotOptions) (*Screenshot, error) {
	d, err := a.display(ctx, o.Display)
	if err != nil {
		return nil, err
	}
	return a.capture(ctx, d, geom.Rect{}, o)
}

// display is the display with this id ("": Options.Display, else the primary).
func (a *Agent) display(ctx context.Context, id string) (geom.Display, error) {
	ds, err := a.app.Screen().Displays(ctx)
	if err != nil {
		return geom.Display{}, err
	}
	if id == "" {
		id = a.app.Config().DisplayIndex
	}
	d, err := geom.FindDisplay(ds, id)
	if err != nil {
		return geom.Display{}, fmt.Errorf("guiagent: display: %w (Displays lists them)", err)
	}
	return d, nil
}

// Zoom captures the rectangle between two corners (on one display) at up to
// four times its screen size, for a closer look. Points of the returned
// screenshot are pixels of the zoomed image. o.Display is ignored.
func (a *Agent) Zoom(ctx context.Context, corner1, corner2 Point, o ScreenshotOptions) (*Screenshot, error) {
	p, err := a.resolveOn(ctx, corner1)
	if err != nil {
		return nil, err
	}
	q, err := a.resolveOn(ctx, corner2)
	if err != nil {
		return nil, err
	}
	if p.Display.ID != q.Display.ID {
		return nil, fmt.Errorf("guiagent: the zoom region spans displays %s and %s: give corners on one display", p.Display.ID, q.Display.ID)
	}
	region, err := geom.ZoomRegion(p.Global, q.Global, p.Display)
	if err != nil {
		return nil, fmt.Errorf("guiagent: %w", err)
	}
	if o.MaxLongEdge == 0 {
		o.MaxLongEdge = min(a.app.Config().MaxLongEdge, 4*region.Size().LongEdge())
	}
	return a.capture(ctx, p.Display, region, o)
}

// capture shoots region (zero: all) of d with o over the agent's defaults.
func (a *Agent) capture(ctx context.Context, d geom.Display, region geom.Rect, o ScreenshotOptions) (*Screenshot, error) {
	return a.captureFor(ctx, d, region, o, nil)
}

// captureFor is capture prepared for a model of profile p (nil: none).
func (a *Agent) captureFor(ctx context.Context, d geom.Display, region geom.Rect, o ScreenshotOptions, p *geom.Profile) (*Screenshot, error) {
	c := a.app.Config()
	io := imaging.Options{MaxLongEdge: c.MaxLongEdge, Format: c.ImageFormat, Quality: c.JPEGQuality, MaxBytes: c.MaxImageBytes}
	if p != nil {
		io.Profile = *p
	}
	if o.MaxLongEdge != 0 {
		io.MaxLongEdge = o.MaxLongEdge
	}
	if o.Format != "" {
		io.Format = o.Format
	}
	if o.Quality != 0 {
		io.Quality = o.Quality
	}
	if err := io.Validate(); err != nil {
		return nil, fmt.Errorf("guiagent: screenshot: %w", err)
	}
	shot, err := a.app.Shots().Shoot(ctx, a.app.Screen(), d, region, io, fmt.Sprintf("go%d", shotSeq.Add(1)))
	if err != nil {
		return nil, err
	}
	f := shot.Frame
	sz := f.ImageSize()
	return &Screenshot{Data: shot.Data, MIME: shot.MIME, Width: sz.W, Height: sz.H, Display: f.Display.ID,
		Screen: Rect{f.Region.X, f.Region.Y, f.Region.W, f.Region.H}, frame: f, thumb: shot.Thumb}, nil
}

// Image decodes the screenshot.
func (s *Screenshot) Image() (image.Image, error) {
	m, _, err := image.Decode(bytes.NewReader(s.Data))
	return m, err
}

// Point is a point on the screen together with its space: pixels of one
// screenshot's image (Screenshot.Point) or screen pixels (ScreenPoint). The
// zero Point is invalid.
type Point struct {
	x, y   float64
	shot   *Screenshot // image pixels of this screenshot, or
	screen bool        // screen pixels
}

// Point is the point at pixel (x, y) of this screenshot's image (origin at the
// top-left, fractions allowed). Input at it lands where that pixel shows.
func (s *Screenshot) Point(x, y float64) Point { return Point{x: x, y: y, shot: s} }

// ScreenPoint is the point at (x, y) in screen pixels: logical pixels of the
// virtual desktop, origin at the primary display's top-left.
func ScreenPoint(x, y int) Point { return Point{x: float64(x), y: float64(y), screen: true} }

// String shows the point with its space.
func (p Point) String() string {
	switch {
	case p.shot != nil:
		return fmt.Sprintf("image(%g,%g)", p.x, p.y)
	case p.screen:
		return fmt.Sprintf("screen(%g,%g)", p.x, p.y)
	}
	return "invalid point"
}

// ErrOutside is wrapped by the error for a point outside its screenshot or
// off every display, or in a screenshot's padding.
var ErrOutside = errors.New("the point is not on the screen")

// resolve maps p to a global point through guiagent's one resolver (the
// MCP tools and the agent use it too), refusing a point off its screenshot
// or off every display rather than clamping it.
func (a *Agent) resolve(ctx context.Context, p Point) (geom.GlobalPoint, error) {
	r, err := a.resolveOn(ctx, p)
	return r.Global, err
}

// resolveOn is resolve with the display the point lies on.
func (a *Agent) resolveOn(ctx context.Context, p Point) (geom.Resolved, error) {
	var ap action.Point
	var f geom.Frame
	where := ""
	switch {
	case p.shot != nil:
		ap, f = action.Point{Space: geom.SpaceImage, X: p.x, Y: p.y}, p.shot.frame
		where = fmt.Sprintf(" of a %dx%d screenshot", p.shot.Width, p.shot.Height)
	case p.screen:
		ap = action.Point{Space: geom.SpaceScreen, X: p.x, Y: p.y}
	default:
		return geom.Resolved{}, errors.New("guiagent: the zero Point has no space: make points with Screenshot.Point or ScreenPoint")
	}
	ds, err := a.app.Screen().Displays(ctx)
	if err != nil {
		return geom.Resolved{}, err
	}
	r, err := ap.Resolve(f, ds, 0)
	if err != nil {
		return geom.Resolved{}, fmt.Errorf("guiagent: %v%s: %w: %v", p, where, ErrOutside, err)
	}
	return r, nil
}

// Button is a mouse button.
type Button string

// Mouse buttons.
const (
	LeftButton   Button = "left"
	RightButton  Button = "right"
	MiddleButton Button = "middle"
)

func (b Button) parse() (desktop.Button, error) {
	if b == "" {
		return desktop.Left, nil
	}
	db, err := desktop.ParseButton(string(b))
	if err != nil {
		return 0, fmt.Errorf("guiagent: button %q: want left, right or middle", string(b))
	}
	return db, nil
}

// ClickOptions change a click. The zero value is one left click.
type ClickOptions struct {
	// Button is LeftButton ("") , RightButton or MiddleButton.
	Button Button
	// Count is 1 (0), 2 for a double click or 3 for a triple click.
	Count int
	// Modifiers are keys held during the click, e.g. "ctrl", "shift".
	Modifiers []string
}

// Move puts the pointer at p.
func (a *Agent) Move(ctx context.Context, p Point) (err error) {
	defer a.audit("move", map[string]any{"at": p.String()}, time.Now(), &err)
	g, err := a.resolve(ctx, p)
	if err != nil {
		return err
	}
	return a.do(ctx, "Move", action.Action{Kind: action.Move}, &g, nil)
}

// Click moves to p and clicks.
func (a *Agent) Click(ctx context.Context, p Point, o ClickOptions) (err error) {
	defer a.audit("click", map[string]any{"at": p.String(), "button": o.Button, "count": o.Count, "modifiers": o.Modifiers}, time.Now(), &err)
	b, err := o.Button.parse()
	if err != nil {
		return err
	}
	count := o.Count
	if count == 0 {
		count = 1
	}
	if count < 1 || count > action.MaxClicks {
		return fmt.Errorf("guiagent: click count %d: want 1, 2 or 3", o.Count)
	}
	mods, err := a.keys(o.Modifiers)
	if err != nil {
		return err
	}
	g, err := a.resolve(ctx, p)
	if err != nil {
		return err
	}
	return a.do(ctx, "Click", action.Action{Kind: action.Click, Button: b, Count: count, Keys: mods}, &g, nil)
}

// MouseDown moves to p and presses the button ("" is left), leaving it held
// until MouseUp or Close.
func (a *Agent) MouseDown(ctx context.Context, p Point, b Button) (err error) {
	defer a.audit("mouse_down", map[string]any{"at": p.String(), "button": b}, time.Now(), &err)
	db, err := b.parse()
	if err != nil {
		return err
	}
	g, err := a.resolve(ctx, p)
	if err != nil {
		return err
	}
	return a.do(ctx, "MouseDown", action.Action{Kind: action.MouseDown, Button: db}, &g, nil)
}

// MouseUp moves to p and releases the button ("" is left).
func (a *Agent) MouseUp(ctx context.Context, p Point, b Button) (err error) {
	defer a.audit("mouse_up", map[string]any{"at": p.String(), "button": b}, time.Now(), &err)
	db, err := b.parse()
	if err != nil {
		return err
	}
	g, err := a.resolve(ctx, p)
	if err != nil {
		return err
	}
	return a.do(ctx, "MouseUp", action.Action{Kind: action.MouseUp, Button: db}, &g, nil)
}

// Drag presses the left button at from, moves to to and releases it.
func (a *Agent) Drag(ctx context.Context, from, to Point) (err error) {
	defer a.audit("drag", map[string]any{"from": from.String(), "to": to.String()}, time.Now(), &err)
	f, err := a.resolve(ctx, from)
	if err != nil {
		return err
	}
	t, err := a.resolve(ctx, to)
	if err != nil {
		return err
	}
	return a.do(ctx, "Drag", action.Action{Kind: action.Drag, Button: desktop.Left}, &f, &t)
}

// Direction is a scroll direction.
type Direction string

// Scroll directions.
const (
	ScrollUp    Direction = "up"
	ScrollDown  Direction = "down"
	ScrollLeft  Direction = "left"
	ScrollRight Direction = "right"
)

// Scroll moves to p and turns the wheel notches times (1-50) in direction.
func (a *Agent) Scroll(ctx context.Context, p Point, direction Direction, notches int) (err error) {
	defer a.audit("scroll", map[string]any{"at": p.String(), "direction": direction, "notches": notches}, time.Now(), &err)
	d, err := desktop.ParseDirection(string(direction))
	if err != nil {
		return fmt.Errorf("guiagent: scroll direction %q: want up, down, left or right", string(direction))
	}
	if notches < 1 || notches > action.MaxScrollNotches {
		return fmt.Errorf("guiagent: scroll notches %d: want 1 to %d", notches, action.MaxScrollNotches)
	}
	g, err := a.resolve(ctx, p)
	if err != nil {
		return err
	}
	return a.do(ctx, "Scroll", action.Action{Kind: action.Scroll, Direction: d, Amount: notches}, &g, nil)
}

// Type enters text exactly, whatever the keyboard layout.
func (a *Agent) Type(ctx context.Context, text string) (err error) {
	defer a.audit("type", map[string]any{"text": text}, time.Now(), &err)
	return a.do(ctx, "Type", action.Action{Kind: action.TypeText, Text: text}, nil, nil)
}

// Hotkey presses keys together, e.g. Hotkey(ctx, "ctrl", "s"), and releases
// them. Combinations the hotkey policy blocks are refused with an error; one
// that GUI_AGENT_CONFIRM_HOTKEYS lists is pressed only after a person says
// yes on the dashboard (WithAsk answers tasks' questions, not these).
func (a *Agent) Hotkey(ctx context.Context, keys ...string) (err error) {
	defer a.audit("hotkey", map[string]any{"keys": keys}, time.Now(), &err)
	if len(keys) == 0 {
		return errors.New(`guiagent: Hotkey needs at least one key, e.g. Hotkey(ctx, "ctrl", "s")`)
	}
	ks, err := a.keys(keys)
	if err != nil {
		return err
	}
	return a.do(ctx, "Hotkey", action.Action{Kind: action.KeyPress, Keys: ks}, nil, nil)
}

// PressKey taps key (such as "enter", "tab", "f5") repeat times (1-100).
func (a *Agent) PressKey(ctx context.Context, key string, repeat int) (err error) {
	defer a.audit("press_key", map[string]any{"key": key, "repeat": repeat}, time.Now(), &err)
	if repeat < 1 || repeat > action.MaxKeyRepeat {
		return fmt.Errorf("guiagent: key repeat %d: want 1 to %d", repeat, action.MaxKeyRepeat)
	}
	ks, err := a.keys([]string{key})
	if err != nil {
		return err
	}
	return a.do(ctx, "PressKey", action.Action{Kind: action.KeyPress, Keys: ks[:1], Amount: repeat}, nil, nil)
}

// ReadClipboard returns the clipboard's text.
func (a *Agent) ReadClipboard(ctx context.Context) (string, error) {
	cb, ok := a.app.Screen().(desktop.Clipboard)
	if !ok {
		return "", fmt.Errorf("guiagent: the %s desktop has no clipboard: %w", a.app.Screen().Name(), desktop.ErrUnsupported)
	}
	return cb.ReadClipboard(ctx)
}

// WriteClipboard replaces the clipboard's text.
func (a *Agent) WriteClipboard(ctx context.Context, text string) (err error) {
	defer a.audit("clipboard_set", map[string]any{"text": text}, time.Now(), &err)
	cb, ok := a.app.Screen().(desktop.Clipboard)
	if !ok {
		return fmt.Errorf("guiagent: the %s desktop has no clipboard: %w", a.app.Screen().Name(), desktop.ErrUnsupported)
	}
	return cb.WriteClipboard(ctx, text)
}

// audit records a call in the audit log the dashboard and gui://audit show,
// as "go:" and its name (typed text masked, secrets scrubbed).
func (a *Agent) audit(name string, args map[string]any, start time.Time, err *error) {
	e := safety.AuditEntry{Time: start, Tool: "go:" + name, Result: "ok", Millis: time.Since(start).Milliseconds()}
	if *err != nil {
		e.Result, e.Error = "", (*err).Error()
	}
	a.app.Audit().Record(e, args)
}

// keys parses key names (the executor checks them against the hotkey policy).
func (a *Agent) keys(names []string) ([]desktop.Key, error) {
	if len(names) == 0 {
		return nil, nil
	}
	ks, err := desktop.ParseKeys(names)
	if err != nil {
		return nil, fmt.Errorf("guiagent: keys %s: %w", strings.Join(names, "+"), err)
	}
	return ks, nil
}

// do performs one action at the resolved points through the executor the
// MCP tools, tasks and flows use too: the hotkey policy,
// GUI_AGENT_CONFIRM_HOTKEYS (asked on the dashboard), the release ledger.
// A refusal says "guiagent:"; an input error is returned as it is.
func (a *Agent) do(ctx context.Context, method string, act action.Action, at, to *geom.GlobalPoint) error {
	op := operate.Op{Action: act, Who: "A Go call (" + method + ")"}
	if at != nil {
		op.At = &operate.Place{Global: *at}
	}
	if to != nil {
		op.To = &operate.Place{Global: *to}
	}
	_, err := a.app.Exec().Do(ctx, op)
	var pe *operate.PolicyError
	var re *operate.RefusedError
	if errors.As(err, &pe) || errors.As(err, &re) {
		return fmt.Errorf("guiagent: %w", err)
	}
	return err
}

// CursorPosition is where the pointer is, as a screen point.
func (a *Agent) CursorPosition(ctx context.Context) (Point, error) {
	g, err := a.app.Input().CursorPosition(ctx)
	if err != nil {
		return Point{}, err
	}
	return ScreenPoint(g.X, g.Y), nil
}

// ScreenXY returns p in screen pixels, as input at p would land.
func (a *Agent) ScreenXY(ctx context.Context, p Point) (x, y int, err error) {
	g, err := a.resolve(ctx, p)
	return g.X, g.Y, err
}
