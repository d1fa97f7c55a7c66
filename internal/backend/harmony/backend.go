// Package harmony is the desktop backend of a HarmonyOS (OpenHarmony)
// phone or tablet driven with the hdc command (HarmonyOS's device
// connector: `hdc list targets`, `hdc -t KEY shell ...`, `hdc -t KEY file
// recv ...`), which must be on PATH or named by Options.HDC.
//
// The device commands and what they print, as their sources and the
// OpenHarmony documentation give them (openharmony/docs:
// application-test/arkxtest-guidelines.md for uitest, tools/aa-tool.md,
// tools/bm-tool.md, reference/apis-input-kit/js-apis-keycode.md; the
// sources of openharmony/testfwk_arkxtest uitest/input/ui_input.cpp,
// uitest/server/server_main.cpp, uitest/core/ui_driver.cpp and
// dump_handler.cpp, and openharmony/window_window_manager
// snapshot/src/snapshot_display.cpp and snapshot_utils.cpp):
//
//   - the screen: `snapshot_display -f /data/local/tmp/NAME.jpeg` (a JPEG,
//     the only format it writes, in /data/local/tmp only; it prints
//     "success: snapshot display 0 , write to ... as jpeg, width W, height
//     H"), then `hdc file recv`; the size is the image's;
//   - input: `uitest uiInput click|doubleClick|longClick X Y`, `swipe X1 Y1
//     X2 Y2 VELOCITY` (200-40000 px/s), `keyEvent Back|Home|Power` or up to
//     three key codes, `text TEXT` into the focused field (`inputText X Y
//     TEXT` on a uitest without it), each answering "No Error"; uitest
//     refuses coordinates of 0, so 0 is sent as 1. Text uitest cannot make
//     of key codes (anything outside ASCII) goes through the pasteboard
//     and ctrl+V (UiDriver::InputText), so typing it replaces the user's
//     clipboard;
//   - elements: `uitest dumpLayout -p FILE` (JSON: {"attributes",
//     "children"}, every attribute a string, bounds "[l,t][r,b]", each
//     window's root carrying bundleName, abilityName and pagePath);
//   - apps: `bm dump -a` ("ID: 100:" then a bundle a line), `bm dump -n
//     BUNDLE` (its main ability), `aa start -a ABILITY -b BUNDLE` ("start
//     ability successfully."), `aa force-stop BUNDLE` ("force stop process
//     successfully."), `aa start -A ohos.want.action.viewData -U URL`.
//
// Coordinates are the device's pixels (Scale 1): uitest takes pixels.
// A phone has no pointer: a click is a tap, a right click or a long hold a
// long press, a drag a swipe, a scroll a swipe (package phone's Gesture).
//
// Not offered: the clipboard, a finger held down across calls (uitest
// sends whole gestures), key combinations released in reverse order
// (uitest releases them in the order it pressed them: ui_action.h
// CombinedKeys). Tested against the fake hdc of package harmonytest
// only: no HarmonyOS device was driven.
package harmony

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // snapshot_display writes JPEG
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/backend/phone"
	"github.com/guiagent/guiagent/internal/geom"
)

// Options configures a Backend.
type Options struct {
	// HDC is the hdc program; "" means hdc on PATH. HDCSetting names its
	// setting in messages (GUI_AGENT_HDC).
	HDC, HDCSetting string
	// Target is the device's connect key (`hdc list targets`); "" means
	// the only device connected.
	Target string
	// Timeout bounds each hdc command; zero means 30s.
	Timeout time.Duration
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Paths on the device (snapshot_display writes only /data/local/tmp/*.jpeg).
const (
	shotPath   = "/data/local/tmp/guiagent-shot.jpeg"
	layoutPath = "/data/local/tmp/guiagent-layout.json"
)

// ErrNoHDC is wrapped when the hdc program cannot be found.
var ErrNoHDC = errors.New("hdc not found")

// Backend drives one HarmonyOS device. It is safe for concurrent use.
type Backend struct {
	opts   Options
	log    *slog.Logger
	hdc    string
	target string
	tmp    string

	model, version, api string

	// Gesture is the pointer: taps, swipes and long presses.
	phone.Gesture
	held phone.Keys // keys held: sent at their release

	mu     sync.Mutex
	size   image.Point
	sizeAt time.Time
	noText bool // uitest has no `uiInput text`
}

var _ phone.Backend = (*Backend)(nil)

// FindHDC returns the hdc program of o, or an error wrapping ErrNoHDC that
// says how to get it.
func FindHDC(o Options) (string, error) {
	name := o.HDC
	if name == "" {
		name = "hdc"
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	set := o.HDCSetting
	if set == "" {
		set = "the hdc setting"
	}
	return "", fmt.Errorf("%w: %q is not an executable program (%v): install the HarmonyOS SDK's toolchains (DevEco Studio: sdk/default/openharmony/toolchains, or the command-line tools) and put hdc on PATH, or name it with %s", ErrNoHDC, name, err, set)
}

// Open finds hdc and the device, and reads its model and system version.
func Open(ctx context.Context, o Options) (*Backend, error) {
	hdc, err := FindHDC(o)
	if err != nil {
		return nil, err
	}
	b := &Backend{opts: o, log: o.Logger, hdc: hdc}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.target, err = chooseTarget(ctx, b, o.Target); err != nil {
		return nil, err
	}
	out, err := b.shell(ctx, "param get const.product.model; param get const.product.software.version; param get const.ohos.apiversion")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	b.model, b.version, b.api = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]), strings.TrimSpace(lines[2])
	if b.tmp, err = os.MkdirTemp("", "guiagent-harmony-"); err != nil {
		return nil, err
	}
	b.Gesture.F = finger{b}
	return b, nil
}

// Targets lists the connect keys `hdc list targets` prints ("[Empty]" is none).
func Targets(ctx context.Context, hdc string, timeout time.Duration) ([]string, error) {
	out, err := run(ctx, hdc, timeout, "list", "targets")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "[Empty]" {
			keys = append(keys, strings.Fields(l)[0])
		}
	}
	return keys, nil
}

func chooseTarget(ctx context.Context, b *Backend, key string) (string, error) {
	keys, err := Targets(ctx, b.hdc, b.opts.Timeout)
	if err != nil {
		return "", err
	}
	if key != "" {
		for _, k := range keys {
			if k == key {
				return key, nil
			}
		}
		return "", fmt.Errorf("HarmonyOS device %s is not connected to hdc; connected: %s", key, orNone(keys))
	}
	switch len(keys) {
	case 0:
		return "", errors.New("no HarmonyOS device is connected to hdc: connect it by USB with USB debugging on (Settings > System > Developer options), or `hdc tconn IP:PORT` for wireless debugging; `hdc list targets` lists them")
	case 1:
		return keys[0], nil
	}
	return "", fmt.Errorf("%d HarmonyOS devices are connected; name one with --device: %s", len(keys), strings.Join(keys, ", "))
}

func orNone(k []string) string {
	if len(k) == 0 {
		return "none"
	}
	return strings.Join(k, ", ")
}

// run runs hdc with args and returns what it printed; hdc's "[Fail]" is an error.
func run(ctx context.Context, hdc string, timeout time.Duration, args ...string) (string, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, hdc, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	s := out.String()
	if ctx.Err() != nil {
		return s, fmt.Errorf("hdc %s: %w", strings.Join(args, " "), ctx.Err())
	}
	if err != nil {
		return s, fmt.Errorf("hdc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(s))
	}
	if strings.HasPrefix(strings.TrimSpace(s), "[Fail]") {
		return s, fmt.Errorf("hdc %s: %s", strings.Join(args, " "), strings.TrimSpace(s))
	}
	return s, nil
}

// shell runs a command line in the device's shell.
func (b *Backend) shell(ctx context.Context, line string) (string, error) {
	return run(ctx, b.hdc, b.opts.Timeout, "-t", b.target, "shell", line)
}

// quote quotes s for the device's shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Target is the device's connect key.
func (b *Backend) Target() string { return b.target }

// Name returns "harmony".
func (b *Backend) Name() string { return "harmony" }

// DisplayName returns the device's connect key.
func (b *Backend) DisplayName() string { return b.target }

// Close removes the local temporary folder.
func (b *Backend) Close() error { return os.RemoveAll(b.tmp) }

// EchoesPointer reports true: a touch screen has no pointer to read.
func (b *Backend) EchoesPointer() bool { return true }

// DeviceKind returns "phone".
func (b *Backend) DeviceKind() string { return "phone" }

// Describe reports the device for status and doctor.
func (b *Backend) Describe(ctx context.Context) map[string]string {
	m := map[string]string{"target": b.target, "model": b.model, "version": b.version, "api": b.api, "touch": "phone", "hdc": b.hdc}
	if s, err := b.screenSize(ctx); err == nil {
		m["size"] = fmt.Sprintf("%dx%d", s.X, s.Y)
	}
	return m
}

// sizeFresh is how long a screenshot's size stands for the screen's.
const sizeFresh = 2 * time.Second

func (b *Backend) screenSize(ctx context.Context) (image.Point, error) {
	b.mu.Lock()
	s, at := b.size, b.sizeAt
	b.mu.Unlock()
	if s != (image.Point{}) && time.Since(at) < sizeFresh {
		return s, nil
	}
	img, err := b.Screenshot(ctx)
	if err != nil {
		return image.Point{}, err
	}
	return img.Bounds().Size(), nil
}

// Displays returns the device's screen, sized as its last screenshot.
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	s, err := b.screenSize(ctx)
	if err != nil {
		return nil, err
	}
	return []geom.Display{{ID: "0", Name: b.model, Bounds: geom.Rect{W: s.X, H: s.Y}, Scale: 1, Primary: true}}, nil
}

// Screenshot captures the screen: snapshot_display on the device, then
// hdc file recv.
func (b *Backend) Screenshot(ctx context.Context) (image.Image, error) {
	out, err := b.shell(ctx, "snapshot_display -f "+shotPath)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(out, "success:") {
		msg := strings.TrimSpace(out)
		if strings.Contains(msg, "not developer mode") {
			msg += ": turn on Developer options (Settings > About phone: tap the version number seven times)"
		}
		return nil, fmt.Errorf("HarmonyOS device %s: snapshot_display failed: %s", b.target, msg)
	}
	local := filepath.Join(b.tmp, "shot.jpeg")
	if _, err := run(ctx, b.hdc, b.opts.Timeout, "-t", b.target, "file", "recv", shotPath, local); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(local)
	if err != nil {
		return nil, fmt.Errorf("HarmonyOS device %s: hdc file recv wrote nothing: %w", b.target, err)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("HarmonyOS device %s: the screenshot is not a JPEG: %w", b.target, err)
	}
	b.mu.Lock()
	b.size, b.sizeAt = img.Bounds().Size(), time.Now()
	b.mu.Unlock()
	return img, nil
}

// Capture grabs region (pixels).
func (b *Backend) Capture(ctx context.Context, region geom.Rect, dst *image.RGBA) (*image.RGBA, error) {
	if region.Empty() {
		return nil, fmt.Errorf("empty capture region %v", region)
	}
	img, err := b.Screenshot(ctx)
	if err != nil {
		return nil, err
	}
	ib := img.Bounds()
	return phone.Crop(img, region, geom.Rect{W: ib.Dx(), H: ib.Dy()}, 1, 1, false, dst)
}
