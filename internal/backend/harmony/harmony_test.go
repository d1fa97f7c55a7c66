package harmony_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/harmony"
	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func testCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func open(t testing.TB, p *harmonytest.Phone) *harmony.Backend {
	t.Helper()
	b, err := harmony.Open(testCtx(t), harmony.Options{HDC: p.HDC, Target: p.Key, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func centre(r image.Rectangle) geom.GlobalPoint {
	return geom.GlobalPoint{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}
}

func TestDisplaysAndDescribe(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	ds, err := b.Displays(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := geom.Display{ID: "0", Name: "ALN-AL00", Bounds: geom.Rect{W: 720, H: 1280}, Scale: 1, Primary: true}
	if len(ds) != 1 || ds[0] != want {
		t.Errorf("Displays = %+v, want %+v", ds, want)
	}
	m := b.Describe(testCtx(t))
	for k, v := range map[string]string{"target": p.Key, "model": "ALN-AL00", "api": "12", "size": "720x1280"} {
		if m[k] != v {
			t.Errorf("Describe()[%q] = %q, want %q", k, m[k], v)
		}
	}
	cmds := strings.Join(p.Commands(), "\n")
	if !strings.Contains(cmds, "snapshot_display -f /data/local/tmp/guiagent-shot.jpeg") {
		t.Errorf("the screen was not read with snapshot_display into /data/local/tmp/*.jpeg: %s", cmds)
	}
}

func TestTapAndQuoting(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	in := desktop.NewInput(b)
	ctx := testCtx(t)
	c := centre(harmonytest.ButtonRect)
	p.Commands()
	if err := in.Click(ctx, &c, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := p.Read().Counter; got != 1 {
		t.Errorf("a tap on Increment: counter %d, want 1", got)
	}
	if cmds := p.Commands(); len(cmds) != 1 || cmds[0] != "uitest uiInput click 200 440" {
		t.Errorf("a tap ran %q, want one `uitest uiInput click 200 440`", cmds)
	}
	corner := geom.GlobalPoint{}
	if err := in.Click(ctx, &corner, desktop.Left, 1, nil); err != nil {
		t.Errorf("a tap at (0,0), which uitest refuses as 0: %v", err)
	}
	p.Update(func(s *harmonytest.State) { s.Field, s.Focused = "", true })
	text := `it's "quoted" $HOME; rm -rf / && echo \ Grüße 世界`
	if err := in.Type(ctx, text); err != nil {
		t.Fatal(err)
	}
	if got := p.Read().Field; got != text {
		t.Errorf("typed %q, the field holds %q", text, got)
	}
}

func TestTypeOnAnOlderUitest(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	p.Update(func(s *harmonytest.State) { s.NoText, s.Field, s.Focused = true, "", true })
	in := desktop.NewInput(b)
	f := centre(harmonytest.FieldRect)
	if err := in.Move(testCtx(t), f); err != nil {
		t.Fatal(err)
	}
	if err := in.Type(testCtx(t), "two\nlines"); err != nil {
		t.Fatal(err)
	}
	if got := p.Read().Field; got != "twolines" {
		t.Errorf("field %q, want twolines (the newline is an Enter key event)", got)
	}
	cmds := strings.Join(p.Commands(), "\n")
	if !strings.Contains(cmds, "uitest uiInput inputText 360 240 'lines'") || !strings.Contains(cmds, "keyEvent 2054") {
		t.Errorf("without `uiInput text` typing should fall back to inputText at the pointer and Enter by key code:\n%s", cmds)
	}
}

func TestGesturesAndKeys(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	in := desktop.NewInput(b)
	ctx := testCtx(t)
	a, z := geom.GlobalPoint{X: 300, Y: 900}, geom.GlobalPoint{X: 300, Y: 300}
	if err := in.Click(ctx, &a, desktop.Right, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := in.Drag(ctx, a, nil, z, desktop.Left); err != nil {
		t.Fatal(err)
	}
	ev := p.Events()
	if len(ev) != 2 || ev[0].Kind != "longClick" || ev[1].Kind != "drag" || ev[1].Y != 900 || ev[1].Y2 != 300 || ev[1].Velocity < 200 {
		t.Errorf("a right click and a drag reached the phone as %+v, want longClick and a drag from y 900 to 300", ev)
	}
	for _, k := range []string{"back", "home_screen", "home"} {
		key, err := desktop.ParseKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Hotkey(ctx, []desktop.Key{key}); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, "v"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Events() {
		got = append(got, fmt.Sprintf("%s %s%d", e.Kind, e.KeyByName, e.Key))
	}
	want := "key_down Back0|key_up Back0|key_down Home0|key_up Home0|key_down Home0|key_up Home0|key_down 2072|key_down 2038|key_up 2072|key_up 2038"
	if strings.Join(got, "|") != want {
		t.Errorf("keys arrived as %q, want %q", strings.Join(got, "|"), want)
	}
	if err := in.Click(ctx, &a, desktop.Middle, 1, nil); !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("middle click: %v, want unsupported", err)
	}
}

func TestElements(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	ctx := testCtx(t)
	snap, err := b.Elements(ctx, desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var field, button string
	for _, e := range snap.Elements {
		got = append(got, fmt.Sprintf("%s %q %v %v", e.Role, e.Name, e.Box, e.States.List()))
		switch e.Name {
		case "Your name":
			field = e.Handle
		case "Increment":
			button = e.Handle
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`text "Count: 0" 360x60+40+100`,
		`textbox "Your name" 640x80+40+200 [enabled editable]`,
		`button "Increment" 320x80+40+400 [enabled]`,
		`checkbox "Notifications" 120x60+560+400 [enabled]`,
		`button "Disabled" 280x80+400+600 []`,
		`text "09:41"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("snapshot lacks %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "Hidden") {
		t.Errorf("snapshot has the invisible button:\n%s", all)
	}
	if err := b.Press(ctx, button); err != nil || p.Read().Counter != 1 {
		t.Errorf("Press(Increment): %v, counter %d", err, p.Read().Counter)
	}
	p.Update(func(s *harmonytest.State) { s.Field = "old" })
	if err := b.SetText(ctx, field, "new ✓"); err != nil {
		t.Fatalf("SetText: %v", err)
	}
	if got, err := b.Text(ctx, field); err != nil || got != "new ✓" {
		t.Errorf("Text after SetText = %q, %v", got, err)
	}
}

func TestApps(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	ctx := testCtx(t)
	apps, err := b.ListApps(ctx)
	if err != nil || fmt.Sprint(apps) != "[{com.example.counter } {com.huawei.hmos.settings }]" {
		t.Errorf("ListApps = %v, %v", apps, err)
	}
	if err := b.LaunchApp(ctx, "com.huawei.hmos.settings"); err != nil || p.Read().Front != "com.huawei.hmos.settings" {
		t.Errorf("LaunchApp: %v, front %s", err, p.Read().Front)
	}
	if cmds := strings.Join(p.Commands(), "\n"); !strings.Contains(cmds, "aa start -a com.huawei.hmos.settings.MainAbility -b com.huawei.hmos.settings") {
		t.Errorf("launch ran:\n%s", cmds)
	}
	if err := b.LaunchApp(ctx, "com.example.counter/NoSuchAbility"); err == nil || !strings.Contains(err.Error(), "failed to start ability") {
		t.Errorf("launching an ability that does not exist: %v", err)
	}
	if err := b.StopApp(ctx, "com.huawei.hmos.settings"); err != nil {
		t.Errorf("StopApp: %v", err)
	}
	if err := b.LaunchApp(ctx, "com.nope"); err == nil {
		t.Error("launching a bundle that is not installed: no error")
	}
	if err := b.LaunchApp(ctx, "x;reboot"); err == nil {
		t.Error("a bad bundle name was accepted")
	}
}

func TestCaptureAndLandscape(t *testing.T) {
	p := harmonytest.Start(t)
	b := open(t, p)
	p.Update(func(s *harmonytest.State) {
		s.Rotation = 1
		s.Fills = []harmonytest.Fill{{R: image.Rect(1000, 500, 1100, 600), C: color.RGBA{R: 240, G: 20, B: 20, A: 255}}}
	})
	time.Sleep(2100 * time.Millisecond) // the size of the last screenshot stands 2s
	ds, err := b.Displays(testCtx(t))
	if err != nil || ds[0].Bounds != (geom.Rect{W: 1280, H: 720}) {
		t.Fatalf("turned phone: %+v %v, want 1280x720", ds, err)
	}
	img, err := b.Capture(testCtx(t), geom.Rect{X: 1000, Y: 500, W: 100, H: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt(50, 50); img.Bounds().Dx() != 100 || c.R < 220 || c.G > 40 {
		t.Errorf("capture of the red square: %v, centre %v", img.Bounds(), c)
	}
	// Placed to the pixel: the square's edge is between pixels 999 and 1000.
	big := image.NewRGBA(image.Rect(0, 0, 300, 300))
	img, err = b.Capture(testCtx(t), geom.Rect{X: 990, Y: 540, W: 20, H: 20}, big)
	if err != nil {
		t.Fatal(err)
	}
	if &img.Pix[0] != &big.Pix[0] {
		t.Error("Capture into a large buffer did not reuse it")
	}
	if in, out := img.RGBAAt(15, 10), img.RGBAAt(4, 10); in.R < 200 || out.R > 160 {
		t.Errorf("capture across the square's left edge: inside %v, outside %v", in, out)
	}
}

func TestCheck(t *testing.T) {
	p := harmonytest.Start(t)
	r := harmony.Check(testCtx(t), harmony.Options{HDC: p.HDC})
	want := "hdc " + p.HDC + ": devices " + p.Key + "|using " + p.Key + ": ALN-AL00, ALN-AL00 5.0.0.102(SP8C00E73R4P5) (API 12), screen 720x1280"
	if !r.OK() || strings.Join(r.Lines(), "|") != want {
		t.Errorf("Check: %q\nwant %q", r.Lines(), want)
	}
	r = harmony.Check(testCtx(t), harmony.Options{HDC: "/nonexistent/hdc", HDCSetting: "GUI_AGENT_HDC"})
	if r.OK() || !r.NoHDC || !strings.Contains(r.Problem, "PATH") {
		t.Errorf("Check without hdc: %+v, want it said that hdc is missing and how to get it", r)
	}
	p.Update(func(s *harmonytest.State) { s.Keys = nil })
	if r := harmony.Check(testCtx(t), harmony.Options{HDC: p.HDC}); r.OK() || !strings.Contains(r.Problem, "no HarmonyOS device") {
		t.Errorf("Check with no device: %q", r.Problem)
	}
	p.Update(func(s *harmonytest.State) { s.Keys = []string{p.Key}; s.DeveloperMode = false })
	if r := harmony.Check(testCtx(t), harmony.Options{HDC: p.HDC}); r.OK() || !strings.Contains(r.Problem, "developer") {
		t.Errorf("Check with developer mode off: %q", r.Problem)
	}
}
