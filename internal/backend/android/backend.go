// Package android is the desktop backend of an Android phone, driven over
// adb: a client of the adb server's protocol of its own (package adb), no
// adb process per command. The screen is captured with screencap, input
// goes through the input tool (a click is one `input tap`, a drag one
// `input swipe`), the UI is read from `uiautomator dump`, text is typed
// with `input text` (ASCII) or through the ADBKeyboard input method
// (anything else), and apps are listed, started and stopped with pm and
// am.
//
// Coordinates: the phone's display is display "0", its logical pixels the
// device's pixels divided by density/160 (the Scale), so a Pixel 7
// (1080x2400 at 420 dpi) is 411x914 at scale 2.625. Its size is read from
// the screenshot itself, so a phone turned to landscape is described as
// it is now (wm size still says portrait).
//
// A phone has no pointer: CursorPosition echoes guiagent's own moves
// (desktop.PointerEcho), a click is a tap, a right click or a long hold a
// long press, a drag a swipe, a scroll a swipe in the direction that
// scrolls (package phone's Gesture).
//
// Not offered: the clipboard (since Android 10 only the focused app and
// the input method may read it, and the shell has no clipboard command),
// displays other than the default one, app labels (the shell has no cheap
// way to read them). Each input command starts the input tool on the
// phone (100-300 ms on real hardware), so two taps of a double click may
// arrive too far apart to be one double tap.
package android

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/backend/android/adb"
	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/geom"
)

// Options configures a Backend.
type Options struct {
	// ADB is the adb server as HOST:PORT; "" means 127.0.0.1:5037.
	ADB string
	// ADBPath is the adb program used to start a server when none answers
	// on a local ADB address (as adb itself does); "" starts none.
	ADBPath string
	// Serial names the device; "" means the only device attached.
	Serial string
	// Timeout bounds each adb command; zero means 15s.
	Timeout time.Duration
	// RawCapture captures with raw screencap output (4 bytes a pixel,
	// uncompressed) rather than PNG: faster over USB where the phone's PNG
	// encoding is the cost, slower over Wi-Fi.
	RawCapture bool
	// IMESettle is how long to wait after switching to ADBKeyboard before
	// sending it text, for the input method to bind to the field; zero
	// means 500ms, negative none.
	IMESettle time.Duration
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// AdbIME is ADBKeyboard's input method, which types any Unicode text.
const AdbIME = "com.android.adbkeyboard/.AdbIME"

// Backend drives one Android device. It is safe for concurrent use.
type Backend struct {
	opts   Options
	log    *slog.Logger
	client *adb.Client
	dev    *adb.Device

	model, release string
	sdk            int
	density        int
	scale          float64

	// Gesture is the pointer: taps, swipes and long presses.
	phone.Gesture
	held phone.Keys // keys held: sent at their release

	mu      sync.Mutex
	size    image.Point // device pixels of the last screenshot
	unicode bool        // ADBKeyboard installed
}

var _ phone.Backend = (*Backend)(nil)

// Open connects to the device through the adb server and reads what it
// is: model, Android version, density, whether ADBKeyboard is installed.
func Open(ctx context.Context, o Options) (*Backend, error) {
	b := &Backend{opts: o, log: o.Logger, client: &adb.Client{Addr: o.ADB, Timeout: o.Timeout}}
	if b.log == nil {
		b.log = slog.Default()
	}
	if err := ensureServer(ctx, b.client, o.ADBPath); err != nil {
		return nil, err
	}
	serial, err := chooseDevice(ctx, b.client, o.Serial)
	if err != nil {
		return nil, err
	}
	b.dev = b.client.Device(serial)
	info, err := readInfo(ctx, b.dev)
	if err != nil {
		return nil, err
	}
	b.model, b.release, b.sdk, b.density, b.unicode = info.model, info.release, info.sdk, info.density, info.unicode
	b.scale = float64(b.density) / 160
	if b.scale <= 0 {
		b.scale = 1
	}
	b.Gesture.F = finger{b}
	return b, nil
}

// ensureServer checks that the adb server answers, starting one with
// adbPath when none does on a local address.
func ensureServer(ctx context.Context, c *adb.Client, adbPath string) error {
	_, err := c.Version(ctx)
	if err == nil || !errors.Is(err, adb.ErrServer) || adbPath == "" {
		return err
	}
	addr := c.Addr
	if addr == "" {
		addr = adb.DefaultAddr
	}
	host, p, serr := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if serr != nil || perr != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		return err
	}
	return adb.StartServer(ctx, adbPath, port)
}

// chooseDevice returns serial when given (and attached and authorized),
// else the only device attached.
func chooseDevice(ctx context.Context, c *adb.Client, serial string) (string, error) {
	devs, err := c.Devices(ctx)
	if err != nil {
		return "", err
	}
	if serial != "" {
		for _, d := range devs {
			if d.Serial == serial {
				return serial, stateErr(d)
			}
		}
		return "", fmt.Errorf("android device %s is not attached to the adb server; attached: %s", serial, listDevices(devs))
	}
	switch len(devs) {
	case 0:
		return "", errors.New("no Android device is attached to the adb server: connect the phone by USB with USB debugging on (Settings > Developer options), or `adb connect HOST:PORT` for wireless debugging")
	case 1:
		return devs[0].Serial, stateErr(devs[0])
	}
	return "", fmt.Errorf("%d Android devices are attached; name one with its serial: %s", len(devs), listDevices(devs))
}

func stateErr(d adb.DeviceInfo) error {
	switch d.State {
	case "device":
		return nil
	case "unauthorized":
		return fmt.Errorf("android device %s is unauthorized: unlock the phone and accept the \"Allow USB debugging?\" prompt (tick \"Always allow from this computer\"); if no prompt shows, revoke USB debugging authorizations in Developer options and reconnect", d.Serial)
	case "offline":
		return fmt.Errorf("android device %s is offline: reconnect it (unplug and plug in, or `adb reconnect`)", d.Serial)
	case "no permissions":
		return fmt.Errorf("android device %s: no permissions to open the USB device: add a udev rule for it (Debian: apt install android-sdk-platform-tools-common) and reconnect", d.Serial)
	}
	return fmt.Errorf("android device %s is in state %q, not ready for commands", d.Serial, d.State)
}

func listDevices(devs []adb.DeviceInfo) string {
	if len(devs) == 0 {
		return "none"
	}
	var s []string
	for _, d := range devs {
		x := d.Serial + " (" + d.State
		if d.Model != "" {
			x += ", " + d.Model
		}
		s = append(s, x+")")
	}
	return strings.Join(s, ", ")
}

type deviceInfo struct {
	model, release string
	sdk, density   int
	unicode        bool
}

func readInfo(ctx context.Context, dev *adb.Device) (deviceInfo, error) {
	out, err := dev.Run(ctx, "getprop ro.product.model; getprop ro.build.version.release; getprop ro.build.version.sdk; wm density; ime list -a -s")
	if err != nil {
		return deviceInfo{}, err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var i deviceInfo
	if len(lines) < 4 {
		return i, fmt.Errorf("android device %s: unexpected answer to getprop and wm density: %q", dev.Serial(), out)
	}
	i.model, i.release = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
	i.sdk, _ = strconv.Atoi(strings.TrimSpace(lines[2]))
	physical, override := 0, 0
	for _, l := range lines[3:] {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Physical density: "); ok {
			physical, _ = strconv.Atoi(v)
		} else if v, ok := strings.CutPrefix(l, "Override density: "); ok {
			override, _ = strconv.Atoi(v)
		} else if l == AdbIME {
			i.unicode = true
		}
	}
	i.density = physical
	if override > 0 {
		i.density = override
	}
	if i.density <= 0 {
		i.density = 160
	}
	return i, nil
}

// Device returns the adb handle of the backend's device.
func (b *Backend) Device() *adb.Device { return b.dev }

// Name returns "android".
func (b *Backend) Name() string { return "android" }

// DisplayName returns the device's serial.
func (b *Backend) DisplayName() string { return b.dev.Serial() }

// Close releases nothing: every command has its own connection.
func (b *Backend) Close() error { return nil }

// EchoesPointer reports true: a touch screen has no pointer to read.
func (b *Backend) EchoesPointer() bool { return true }

// DeviceKind returns "phone".
func (b *Backend) DeviceKind() string { return "phone" }

// Scale is device pixels per logical pixel (density / 160).
func (b *Backend) Scale() float64 { return b.scale }

// Describe reports the device for status and doctor.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	m := map[string]string{"serial": b.dev.Serial(), "model": b.model, "android": b.release, "sdk": strconv.Itoa(b.sdk),
		"density": strconv.Itoa(b.density), "unicode_keyboard": "no", "touch": "phone"}
	if b.hasUnicode() {
		m["unicode_keyboard"] = "yes (ADBKeyboard)"
	}
	if s, err := b.screenSize(ctx); err == nil {
		m["size"] = fmt.Sprintf("%dx%d", s.X, s.Y)
	}
	return m
}

func (b *Backend) hasUnicode() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.unicode
}

// screenSize is the display's size in device pixels: the last
// screenshot's, else the header of a new one. It stands until the next
// capture, so a tap costs one command: a tap is placed in the screenshot
// its caller saw, and a capture of the whole screen always comes back in
// the screen's shape at that moment (Capture), which the frame then
// describes, so a turned phone is never described with a stale size.
func (b *Backend) screenSize(ctx context.Context) (image.Point, error) {
	b.mu.Lock()
	s := b.size
	b.mu.Unlock()
	if s != (image.Point{}) {
		return s, nil
	}
	r, err := b.dev.ExecStream(ctx, "screencap")
	if err != nil {
		return image.Point{}, err
	}
	defer r.Close()
	var hdr [8]byte
	if _, err := ioReadFull(r, hdr[:]); err != nil {
		return image.Point{}, fmt.Errorf("android device %s: reading the screenshot's size: %w", b.dev.Serial(), err)
	}
	s = image.Pt(int(le32(hdr[0:])), int(le32(hdr[4:])))
	if s.X <= 0 || s.Y <= 0 || s.X > 20000 || s.Y > 20000 {
		return image.Point{}, fmt.Errorf("android device %s: screencap gave a size of %dx%d", b.dev.Serial(), s.X, s.Y)
	}
	b.noteSize(s)
	return s, nil
}

func (b *Backend) noteSize(s image.Point) {
	b.mu.Lock()
	b.size = s
	b.mu.Unlock()
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// logical is the display's size in logical pixels.
func (b *Backend) logical(s image.Point) geom.Rect {
	return geom.Rect{W: int(math.Round(float64(s.X) / b.scale)), H: int(math.Round(float64(s.Y) / b.scale))}
}

// Displays returns the phone's display, sized as it is now.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	s, err := b.screenSize(ctx)
	if err != nil {
		return nil, err
	}
	return []geom.Display{{ID: "0", Name: b.model, Bounds: b.logical(s), Scale: b.scale, Primary: true}}, nil
}

// toDevice maps a logical point to the device's pixels.
func (b *Backend) toDevice(p geom.GlobalPoint) image.Point {
	return image.Pt(int(math.Round(float64(p.X)*b.scale)), int(math.Round(float64(p.Y)*b.scale)))
}
