package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/safety"
	"github.com/guiagent/guiagent/internal/trace"
)

// The tool names and their order are a public interface (issue 3).
var issueTools = []string{
	"gui_list_displays", "gui_screenshot", "gui_zoom", "gui_cursor_position", "gui_move", "gui_click",
	"gui_double_click", "gui_mouse_down", "gui_mouse_up", "gui_drag", "gui_scroll", "gui_type",
	"gui_press_key", "gui_hotkey", "gui_wait", "gui_find_image", "gui_find_text", "gui_read_text", "gui_clipboard",
}

func listTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func TestToolListAndAnnotations(t *testing.T) {
	e := newEnv(t, nil, Options{})
	tools := listTools(t, e.cs)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.Annotations == nil || tl.Annotations.Title == "" {
			t.Errorf("%s lacks a description or annotations", tl.Name)
		}
	}
	if !slices.Equal(sortedCopy(names), sortedCopy(issueTools)) {
		t.Fatalf("tools = %v\nwant %v", names, issueTools)
	}
	readOnlyTools := []string{"gui_list_displays", "gui_screenshot", "gui_zoom", "gui_cursor_position", "gui_wait", "gui_find_image", "gui_find_text", "gui_read_text"}
	for _, tl := range tools {
		ro := slices.Contains(readOnlyTools, tl.Name)
		if tl.Annotations.ReadOnlyHint != ro {
			t.Errorf("%s readOnlyHint = %v, want %v", tl.Name, tl.Annotations.ReadOnlyHint, ro)
		}
		if !ro && (tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint) {
			t.Errorf("%s changes the desktop but is not marked destructive", tl.Name)
		}
	}

	// gui_execute_task appears only with a task runner.
	e2 := newEnv(t, nil, Options{Tasks: &scriptedRunner{}})
	names = names[:0]
	for _, tl := range listTools(t, e2.cs) {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "gui_execute_task") {
		t.Errorf("gui_execute_task missing with a TaskRunner: %v", names)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func TestListDisplays(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	var out struct{ Displays []DisplayInfo }
	jsonOf(t, callTool(t, e.cs, "gui_list_displays", nil), &out)
	want := []DisplayInfo{
		{ID: "0", Name: "LEFT", X: 0, Y: 0, Width: 1920, Height: 1080, ScaleFactor: 1, Primary: true},
		{ID: "1", Name: "RIGHT", X: 1920, Y: -200, Width: 2560, Height: 1440, ScaleFactor: 1},
	}
	if !slices.Equal(out.Displays, want) {
		t.Fatalf("displays = %+v\nwant %+v", out.Displays, want)
	}
}

func TestScreenshotShowsTheScreen(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	red := color.RGBA{220, 20, 20, 255}
	e.desk.Fill(geom.Rect{X: 1920 + 1280, Y: -200 + 720, W: 400, H: 200}, red) // on display 1
	info, img := screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 1280})
	if info.ImageWidth != 1280 || info.ImageHeight != 720 || img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 720 {
		t.Fatalf("image %dx%d (metadata %dx%d), want 1280x720", img.Bounds().Dx(), img.Bounds().Dy(), info.ImageWidth, info.ImageHeight)
	}
	if info.Display != "1" || info.Scale != 0.5 || info.FrameID == "" || info.Format != "jpeg" || info.Bytes == 0 {
		t.Fatalf("metadata %+v", info)
	}
	x, y, found := findColor(img, red)
	if !found || x < 730 || x > 750 || y < 405 || y > 425 {
		t.Fatalf("red block at image (%v,%v) found=%v, want about (740,415)", x, y, found)
	}
	// PNG on request; the default display is the primary one.
	info, img = screenshot(t, e.cs, map[string]any{"format": "png"})
	if info.Display != "0" || info.Format != "png" || img.Bounds().Dx() != 1920 {
		t.Fatalf("png screenshot of the primary display: %+v", info)
	}
	if _, _, found := findColor(img, red); found {
		t.Fatal("display 0 shows the block painted on display 1")
	}
}

func TestDefaultScreenshotFitsHostLimits(t *testing.T) {
	big := []geom.Display{{ID: "0", Bounds: geom.Rect{W: 3840, H: 2160}, Scale: 1, Primary: true}}
	e := newEnv(t, big, Options{})
	// Busy content: a noise pattern so JPEG cannot compress it away.
	img := image.NewRGBA(image.Rect(0, 0, 3840, 2160))
	seed := uint32(1)
	for i := range img.Pix {
		seed = seed*1664525 + 1013904223
		img.Pix[i] = byte(seed >> 24)
	}
	if err := e.desk.SetImage("0", img); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, e.cs, "gui_screenshot", nil)
	if res.IsError {
		t.Fatal(text(res))
	}
	var info ShotInfo
	jsonOf(t, res, &info)
	data := res.Content[0].(*mcp.ImageContent).Data
	if enc := base64.StdEncoding.EncodedLen(len(data)); enc > 1_000_000 {
		t.Errorf("screenshot is %d bytes base64, over the ~1 MB hosts accept", enc)
	}
	if info.ImageWidth > 2000 || info.ImageHeight > 2000 {
		t.Errorf("screenshot is %dx%d, over 2000 px per side", info.ImageWidth, info.ImageHeight)
	}
}

// A click at image coordinates of a downscaled screenshot of the second display
// lands on the right global pixel.
func TestClickImageCoordinatesTwoDisplaysDownscaled(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	green := color.RGBA{20, 200, 40, 255}
	target := geom.Rect{X: 1920 + 2000, Y: -200 + 1100, W: 120, H: 80}
	e.desk.Fill(target, green)
	_, img := screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 1280})
	x, y, found := findColor(img, green)
	if !found {
		t.Fatal("target not visible in the screenshot")
	}
	out := ok(t, e.cs, "gui_click", map[string]any{"x": x, "y": y, "display": "1"})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if !target.Contains(down.At) {
		t.Fatalf("click at image (%.1f,%.1f) landed at %v, outside the target %v", x, y, down.At, target)
	}
	if !strings.Contains(out, "global") || !strings.Contains(out, "display 1") {
		t.Errorf("result %q does not say where the click went", out)
	}
	// An exact point: image pixel (100,50) at scale 0.5 is screen pixel (200,100) of display 1.
	ok(t, e.cs, "gui_click", map[string]any{"x": 100, "y": 50, "display": "1"})
	down = lastEvent(t, e.desk, fake.OpButtonDown)
	if abs(down.At.X-(1920+200)) > 1 || abs(down.At.Y-(-200+100)) > 1 {
		t.Fatalf("image (100,50) landed at %v, want about (2120,-100)", down.At)
	}
	// The frame of display 1 does not affect display 0, still at its implicit 1:1 frame.
	ok(t, e.cs, "gui_click", map[string]any{"x": 100, "y": 50})
	if down = lastEvent(t, e.desk, fake.OpButtonDown); down.At != (geom.GlobalPoint{X: 100, Y: 50}) {
		t.Fatalf("click on display 0 landed at %v, want (100,50)", down.At)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestImplicitFrameBeforeAnyScreenshot(t *testing.T) {
	big := []geom.Display{{ID: "0", Bounds: geom.Rect{W: 3840, H: 2160}, Scale: 1, Primary: true}}
	e := newEnv(t, big, Options{})
	// The default screenshot would be 1920x1080, so image (960,540) is the screen centre.
	ok(t, e.cs, "gui_click", map[string]any{"x": 960, "y": 540})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if abs(down.At.X-1920) > 1 || abs(down.At.Y-1080) > 1 {
		t.Fatalf("click landed at %v, want about (1920,1080)", down.At)
	}
	if len(e.desk.Events()) == 0 {
		t.Fatal("no input")
	}
}

func TestCoordinateSpaces(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 640})
	// screen: global pixels, whatever the frame.
	ok(t, e.cs, "gui_move", map[string]any{"x": 3000, "y": -150, "space": "screen"})
	if ev := lastEvent(t, e.desk, fake.OpMove); ev.At != (geom.GlobalPoint{X: 3000, Y: -150}) {
		t.Fatalf("screen-space move went to %v", ev.At)
	}
	// normalized-1000: (500,500) is the middle of the latest image of display 1.
	ok(t, e.cs, "gui_move", map[string]any{"x": 500, "y": 500, "space": "normalized-1000", "display": "1"})
	mid := geom.GlobalPoint{X: 1920 + 1280, Y: -200 + 720}
	if ev := lastEvent(t, e.desk, fake.OpMove); abs(ev.At.X-mid.X) > 2 || abs(ev.At.Y-mid.Y) > 2 {
		t.Fatalf("normalized move went to %v, want about %v", ev.At, mid)
	}
	// yx-normalized-1000 reads named x and y as such (no swap).
	ok(t, e.cs, "gui_move", map[string]any{"x": 250, "y": 750, "space": "yx-normalized-1000", "display": "1"})
	want := geom.GlobalPoint{X: 1920 + 640, Y: -200 + 1080}
	if ev := lastEvent(t, e.desk, fake.OpMove); abs(ev.At.X-want.X) > 3 || abs(ev.At.Y-want.Y) > 3 {
		t.Fatalf("yx move went to %v, want about %v", ev.At, want)
	}
	fails(t, e.cs, "gui_move", map[string]any{"x": 1, "y": 1, "space": "furlongs"}, "space")

	// GUI_AGENT_COORDINATE_MODE changes the default space.
	e2 := newEnv(t, nil, Options{CoordinateMode: "normalized-0-1"})
	ok(t, e2.cs, "gui_click", map[string]any{"x": 0.25, "y": 0.5})
	if ev := lastEvent(t, e2.desk, fake.OpButtonDown); abs(ev.At.X-480) > 1 || abs(ev.At.Y-540) > 1 {
		t.Fatalf("normalized default click went to %v, want about (480,540)", ev.At)
	}
	if _, err := New(Options{Screen: e.screen, CoordinateMode: "sideways"}); err == nil ||
		!strings.Contains(err.Error(), "GUI_AGENT_COORDINATE_MODE") {
		t.Fatalf("bad coordinate mode accepted: %v", err)
	}
}

func TestInputTools(t *testing.T) {
	e := newEnv(t, nil, Options{})
	cs, desk := e.cs, e.desk
	evs := func(f func()) []string {
		n := len(desk.Events())
		f()
		return ops(desk.Events()[n:])
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s events = %v\nwant %v", name, got, want)
		}
	}
	check("move", evs(func() { ok(t, cs, "gui_move", map[string]any{"x": 10.4, "y": 20.6}) }), "move(10,21)")
	check("right click with ctrl", evs(func() {
		ok(t, cs, "gui_click", map[string]any{"x": 30, "y": 40, "button": "right", "modifiers": []string{"ctrl"}})
	}), "move(30,40)", "key_down(Control_L)", "button_down(right)(30,40)", "button_up(right)(30,40)", "key_up(Control_L)")
	if ev := lastEvent(t, desk, fake.OpButtonDown); !slices.Equal(ev.Modifiers, []string{"ctrl"}) {
		t.Errorf("click modifiers held = %v, want [ctrl]", ev.Modifiers)
	}
	check("triple click", evs(func() { ok(t, cs, "gui_click", map[string]any{"x": 5, "y": 5, "clicks": 3}) }),
		"move(5,5)", "button_down(left)(5,5)", "button_up(left)(5,5)", "button_down(left)(5,5)", "button_up(left)(5,5)",
		"button_down(left)(5,5)", "button_up(left)(5,5)")
	check("double click", evs(func() { ok(t, cs, "gui_double_click", map[string]any{"x": 7, "y": 8}) }),
		"move(7,8)", "button_down(left)(7,8)", "button_up(left)(7,8)", "button_down(left)(7,8)", "button_up(left)(7,8)")
	check("mouse down", evs(func() { ok(t, cs, "gui_mouse_down", map[string]any{"x": 100, "y": 100}) }),
		"move(100,100)", "button_down(left)(100,100)")
	if _, buttons := desk.Pressed(); !slices.Equal(buttons, []desktop.Button{desktop.Left}) {
		t.Errorf("after gui_mouse_down pressed = %v, want [left]", buttons)
	}
	check("mouse up in place", evs(func() { ok(t, cs, "gui_mouse_up", nil) }), "button_up(left)(100,100)")
	fails(t, cs, "gui_mouse_up", map[string]any{"x": 5}, "both x and y")
	check("drag", evs(func() {
		ok(t, cs, "gui_drag", map[string]any{"from_x": 10, "from_y": 10, "to_x": 90, "to_y": 50})
	})[:2], "move(10,10)", "button_down(left)(10,10)")
	if up := lastEvent(t, desk, fake.OpButtonUp); up.At != (geom.GlobalPoint{X: 90, Y: 50}) {
		t.Errorf("drag released at %v, want (90,50)", up.At)
	}
	check("scroll", evs(func() {
		ok(t, cs, "gui_scroll", map[string]any{"x": 300, "y": 200, "direction": "down", "amount": 4})
	}), "move(300,200)", "scroll(down,4)(300,200)")
	check("scroll default amount in place", evs(func() { ok(t, cs, "gui_scroll", map[string]any{"direction": "left"}) }),
		"scroll(left,3)(300,200)")
	fails(t, cs, "gui_scroll", map[string]any{"direction": "sideways"}, "direction")
	// A display that does not exist is an error even without a point, not an action elsewhere.
	if got := evs(func() {
		fails(t, cs, "gui_scroll", map[string]any{"direction": "up", "display": "7"}, `"7"`, "gui_list_displays")
	}); len(got) != 0 {
		t.Errorf("scroll on an unknown display acted: %v", got)
	}

	out := ok(t, cs, "gui_type", map[string]any{"text": "Grüße 世界 ✓ 42"})
	if desk.Typed() != "Grüße 世界 ✓ 42" || !strings.Contains(out, "13 characters") || !strings.Contains(out, "may still be receiving them") {
		t.Errorf("typed %q (%q)", desk.Typed(), out)
	}
	check("press key repeat", evs(func() { ok(t, cs, "gui_press_key", map[string]any{"key": "Return", "repeat": 2}) }),
		"key_down(Return)", "key_up(Return)", "key_down(Return)", "key_up(Return)")
	check("press key combo", evs(func() { ok(t, cs, "gui_press_key", map[string]any{"key": "ctrl+s"}) }),
		"key_down(Control_L)", "key_down(s)", "key_up(s)", "key_up(Control_L)")
	check("press key with modifiers", evs(func() {
		ok(t, cs, "gui_press_key", map[string]any{"key": "Tab", "modifiers": []string{"shift"}})
	}), "key_down(Shift_L)", "key_down(Tab)", "key_up(Tab)", "key_up(Shift_L)")
	check("hotkey", evs(func() { ok(t, cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "shift", "t"}}) }),
		"key_down(Control_L)", "key_down(Shift_L)", "key_down(t)", "key_up(t)", "key_up(Shift_L)", "key_up(Control_L)")
	if keys, buttons := desk.Pressed(); len(keys)+len(buttons) != 0 {
		t.Errorf("left pressed: %v %v", keys, buttons)
	}
}

func TestCursorPosition(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 1280})
	e.desk.SetCursor(geom.GlobalPoint{X: 1920 + 400, Y: -200 + 300})
	var pos struct {
		X, Y    float64
		InImage bool `json:"in_image"`
		Display string
	}
	res := callTool(t, e.cs, "gui_cursor_position", nil)
	jsonOf(t, res, &pos)
	var g struct {
		GX int `json:"global_x"`
		GY int `json:"global_y"`
	}
	jsonOf(t, res, &g)
	if g.GX != 2320 || g.GY != 100 || pos.Display != "1" || !pos.InImage {
		t.Fatalf("cursor %+v %+v", pos, g)
	}
	if pos.X < 199 || pos.X > 201 || pos.Y < 149 || pos.Y > 151 {
		t.Fatalf("cursor in image pixels = (%v,%v), want about (200,150)", pos.X, pos.Y)
	}
}

func TestWaitAndClipboard(t *testing.T) {
	e := newEnv(t, nil, Options{MaxWait: 200 * time.Millisecond})
	start := time.Now()
	out := ok(t, e.cs, "gui_wait", map[string]any{"ms": 50})
	if time.Since(start) < 50*time.Millisecond || !strings.Contains(out, "50 ms") {
		t.Errorf("wait returned %q after %v", out, time.Since(start))
	}
	fails(t, e.cs, "gui_wait", map[string]any{"ms": 60000}, "ms") // over the schema maximum
	ok(t, e.cs, "gui_clipboard", map[string]any{"action": "set", "text": "ünïcode ✓"})
	if got, _ := e.desk.ReadClipboard(context.Background()); got != "ünïcode ✓" {
		t.Fatalf("clipboard holds %q", got)
	}
	if got := ok(t, e.cs, "gui_clipboard", map[string]any{"action": "get"}); got != "ünïcode ✓" {
		t.Fatalf("clipboard get = %q", got)
	}
	fails(t, e.cs, "gui_clipboard", map[string]any{"action": "cut"}, "action")
}

func TestZoom(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	blue := color.RGBA{30, 40, 230, 255}
	e.desk.Fill(geom.Rect{X: 400, Y: 300, W: 20, H: 10}, blue)
	// Zoom on the region (350,250)-(449,349) given in screenshot pixels (1:1 here).
	res := callTool(t, e.cs, "gui_zoom", map[string]any{"x1": 350, "y1": 250, "x2": 449, "y2": 349})
	if res.IsError {
		t.Fatal(text(res))
	}
	var info ShotInfo
	jsonOf(t, res, &info)
	if info.Region != (DisplayRect{350, 250, 100, 100}) || info.ImageWidth != 400 || info.Scale != 4 {
		t.Fatalf("zoom metadata %+v, want region 100x100 at (350,250) scaled to 400 px", info)
	}
	img, err := decodeContent(res)
	if err != nil {
		t.Fatal(err)
	}
	x, y, found := findColor(img, blue)
	if !found || x < 235 || x > 245 || y < 215 || y > 225 {
		t.Fatalf("blue block at zoom image (%v,%v), want about (240,220)", x, y)
	}
	// The zoom is now the latest frame: its pixels map into the region.
	ok(t, e.cs, "gui_click", map[string]any{"x": x, "y": y})
	if down := lastEvent(t, e.desk, fake.OpButtonDown); !(geom.Rect{X: 400, Y: 300, W: 20, H: 10}).Contains(down.At) {
		t.Fatalf("click in zoom image landed at %v, outside the blue block", down.At)
	}
	fails(t, e.cs, "gui_zoom", map[string]any{"x1": 10, "y1": 10, "x2": 11, "y2": 11}, "too small")
}

func decodeContent(res *mcp.CallToolResult) (image.Image, error) {
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			return imaging.Decode(ic.Data)
		}
	}
	return nil, errors.New("no image content")
}

func TestFindImage(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	// A distinctive icon on display 1.
	icon := image.NewRGBA(image.Rect(0, 0, 48, 48))
	for y := range 48 {
		for x := range 48 {
			c := color.RGBA{uint8(x * 5), uint8(y * 5), uint8((x ^ y) * 4), 255}
			if (x/8+y/8)%2 == 0 {
				c = color.RGBA{250, 240, 10, 255}
			}
			icon.Set(x, y, c)
		}
	}
	fb := e.desk.Image("1")
	draw.Draw(fb, image.Rect(1500, 900, 1548, 948), icon, image.Point{}, draw.Src)
	if err := e.desk.SetImage("1", fb); err != nil {
		t.Fatal(err)
	}
	// The caller cuts the icon out of the screenshot it got (scale 0.75 here).
	_, shot := screenshot(t, e.cs, map[string]any{"display": "1", "format": "png"})
	cut := image.NewRGBA(image.Rect(0, 0, 36, 36))
	draw.Draw(cut, cut.Bounds(), shot, image.Point{X: 1125, Y: 675}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, cut); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, e.cs, "gui_find_image", map[string]any{"template": base64.StdEncoding.EncodeToString(b.Bytes()), "display": "1"})
	if res.IsError {
		t.Fatal(text(res))
	}
	var out struct {
		FrameID string  `json:"frame_id"`
		Matches []Match `json:"matches"`
	}
	jsonOf(t, res, &out)
	if len(out.Matches) == 0 {
		t.Fatalf("icon not found: %s", text(res))
	}
	m := out.Matches[0]
	if abs(m.GlobalX-(1920+1524)) > 2 || abs(m.GlobalY-(-200+924)) > 2 || m.Score < 0.9 {
		t.Fatalf("best match %+v, want centre about (3444,724)", m)
	}
	// The match's image coordinates are clickable.
	ok(t, e.cs, "gui_click", map[string]any{"x": m.X, "y": m.Y, "display": "1"})
	if down := lastEvent(t, e.desk, fake.OpButtonDown); abs(down.At.X-3444) > 2 || abs(down.At.Y-724) > 2 {
		t.Fatalf("click on the match landed at %v", down.At)
	}
	fails(t, e.cs, "gui_find_image", map[string]any{"template": "not base64!"}, "base64")
}

func TestBlockedHotkeysNeverReachTheDesktop(t *testing.T) {
	e := newEnv(t, nil, Options{Keys: safety.MustKeyPolicy(safety.KeyPolicyOptions{Platform: "linux", Blocked: []string{"ctrl+q"}})})
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"gui_hotkey", map[string]any{"keys": []string{"alt", "F4"}}},
		{"gui_hotkey", map[string]any{"keys": []string{"ctrl+alt+delete"}}},
		{"gui_hotkey", map[string]any{"keys": []string{"Control_R", "q"}}},
		{"gui_press_key", map[string]any{"key": "F4", "modifiers": []string{"alt"}}},
		{"gui_press_key", map[string]any{"key": "super+l"}},
		{"gui_click", map[string]any{"x": 5, "y": 5, "modifiers": []string{"ctrl", "alt", "backspace"}}},
		{"gui_scroll", map[string]any{"direction": "up", "modifiers": []string{"alt", "f4"}}},
	}
	for _, c := range cases {
		fails(t, e.cs, c.tool, c.args, "blocked", "GUI_AGENT_ALLOWED_HOTKEYS")
	}
	if evs := e.desk.Events(); len(evs) != 0 {
		t.Fatalf("blocked combinations reached the desktop: %v", ops(evs))
	}
	// The audit records the refusals.
	entries := e.srv.Audit().Snapshot()
	if len(entries) != len(cases) || entries[0].Error == "" || entries[0].Tool != "gui_hotkey" {
		t.Fatalf("audit = %+v", entries)
	}
}

func TestKillSwitchStopsTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "STOP")
	e := newEnv(t, nil, Options{KillSwitch: safety.NewKillSwitch(path)})
	ok(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1})
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(safety.DefaultKillSwitchInterval + 20*time.Millisecond)
	n := len(e.desk.Events())
	fails(t, e.cs, "gui_click", map[string]any{"x": 9, "y": 9}, "kill switch", path)
	fails(t, e.cs, "gui_type", map[string]any{"text": "x"}, "kill switch")
	fails(t, e.cs, "gui_clipboard", map[string]any{"action": "set", "text": "x"}, "kill switch")
	if evs := e.desk.Events()[n:]; len(evs) != 0 {
		t.Fatalf("input while the kill switch was engaged: %v", ops(evs))
	}
	ok(t, e.cs, "gui_screenshot", nil) // looking is still allowed
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(safety.DefaultKillSwitchInterval + 20*time.Millisecond)
	ok(t, e.cs, "gui_click", map[string]any{"x": 9, "y": 9})
}

func TestErrorsAreToolResults(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "nosuchkey"}}, "unknown key")
	fails(t, e.cs, "gui_press_key", map[string]any{"key": "hyperdrive"}, "unknown key")
	fails(t, e.cs, "gui_click", map[string]any{"x": -50, "y": 10}, "outside", "image")
	fails(t, e.cs, "gui_click", map[string]any{"x": 10, "y": 5000}, "outside")
	fails(t, e.cs, "gui_click", map[string]any{"x": -500, "y": -500, "space": "screen"}, "no display")
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "display": "7"}, "no such display", "gui_list_displays")
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "button": "fourth"}, "button")
	fails(t, e.cs, "gui_click", map[string]any{"x": 1, "y": 1, "clicks": 5}, "clicks")
	fails(t, e.cs, "gui_click", map[string]any{"y": 1}, "x")
	fails(t, e.cs, "gui_type", map[string]any{"text": ""}, "text")
	fails(t, e.cs, "gui_screenshot", map[string]any{"format": "gif"}, "format")
	// A point just past the image edge is clamped onto the display, with a warning.
	out := ok(t, e.cs, "gui_click", map[string]any{"x": 1920.8, "y": 10})
	if !strings.Contains(out, "clamped") {
		t.Errorf("edge click result %q has no clamp warning", out)
	}
	if down := lastEvent(t, e.desk, fake.OpButtonDown); down.At.X != 1919 {
		t.Errorf("edge click landed at %v, want x 1919", down.At)
	}
	// A backend failure in the middle of a click leaves nothing pressed.
	e.desk.FailNext(fake.OpButtonUp, errors.New("injected failure"))
	fails(t, e.cs, "gui_click", map[string]any{"x": 3, "y": 3, "modifiers": []string{"shift"}}, "injected failure")
	if keys, buttons := e.desk.Pressed(); len(keys) != 0 || len(buttons) != 0 {
		t.Fatalf("after a failed click, still pressed: %v %v", keys, buttons)
	}
}

func TestStaleFrame(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	screenshot(t, e.cs, map[string]any{"display": "1", "max_long_edge": 1280})
	changed := slices.Clone(twoDisplays)
	changed[1].Bounds = geom.Rect{X: 1920, Y: 0, W: 1280, H: 1024}
	e.screen.setDisplays(changed)
	n := len(e.desk.Events())
	fails(t, e.cs, "gui_click", map[string]any{"x": 10, "y": 10, "display": "1"}, "stale frame", "gui_screenshot")
	if len(e.desk.Events()) != n {
		t.Fatal("a click on a stale frame reached the desktop")
	}
	// Display 0 did not change; a new screenshot of display 1 fixes it.
	ok(t, e.cs, "gui_click", map[string]any{"x": 10, "y": 10})
	screenshot(t, e.cs, map[string]any{"display": "1"})
	ok(t, e.cs, "gui_click", map[string]any{"x": 10, "y": 10, "display": "1"})
}

func TestScreenshotAfterAction(t *testing.T) {
	e := newEnv(t, nil, Options{ScreenshotAfterAction: true, AfterActionDelay: time.Millisecond})
	res := callTool(t, e.cs, "gui_click", map[string]any{"x": 10, "y": 10})
	if res.IsError {
		t.Fatal(text(res))
	}
	if _, err := decodeJPEG(res); err != nil {
		t.Fatalf("click result has no screenshot: %v (%s)", err, text(res))
	}
	var info ShotInfo
	jsonOf(t, res, &info)
	if info.FrameID == "" || info.ImageWidth != 1920 || !strings.Contains(text(res), "clicked left") {
		t.Fatalf("after-action result: %s", text(res))
	}
}

func decodeJPEG(res *mcp.CallToolResult) (int, error) {
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok && ic.MIMEType == "image/jpeg" && len(ic.Data) > 0 {
			return len(ic.Data), nil
		}
	}
	return 0, errors.New("no JPEG image content")
}

func TestResources(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "STOP")
	e := newEnv(t, twoDisplays, Options{KillSwitch: safety.NewKillSwitch(ks), Version: "1.2.3",
		CurrentTask: func() any { return map[string]string{"task": "nothing"} }})
	ok(t, e.cs, "gui_type", map[string]any{"text": "my password 123"})
	read := func(uri string) map[string]any {
		t.Helper()
		res, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		return m
	}
	st := read(StatusURI)
	if st["backend"] != "fake" || st["version"] != "1.2.3" || len(st["displays"].([]any)) != 2 ||
		st["kill_switch"].(map[string]any)["file"] != ks || st["current_task"] == nil {
		t.Errorf("status = %v", st)
	}
	p := read(PermissionsURI)
	if p["capture"] != true || p["input"] != true || p["clipboard"] != true || p["details"] == nil {
		t.Errorf("permissions = %v", p)
	}
	if d := read(DisplaysURI); len(d["displays"].([]any)) != 2 {
		t.Errorf("displays = %v", d)
	}
	res, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: AuditURI})
	if err != nil {
		t.Fatal(err)
	}
	audit := res.Contents[0].Text
	if strings.Contains(audit, "password") || !strings.Contains(audit, "<redacted 15 chars>") || !strings.Contains(audit, "gui_type") {
		t.Errorf("audit does not redact typed text: %s", audit)
	}
	list, err := e.cs.ListResources(context.Background(), nil)
	if err != nil || len(list.Resources) != 4 {
		t.Fatalf("resources = %v, %v", list, err)
	}
}

// Input from several clients never interleaves inside one action.
func TestConcurrentClientsDoNotInterleave(t *testing.T) {
	desk := fake.New(fake.Options{PrimitiveDelay: 200 * time.Microsecond})
	srv, err := New(Options{Screen: desk, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, desk: desk, srv: srv}
	var wg sync.WaitGroup
	for i := range 4 {
		cs := e.connect(nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if i%2 == 0 {
					ok(t, cs, "gui_click", map[string]any{"x": 10 * i, "y": j, "modifiers": []string{"shift"}})
				} else {
					ok(t, cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "shift", "k"}})
				}
			}
		}()
	}
	wg.Wait()
	evs := desk.Events()
	// Every action is a contiguous block: click = move, shift down, button down, up, shift up;
	// hotkey = 3 downs, 3 ups.
	for i := 0; i < len(evs); {
		switch evs[i].Op {
		case fake.OpMove:
			want := []string{fake.OpMove, fake.OpKeyDown, fake.OpButtonDown, fake.OpButtonUp, fake.OpKeyUp}
			for k, op := range want {
				if i+k >= len(evs) || evs[i+k].Op != op {
					t.Fatalf("click interleaved at event %d: %v", i, ops(evs[i:min(i+6, len(evs))]))
				}
			}
			i += len(want)
		case fake.OpKeyDown:
			for k := range 6 {
				if i+k >= len(evs) || (k < 3) != (evs[i+k].Op == fake.OpKeyDown) || evs[i+k].Op == fake.OpMove {
					t.Fatalf("hotkey interleaved at event %d: %v", i, ops(evs[i:min(i+6, len(evs))]))
				}
			}
			i += 6
		default:
			t.Fatalf("unexpected event %v at %d", evs[i], i)
		}
	}
	if len(evs) != 20*5+20*6 {
		t.Fatalf("got %d events, want %d", len(evs), 20*5+20*6)
	}
}

// scriptedRunner is a TaskRunner that reports a few progress events, as the
// agent does: progress events only, each with a message and a non-decreasing
// progress (the server makes the notifications' progress strictly increase).
type scriptedRunner struct {
	mu    sync.Mutex
	tasks []agent.Task
}

func (r *scriptedRunner) Run(ctx context.Context, t agent.Task, progress func(agent.Event)) agent.Result {
	r.mu.Lock()
	r.tasks = append(r.tasks, t)
	r.mu.Unlock()
	progress(agent.Event{Kind: agent.EvProgress, Message: "Started: " + t.Task, Total: 3})
	for i := 1; i <= 3; i++ {
		progress(agent.Event{Kind: agent.EvProgress, Step: i, Progress: float64(i - 1), Total: 3, Message: fmt.Sprintf("step %d done", i)})
	}
	res := agent.Result{Status: agent.Completed, Summary: "did " + t.Task, Result: "42", Steps: 3, RunID: "run-1"}
	progress(agent.Event{Kind: agent.EvProgress, Step: 3, Progress: 3, Total: 3, Message: "Finished: " + string(res.Status)})
	return res
}

func TestExecuteTaskWithProgress(t *testing.T) {
	runner := &scriptedRunner{}
	e := newEnv(t, nil, Options{Tasks: runner, DefaultDisplay: "0"})
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := e.connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, req.Params)
		mu.Unlock()
	}})
	params := &mcp.CallToolParams{Name: "gui_execute_task", Arguments: map[string]any{"task": "count to three", "max_steps": 7, "timeout_s": 30}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatal(text(res))
	}
	var r agent.Result
	jsonOf(t, res, &r)
	if r.Status != agent.Completed || r.Result != "42" || r.RunID != "run-1" {
		t.Fatalf("result %+v", r)
	}
	if tk := runner.tasks[0]; tk.Task != "count to three" || tk.MaxSteps != 7 || tk.Timeout != 30*time.Second || tk.Display != "0" {
		t.Fatalf("task passed as %+v", tk)
	}
	deadline := time.Now().Add(time.Minute) // a bound for a broken run only: waiting on the notifications, not the clock
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 {
		t.Fatalf("got %d progress notifications, want 5 (start, 3 steps, finish)", len(got))
	}
	for i, p := range got {
		if p.ProgressToken != "tok-1" || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Fatalf("notification %d: %+v", i, p)
		}
	}
	if got[2].Message != "step 2 done" || got[2].Total != 3 || !strings.Contains(got[4].Message, "completed") {
		t.Fatalf("notifications: %+v %+v", got[2], got[4])
	}
	// Without a progress token, no notifications are sent.
	before := len(got)
	mu.Unlock()
	ok(t, cs, "gui_execute_task", map[string]any{"task": "again"})
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	if len(got) != before {
		t.Fatalf("notifications sent without a progress token")
	}
}

// recorder is a ToolRecorder keeping what it gets.
type recorder struct {
	mu    sync.Mutex
	calls []string
	args  []string
	imgs  int
	got   []trace.Call
}

func (r *recorder) RecordCall(c trace.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	raw, _ := c.Args.(json.RawMessage) // RedactArgs output
	r.calls = append(r.calls, c.Tool+": "+c.Result)
	r.args = append(r.args, string(raw))
	if c.Image != nil && len(c.Image.Data) > 0 && c.Image.Frame.ID != "" {
		r.imgs++
	}
	r.got = append(r.got, c)
}

func TestToolCallsAreRecordedPerSession(t *testing.T) {
	rec := &recorder{}
	var ids []string
	e := newEnv(t, nil, Options{Records: func(id string) ToolRecorder { ids = append(ids, id); return rec }})
	ok(t, e.cs, "gui_screenshot", map[string]any{"max_long_edge": 320})
	ok(t, e.cs, "gui_type", map[string]any{"text": "top secret"})
	fails(t, e.cs, "gui_hotkey", map[string]any{"keys": []string{"alt", "f4"}})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 3 || rec.imgs != 1 {
		t.Fatalf("recorded %v with %d images", rec.calls, rec.imgs)
	}
	if strings.Contains(strings.Join(rec.args, " "), "top secret") || !strings.Contains(rec.args[1], "<redacted 10 chars>") {
		t.Fatalf("recorded arguments are not redacted: %v", rec.args)
	}
	if !strings.HasPrefix(rec.calls[2], "gui_hotkey: error: ") || !rec.got[2].IsError || rec.got[0].IsError || rec.got[1].IsError {
		t.Fatalf("a refused call is not recorded as an error (and only it): %q, IsError %v %v %v",
			rec.calls[2], rec.got[0].IsError, rec.got[1].IsError, rec.got[2].IsError)
	}
	// The typed text is an action of the call, drawn on the screenshot the
	// session holds, with the text redacted as in the arguments.
	typed := rec.got[1]
	if len(typed.Actions) != 1 || typed.Actions[0].Action.Kind != action.TypeText || typed.Actions[0].Action.Text != "<redacted 10 chars>" ||
		typed.Frame == nil || typed.Frame != rec.got[0].Image {
		t.Fatalf("typing recorded as %+v on frame %v", typed.Actions, typed.Frame)
	}
	if len(rec.got[2].Actions) != 0 {
		t.Errorf("the refused hotkey is recorded as performed: %+v", rec.got[2].Actions)
	}
}

// TestRecordedActionsCarryImageAndGlobalPoints: every pointer tool records
// its action with the point in the image the caller gave coordinates in and
// the global point input went to, and the frame they refer to; a point given
// in screen space is placed in the session's latest image; an input that
// fails is recorded with its error.
func TestRecordedActionsCarryImageAndGlobalPoints(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, nil, Options{Records: func(string) ToolRecorder { return rec }})
	ok(t, e.cs, "gui_screenshot", map[string]any{"max_long_edge": 960}) // 1920x1080 at half scale
	ok(t, e.cs, "gui_drag", map[string]any{"from_x": 100, "from_y": 50, "to_x": 300, "to_y": 150})
	ok(t, e.cs, "gui_scroll", map[string]any{"x": 1000, "y": 600, "space": "screen", "direction": "down"})
	ok(t, e.cs, "gui_mouse_down", map[string]any{})
	e.desk.FailNext(fake.OpButtonUp, errors.New("device gone"))
	fails(t, e.cs, "gui_mouse_up", map[string]any{"x": 10, "y": 20})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	shot := rec.got[0].Image
	pt := func(x, y float64) geom.ImagePoint { return geom.ImagePoint{X: x, Y: y} }
	global := func(x, y float64) *geom.GlobalPoint { // where input goes for image point x,y
		r, err := shot.Frame.Resolve(pt(x, y), false)
		if err != nil {
			t.Fatal(err)
		}
		return &r.Global
	}
	var downAt, upAt, scrollAt geom.GlobalPoint
	for _, ev := range e.desk.Events() {
		switch ev.Op {
		case fake.OpButtonDown:
			if downAt == (geom.GlobalPoint{}) {
				downAt = ev.At
			}
		case fake.OpButtonUp:
			if upAt == (geom.GlobalPoint{}) {
				upAt = ev.At
			}
		case fake.OpScroll:
			scrollAt = ev.At
		}
	}
	if *global(100, 50) != downAt || *global(300, 150) != upAt || scrollAt != (geom.GlobalPoint{X: 1000, Y: 600}) {
		t.Fatalf("the desktop got the drag at %v->%v and the scroll at %v", downAt, upAt, scrollAt)
	}
	for i, want := range []struct {
		kind            action.Kind
		img, imgTo      *geom.ImagePoint
		global, globTo  *geom.GlobalPoint
		outcome, errSub string
	}{
		{action.Drag, new(pt(100, 50)), new(pt(300, 150)), &downAt, &upAt, "ok", ""},
		{action.Scroll, new(shot.Frame.GlobalToImage(scrollAt)), nil, &scrollAt, nil, "ok", ""},
		{action.MouseDown, nil, nil, nil, nil, "ok", ""},
		{action.MouseUp, new(pt(10, 20)), nil, global(10, 20), nil, "failed", "device gone"},
	} {
		c := rec.got[i+1]
		if len(c.Actions) != 1 {
			t.Fatalf("%s: %d actions recorded", c.Tool, len(c.Actions))
		}
		a := c.Actions[0]
		if a.Action.Kind != want.kind || !eqPtr(a.Image, want.img) || !eqPtr(a.ImageTo, want.imgTo) ||
			!eqPtr(a.Global, want.global) || !eqPtr(a.GlobalTo, want.globTo) || a.Outcome != want.outcome || !strings.Contains(a.Error, want.errSub) {
			t.Errorf("%s recorded as %+v (image %v->%v, global %v->%v)", c.Tool, a, a.Image, a.ImageTo, a.Global, a.GlobalTo)
		}
		if c.Frame != shot {
			t.Errorf("%s: frame %v, want the screenshot's image", c.Tool, c.Frame)
		}
	}
	if !rec.got[4].IsError {
		t.Error("the failed mouse-up call is not marked as an error")
	}
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestClipboardTextStaysOutOfAuditAndRecord: text read from the clipboard
// reaches the client only, as text set on it does: the audit (gui://audit,
// the dashboard) and the session record on disk keep its length.
func TestClipboardTextStaysOutOfAuditAndRecord(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, nil, Options{Records: func(string) ToolRecorder { return rec }})
	const secret = "correct-horse-battery-staple"
	if err := e.desk.WriteClipboard(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if got := ok(t, e.cs, "gui_clipboard", map[string]any{"action": "get"}); got != secret {
		t.Fatalf("clipboard get = %q, want %q", got, secret)
	}
	res, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: AuditURI})
	if err != nil {
		t.Fatal(err)
	}
	if audit := res.Contents[0].Text; strings.Contains(audit, secret) || !strings.Contains(audit, "read the clipboard (28 characters)") {
		t.Errorf("the audit keeps the clipboard text: %s", audit)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 1 || strings.Contains(rec.calls[0], secret) || !strings.Contains(rec.calls[0], "28 characters") {
		t.Errorf("the session record keeps the clipboard text: %q", rec.calls)
	}
}

// TestExecuteTaskStepBudgetIsTheConfiguredLimit: gui_execute_task offers
// max_steps up to config.MaxStepsLimit, the limit of GUI_AGENT_MAX_STEPS,
// and says so in the schema, and refuses one beyond it.
func TestExecuteTaskStepBudgetIsTheConfiguredLimit(t *testing.T) {
	e := newEnv(t, nil, Options{Tasks: &scriptedRunner{}, DefaultDisplay: "0"})
	tools, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range tools.Tools {
		if tl.Name != "gui_execute_task" {
			continue
		}
		found = true
		b, _ := json.Marshal(tl.InputSchema)
		var sc struct {
			Properties map[string]struct {
				Maximum     *float64 `json:"maximum"`
				Description string   `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatal(err)
		}
		p := sc.Properties["max_steps"]
		if p.Maximum == nil || *p.Maximum != config.MaxStepsLimit || !strings.Contains(p.Description, fmt.Sprintf("1-%d", config.MaxStepsLimit)) {
			t.Errorf("max_steps schema: maximum %v, description %q; want %d in both", p.Maximum, p.Description, config.MaxStepsLimit)
		}
	}
	if !found {
		t.Fatal("gui_execute_task is not offered")
	}
	fails(t, e.cs, "gui_execute_task", map[string]any{"task": "x", "max_steps": config.MaxStepsLimit + 1}, "max_steps")
}
