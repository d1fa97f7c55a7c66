// Package desktop states the contracts every desktop backend implements: a
// required Screen and optional Pointer, Keyboard, Clipboard, Windows and
// ElementSource capabilities, found by type assertion (ElementsOf for the
// element source, which also sees through wrappers). It also holds key names and the input
// ledger that guarantees nothing stays pressed.
//
// Concurrency: backends must be safe for concurrent use, but callers serialize
// input through Input so that actions from two callers never interleave.
package desktop

import (
	"context"
	"errors"
	"image"

	"github.com/guiagent/guiagent/internal/geom"
)

// ErrUnsupported is returned for a capability this platform or backend lacks.
var ErrUnsupported = errors.New("not supported by this desktop backend")

// Screen is the one required capability: list displays and capture them.
type Screen interface {
	// Name is a short backend name ("x11", "fake", "vnc", ...).
	Name() string
	// DisplayName names the desktop the backend drives as its session names
	// it: the X display (":0"), the Wayland socket ("wayland-1"), the VNC
	// server's address; "" where the system has one desktop (Windows, macOS).
	DisplayName() string
	// Displays lists the monitors of the virtual desktop in global logical pixels.
	Displays(ctx context.Context) ([]geom.Display, error)
	// Capture grabs region (global logical pixels, inside one display) at physical
	// resolution into dst when dst is large enough (to reuse buffers), else into a
	// new image. The returned image's bounds start at (0,0).
	Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error)
	// Close releases the backend's resources; safe after a partial start.
	Close() error
}

// Button is a mouse button.
type Button int

// Mouse buttons.
const (
	Left Button = iota + 1
	Middle
	Right
)

// String returns "left", "middle" or "right".
func (b Button) String() string {
	switch b {
	case Left:
		return "left"
	case Middle:
		return "middle"
	case Right:
		return "right"
	}
	return "button?"
}

// ParseButton accepts left/right/middle (case-insensitive); "" means left.
func ParseButton(s string) (Button, error) {
	switch lower(s) {
	case "", "left", "1":
		return Left, nil
	case "middle", "2":
		return Middle, nil
	case "right", "3":
		return Right, nil
	}
	return 0, errors.New("unknown mouse button " + quote(s) + ": use left, right or middle")
}

// Direction is a scroll direction.
type Direction string

// Scroll directions.
const (
	Up     Direction = "up"
	Down   Direction = "down"
	LeftD  Direction = "left"
	RightD Direction = "right"
)

// ParseDirection accepts up/down/left/right.
func ParseDirection(s string) (Direction, error) {
	switch d := Direction(lower(s)); d {
	case Up, Down, LeftD, RightD:
		return d, nil
	}
	return "", errors.New("unknown scroll direction " + quote(s) + ": use up, down, left or right")
}

// Pointer moves the mouse and presses its buttons. Positions are global logical pixels.
type Pointer interface {
	MoveTo(ctx context.Context, p geom.GlobalPoint) error
	ButtonDown(ctx context.Context, b Button) error
	ButtonUp(ctx context.Context, b Button) error
	// Scroll turns the wheel by notches in a direction at the current position.
	Scroll(ctx context.Context, d Direction, notches int) error
	CursorPosition(ctx context.Context) (geom.GlobalPoint, error)
}

// Keyboard presses keys and types text.
type Keyboard interface {
	KeyDown(ctx context.Context, k Key) error
	KeyUp(ctx context.Context, k Key) error
	// TypeText enters text exactly, any Unicode. It leaves no key pressed, even on
	// error, and restores the user's clipboard if it used it.
	TypeText(ctx context.Context, text string) error
}

// Clipboard reads and writes the clipboard as text.
type Clipboard interface {
	ReadClipboard(ctx context.Context) (string, error)
	WriteClipboard(ctx context.Context, text string) error
}

// Windows tells which window has focus.
type Windows interface {
	ActiveWindowTitle(ctx context.Context) (string, error)
}

// InputReadiness is implemented by backends whose input needs a grant the
// user gives on the screen (the desktop portal's permission dialog):
// InputReady reports whether input works now, and if not, why, naming the
// dialog that waits. Doctor and the start-up log ask it.
type InputReadiness interface {
	InputReady(ctx context.Context) error
}

// PointerEcho is implemented by backends whose CursorPosition can only
// echo where guiagent last put the pointer, because the platform shows them
// no pointer position (Wayland, the desktop portal, VNC). EchoesPointer
// reports whether that is so: nothing read from such a position can tell
// that someone else moved the pointer, so human-override detection is off.
type PointerEcho interface {
	EchoesPointer() bool
}

// Capabilities describes what a backend offers, for status and doctor output.
type Capabilities struct {
	Capture   bool              `json:"capture"`
	Input     bool              `json:"input"`
	Clipboard bool              `json:"clipboard"`
	Windows   bool              `json:"windows"`
	Elements  bool              `json:"elements"`
	Details   map[string]string `json:"details,omitempty"`
}

// Describer is optionally implemented to report backend details (extensions...).
type Describer interface {
	Describe(ctx context.Context) map[string]string
}

// CapabilitiesOf reports which optional interfaces s implements.
func CapabilitiesOf(ctx context.Context, s Screen) Capabilities {
	_, p := s.(Pointer)
	_, k := s.(Keyboard)
	_, c := s.(Clipboard)
	_, w := s.(Windows)
	_, e := ElementsOf(s)
	caps := Capabilities{Capture: true, Input: p && k, Clipboard: c, Windows: w, Elements: e}
	if d, ok := s.(Describer); ok {
		caps.Details = d.Describe(ctx)
	}
	return caps
}

// ReuseRGBA returns dst reshaped to a w x h image with bounds at (0,0) and
// stride w*4 when its buffer is large enough, else a new image: how backends
// honour Screen.Capture's buffer reuse.
func ReuseRGBA(dst *image.RGBA, w, h int) *image.RGBA {
	n := w * h * 4
	if dst != nil && cap(dst.Pix) >= n {
		dst.Pix = dst.Pix[:n]
		dst.Stride = w * 4
		dst.Rect = image.Rect(0, 0, w, h)
		return dst
	}
	return image.NewRGBA(image.Rect(0, 0, w, h))
}
