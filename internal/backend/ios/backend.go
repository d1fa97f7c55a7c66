// Package ios is the desktop backend of an iPhone or iPad (device or
// simulator) driven through WebDriverAgent (appium/WebDriverAgent, version
// 7 or later), which the user runs on the device and reaches over HTTP
// through whatever forwards its port (iproxy, go-ios, Xcode's simulator
// networking): --wda-url, default http://127.0.0.1:8100.
//
// What it uses of WDA, with the routes and answer shapes as WDA's own
// source declares them (WebDriverAgentLib/Commands/*.m and
// Routing/FBResponsePayload.m of appium/WebDriverAgent; every answer
// {"value": ..., "sessionId": ...}, an error's value {"error", "message",
// "traceback"} with "invalid session id" for a session WDA no longer has):
//
//   - a session per guiagent server (POST /session), created again when WDA
//     answers "invalid session id" (WDA restarted);
//   - the screen: GET /screenshot (a PNG in pixels), GET /wda/screen (the
//     screen's size in points, orientation applied, and its scale), GET
//     /orientation (PORTRAIT, LANDSCAPE, UIA_DEVICE_ORIENTATION_...);
//   - input: taps, long presses and swipes as W3C actions of one touch
//     pointer (POST /session/:id/actions), text through /wda/keys (any
//     Unicode), the home button through /wda/homescreen, volume keys
//     through /wda/pressButton;
//   - elements: GET /source?format=json (the XCUITest tree: type, name,
//     label, value, rect, isEnabled, isVisible, isFocused,
//     placeholderValue);
//   - apps: /wda/apps/launch, /wda/apps/terminate and /wda/apps/list (the
//     running apps: WDA cannot list installed ones), POST /url;
//   - doctor: /status (WDA's version, iOS's), /wda/device/info (the
//     device's name), /wda/screen.
//
// Coordinates: logical pixels are iOS points, which WDA's actions take;
// the screenshot is in pixels (points x scale). A phone has no pointer:
// CursorPosition echoes guiagent's own moves, a click is a tap, a right
// click or a long hold a long press, a drag a swipe, a scroll a swipe
// (package phone's Gesture).
//
// Not offered: the clipboard (reading it from WDA raises iOS's paste
// prompt), key combinations (WDA types text; it has no modifier keys), a
// finger held down across calls (a W3C action sequence ends with its
// fingers up), installed apps that are not running. Tested against the
// fake WebDriverAgent of package iostest only: no device or simulator was
// driven.
package ios

import (
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/geom"
)

// DefaultURL is where WebDriverAgent listens (its USB port forwarded by iproxy).
const DefaultURL = "http://127.0.0.1:8100"

// MinVersion is the oldest WebDriverAgent (major version) guiagent drives.
const MinVersion = 7

// Options configures a Backend.
type Options struct {
	// URL is WebDriverAgent's address; "" means DefaultURL.
	URL string
	// Timeout bounds each request; zero means 60s.
	Timeout time.Duration
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Backend drives one iOS device through WebDriverAgent. It is safe for
// concurrent use.
type Backend struct {
	opts Options
	log  *slog.Logger
	c    *client

	version, osName, osVersion, device, name string

	// Gesture is the pointer: taps, swipes and long presses.
	phone.Gesture
	held phone.Keys // keys held: sent at their release

	mu       sync.Mutex
	screen   screenInfo
	screenAt time.Time
}

var _ phone.Backend = (*Backend)(nil)

// status is GET /status's value.
type status struct {
	Ready bool `json:"ready"`
	OS    struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"os"`
	Build struct {
		Version string `json:"version"`
	} `json:"build"`
	Device string `json:"device"`
}

// screenInfo is GET /wda/screen's value and the orientation.
type screenInfo struct {
	ScreenSize struct {
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	} `json:"screenSize"`
	Scale       float64 `json:"scale"`
	Orientation string  `json:"-"`
}

// Open reaches WebDriverAgent, checks its version, creates the session and
// reads the device's name and screen.
func Open(ctx context.Context, o Options) (*Backend, error) {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	b := &Backend{opts: o, log: o.Logger, c: newClient(o.URL, o.Timeout)}
	if b.log == nil {
		b.log = slog.Default()
	}
	st, err := b.status(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(st.Build.Version); err != nil {
		return nil, err
	}
	b.version, b.osName, b.osVersion, b.device = st.Build.Version, st.OS.Name, st.OS.Version, st.Device
	if _, err := b.c.newSession(ctx); err != nil {
		return nil, err
	}
	var info struct {
		Name string `json:"name"`
	}
	if err := b.c.do(ctx, http.MethodGet, "/wda/device/info", nil, &info); err == nil {
		b.name = info.Name
	}
	if _, err := b.screenNow(ctx); err != nil {
		return nil, err
	}
	b.Gesture.F = finger{b}
	return b, nil
}

func (b *Backend) status(ctx context.Context) (status, error) {
	var st status
	err := b.c.do(ctx, http.MethodGet, "/status", nil, &st)
	return st, err
}

// checkVersion refuses a WebDriverAgent older than MinVersion (an unknown
// version passes: builds of its own may not say).
func checkVersion(v string) error {
	if v == "" {
		return nil
	}
	major, err := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil || major >= MinVersion {
		return nil
	}
	return fmt.Errorf("WebDriverAgent %s is too old: guiagent needs version %d or later (appium/WebDriverAgent: its W3C actions and /wda/screen)", v, MinVersion)
}

// Name returns "ios".
func (b *Backend) Name() string { return "ios" }

// DisplayName returns WebDriverAgent's address.
func (b *Backend) DisplayName() string { return b.opts.URL }

// Close deletes the session.
func (b *Backend) Close() error {
	b.c.mu.Lock()
	id := b.c.session
	b.c.session = ""
	b.c.mu.Unlock()
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.c.do(ctx, http.MethodDelete, "/session/"+id, nil, nil)
	return nil
}

// SessionsCreated is how many WDA sessions the backend created (one, and
// one more each time WDA lost it).
func (b *Backend) SessionsCreated() int {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	return b.c.created
}

// EchoesPointer reports true: a touch screen has no pointer to read.
func (b *Backend) EchoesPointer() bool { return true }

// DeviceKind returns "phone".
func (b *Backend) DeviceKind() string { return "phone" }

// Describe reports the device for status and doctor.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	m := map[string]string{"wda": b.opts.URL, "wda_version": b.version, "os": strings.TrimSpace(b.osName + " " + b.osVersion),
		"device": b.device, "name": b.name, "touch": "phone"}
	if s, err := b.screenNow(ctx); err == nil {
		m["size"] = fmt.Sprintf("%gx%g points at scale %g", s.ScreenSize.Width, s.ScreenSize.Height, s.Scale)
		m["orientation"] = s.Orientation
	}
	return m
}

// screenFresh is how long the screen's size stands.
const screenFresh = 500 * time.Millisecond

// screenNow is the screen's size in points and its scale (fresh within
// screenFresh), and the orientation.
func (b *Backend) screenNow(ctx context.Context) (screenInfo, error) {
	b.mu.Lock()
	s, at := b.screen, b.screenAt
	b.mu.Unlock()
	if s.Scale > 0 && time.Since(at) < screenFresh {
		return s, nil
	}
	if err := b.c.do(ctx, http.MethodGet, "/wda/screen", nil, &s); err != nil {
		return s, err
	}
	if s.Scale <= 0 || s.ScreenSize.Width <= 0 || s.ScreenSize.Height <= 0 {
		return s, fmt.Errorf("WebDriverAgent described the screen as %gx%g at scale %g", s.ScreenSize.Width, s.ScreenSize.Height, s.Scale)
	}
	var o string
	if err := b.c.inSession(ctx, http.MethodGet, "/orientation", nil, &o); err == nil {
		s.Orientation = o
	}
	// WDA turns the size with the interface; a WDA that did not (the
	// orientation says landscape, the size portrait) is turned here.
	if landscape(s.Orientation) != (s.ScreenSize.Width > s.ScreenSize.Height) && s.Orientation != "" {
		s.ScreenSize.Width, s.ScreenSize.Height = s.ScreenSize.Height, s.ScreenSize.Width
	}
	b.mu.Lock()
	b.screen, b.screenAt = s, time.Now()
	b.mu.Unlock()
	return s, nil
}

func landscape(o string) bool { return strings.Contains(o, "LANDSCAPE") }

func (s screenInfo) bounds() geom.Rect {
	return geom.Rect{W: int(math.Round(s.ScreenSize.Width)), H: int(math.Round(s.ScreenSize.Height))}
}

// Displays returns the device's screen in points, as it is turned now.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	s, err := b.screenNow(ctx)
	if err != nil {
		return nil, err
	}
	name := b.name
	if name == "" {
		name = b.device
	}
	return []geom.Display{{ID: "0", Name: name, Bounds: s.bounds(), Scale: s.Scale, Primary: true}}, nil
}

// Screenshot captures the screen in pixels.
func (b *Backend) Screenshot(ctx context.Context) (image.Image, error) {
	var enc string
	if err := b.c.do(ctx, http.MethodGet, "/screenshot", nil, &enc); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("WebDriverAgent's screenshot is not base64: %w", err)
	}
	img, err := png.Decode(strings.NewReader(string(data)))
	if err != nil {
		return nil, fmt.Errorf("WebDriverAgent's screenshot is not a PNG: %w", err)
	}
	return img, nil
}

// Capture grabs region (points) at the screen's pixels.
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if region.Empty() {
		return nil, fmt.Errorf("empty capture region %v", region)
	}
	s, err := b.screenNow(ctx)
	if err != nil {
		return nil, err
	}
	img, err := b.Screenshot(ctx)
	if err != nil {
		return nil, err
	}
	full := s.bounds()
	ib := img.Bounds()
	// Pixels per point from the image itself: a screenshot taken as the
	// screen turned is still mapped whole.
	kx, ky := float64(ib.Dx())/float64(full.W), float64(ib.Dy())/float64(full.H)
	return phone.Crop(img, region, full, kx, ky, region == full, dst)
}
