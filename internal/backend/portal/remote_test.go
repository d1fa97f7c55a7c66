//go:build linux

package portal_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/portal"
	"github.com/guiagent/guiagent/internal/backend/portal/portaltest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

var monitors = []geom.Rect{{X: 0, Y: 0, W: 1280, H: 800}, {X: 1280, Y: 0, W: 1024, H: 768}}

// pattern is a screen whose every pixel says where it is.
func pattern(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x/256*40 + y/256*80), 255})
		}
	}
	return img
}

type env struct {
	fake  *portaltest.Fake
	state string
	bus   string
}

func newEnv(t *testing.T, o portaltest.FakeOptions) *env {
	t.Helper()
	if o.Monitors == nil {
		o.Monitors = monitors
	}
	if o.Screen == nil {
		o.Screen = pattern(2304, 800)
	}
	bus := portaltest.Bus(t, os.Environ())
	return &env{fake: portaltest.StartFake(t, bus, o), state: t.TempDir(), bus: bus}
}

func (e *env) open(t *testing.T, wait time.Duration) *portal.Backend {
	t.Helper()
	b := portal.New(portal.Options{SessionBus: e.bus, Display: "wayland-9", StateDir: e.state, StateSetting: "GUI_AGENT_STATE_DIR", InputWait: wait})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// setUpCalls returns the calls before the first Notify, and the Notify calls.
func split(calls []portaltest.Call) (setUp, notify []portaltest.Call) {
	for _, c := range calls {
		if strings.HasPrefix(c.Method, "RemoteDesktop.Notify") {
			notify = append(notify, c)
		} else if c.Method != "Screenshot.Screenshot" {
			setUp = append(setUp, c)
		}
	}
	return setUp, notify
}

// TestRemoteDesktopSequence: the session is set up in the specification's
// order with its option types, and input goes out as absolute motion on
// the stream under the point, evdev button pairs, discrete axis steps and
// keysyms (Unicode ones for non-Latin-1 text), each press released.
func TestRemoteDesktopSequence(t *testing.T) {
	e := newEnv(t, portaltest.FakeOptions{})
	b := e.open(t, 5*time.Second)
	ctx := context.Background()
	steps := []error{
		b.MoveTo(ctx, geom.GlobalPoint{X: 100, Y: 50}),
		b.MoveTo(ctx, geom.GlobalPoint{X: 1300, Y: 10}),
		b.ButtonDown(ctx, desktop.Left), b.ButtonUp(ctx, desktop.Left),
		b.ButtonDown(ctx, desktop.Right), b.ButtonUp(ctx, desktop.Right),
		b.Scroll(ctx, desktop.Down, 3), b.Scroll(ctx, desktop.LeftD, 2),
		b.TypeText(ctx, "aÉ世\n"),
		b.KeyDown(ctx, desktop.Ctrl), b.KeyUp(ctx, desktop.Ctrl),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	setUp, notify := split(e.fake.Calls())
	var methods []string
	for _, c := range setUp {
		methods = append(methods, c.Method)
	}
	if want := []string{"RemoteDesktop.CreateSession", "RemoteDesktop.SelectDevices", "ScreenCast.SelectSources", "RemoteDesktop.Start"}; !reflect.DeepEqual(methods, want) {
		t.Fatalf("set-up calls %v, want %v", methods, want)
	}
	for _, c := range setUp {
		if tok, ok := c.Options["handle_token"].(string); !ok || tok == "" {
			t.Errorf("%s without a handle_token: %v", c.Method, c.Options)
		}
	}
	if tok, _ := setUp[0].Options["session_handle_token"].(string); tok == "" {
		t.Errorf("CreateSession without session_handle_token: %v", setUp[0].Options)
	}
	if o := setUp[1].Options; o["types"] != uint32(3) || o["persist_mode"] != uint32(2) || o["restore_token"] != nil {
		t.Errorf("SelectDevices options %v: want types 3 (keyboard+pointer), persist_mode 2, no restore_token the first time", o)
	}
	if o := setUp[2].Options; o["types"] != uint32(1) || o["multiple"] != true {
		t.Errorf("SelectSources options %v: want types 1 (monitor), multiple", o)
	}
	if setUp[3].Args[0] != "" || setUp[1].Session != setUp[3].Session || setUp[1].Session == "" {
		t.Errorf("Start %v on %s after SelectDevices on %s", setUp[3].Args, setUp[3].Session, setUp[1].Session)
	}
	want := []string{
		"RemoteDesktop.NotifyPointerMotionAbsolute[40 100 50]",
		"RemoteDesktop.NotifyPointerMotionAbsolute[41 20 10]",
		"RemoteDesktop.NotifyPointerButton[272 1]", "RemoteDesktop.NotifyPointerButton[272 0]",
		"RemoteDesktop.NotifyPointerButton[273 1]", "RemoteDesktop.NotifyPointerButton[273 0]",
		"RemoteDesktop.NotifyPointerAxisDiscrete[0 3]", "RemoteDesktop.NotifyPointerAxisDiscrete[1 -2]",
		"RemoteDesktop.NotifyKeyboardKeysym[97 1]", "RemoteDesktop.NotifyKeyboardKeysym[97 0]",
		"RemoteDesktop.NotifyKeyboardKeysym[201 1]", "RemoteDesktop.NotifyKeyboardKeysym[201 0]",
		fmt.Sprintf("RemoteDesktop.NotifyKeyboardKeysym[%d 1]", 0x01000000+'世'), fmt.Sprintf("RemoteDesktop.NotifyKeyboardKeysym[%d 0]", 0x01000000+'世'),
		"RemoteDesktop.NotifyKeyboardKeysym[65293 1]", "RemoteDesktop.NotifyKeyboardKeysym[65293 0]",
		"RemoteDesktop.NotifyKeyboardKeysym[65507 1]", "RemoteDesktop.NotifyKeyboardKeysym[65507 0]",
	}
	var got []string
	for _, c := range notify {
		got = append(got, c.String())
		if c.Session != setUp[3].Session {
			t.Errorf("%s on session %s, not the started %s", c, c.Session, setUp[3].Session)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("input calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p := e.fake.Pressed(); len(p) != 0 {
		t.Errorf("left pressed: %v", p)
	}
	if p, err := b.CursorPosition(ctx); err != nil || p != (geom.GlobalPoint{X: 1300, Y: 10}) {
		t.Errorf("CursorPosition = %v, %v; want the last move", p, err)
	}
	ds, err := b.Displays(ctx)
	if err != nil || len(ds) != 2 || ds[1].Bounds != monitors[1] {
		t.Errorf("Displays = %v, %v; want the two streams' monitors", ds, err)
	}
	if err := b.MoveTo(ctx, geom.GlobalPoint{X: 2000, Y: 790}); err == nil || !strings.Contains(err.Error(), "none of the shared monitors") {
		t.Errorf("a move below the second monitor: %v", err)
	}
}

// TestGrantIsAskedOnceThroughTheStateDir: the first input call while the
// dialog waits fails at once saying so (and doctor's row says so); after
// the approval the restore token is in the state dir, and the next backend
// restores the grant with it without a dialog, keeping the new token.
func TestGrantIsAskedOnceThroughTheStateDir(t *testing.T) {
	e := newEnv(t, portaltest.FakeOptions{AskUser: true})
	b := e.open(t, 300*time.Millisecond)
	ctx := context.Background()
	start := time.Now()
	err := b.KeyDown(ctx, "a")
	if !errors.Is(err, portal.ErrPermissionPending) || !strings.Contains(err.Error(), "waiting on the user's screen") || !strings.Contains(err.Error(), e.state) {
		t.Fatalf("input while the dialog waits: %v; want ErrPermissionPending naming the screen and the state dir", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the pending error took %s", d)
	}
	if s := b.Describe(ctx)["input"]; !strings.Contains(s, "permission dialog") {
		t.Errorf("Describe input = %q, want the waiting dialog", s)
	}
	if !e.fake.Approve() {
		t.Fatal("no dialog was waiting")
	}
	if err := retry(func() error { return b.TypeText(ctx, "x") }); err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(e.state, "portal", "remote-desktop.token")
	first := readToken(t, tokFile)
	if toks := e.fake.Tokens(); len(toks) != 1 || toks[0] != first {
		t.Fatalf("token file %q, the portal issued %v", first, toks)
	}
	b.Close()

	b2 := e.open(t, 5*time.Second)
	if err := b2.TypeText(ctx, "y"); err != nil {
		t.Fatalf("restored session: %v", err)
	}
	if n := e.fake.Dialogs(); n != 1 {
		t.Errorf("%d dialogs, want 1: the second start should restore the grant", n)
	}
	var restore []any
	for _, c := range e.fake.Calls() {
		if c.Method == "RemoteDesktop.SelectDevices" {
			restore = append(restore, c.Options["restore_token"])
		}
	}
	if len(restore) != 2 || restore[0] != nil || restore[1] != first {
		t.Errorf("SelectDevices restore_tokens %v, want none then %q", restore, first)
	}
	if second := readToken(t, tokFile); second == first || second == "" {
		t.Errorf("token after the restore %q, want a new one (tokens are single-use)", second)
	}
}

// TestRefusedGrantSaysSoAndAsksAgain: a refusal is told once, by name, and
// the next call asks again.
func TestRefusedGrantSaysSoAndAsksAgain(t *testing.T) {
	e := newEnv(t, portaltest.FakeOptions{AskUser: true})
	b := e.open(t, 200*time.Millisecond)
	ctx := context.Background()
	if err := b.MoveTo(ctx, geom.GlobalPoint{X: 1, Y: 1}); !errors.Is(err, portal.ErrPermissionPending) {
		t.Fatalf("first call: %v", err)
	}
	e.fake.Deny()
	err := retry(func() error { return b.MoveTo(ctx, geom.GlobalPoint{X: 1, Y: 1}) })
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("after the refusal: %v, want it named", err)
	}
	if err := b.MoveTo(ctx, geom.GlobalPoint{X: 1, Y: 1}); !errors.Is(err, portal.ErrPermissionPending) {
		t.Fatalf("the call after: %v, want a new dialog", err)
	}
	if n := e.fake.Dialogs(); n != 2 {
		t.Errorf("%d dialogs, want 2", n)
	}
	if _, err := os.Stat(filepath.Join(e.state, "portal", "remote-desktop.token")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a token was kept without a grant: %v", err)
	}
}

// retry repeats f while it says the dialog is pending (the answer travels
// over the bus), for up to 5 s.
func retry(f func() error) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if !errors.Is(err, portal.ErrPermissionPending) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readToken(t *testing.T, f string) string {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(f); st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	return strings.TrimSpace(string(data))
}

// TestNothingLeftPressed: typing cancelled mid-way still releases the key it
// pressed, and Close releases what the caller held.
func TestNothingLeftPressed(t *testing.T) {
	e := newEnv(t, portaltest.FakeOptions{})
	b := e.open(t, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	e.fake.OnNotify(func(c portaltest.Call) {
		if c.Method == "RemoteDesktop.NotifyKeyboardKeysym" && c.Args[1] == uint32(1) {
			cancel()
		}
	})
	if err := b.TypeText(ctx, "hello"); !errors.Is(err, context.Canceled) {
		t.Fatalf("TypeText cancelled: %v", err)
	}
	if p := e.fake.Pressed(); len(p) != 0 {
		t.Fatalf("after the cancel: %v held", p)
	}
	e.fake.OnNotify(nil)
	bg := context.Background()
	if err := errors.Join(b.ButtonDown(bg, desktop.Left), b.KeyDown(bg, desktop.Shift)); err != nil {
		t.Fatal(err)
	}
	if p := e.fake.Pressed(); len(p) != 2 {
		t.Fatalf("held %v, want the button and shift", p)
	}
	b.Close()
	if p := e.fake.Pressed(); len(p) != 0 {
		t.Errorf("after Close: %v held", p)
	}
	calls := e.fake.Calls()
	if last := calls[len(calls)-1]; last.Method != "Session.Close" {
		t.Errorf("last call %s, want Session.Close after the releases", last)
	}
}

// TestWithoutRemoteDesktop: a portal that cannot take input (wlroots' has
// no RemoteDesktop) still captures, and input says what is missing.
func TestWithoutRemoteDesktop(t *testing.T) {
	e := newEnv(t, portaltest.FakeOptions{NoRemoteDesktop: true})
	b := e.open(t, time.Second)
	err := b.KeyDown(context.Background(), "a")
	for _, w := range []string{"org.freedesktop.portal.RemoteDesktop", "xdg-desktop-portal-wlr", "--backend wayland"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("input without RemoteDesktop: %v, want it to name %q", err, w)
		}
	}
	if _, err := b.Capture(context.Background(), geom.Rect{W: 10, H: 10}, nil); err != nil {
		t.Errorf("capture: %v", err)
	}
}

// TestEISIsReported: doctor's rows say whether ConnectToEIS is offered.
func TestEISIsReported(t *testing.T) {
	e := newEnv(t, portaltest.FakeOptions{EIS: true})
	b := e.open(t, time.Second)
	if s := b.Describe(context.Background())["eis"]; !strings.Contains(s, "ConnectToEIS offered") {
		t.Errorf("eis = %q", s)
	}
}

// TestCaptureThroughTheFake: Capture returns the Screenshot portal's pixels
// at the region asked for, and removes the file the portal wrote.
func TestCaptureThroughTheFake(t *testing.T) {
	screen := pattern(640, 480)
	e := newEnv(t, portaltest.FakeOptions{Screen: screen, NoRemoteDesktop: true})
	b := e.open(t, time.Second)
	region := geom.Rect{X: 300, Y: 200, W: 40, H: 30}
	img, err := b.Capture(context.Background(), region, nil)
	if err != nil {
		t.Fatal(err)
	}
	for y := range region.H {
		for x := range region.W {
			if got, want := img.RGBAAt(x, y), screen.RGBAAt(region.X+x, region.Y+y); got != want {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, want)
			}
		}
	}
	shots := e.fake.Screenshots()
	if len(shots) == 0 {
		t.Fatal("no Screenshot call")
	}
	for _, s := range shots {
		if _, err := os.Stat(s); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the portal's file %s is still there (%v)", s, err)
		}
	}
	for _, c := range e.fake.Calls() {
		if c.Method == "Screenshot.Screenshot" && c.Options["interactive"] != false {
			t.Errorf("Screenshot options %v, want interactive false", c.Options)
		}
	}
}

// TestCaptureAtDeviceScale: on a monitor at scale 2 (the screenshot twice
// the stream's logical size), Displays says so and Capture returns the
// region's device pixels.
func TestCaptureAtDeviceScale(t *testing.T) {
	screen := pattern(1280, 960)
	e := newEnv(t, portaltest.FakeOptions{Monitors: []geom.Rect{{W: 640, H: 480}}, Screen: screen})
	b := e.open(t, 5*time.Second)
	ctx := context.Background()
	if err := b.InputReady(ctx); err != nil {
		t.Fatal(err)
	}
	img, err := b.Capture(ctx, geom.Rect{X: 10, Y: 20, W: 30, H: 40}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 60 || img.Bounds().Dy() != 80 {
		t.Fatalf("capture of 30x40 logical pixels at scale 2 is %v", img.Bounds())
	}
	if got, want := img.RGBAAt(5, 7), screen.RGBAAt(25, 47); got != want {
		t.Errorf("pixel (5,7) = %v, want the screenshot's (25,47) %v", got, want)
	}
	ds, err := b.Displays(ctx)
	if err != nil || len(ds) != 1 || ds[0].ScaleFactor() != 2 || ds[0].Bounds != (geom.Rect{W: 640, H: 480}) {
		t.Errorf("Displays = %v, %v; want one 640x480 display at scale 2", ds, err)
	}
}
