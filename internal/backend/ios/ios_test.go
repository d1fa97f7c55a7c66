package ios_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/ios"
	"github.com/guiagent/guiagent/internal/backend/ios/iostest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func testCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func open(t testing.TB, w *iostest.WDA) *ios.Backend {
	t.Helper()
	b, err := ios.Open(testCtx(t), ios.Options{URL: w.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func centre(r image.Rectangle) geom.GlobalPoint {
	return geom.GlobalPoint{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}
}

func count(reqs []string, s string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r, "POST /session/") && strings.HasSuffix(r, s) {
			n++
		}
	}
	return n
}

func TestDisplaysAndDescribe(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	ds, err := b.Displays(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := geom.Display{ID: "0", Name: "Test iPhone", Bounds: geom.Rect{W: 375, H: 667}, Scale: 2, Primary: true}
	if len(ds) != 1 || ds[0] != want {
		t.Errorf("Displays = %+v, want %+v (375x667 points at scale 2)", ds, want)
	}
	m := b.Describe(testCtx(t))
	for k, v := range map[string]string{"wda_version": "9.3.3", "os": "iOS 17.5", "name": "Test iPhone", "size": "375x667 points at scale 2", "orientation": "PORTRAIT"} {
		if m[k] != v {
			t.Errorf("Describe()[%q] = %q, want %q", k, m[k], v)
		}
	}
	shot, err := b.Screenshot(testCtx(t))
	if err != nil || shot.Bounds().Size() != image.Pt(750, 1334) {
		t.Errorf("screenshot %v (%v), want 750x1334 pixels", shot.Bounds(), err)
	}
}

func TestTapIsOneActionsCall(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	in := desktop.NewInput(b)
	p := centre(iostest.ButtonRect)
	w.Requests()
	for range 2 {
		if err := in.Click(testCtx(t), &p, desktop.Left, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.Counter(); got != 2 {
		t.Errorf("after two taps on Increment the counter shows %d, want 2", got)
	}
	if reqs := w.Requests(); len(reqs) != 2 || count(reqs, "/actions") != 2 {
		t.Errorf("two taps made requests %q, want two POST /actions and nothing else", reqs)
	}
}

func TestLandscapeMapsPointsAndPixels(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	w.SetOrientation("UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT")
	time.Sleep(600 * time.Millisecond) // the screen's size stands 500ms
	ds, err := b.Displays(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Bounds != (geom.Rect{W: 667, H: 375}) {
		t.Fatalf("turned phone described as %v, want 667x375 points", ds[0].Bounds)
	}
	w.Fill(image.Rect(1000, 600, 1100, 700), color.RGBA{R: 250, A: 255})
	img, err := b.Capture(testCtx(t), geom.Rect{X: 500, Y: 300, W: 50, H: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Size() != image.Pt(100, 100) || img.RGBAAt(50, 50).R != 250 {
		t.Errorf("capture of 50x50 points at (500,300) in landscape: %v, centre %v; want 100x100 pixels of the red fill", img.Bounds(), img.RGBAAt(50, 50))
	}
	p := geom.GlobalPoint{X: 600, Y: 350}
	w.Events()
	if err := desktop.NewInput(b).Click(testCtx(t), &p, desktop.Left, 1, nil); err != nil {
		t.Fatal(err)
	}
	if ev := w.Events(); len(ev) != 2 || ev[0] != (iostest.Event{Kind: "down", X: 600, Y: 350}) {
		t.Errorf("a tap at %v in landscape reached WDA as %+v, want down and up at (600,350) points", p, ev)
	}
}

func TestSessionIsCreatedAgainWhenWDALosesIt(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	if w.Sessions() != 1 {
		t.Fatalf("Open created %d sessions, want 1", w.Sessions())
	}
	w.Expire()
	p := centre(iostest.ButtonRect)
	if err := desktop.NewInput(b).Click(testCtx(t), &p, desktop.Left, 1, nil); err != nil {
		t.Fatalf("a tap after WDA lost its session: %v", err)
	}
	if w.Counter() != 1 || w.Sessions() != 2 || b.SessionsCreated() != 2 {
		t.Errorf("after the session expired: counter %d, sessions %d (backend says %d); want the tap to land in a second session", w.Counter(), w.Sessions(), b.SessionsCreated())
	}
}

func TestGestures(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	in := desktop.NewInput(b)
	ctx := testCtx(t)
	p, q := geom.GlobalPoint{X: 100, Y: 400}, geom.GlobalPoint{X: 100, Y: 600}
	w.Events()
	if err := in.Click(ctx, &p, desktop.Right, 1, nil); err != nil {
		t.Fatal(err)
	}
	if ev := w.Events(); len(ev) != 2 || ev[1].Held < 500*time.Millisecond || ev[1].X != 100 {
		t.Errorf("a right click reached WDA as %+v, want a long press (held 500ms or more) in place", ev)
	}
	if err := in.Drag(ctx, q, nil, p, desktop.Left); err != nil {
		t.Fatal(err)
	}
	ev := w.Events()
	if len(ev) != 3 || ev[0].Y != 600 || ev[1].Kind != "move" || ev[2].Y != 400 {
		t.Errorf("a drag reached WDA as %+v, want down at y 600, a move and up at y 400", ev)
	}
	if err := in.Scroll(ctx, &p, desktop.Down, 2, nil); err != nil {
		t.Fatal(err)
	}
	if ev := w.Events(); len(ev) != 3 || ev[0].Y <= ev[2].Y {
		t.Errorf("scrolling down reached WDA as %+v, want a swipe upwards", ev)
	}
	if err := in.Click(ctx, &p, desktop.Middle, 1, nil); !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("a middle click: %v, want unsupported", err)
	}
}

func TestKeys(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	in := desktop.NewInput(b)
	ctx := testCtx(t)
	w.SetField("abc")
	for _, k := range []string{"BackSpace", "x", "volume_up", "XF86AudioLowerVolume", "home_screen", "home"} {
		key, err := desktop.ParseKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Hotkey(ctx, []desktop.Key{key}); err != nil {
			t.Fatalf("key %s: %v", k, err)
		}
	}
	if got := w.Field(); got != "abx" {
		t.Errorf("BackSpace and x left the field %q, want abx", got)
	}
	if got := fmt.Sprint(w.Buttons()); got != "[volumeUp volumeDown home home]" {
		t.Errorf("buttons pressed %s, want volumeUp, volumeDown, home (home_screen), home (home)", got)
	}
	err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, "a"})
	if !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("ctrl+a: %v, want unsupported (WDA has no modifier keys)", err)
	}
	if k, bt := in.Held(); len(k)+len(bt) > 0 {
		t.Errorf("after a refused combination the ledger holds %v %v", k, bt)
	}
	if err := in.Type(ctx, "Grüße 世界"); err != nil || w.Field() != "abxGrüße 世界" {
		t.Errorf("typing Unicode: %v, field %q", err, w.Field())
	}
}

func TestElements(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	ctx := testCtx(t)
	snap, err := b.Elements(ctx, desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var field, button string
	for _, e := range snap.Elements {
		got = append(got, fmt.Sprintf("%s %q %q %v %v", e.Role, e.Name, e.Value, e.Box, e.States.List()))
		switch e.Name {
		case "Name":
			field = e.Handle
		case "Increment":
			button = e.Handle
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`text "Count: 0" "" 180x20+20+60`,
		`textbox "Name" "" 335x44+20+100 [enabled editable]`,
		`button "Increment" "" 160x44+20+200 [enabled]`,
		`checkbox "Notifications" "" 51x31+300+200 [enabled]`,
		`button "Disabled" "" 155x44+200+300 []`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("snapshot lacks %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "Hidden") {
		t.Errorf("snapshot has the invisible button:\n%s", all)
	}
	if err := b.Press(ctx, button); err != nil || w.Counter() != 1 {
		t.Errorf("Press(Increment): %v, counter %d", err, w.Counter())
	}
	w.SetField("old text")
	if err := b.SetText(ctx, field, "new ✓"); err != nil {
		t.Fatalf("SetText: %v", err)
	}
	if got, err := b.Text(ctx, field); err != nil || got != "new ✓" {
		t.Errorf("Text after SetText = %q, %v", got, err)
	}
}

func TestApps(t *testing.T) {
	w := iostest.Start(t)
	b := open(t, w)
	ctx := testCtx(t)
	if err := b.LaunchApp(ctx, "com.apple.Preferences"); err != nil || w.Front() != "com.apple.Preferences" {
		t.Errorf("LaunchApp: %v, front %s", err, w.Front())
	}
	apps, err := b.ListApps(ctx)
	if err != nil || fmt.Sprint(apps) != "[{com.apple.Preferences } {com.apple.springboard } {com.example.counter }]" {
		t.Errorf("ListApps = %v, %v", apps, err)
	}
	if err := b.StopApp(ctx, "com.apple.Preferences"); err != nil {
		t.Errorf("StopApp: %v", err)
	}
	if err := b.StopApp(ctx, "com.apple.Preferences"); err == nil {
		t.Error("stopping an app that is not running: no error")
	}
	if err := b.LaunchApp(ctx, "com.x; rm -rf"); err == nil {
		t.Error("a bad bundle id was accepted")
	}
}

func TestCheck(t *testing.T) {
	w := iostest.Start(t)
	r := ios.Check(testCtx(t), ios.Options{URL: w.URL})
	want := "WebDriverAgent 9.3.3 at " + w.URL + "|device \"Test iPhone\" (iphone): iOS 17.5, screen 375x667 points at scale 2"
	if !r.OK() || strings.Join(r.Lines(), "|") != want {
		t.Errorf("Check: %q, want %q", r.Lines(), want)
	}
	w.Version = "4.8.0"
	if r := ios.Check(testCtx(t), ios.Options{URL: w.URL}); r.OK() || !strings.Contains(r.Problem, "version 7 or later") {
		t.Errorf("Check of WDA 4.8.0: %q, want too old", r.Problem)
	}
	if _, err := ios.Open(testCtx(t), ios.Options{URL: w.URL}); err == nil {
		t.Error("Open accepted WDA 4.8.0")
	}
	w.Close()
	if r := ios.Check(testCtx(t), ios.Options{URL: w.URL}); r.OK() || !strings.Contains(r.Problem, "iproxy") {
		t.Errorf("Check with nothing listening: %q, want how to start and forward WDA", r.Problem)
	}
}
