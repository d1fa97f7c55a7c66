package darwin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ebitengine/purego/objc"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Backend drives the macOS desktop of the logged-in user. It is safe for
// concurrent use: input and clipboard calls are serialized internally.
type Backend struct {
	opts Options
	log  *slog.Logger

	// mu guards the fields below and serializes input.
	mu      sync.Mutex
	started bool
	closed  bool
	sys     native
	mods    modifierState
	clicks  clickCounter
	buttons []desktop.Button // pressed mouse buttons, oldest first
	// trusted caches a positive AXIsProcessTrusted answer; a negative one is
	// asked again on every call so that granting takes effect.
	trusted bool
	// canRecord caches a positive screen-capture preflight.
	canRecord bool

	clipMu sync.Mutex // serializes pasteboard access

	axOnce sync.Once
	ax     *axSource // the element source (ax_darwin.go), made on first use
}

// native holds the system handles of a started backend.
type native struct {
	api    *api
	source uintptr // CGEventSourceRef, released at Close
}

// Start loads the frameworks, creates the event source and checks that a
// display is active. Missing permissions do not fail Start: they are logged,
// prompted for when Options.PromptForPermissions is set, and reported by the
// calls that need them. On error the backend is left closable.
func (b *Backend) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started {
		return errors.New("macOS backend already started")
	}
	if b.closed {
		return errors.New("macOS backend is closed: create a new one with New")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a, err := loadAPI()
	if err != nil {
		return err
	}
	b.sys.api = a
	b.sys.source = a.CGEventSourceCreate(eventSourceHIDSystemState)
	if b.sys.source == 0 {
		return errors.New("macOS backend: CGEventSourceCreate failed: run guiagent inside a logged-in GUI session (not over plain SSH without a console user)")
	}
	b.started = true
	b.clicks.interval = doubleClickInterval()
	if ds, err := b.rawDisplays(); err != nil {
		return err
	} else if len(ds) == 0 {
		return errors.New("macOS backend: no active display: wake the Mac and log in to a GUI session, or connect a display")
	}
	if !b.accessibilityTrusted(b.opts.PromptForPermissions) {
		b.log.Warn("Accessibility permission missing: input will fail until it is granted", "fix", accessibilityError().Error())
	}
	if ok, known := b.screenRecordingAllowed(b.opts.PromptForPermissions); known && !ok {
		b.log.Warn("Screen Recording permission missing: captures will fail until it is granted", "fix", screenRecordingError("preflight check").Error())
	}
	return nil
}

// Close releases the event source. It is safe after a partial Start and when
// called more than once; it does not release keys or buttons (desktop.Input
// does that before closing).
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sys.api != nil && b.sys.source != 0 {
		b.sys.api.CFRelease(b.sys.source)
		b.sys.source = 0
	}
	b.started = false
	b.closed = true
	return nil
}

// readyLocked reports whether the backend can make calls. Caller holds mu.
func (b *Backend) readyLocked() error {
	if !b.started || b.sys.api == nil {
		if b.closed {
			return errors.New("macOS backend is closed")
		}
		return errors.New("macOS backend is not started: call Start first")
	}
	return nil
}

// apiReady returns the bound API of a started backend.
func (b *Backend) apiReady() (*api, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.readyLocked(); err != nil {
		return nil, err
	}
	return b.sys.api, nil
}

// accessibilityTrusted asks AXIsProcessTrusted (optionally showing the system
// prompt) and caches a positive answer. Caller holds mu.
func (b *Backend) accessibilityTrusted(prompt bool) bool {
	if b.trusted {
		return true
	}
	a := b.sys.api
	if prompt && a.AXIsProcessTrustedWithOptions != nil && a.kAXTrustedCheckOptionPrompt != 0 {
		key, val := a.kAXTrustedCheckOptionPrompt, a.kCFBooleanTrue
		dict := a.CFDictionaryCreate(0, &key, &val, 1, a.kCFTypeDictionaryKeyCallBacks, a.kCFTypeDictionaryValueCallBacks)
		if dict != 0 {
			b.trusted = a.AXIsProcessTrustedWithOptions(dict)
			a.CFRelease(dict)
			return b.trusted
		}
	}
	b.trusted = a.AXIsProcessTrusted()
	return b.trusted
}

// screenRecordingAllowed runs the Screen Recording preflight (optionally
// requesting access, which shows the system prompt). known is false on macOS
// versions without the preflight call. Caller holds mu.
func (b *Backend) screenRecordingAllowed(request bool) (ok, known bool) {
	if b.canRecord {
		return true, true
	}
	a := b.sys.api
	if a.CGPreflightScreenCaptureAccess == nil {
		return false, false
	}
	ok = a.CGPreflightScreenCaptureAccess()
	if !ok && request && a.CGRequestScreenCaptureAccess != nil {
		ok = a.CGRequestScreenCaptureAccess()
	}
	b.canRecord = ok
	return ok, true
}

// doubleClickInterval asks AppKit ([NSEvent doubleClickInterval], seconds)
// for the user's double-click speed.
func doubleClickInterval() time.Duration {
	cls := objc.GetClass("NSEvent")
	if cls == 0 {
		return defaultDoubleClickInterval
	}
	sec := objc.Send[float64](objc.ID(cls), objc.RegisterName("doubleClickInterval"))
	if sec <= 0 || sec > 5 {
		return defaultDoubleClickInterval
	}
	return time.Duration(sec * float64(time.Second))
}

// Describe reports the displays, permissions and capture method.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	d := map[string]string{
		"backend": "darwin (CoreGraphics through purego, no cgo)",
		"status":  "built and vetted by cross-compilation; not yet exercised on a real Mac",
	}
	b.mu.Lock()
	if err := b.readyLocked(); err != nil {
		b.mu.Unlock()
		d["state"] = err.Error()
		return d
	}
	a := b.sys.api
	if b.accessibilityTrusted(false) {
		d["accessibility"] = "granted"
	} else {
		d["accessibility"] = "missing: " + accessibilityError().Error()
	}
	switch ok, known := b.screenRecordingAllowed(false); {
	case !known:
		d["screen_recording"] = "unknown (no preflight on this macOS)"
	case ok:
		d["screen_recording"] = "granted"
	default:
		d["screen_recording"] = "missing: " + screenRecordingError("preflight check").Error()
	}
	d["double_click_interval"] = b.clicks.interval.String()
	b.mu.Unlock()

	switch {
	case a.CGDisplayCreateImageForRect != nil:
		d["capture"] = "CGDisplayCreateImageForRect"
	case a.CGWindowListCreateImage != nil:
		d["capture"] = "CGWindowListCreateImage"
	default:
		d["capture"] = "unavailable (this macOS removed the CoreGraphics capture calls)"
	}
	if ds, err := b.Displays(ctx); err == nil {
		d["displays"] = strconv.Itoa(len(ds))
		var parts []string
		for _, x := range ds {
			parts = append(parts, fmt.Sprintf("%s %s@%gx", x.ID, x.Bounds, x.ScaleFactor()))
		}
		d["layout"] = strings.Join(parts, ", ")
	} else {
		d["displays"] = "error: " + err.Error()
	}
	return d
}
