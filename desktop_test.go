package guiagent_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guiagent/guiagent"

	"github.com/guiagent/guiagent/internal/testenv"
)

// TestDesktopControlRefusesWhatItCannotDo: a point off its screenshot or off
// every display, the zero Point, a blocked hotkey, a bad button or count each
// get an error naming the problem, and the pointer does not move.
func TestDesktopControlRefusesWhatItCannotDo(t *testing.T) {
	testenv.NeedX(t)
	ctx := context.Background()
	a, err := guiagent.New(ctx, guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 640, Height: 480}, AlwaysVirtualDisplay: true,
		RunsDir: t.TempDir(), StateDir: t.TempDir(), Log: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Move(ctx, guiagent.ScreenPoint(10, 20)); err != nil {
		t.Fatal(err)
	}
	shot, err := a.Screenshot(ctx, guiagent.ScreenshotOptions{MaxLongEdge: 320, Format: "png"})
	if err != nil {
		t.Fatal(err)
	}
	if shot.Width != 320 || shot.Height != 240 || shot.MIME != "image/png" || shot.Screen != (guiagent.Rect{Width: 640, Height: 480}) {
		t.Fatalf("screenshot %dx%d %s of %+v", shot.Width, shot.Height, shot.MIME, shot.Screen)
	}
	if img, err := shot.Image(); err != nil || img.Bounds().Dx() != 320 {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"point off the screenshot", a.Click(ctx, shot.Point(400, 10), guiagent.ClickOptions{}), "image(400,10) of a 320x240 screenshot"},
		{"point off every display", a.Click(ctx, guiagent.ScreenPoint(700, 10), guiagent.ClickOptions{}), "on no display"},
		{"zero point", a.Move(ctx, guiagent.Point{}), "Screenshot.Point or ScreenPoint"},
		{"blocked hotkey", a.Hotkey(ctx, "alt", "f4"), "alt+f4"},
		{"unknown key", a.Hotkey(ctx, "ctrl", "nosuchkey"), "nosuchkey"},
		{"bad button", a.Click(ctx, shot.Point(1, 1), guiagent.ClickOptions{Button: "thumb"}), "left, right or middle"},
		{"bad count", a.Click(ctx, shot.Point(1, 1), guiagent.ClickOptions{Count: 4}), "1, 2 or 3"},
		{"bad scroll", a.Scroll(ctx, shot.Point(1, 1), "sideways", 1), "up, down, left or right"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, c.err, c.want)
		}
	}
	if !errors.Is(cases[0].err, guiagent.ErrOutside) || !errors.Is(cases[1].err, guiagent.ErrOutside) {
		t.Errorf("points off the screen are not ErrOutside: %v; %v", cases[0].err, cases[1].err)
	}
	if pos, _ := a.CursorPosition(ctx); pos.String() != "screen(10,20)" {
		t.Errorf("a refused call moved the pointer to %v", pos)
	}
	// What works lands where the screenshot says: pixel (160,120) of the
	// half-size image is screen pixel (320 or 321, 240 or 241).
	if err := a.Click(ctx, shot.Point(160, 120), guiagent.ClickOptions{Count: 2, Modifiers: []string{"shift"}}); err != nil {
		t.Fatal(err)
	}
	if x, y, err := a.ScreenXY(ctx, shot.Point(160, 120)); err != nil || x < 320 || x > 321 || y < 240 || y > 241 {
		t.Errorf("ScreenXY: %d,%d %v", x, y, err)
	}
	if err := a.Drag(ctx, shot.Point(10, 10), guiagent.ScreenPoint(100, 100)); err != nil {
		t.Fatal(err)
	}
	if pos, _ := a.CursorPosition(ctx); pos.String() != "screen(100,100)" {
		t.Errorf("after the drag the pointer is at %v", pos)
	}
	// Zoom: the 64x48 screen pixels between two corners, at up to 4x.
	z, err := a.Zoom(ctx, guiagent.ScreenPoint(100, 100), shot.Point(81.25, 73.25), guiagent.ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if z.Screen != (guiagent.Rect{X: 100, Y: 100, Width: 64, Height: 48}) || z.Width != 256 || z.Height != 192 {
		t.Errorf("zoom: %dx%d of %+v, want 256x192 of 64x48+100+100", z.Width, z.Height, z.Screen)
	}
	if x, y, _ := a.ScreenXY(ctx, z.Point(128, 96)); x != 132 || y != 124 {
		t.Errorf("the middle of the zoom is screen (%d,%d), want (132,124)", x, y)
	}
	if _, err := a.Zoom(ctx, guiagent.ScreenPoint(10, 10), guiagent.ScreenPoint(12, 12), guiagent.ScreenshotOptions{}); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Errorf("a tiny zoom: %v", err)
	}
	if err := a.MouseDown(ctx, z.Point(0, 0), guiagent.LeftButton); err != nil {
		t.Fatal(err)
	}
	if err := a.MouseUp(ctx, guiagent.ScreenPoint(200, 150), ""); err != nil {
		t.Fatal(err)
	}
	if err := a.Scroll(ctx, z.Point(10, 10), guiagent.ScrollDown, 2); err != nil {
		t.Fatal(err)
	}
	if err := a.Scroll(ctx, z.Point(10, 10), guiagent.ScrollDown, 51); err == nil || !strings.Contains(err.Error(), "1 to 50") {
		t.Errorf("51 notches: %v", err)
	}
	if err := a.PressKey(ctx, "tab", 2); err != nil {
		t.Fatal(err)
	}
	if err := a.PressKey(ctx, "tab", 0); err == nil || !strings.Contains(err.Error(), "1 to 100") {
		t.Errorf("repeat 0: %v", err)
	}
	if err := a.WriteClipboard(ctx, "héllo from Go"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.ReadClipboard(ctx); err != nil || got != "héllo from Go" {
		t.Errorf("clipboard: %q, %v", got, err)
	}
	// Go calls are in the audit log beside MCP tool calls, typed text masked.
	if err := a.Type(ctx, "private words"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	code, audit := call(t, a, srv, "GET", "/api/audit", "")
	for _, want := range []string{`"tool":"go:click"`, `"tool":"go:type"`, `"tool":"go:hotkey"`, "blocked", "redacted 13 chars"} {
		if code != 200 || !strings.Contains(audit, want) {
			t.Errorf("the audit log lacks %s: %d %.600s", want, code, audit)
		}
	}
	if strings.Contains(audit, "private words") {
		t.Error("the audit log shows typed text")
	}
	if _, err := a.Execute(ctx, "anything"); !errors.Is(err, guiagent.ErrNoModel) {
		t.Errorf("Execute without a model: %v, want ErrNoModel", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
