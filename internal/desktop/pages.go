package desktop

import (
	"context"
	"time"

	"github.com/guiagent/guiagent/internal/geom"
)

// The capabilities below belong to backends that are not a desktop: a web
// browser (pages, tabs, file inputs) and a phone (apps). Like the other
// optional capabilities they are found by type assertion, through wrappers
// (CapabilityOf), and the tools that need one are offered only where it
// exists.

// CapabilityOf returns s, or what s unwraps to, as a T: how a caller finds
// an optional capability of a backend that may be wrapped.
func CapabilityOf[T any](s Screen) (T, bool) {
	var zero T
	for i := 0; s != nil && i < 16; i++ {
		if c, ok := s.(T); ok {
			return c, true
		}
		u, ok := s.(Unwrapper)
		if !ok {
			return zero, false
		}
		s = u.Unwrap()
	}
	return zero, false
}

// Wait says when a navigation is done.
type Wait string

// Navigation waits.
const (
	WaitLoad             Wait = "load"             // the load event (the default)
	WaitDOMContentLoaded Wait = "domcontentloaded" // the DOMContentLoaded event
	WaitNetworkIdle      Wait = "networkidle"      // no request for 500 ms after load
)

// NavAction is a navigation without a URL.
type NavAction string

// Navigation actions.
const (
	NavBack    NavAction = "back"
	NavForward NavAction = "forward"
	NavReload  NavAction = "reload"
)

// Navigation asks a Navigator to go somewhere: URL, or Action.
type Navigation struct {
	URL     string
	Action  NavAction
	Wait    Wait          // "" means WaitLoad
	Timeout time.Duration // 0 means the backend's default
}

// Page is where a navigation ended.
type Page struct {
	URL    string `json:"url"`
	Title  string `json:"title"`
	Status int    `json:"status,omitempty"` // the HTTP status of the main document; 0 when none (back to a cached page, about:blank)
	// Events are what the page raised meanwhile (a dialog's text, a download).
	Events []string `json:"events,omitempty"`
}

// Navigator is a backend with pages (the browser): it navigates the active
// tab. A failed navigation is an error with the browser's reason.
type Navigator interface {
	Navigate(ctx context.Context, n Navigation) (Page, error)
}

// Tab is one tab of a browser.
type Tab struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Active bool   `json:"active,omitempty"`
	// Ours is set for the tabs guiagent opened (or was told to use); the
	// others are the user's.
	Ours bool `json:"ours,omitempty"`
}

// Tabber is a backend whose windows are tabs: list, open, bring to front
// and close them. The backend keeps working in whichever tab is in front.
type Tabber interface {
	Tabs(ctx context.Context) ([]Tab, error)
	NewTab(ctx context.Context, url string) (Tab, error)
	SelectTab(ctx context.Context, id string) (Tab, error)
	CloseTab(ctx context.Context, id string) error
}

// Uploader sets the files of a file input, named by an element's Handle.
type Uploader interface {
	Upload(ctx context.Context, handle string, paths []string) error
}

// Revealer is an element source whose elements can be scrolled into view
// before acting on them (the browser): Reveal scrolls the element into view
// and returns its box now, in global logical pixels, after checking that the
// element itself is what sits at the box's centre. An element covered by
// another is an error that names the cover.
type Revealer interface {
	Reveal(ctx context.Context, handle string) (geom.Rect, error)
}

// App is one installed application of a phone.
type App struct {
	ID    string `json:"id"` // the Android package, the iOS bundle id, the HarmonyOS bundle name
	Label string `json:"label,omitempty"`
}

// Apps is a backend with applications to start and stop (the phones).
type Apps interface {
	ListApps(ctx context.Context) ([]App, error)
	LaunchApp(ctx context.Context, id string) error
	StopApp(ctx context.Context, id string) error
	// OpenURL opens a URL (a web address or an app's deep link) in the app
	// that handles it.
	OpenURL(ctx context.Context, url string) error
}

// MultiTapper is a touch backend that sends a double (or triple) tap as one
// gesture at p: Input.Click uses it for a left double or triple click with
// no modifier held, since taps sent one by one may come too far apart for
// the device to see one double tap.
type MultiTapper interface {
	MultiTap(ctx context.Context, p geom.GlobalPoint, count int) error
}

// Holder is a backend that cannot hold every press down across calls (a
// phone without a touch-down command): MouseDown asks CanHold first, and a
// press it cannot hold is an error before anything is sent. A click or a
// drag, pressed and released in one call, needs no hold.
type Holder interface {
	CanHold(ctx context.Context) error
}

// Touch marks a backend whose pointer is a finger (the phones): a click is
// a tap, a right click a long press, a scroll a swipe. The agent's system
// prompt says so; DeviceKind names it ("phone").
type Touch interface {
	DeviceKind() string
}

// Download is a file a page downloaded into the session's folder.
type Download struct {
	Name  string `json:"name"`            // the file's name as the page suggested it
	Path  string `json:"path,omitempty"`  // where it was saved, once complete
	URL   string `json:"url"`             // where it came from
	Bytes int64  `json:"bytes,omitempty"` // its size so far
	State string `json:"state"`           // inProgress, completed or canceled
}

// PageEvents is a backend whose pages raise things a call did not ask for
// (a dialog answered, a download started): TakeEvents returns them, in
// order, and forgets them, so the result of the call that raised one tells
// it; Downloads lists the downloads of this session.
type PageEvents interface {
	TakeEvents() []string
	Downloads() []Download
}
