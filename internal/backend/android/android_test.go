package android_test

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/backend/android"
	"github.com/guiagent/guiagent/internal/backend/android/androidtest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/testenv"
)

func testCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func open(t testing.TB, d *androidtest.Device) *android.Backend {
	t.Helper()
	b, err := android.Open(testCtx(t), android.Options{ADB: d.Server, Timeout: 5 * time.Second, IMESettle: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// centre returns the logical point at the centre of a widget placed at
// fractions f of a screen of device size s.
func centre(b *android.Backend, s image.Point, f [4]float64) geom.GlobalPoint {
	x := (f[0] + f[2]) / 2 * float64(s.X)
	y := (f[1] + f[3]) / 2 * float64(s.Y)
	return geom.GlobalPoint{X: int(math.Round(x / b.Scale())), Y: int(math.Round(y / b.Scale()))}
}

func countPrefix(cmds []string, prefix string) int {
	n := 0
	for _, c := range cmds {
		for _, part := range strings.Split(c, "&&") {
			if strings.HasPrefix(strings.TrimSpace(part), prefix) {
				n++
			}
		}
	}
	return n
}

func TestDisplaysAndDescribe(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	ds, err := b.Displays(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := geom.Display{ID: "0", Name: "Pixel 7", Bounds: geom.Rect{W: 411, H: 914}, Scale: 2.625, Primary: true}
	if len(ds) != 1 || ds[0] != want {
		t.Errorf("Displays = %+v, want %+v (1080x2400 at 420 dpi)", ds, want)
	}
	m := b.Describe(testCtx(t))
	for k, v := range map[string]string{"serial": d.Serial, "model": "Pixel 7", "android": "14", "sdk": "34", "density": "420", "size": "1080x2400", "unicode_keyboard": "yes (ADBKeyboard)"} {
		if m[k] != v {
			t.Errorf("Describe()[%q] = %q, want %q", k, m[k], v)
		}
	}
	if b.DeviceKind() != "phone" || !b.EchoesPointer() {
		t.Errorf("DeviceKind %q EchoesPointer %v, want phone and true", b.DeviceKind(), b.EchoesPointer())
	}
}

func TestTapLandsWithOneCommand(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	in := desktop.NewInput(b)
	p := centre(b, image.Pt(1080, 2400), androidtest.IncrementAt)
	d.Phone.Commands()
	for i := 0; i < 2; i++ {
		if err := in.Click(testCtx(t), &p, desktop.Left, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.Phone.Counter(); got != 2 {
		t.Errorf("after two taps on Increment the counter shows %d, want 2", got)
	}
	cmds := d.Phone.Commands()
	if len(cmds) != 2 || countPrefix(cmds, "input tap ") != 2 {
		t.Errorf("two taps ran %q, want two `input tap` commands and nothing else", cmds)
	}
	shot, err := b.Screenshot(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if shot.Bounds().Size() != image.Pt(1080, 2400) {
		t.Errorf("screenshot %v, want 1080x2400", shot.Bounds())
	}
}

func TestLandscapeMapsTaps(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	d.Phone.SetRotation(1)
	ds, err := b.Displays(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Bounds != (geom.Rect{W: 914, H: 411}) {
		t.Fatalf("turned phone described as %v, want 914x411 (the screenshot's 2400x1080 at 2.625)", ds[0].Bounds)
	}
	if out, _ := b.Device().Run(testCtx(t), "wm size"); !strings.Contains(out, "1080x2400") {
		t.Fatalf("wm size %q: the fake should still say portrait", out)
	}
	img, err := b.Capture(testCtx(t), ds[0].Bounds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Size() != image.Pt(2400, 1080) {
		t.Errorf("capture of the turned screen is %v, want 2400x1080", img.Bounds())
	}
	p := centre(b, image.Pt(2400, 1080), androidtest.IncrementAt)
	// The button's colour is where the tap goes.
	dp := image.Pt(int(float64(p.X)*b.Scale()), int(float64(p.Y)*b.Scale()))
	if c := img.RGBAAt(dp.X, dp.Y); c != androidtest.ButtonBG && c != (color.RGBA{A: 255}) {
		t.Errorf("pixel %v of the landscape capture is %v, want the button", dp, c)
	}
	if err := desktop.NewInput(b).Click(testCtx(t), &p, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	if d.Phone.Counter() != 1 {
		t.Errorf("tap at %v on the landscape Increment button: counter %d, want 1", p, d.Phone.Counter())
	}
}

func TestTypeUnicodeThroughADBKeyboard(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	d.Phone.SetField("name", "")
	const text = "Grüße 世界 ✓ 42%s"
	if err := desktop.NewInput(b).Type(testCtx(t), text); err != nil {
		t.Fatal(err)
	}
	if got := d.Phone.FieldText("name"); got != text {
		t.Errorf("field holds %q, want %q", got, text)
	}
	if ime := d.Phone.IME(); ime != androidtest.LatinIME {
		t.Errorf("input method after typing is %q, want the user's %q restored", ime, androidtest.LatinIME)
	}
}

func TestTypeUnicodeRefusedWithoutADBKeyboard(t *testing.T) {
	cfg := androidtest.DefaultConfig()
	cfg.ADBKeyboard = false
	d := androidtest.StartPhone(t, androidtest.NewPhone(cfg))
	b := open(t, d)
	if b.Describe(testCtx(t))["unicode_keyboard"] != "no" {
		t.Error("Describe says a Unicode keyboard is installed")
	}
	d.Phone.SetField("name", "")
	d.Phone.Commands()
	err := desktop.NewInput(b).Type(testCtx(t), "Hello wörld")
	if err == nil || !errors.Is(err, android.ErrNoUnicodeKeyboard) || !strings.Contains(err.Error(), "ADBKeyboard") || !strings.Contains(err.Error(), "adb install") {
		t.Fatalf("typing ö without ADBKeyboard: %v, want a refusal naming ADBKeyboard and how to install it", err)
	}
	if got := d.Phone.FieldText("name"); got != "" {
		t.Errorf("the refusal typed %q: it must type nothing", got)
	}
	if n := countPrefix(d.Phone.Commands(), "input"); n != 0 {
		t.Errorf("the refusal ran %d input commands", n)
	}
	// ASCII still types.
	if err := desktop.NewInput(b).Type(testCtx(t), "Hello world"); err != nil || d.Phone.FieldText("name") != "Hello world" {
		t.Errorf("ASCII without ADBKeyboard: %v, field %q", err, d.Phone.FieldText("name"))
	}
}

func TestTypeQuoting(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	for _, text := range []string{
		"a b%c'\"$\\`;&|<>",
		"100%s sure %% 50% off $HOME ${PATH} $(id) `id` 'q' \"dq\" \\n ~ * ? # !",
		"%",
		"s%s%ss",
		" leading and trailing ",
	} {
		d.Phone.SetField("name", "")
		if err := desktop.NewInput(b).Type(testCtx(t), text); err != nil {
			t.Errorf("Type(%q): %v", text, err)
			continue
		}
		if got := d.Phone.FieldText("name"); got != text {
			t.Errorf("typed %q, the field holds %q", text, got)
		}
	}
	d.Phone.SetField("name", "")
	if err := desktop.NewInput(b).Type(testCtx(t), "line1\nline2\tx"); err != nil {
		t.Fatal(err)
	}
	if got := d.Phone.FieldText("name"); got != "line1line2x" { // the fake's field is one line: Enter and Tab type nothing
		t.Errorf("text with a newline and a tab left %q", got)
	}
}

func TestDumpRetryThenClearError(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	d.Phone.SetAnimating(2)
	snap, err := b.Elements(testCtx(t), desktop.ElementQuery{})
	if err != nil {
		t.Fatalf("two busy dumps then an idle one: %v", err)
	}
	if len(snap.Elements) == 0 {
		t.Error("empty snapshot after the retries")
	}
	d.Phone.SetAnimating(-1)
	start := time.Now()
	_, err = b.Elements(testCtx(t), desktop.ElementQuery{Budget: time.Second})
	if !errors.Is(err, android.ErrNotIdle) || !strings.Contains(err.Error(), "could not get idle state") || !strings.Contains(err.Error(), "animation scale") {
		t.Errorf("a screen that never idles: %v, want ErrNotIdle with uiautomator's cause and how to turn animations off", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the failing snapshot took %v with a 1s budget", took)
	}
}

func TestSnapshot(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	d.Phone.SetField("name", "Ada")
	d.Phone.SetField("password", "hunter2")
	snap, err := b.Elements(testCtx(t), desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]desktop.Element{}
	for _, e := range snap.Elements {
		byName[string(e.Role)+":"+e.Name] = e
		if strings.Contains(e.Value, "hunter2") || strings.Contains(e.Name, "hunter2") || strings.Contains(e.Value, "•") {
			t.Errorf("element %+v shows the password", e)
		}
	}
	s := image.Pt(1080, 2400)
	box := func(f [4]float64) geom.Rect {
		r := image.Rect(int(f[0]*1080), int(f[1]*2400), int(f[2]*1080), int(f[3]*2400))
		x0, y0 := int(math.Round(float64(r.Min.X)/2.625)), int(math.Round(float64(r.Min.Y)/2.625))
		return geom.Rect{X: x0, Y: y0, W: int(math.Round(float64(r.Max.X)/2.625)) - x0, H: int(math.Round(float64(r.Max.Y)/2.625)) - y0}
	}
	_ = s
	inc, ok := byName["button:Increment"]
	if !ok {
		t.Fatalf("no button Increment in %+v", snap.Elements)
	}
	if inc.Box != box(androidtest.IncrementAt) || inc.PlatformRole != "android.widget.Button#increment" || inc.App != androidtest.CounterApp {
		t.Errorf("Increment: box %v platform role %q app %q, want %v, android.widget.Button#increment, %s", inc.Box, inc.PlatformRole, inc.App, box(androidtest.IncrementAt), androidtest.CounterApp)
	}
	if _, ok := byName["text:Counter: 0"]; !ok {
		t.Error("no text Counter: 0")
	}
	if e, ok := byName["checkbox:Subscribe"]; !ok || e.States.Checked {
		t.Errorf("checkbox Subscribe: %+v (found %v), want unchecked", e, ok)
	}
	if _, ok := byName["image:Logo"]; !ok {
		t.Error("no image Logo (its content-desc)")
	}
	var fields []desktop.Element
	for _, e := range snap.Elements {
		if e.Role == desktop.RoleTextbox {
			fields = append(fields, e)
		}
	}
	if len(fields) != 2 || fields[0].Value != "Ada" || !fields[0].States.Editable || fields[1].Value != "" || !fields[1].States.Protected || !fields[1].States.Focused {
		t.Errorf("text fields %+v: want name holding Ada, then the focused password field protected with no value", fields)
	}
	if _, err := b.Text(testCtx(t), fields[1].Handle); err == nil {
		t.Error("Text of the password field returned its text")
	}
	if got, err := b.Text(testCtx(t), fields[0].Handle); err != nil || got != "Ada" {
		t.Errorf("Text(name) = %q, %v", got, err)
	}
	// Press acts on the element.
	if err := b.Press(testCtx(t), inc.Handle); err != nil || d.Phone.Counter() != 1 {
		t.Errorf("Press(Increment): %v, counter %d", err, d.Phone.Counter())
	}
}

func TestSetTextReplaces(t *testing.T) {
	for _, sdk := range []int{34, 30} {
		t.Run("api"+strconv.Itoa(sdk), func(t *testing.T) {
			cfg := androidtest.DefaultConfig()
			cfg.SDK = sdk
			d := androidtest.StartPhone(t, androidtest.NewPhone(cfg))
			b := open(t, d)
			d.Phone.SetField("name", "old text here")
			d.Phone.SetField("", "")
			snap, err := b.Elements(testCtx(t), desktop.ElementQuery{})
			if err != nil {
				t.Fatal(err)
			}
			var h string
			for _, e := range snap.Elements {
				if e.Role == desktop.RoleTextbox && e.Value == "old text here" {
					h = e.Handle
				}
			}
			if h == "" {
				t.Fatalf("no field holding the old text in %+v", snap.Elements)
			}
			if err := b.SetText(testCtx(t), h, "new ✓"); err != nil {
				t.Fatal(err)
			}
			if got := d.Phone.FieldText("name"); got != "new ✓" {
				t.Errorf("after SetText the field holds %q, want only the new text", got)
			}
		})
	}
}

func TestHotkeyCombination(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	d.Phone.SetField("name", "select me")
	in := desktop.NewInput(b)
	if err := in.Hotkey(testCtx(t), []desktop.Key{desktop.Ctrl, "a"}); err != nil {
		t.Fatal(err)
	}
	if err := in.PressKey(testCtx(t), "BackSpace", 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := d.Phone.FieldText("name"); got != "" {
		t.Errorf("ctrl+a then BackSpace left %q", got)
	}
	if err := in.PressKey(testCtx(t), "XF86Back", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := in.PressKey(testCtx(t), "XF86Back", 1, nil); err != nil {
		t.Fatal(err)
	}
	if fg, _ := d.Phone.Foreground(); fg != androidtest.LauncherApp {
		t.Errorf("two Backs left %s in front, want the launcher", fg)
	}
	if err := in.PressKey(testCtx(t), "no_such_key", 1, nil); err == nil {
		t.Error("an unknown key was accepted")
	}
}

func TestGestures(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	in := desktop.NewInput(b)
	p := geom.GlobalPoint{X: 200, Y: 600}
	d.Phone.Events()
	if err := in.Click(testCtx(t), &p, desktop.Right, 1, nil); err != nil {
		t.Fatal(err)
	}
	ev := d.Phone.Events()
	if last := ev[len(ev)-1]; last.Kind != "up" || last.Held < 500*time.Millisecond {
		t.Errorf("right click: %+v, want a long press (held 500ms or more)", ev)
	}
	q := geom.GlobalPoint{X: 200, Y: 300}
	if err := in.Drag(testCtx(t), p, nil, q, desktop.Left); err != nil {
		t.Fatal(err)
	}
	ev = d.Phone.Events()
	if len(ev) < 3 || ev[0].Kind != "down" || ev[0].Y != 1575 || ev[len(ev)-1].Kind != "up" || ev[len(ev)-1].Y != 788 {
		t.Errorf("drag 600 -> 300: %+v, want down at y 1575, moves, up at y 788", ev)
	}
	if err := in.Scroll(testCtx(t), nil, desktop.Down, 2, nil); err != nil {
		t.Fatal(err)
	}
	ev = d.Phone.Events()
	if len(ev) < 2 || ev[0].Y <= ev[len(ev)-1].Y {
		t.Errorf("scrolling down: %+v, want the finger to move up", ev)
	}

	// A press held across calls puts the finger down for real (motionevent).
	if err := in.MouseDown(testCtx(t), &p, desktop.Left); err != nil {
		t.Fatal(err)
	}
	if !testenv.WaitUntil(3*time.Second, func() bool {
		for _, e := range d.Phone.Events() {
			if e.Kind == "down" {
				return true
			}
		}
		return false
	}) {
		t.Fatal("a press held across calls never reached the phone")
	}
	if err := in.MouseUp(testCtx(t), &q, desktop.Left); err != nil {
		t.Fatal(err)
	}
	ev = d.Phone.Events()
	if len(ev) != 2 || ev[0].Kind != "move" || ev[1].Kind != "up" || ev[1].Y != 788 {
		t.Errorf("release after moving: %+v, want move and up at y 788", ev)
	}
}

func TestPressAcrossCallsOnOldAndroid(t *testing.T) {
	cfg := androidtest.DefaultConfig()
	cfg.SDK, cfg.Release = 29, "10"
	d := androidtest.StartPhone(t, androidtest.NewPhone(cfg))
	b := open(t, d)
	in := desktop.NewInput(b)
	p := geom.GlobalPoint{X: 200, Y: 600}
	d.Phone.Events()
	err := in.MouseDown(testCtx(t), &p, desktop.Left)
	if err == nil || !errors.Is(err, desktop.ErrUnsupported) || !strings.Contains(err.Error(), "Android 11") || !strings.Contains(err.Error(), "gui_drag") {
		t.Errorf("a press held across calls on Android 10: %v, want a refusal naming Android 11 and what to use instead", err)
	}
	if keys, buttons := in.Held(); len(keys)+len(buttons) != 0 {
		t.Errorf("after the refused press %v %v are held, want nothing", keys, buttons)
	}
	if err := in.MouseUp(testCtx(t), nil, desktop.Left); err != nil {
		t.Fatal(err)
	}
	if ev := d.Phone.Events(); len(ev) != 0 {
		t.Errorf("the refused press reached the phone: %+v", ev)
	}
	// What presses and releases in one call still works there: a drag is a
	// swipe, a right click a long press.
	to := geom.GlobalPoint{X: 200, Y: 300}
	if err := in.Drag(testCtx(t), p, nil, to, desktop.Left); err != nil {
		t.Fatalf("a drag on Android 10: %v", err)
	}
	if err := in.Click(testCtx(t), &p, desktop.Right, 1, nil); err != nil {
		t.Fatalf("a right click on Android 10: %v", err)
	}
	ev := d.Phone.Events()
	if len(ev) < 4 || ev[len(ev)-1].Held < 500*time.Millisecond {
		t.Errorf("a drag and a long press on Android 10 arrived as %+v, want a swipe, then a press held 500ms or more", ev)
	}
	if err := desktop.NewInput(b).Hotkey(testCtx(t), []desktop.Key{desktop.Ctrl, "a"}); err == nil || !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("ctrl+a on Android 10: %v, want unsupported (no keycombination)", err)
	}
}

func TestApps(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	apps, err := b.ListApps(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 2 || apps[0].ID != androidtest.KeyboardApp || apps[1].ID != androidtest.CounterApp {
		t.Errorf("ListApps = %+v, want the two apps the user installed", apps)
	}
	if err := b.LaunchApp(testCtx(t), androidtest.SettingsApp); err != nil {
		t.Fatal(err)
	}
	if fg, _ := d.Phone.Foreground(); fg != androidtest.SettingsApp {
		t.Errorf("after LaunchApp(settings) %s is in front", fg)
	}
	if err := b.StopApp(testCtx(t), androidtest.SettingsApp); err != nil {
		t.Fatal(err)
	}
	if fg, _ := d.Phone.Foreground(); fg != androidtest.LauncherApp {
		t.Errorf("after StopApp %s is in front, want the launcher", fg)
	}
	if err := b.LaunchApp(testCtx(t), "com.not.installed"); err == nil {
		t.Error("launching an app that is not installed succeeded")
	}
	if err := b.LaunchApp(testCtx(t), "x; reboot"); err == nil {
		t.Error("a package name with shell syntax was accepted")
	}
	const u = "https://example.com/a?b=1&c='2'"
	if err := b.OpenURL(testCtx(t), u); err != nil {
		t.Fatal(err)
	}
	if fg, url := d.Phone.Foreground(); fg != androidtest.ChromeApp || url != u {
		t.Errorf("OpenURL: %s with %q in front, want Chrome with %q", fg, url, u)
	}
	if err := b.OpenURL(testCtx(t), "nosuchscheme://x"); err == nil || !strings.Contains(err.Error(), "unable to resolve") {
		t.Errorf("OpenURL with no handler: %v", err)
	}
}

func TestOpenChoosesDevice(t *testing.T) {
	d := androidtest.Start(t)
	second := d.Attach(t, androidtest.NewPhone(androidtest.DefaultConfig()))
	_, err := android.Open(testCtx(t), android.Options{ADB: d.Server})
	if err == nil || !strings.Contains(err.Error(), d.Serial) || !strings.Contains(err.Error(), second.Serial) {
		t.Errorf("Open with two devices and no serial: %v, want an error listing both", err)
	}
	b, err := android.Open(testCtx(t), android.Options{ADB: d.Server, Serial: second.Serial})
	if err != nil || b.DisplayName() != second.Serial {
		t.Errorf("Open with a serial: %v", err)
	}
	r := android.Check(testCtx(t), android.Options{ADB: d.Server, Serial: d.Serial})
	if !r.OK() || r.Model != "Pixel 7" || r.Android != "14" || r.Size != "1080x2400" || r.Density != 420 || !r.UnicodeKeyboard || len(r.Devices) != 2 || r.ServerVersion == 0 {
		t.Errorf("Check = %+v", r)
	}
	if r := android.Check(testCtx(t), android.Options{ADB: "127.0.0.1:1"}); r.OK() || !strings.Contains(r.Problem, "adb") {
		t.Errorf("Check with no server = %+v, want a problem", r)
	}
}

func TestDeviceRemovedIsAClearError(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	d.Unplug()
	for name, f := range map[string]func(ctx context.Context) error{
		"capture": func(ctx context.Context) error { _, err := b.Screenshot(ctx); return err },
		"tap": func(ctx context.Context) error {
			p := geom.GlobalPoint{X: 10, Y: 10}
			return desktop.NewInput(b).Click(ctx, &p, desktop.Left, 1, nil)
		},
		"snapshot": func(ctx context.Context) error { _, err := b.Elements(ctx, desktop.ElementQuery{}); return err },
	} {
		start := time.Now()
		err := f(testCtx(t))
		if err == nil || !strings.Contains(err.Error(), d.Serial) {
			t.Errorf("%s on an unplugged phone: %v, want an error naming %s", name, err, d.Serial)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("%s took %v to fail", name, took)
		}
	}
}

func BenchmarkTap(b *testing.B) {
	d := androidtest.Start(b)
	be := open(b, d)
	p := geom.GlobalPoint{X: 200, Y: 800}
	b.Run("client", func(b *testing.B) {
		for b.Loop() {
			if err := be.ButtonDown(context.Background(), desktop.Left); err != nil {
				b.Fatal(err)
			}
			_ = be.MoveTo(context.Background(), p)
			if err := be.ButtonUp(context.Background(), desktop.Left); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adb-process", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(d.ADBPath, "-P", strconv.Itoa(d.ServerPort), "-s", d.Serial, "shell", "input", "tap", "525", "2100")
			cmd.Env = d.Env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

func BenchmarkScreenshot(b *testing.B) {
	d := androidtest.Start(b)
	for _, raw := range []bool{false, true} {
		be, err := android.Open(context.Background(), android.Options{ADB: d.Server, RawCapture: raw})
		if err != nil {
			b.Fatal(err)
		}
		name := "png"
		if raw {
			name = "raw"
		}
		b.Run(name, func(b *testing.B) {
			var dst *image.RGBA
			for b.Loop() {
				img, err := be.Capture(context.Background(), geom.Rect{W: 411, H: 914}, dst)
				if err != nil {
					b.Fatal(err)
				}
				dst = img
			}
		})
	}
}

func BenchmarkSnapshot(b *testing.B) {
	d := androidtest.Start(b)
	be := open(b, d)
	for b.Loop() {
		if _, err := be.Elements(context.Background(), desktop.ElementQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUnauthorizedExplained(t *testing.T) {
	cfg := androidtest.DefaultConfig()
	cfg.Unauthorized = true
	d := androidtest.StartPhone(t, androidtest.NewPhone(cfg))
	_, err := android.Open(testCtx(t), android.Options{ADB: d.Server})
	if err == nil || !strings.Contains(err.Error(), "unauthorized") || !strings.Contains(err.Error(), "Allow USB debugging") {
		t.Errorf("Open of an unauthorized phone: %v, want the state and the prompt to accept", err)
	}
	r := android.Check(testCtx(t), android.Options{ADB: d.Server})
	if r.OK() || len(r.Devices) != 1 || r.Devices[0].State != "unauthorized" || !strings.Contains(r.Problem, "Allow USB debugging") {
		t.Errorf("Check = %+v", r)
	}
}

// TestTypeModesByKeys: the executor's replace and append into the focused
// field with keys (no element actor) keep the app in front and do what
// they say: on a phone Home is the Home button, so replace selects all
// with ctrl+a, and append goes to the field's end.
func TestTypeModesByKeys(t *testing.T) {
	d := androidtest.Start(t)
	b := open(t, d)
	ex := operate.New(desktop.NewInput(b), operate.Options{})
	defer ex.Close()
	d.Phone.SetField("name", "old text")
	for _, c := range []struct {
		mode       operate.TypeMode
		text, want string
	}{{operate.Replace, "new", "new"}, {operate.Append, "!", "new!"}} {
		if _, err := ex.Do(testCtx(t), operate.Op{Action: action.Action{Kind: action.TypeText, Text: c.text}, Mode: c.mode}); err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		if got := d.Phone.FieldText("name"); got != c.want {
			t.Errorf("%s %q: the field holds %q, want %q", c.mode, c.text, got, c.want)
		}
		if fg, _ := d.Phone.Foreground(); fg != androidtest.CounterApp {
			t.Fatalf("%s: %s is in front, want the app typed into", c.mode, fg)
		}
	}
}
