//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/mcpserver"
	"github.com/guiagent/guiagent/internal/testenv"
)

// wlDesk is a headless sway (two outputs, HEADLESS-2 at scale 2) with the
// GTK fixture on both, and one guiagent serving MCP over stdio on it, run
// as the compositor's unprivileged user with --backend wayland.
type wlDesk struct {
	s   *swaytest.Sway
	app *swaytest.App
	cs  *mcp.ClientSession
	// displays are gui_list_displays' answer, by output name.
	displays map[string]mcpserver.DisplayInfo
	stderr   *testenv.Buffer
}

// startWayland starts the compositor, the fixture and guiagent; model, when
// set, is the provider of gui_execute_task; extra are more KEY=value settings.
func startWayland(t testing.TB, model *modelServer, extra ...string) *wlDesk {
	t.Helper()
	s := swaytest.Start(t)
	app := s.StartApp(t)
	return serveWayland(t, s, app, model, extra...)
}

// serveWayland starts guiagent on s, with app as the desk's application.
func serveWayland(t testing.TB, s *swaytest.Sway, app *swaytest.App, model *modelServer, extra ...string) *wlDesk {
	t.Helper()
	// The binary lives in the test's private directory: link (or copy) it
	// into the compositor's, which its user can read.
	bin := filepath.Join(s.Dir, "guiagent")
	if err := os.Link(binary, bin); err != nil {
		b, err := os.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(s.Dir, "state"), "GUI_AGENT_LOG_LEVEL=debug",
		"GUI_AGENT_IMAGE_FORMAT=png", "GUI_AGENT_RUNS_DIR=" + filepath.Join(s.Dir, "runs")}
	if model != nil {
		env = append(env, "GUI_AGENT_PROVIDER=openai", "GUI_AGENT_MODEL="+testModel,
			"GUI_AGENT_BASE_URL="+model.URL, "GUI_AGENT_API_KEY=sk-e2e-wayland")
	}
	cmd := s.Command(bin, []string{"serve", "--backend", "wayland"}, append(env, extra...)...)
	d := &wlDesk{s: s, app: app, stderr: &testenv.Buffer{}}
	cmd.Stderr = d.stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", d.stderr)
		}
	})
	d.cs = mustDial(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "e2e-wayland"}, d.stderr)
	var ds struct{ Displays []mcpserver.DisplayInfo }
	if err := json.Unmarshal([]byte(textOf(call(t, d.cs, "gui_list_displays", nil))), &ds); err != nil {
		t.Fatal(err)
	}
	d.displays = map[string]mcpserver.DisplayInfo{}
	for _, di := range ds.Displays {
		d.displays[di.Name] = di
	}
	for _, o := range s.Outputs(t) {
		di, ok := d.displays[o.Name]
		if !ok || di.X != o.Rect.X || di.Y != o.Rect.Y || di.Width != o.Rect.Width || di.Height != o.Rect.Height || di.ScaleFactor != o.Scale {
			t.Fatalf("gui_list_displays says %+v, sway's output %s is %+v", ds.Displays, o.Name, o)
		}
	}
	return d
}

// moveTo puts the pointer at output-local logical (x, y) of output, through
// the tool. Headless sway 1.7 repaints only the output the cursor is on, so
// a test moves it to the output it draws on.
func (d *wlDesk) moveTo(t *testing.T, output string, x, y int) {
	t.Helper()
	di := d.displays[output]
	call(t, d.cs, "gui_move", map[string]any{"x": di.X + x, "y": di.Y + y, "space": "screen"})
}

// fill paints a rectangle on output's window and waits until grim sees it.
func (d *wlDesk) fill(t *testing.T, output string, x, y, w, h int, c color.RGBA) {
	t.Helper()
	d.app.Fill(t, output, x, y, w, h, c.R, c.G, c.B)
	di := d.displays[output]
	at := fmt.Sprintf("%d,%d 1x1", di.X+x+w/2, di.Y+y+h/2)
	ok := waitFor(5*time.Second, func() bool {
		img := d.s.Grim(t, "-g", at)
		return img.RGBAAt(0, 0) == c
	})
	if !ok {
		t.Fatalf("the fill %v on %s did not reach the screen within 5 s", c, output)
	}
}

// shot calls a screenshot tool (gui_screenshot, gui_zoom) and returns its
// metadata and image, decoded.
func (d *wlDesk) shot(t *testing.T, tool string, args map[string]any) (shotInfo, *image.RGBA) {
	t.Helper()
	res := call(t, d.cs, tool, args)
	var info shotInfo
	var img *image.RGBA
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			if c.MIMEType != "image/png" {
				t.Fatalf("%s sent %s, want image/png (the server is configured for PNG)", tool, c.MIMEType)
			}
			m, err := imaging.Decode(c.Data)
			if err != nil {
				t.Fatalf("decoding %s's image: %v", tool, err)
			}
			img = image.NewRGBA(m.Bounds())
			draw.Draw(img, img.Rect, m, m.Bounds().Min, draw.Src)
		case *mcp.TextContent:
			if err := json.Unmarshal([]byte(c.Text), &info); err != nil {
				t.Fatalf("%s's metadata %q: %v", tool, c.Text, err)
			}
		}
	}
	if img == nil || info.FrameID == "" {
		t.Fatalf("%s returned no image or no frame_id: %s", tool, textOf(res))
	}
	return info, img
}

// zoomRows is the height of the band zoomOutput zooms into.
const zoomRows = 400

// zoomOutput takes gui_zoom of output's full width and its bottom zoomRows
// rows (the fixture's widgets are at the bottom; the whole display would be
// a screenshot, a band a zoom): at a long edge of twice the output's width,
// a scale-2 output's device pixels. It returns the band's top (logical,
// output-local).
func (d *wlDesk) zoomOutput(t *testing.T, output string) (shotInfo, *image.RGBA, int) {
	t.Helper()
	di := d.displays[output]
	top := di.Height - zoomRows
	info, img := d.shot(t, "gui_zoom", map[string]any{"x1": di.X, "y1": di.Y + top, "x2": di.X + di.Width - 1, "y2": di.Y + di.Height - 1, "space": "screen"})
	return info, img, top
}

// TestWaylandOverMCP drives the real binary over MCP on headless sway, with
// a native GTK application (GDK_BACKEND=wayland) on both outputs as the
// observer and grim and wl-clipboard as the oracles.
func TestWaylandOverMCP(t *testing.T) {
	model := startModel(t, holdButtonAndShift)
	d := startWayland(t, model)
	t.Run("screenshot matches grim", d.testScreenshots)
	t.Run("click a GTK button on the scale-2 output", d.testClick)
	t.Run("type Unicode into a GTK entry", d.testType)
	t.Run("clipboard round trip", d.testClipboard)
	t.Run("nothing held after a cancel", func(t *testing.T) { d.testCancel(t, model) })
}

func (d *wlDesk) testScreenshots(t *testing.T) {
	colours := []color.RGBA{{200, 30, 40, 255}, {20, 180, 90, 255}, {30, 60, 220, 255}}
	for _, out := range []string{swaytest.Output1, swaytest.Output2} {
		di := d.displays[out]
		d.moveTo(t, out, di.Width/2, 5)
		for i, c := range colours { // edges at odd logical pixels
			d.fill(t, out, 13+97*i, 21+31*i, 71, 43, c)
		}
		// gui_screenshot is the display at its logical size (never scaled
		// up): at scale 1 the device pixels, grim's exactly; at scale 2 the
		// device pixels averaged 2x2, up to rounding.
		info, got := d.shot(t, "gui_screenshot", map[string]any{"display": di.ID, "format": "png"})
		full := d.s.Grim(t, "-o", out)
		want, tolerance := full, 0
		if di.ScaleFactor != 1 {
			want, tolerance = halve(full), 1
		}
		if info.ImageWidth != di.Width || info.ImageHeight != di.Height || info.Scale != 1 || got.Rect.Size() != want.Rect.Size() {
			t.Errorf("%s: gui_screenshot is %v (says %dx%d at scale %v); want the logical %dx%d at scale 1 (grim's, halved: %v)",
				out, got.Rect.Size(), info.ImageWidth, info.ImageHeight, info.Scale, di.Width, di.Height, want.Rect.Size())
		}
		if n, first := diffPixels(got, want, tolerance); n != 0 {
			t.Errorf("%s: %d pixels of gui_screenshot differ from grim's by more than %d; the first at %v: %v, grim %v",
				out, n, tolerance, first, got.RGBAAt(first.X, first.Y), want.RGBAAt(first.X, first.Y))
		}
		if di.ScaleFactor == 1 {
			continue
		}
		// gui_zoom of a band of the scaled output: its device pixels, exactly grim's.
		zi, zoom, top := d.zoomOutput(t, out)
		band := full.SubImage(image.Rect(0, 2*top, full.Rect.Dx(), full.Rect.Dy())).(*image.RGBA)
		if zi.Scale != di.ScaleFactor || zoom.Rect.Size() != band.Rect.Size() {
			t.Errorf("%s: gui_zoom of the bottom %d rows is %v at scale %v; want grim's %v at the output's scale %v",
				out, zoomRows, zoom.Rect.Size(), zi.Scale, band.Rect.Size(), di.ScaleFactor)
		}
		if n, first := diffPixels(zoom, band, 0); n != 0 {
			t.Errorf("%s: %d pixels of gui_zoom differ from grim's; the first at %v: %v, grim %v",
				out, n, first, zoom.RGBAAt(first.X, first.Y), band.RGBAAt(band.Rect.Min.X+first.X, band.Rect.Min.Y+first.Y))
		}
	}
	d.app.Send(t, map[string]any{"cmd": "clear"})
}

// diffPixels counts the pixels where a channel of a and b differs by more
// than tolerance (a size mismatch is every pixel) and returns the first.
func diffPixels(a, b *image.RGBA, tolerance int) (int, image.Point) {
	if a.Rect.Size() != b.Rect.Size() {
		return a.Rect.Dx() * a.Rect.Dy(), image.Point{}
	}
	n, first := 0, image.Point{}
	for y := range a.Rect.Dy() {
		for x := range a.Rect.Dx() {
			p, q := a.RGBAAt(a.Rect.Min.X+x, a.Rect.Min.Y+y), b.RGBAAt(b.Rect.Min.X+x, b.Rect.Min.Y+y)
			if far(p.R, q.R, tolerance) || far(p.G, q.G, tolerance) || far(p.B, q.B, tolerance) || far(p.A, q.A, tolerance) {
				if n == 0 {
					first = image.Point{x, y}
				}
				n++
			}
		}
	}
	return n, first
}

// halve averages img's 2x2 blocks (rounded): a scale-2 output's device
// pixels at its logical size.
func halve(img *image.RGBA) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, img.Rect.Dx()/2, img.Rect.Dy()/2))
	for y := range out.Rect.Dy() {
		for x := range out.Rect.Dx() {
			for c := range 4 {
				sum := 2
				for _, o := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
					sum += int(img.Pix[img.PixOffset(img.Rect.Min.X+2*x+o[0], img.Rect.Min.Y+2*y+o[1])+c])
				}
				out.Pix[out.PixOffset(x, y)+c] = uint8(sum / 4)
			}
		}
	}
	return out
}

func far(p, q uint8, tolerance int) bool {
	return int(p)-int(q) > tolerance || int(q)-int(p) > tolerance
}

// testClick clicks the GTK button of the scale-2 output's window at its
// centre in the pixels of the image of gui_zoom (device pixels, twice the
// logical ones).
func (d *wlDesk) testClick(t *testing.T) {
	d.app.Take()
	info, _, top := d.zoomOutput(t, swaytest.Output2)
	if info.Scale != 2 {
		t.Fatalf("gui_zoom of %s has scale %v, want 2 (its device pixels)", swaytest.Output2, info.Scale)
	}
	bb := d.app.Where[swaytest.Output2].ButtonBox
	x, y := float64(bb.X+bb.W/2)*info.Scale, float64(bb.Y+bb.H/2-top)*info.Scale
	res := call(t, d.cs, "gui_click", map[string]any{"x": x, "y": y, "frame_id": info.FrameID})
	e, ok := d.app.Wait(5*time.Second, func(e swaytest.Event) bool { return e.Ev == "clicked" })
	if !ok {
		t.Fatalf("gui_click at image (%v,%v) of %s (%q): the button at %+v reported no click; events: %v",
			x, y, swaytest.Output2, textOf(res), bb, d.app.Take())
	}
	if e.Win != swaytest.Output2 {
		t.Errorf("the click landed on the button of %s, want %s", e.Win, swaytest.Output2)
	}
}

// testType types into the scale-2 output's entry, focused by a click on it,
// and checks the user's clipboard is untouched (TypeText restores the
// clipboard if it used it).
func (d *wlDesk) testType(t *testing.T) {
	const text = "héllo 界面 ✓"
	const saved = "the user's clipboard ✓"
	d.s.RunDetached(t, []byte(saved), "wl-copy")
	d.app.Reset(t)
	info, _ := d.shot(t, "gui_screenshot", map[string]any{"display": d.displays[swaytest.Output2].ID})
	eb := d.app.Where[swaytest.Output2].EntryBox
	call(t, d.cs, "gui_click", map[string]any{"x": float64(eb.X+eb.W/2) * info.Scale, "y": float64(eb.Y+eb.H/2) * info.Scale, "frame_id": info.FrameID})
	call(t, d.cs, "gui_type", map[string]any{"text": text})
	var got string
	waitFor(5*time.Second, func() bool {
		if s, ok := swaytest.Text(d.app.Take(), swaytest.Output2); ok {
			got = s
		}
		return got == text
	})
	if got != text {
		t.Errorf("gui_type(%q): the entry of %s holds %q", text, swaytest.Output2, got)
	}
	if clip := string(d.s.Run(t, nil, "wl-paste", "-n")); clip != saved {
		t.Errorf("after gui_type the clipboard holds %q, want the user's %q", clip, saved)
	}
}

func (d *wlDesk) testClipboard(t *testing.T) {
	const ours = "guiagent → wl-paste ✓"
	call(t, d.cs, "gui_clipboard", map[string]any{"action": "set", "text": ours})
	if got := string(d.s.Run(t, nil, "wl-paste", "-n")); got != ours {
		t.Errorf("gui_clipboard set %q; wl-paste reads %q", ours, got)
	}
	const theirs = "wl-copy → guiagent 界面"
	d.s.RunDetached(t, []byte(theirs), "wl-copy")
	if got := textOf(call(t, d.cs, "gui_clipboard", map[string]any{"action": "get"})); got != theirs {
		t.Errorf("wl-copy set %q; gui_clipboard get reads %q", theirs, got)
	}
}

// holdButtonAndShift answers with a press of the left button where the
// pointer is and a ten-second hold of shift.
func holdButtonAndShift(t fakellm.Turn) fakellm.Reply {
	ans := map[string]any{
		"observation": "the screen", "reasoning": "hold the button and shift", "status": "continue",
		"actions": []any{map[string]any{"action": "mouse_down", "button": "left"},
			map[string]any{"action": "hold_key", "keys": []string{"shift"}, "duration_ms": 10000}},
		"image_width": t.ImageSize.W, "image_height": t.ImageSize.H,
	}
	b, _ := json.Marshal(ans)
	return fakellm.Reply{Raw: string(b)}
}

// testCancel cancels gui_execute_task while its model's actions hold the
// left button and shift: the application sees both come up, well before
// the hold would have ended, and the server's ledger holds nothing.
func (d *wlDesk) testCancel(t *testing.T, model *modelServer) {
	d.moveTo(t, swaytest.Output1, 400, 300) // on the canvas
	d.app.Take()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	callErr := make(chan error, 1)
	go func() {
		_, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_execute_task",
			Arguments: map[string]any{"task": "hold the button and shift", "timeout_s": 60}})
		callErr <- err
	}()
	var seen []swaytest.Event
	held := func() []string { return heldOf(seen) }
	if !waitFor(20*time.Second, func() bool {
		seen = append(seen, d.app.Take()...)
		h := held()
		return slices.Contains(h, "button left") && slices.ContainsFunc(h, func(k string) bool { return strings.HasPrefix(k, "key Shift") })
	}) {
		t.Fatalf("the task never held the button and shift (model calls %d); the application saw %v", model.Calls(), seen)
	}
	took, released := cancelMidHold(t, cancel, callErr, func() bool { seen = append(seen, d.app.Take()...); return len(held()) == 0 })
	if !released {
		t.Fatalf("%v still held %v after cancelling; the application saw %v", held(), took, seen)
	}
	t.Logf("released %v after cancelling", took)
	var st struct {
		Held []string `json:"held"`
	}
	if err := json.Unmarshal([]byte(readResource(t, d.cs, "gui://status")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Held == nil || len(st.Held) != 0 {
		t.Errorf("gui://status held = %v after cancelling, want []", st.Held)
	}
	// Still working: a click arrives whole.
	d.app.Take()
	call(t, d.cs, "gui_click", map[string]any{"x": 200, "y": 200, "space": "screen"})
	if _, ok := d.app.Wait(5*time.Second, func(e swaytest.Event) bool { return e.Ev == "button_up" }); !ok {
		t.Errorf("a click after the cancel did not arrive")
	}
}

// heldOf names the buttons and keys that went down in evs and did not come up.
func heldOf(evs []swaytest.Event) []string {
	down := map[string]bool{}
	for _, e := range evs {
		switch e.Ev {
		case "button_down":
			down["button "+e.Button] = true
		case "button_up":
			delete(down, "button "+e.Button)
		case "key_down":
			down["key "+e.Key] = true
		case "key_up":
			delete(down, "key "+e.Key)
		}
	}
	out := make([]string, 0, len(down))
	for k := range down {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestWaylandElementsOverMCP: on headless sway (no fullscreen fixture), a
// GTK application with its accessibility tree and two windows, one floated
// to (300,150) on HEADLESS-1 and one on the scale-2 HEADLESS-2:
// gui_snapshot of each window's display gives its button a box that is
// where sway put the window plus where GTK put the button (and where grim
// shows it), gui_click by that ref presses the button, and gui_click by
// target words (the tree's locate step, no model) too.
func TestWaylandElementsOverMCP(t *testing.T) {
	s := swaytest.Start(t)
	bus := s.SessionBus(t)
	titles := map[string]string{swaytest.Output1: "guiagent-elements HEADLESS-1", swaytest.Output2: "guiagent-elements HEADLESS-2"}
	app := s.StartElements(t, bus, titles[swaytest.Output1], titles[swaytest.Output2])
	d := serveWayland(t, s, app, nil, "DBUS_SESSION_BUS_ADDRESS="+bus, "GUI_AGENT_ACCESSIBILITY=auto")
	at := map[string][2]int{swaytest.Output1: {300, 150}, swaytest.Output2: {200, 100}}
	magenta := color.RGBA{255, 0, 255, 255}
	for _, out := range []string{swaytest.Output1, swaytest.Output2} {
		title, di := titles[out], d.displays[out]
		win := s.Float(t, title, out, at[out][0], at[out][1])
		app.Floating(t, title)
		bb := app.Where[title].ButtonBox
		want := swaytest.Rect{X: win.X + bb.X, Y: win.Y + bb.Y, W: bb.W, H: bb.H}
		name := "Press " + out
		// The output repaints with the pointer on it (headless sway 1.7).
		d.moveTo(t, out, at[out][0]-20, at[out][1]-20)

		var snap mcpserver.SnapshotResult
		var button *mcpserver.SnapElement
		found := waitFor(10*time.Second, func() bool {
			res := call(t, d.cs, "gui_snapshot", map[string]any{"display": di.ID})
			b, _ := json.Marshal(res.StructuredContent)
			snap = mcpserver.SnapshotResult{}
			if json.Unmarshal(b, &snap) != nil || snap.Window != title {
				return false
			}
			for i, e := range snap.Elements {
				if e.Role == "button" && e.Name == name {
					button = &snap.Elements[i]
				}
			}
			return button != nil
		})
		if !found {
			t.Fatalf("%s: gui_snapshot found no button %q in the focused window %q within 10 s: %+v", out, name, title, snap)
		}
		// gui_snapshot's boxes are in the pixels of its frame, the
		// display at its logical size: the display's origin maps them
		// onto the screen.
		got := swaytest.Rect{X: di.X + int(button.Box.X1), Y: di.Y + int(button.Box.Y1),
			W: int(button.Box.X2 - button.Box.X1), H: int(button.Box.Y2 - button.Box.Y1)}
		if got != want {
			t.Errorf("%s: gui_snapshot's %s %q is at %+v on the screen (box %+v in frame %s); want %+v: sway's window content at %+v and GTK's button at %+v in it",
				out, button.Ref, name, got, button.Box, snap.FrameID, want, win, bb)
		}
		if miss := s.RingMismatch(t, got, magenta); miss != "" {
			t.Errorf("%s: grim does not show the magenta button at gui_snapshot's box %+v: %s", out, got, miss)
		}

		app.Take()
		res := call(t, d.cs, "gui_click", map[string]any{"ref": button.Ref})
		if e, ok := app.Wait(5*time.Second, func(e swaytest.Event) bool { return e.Ev == "clicked" }); !ok || e.Win != title {
			t.Errorf("%s: gui_click ref %s (%q): clicked %v on %q, want the button of %q", out, button.Ref, textOf(res), ok, e.Win, title)
		}

		app.Take()
		res = call(t, d.cs, "gui_click", map[string]any{"target": "the " + name + " button", "display": di.ID})
		if e, ok := app.Wait(5*time.Second, func(e swaytest.Event) bool { return e.Ev == "clicked" }); !ok || e.Win != title {
			t.Errorf("%s: gui_click target %q (%q): clicked %v on %q, want the button of %q", out, "the "+name+" button", textOf(res), ok, e.Win, title)
		} else if !strings.Contains(textOf(res), "accessibility") {
			t.Errorf("%s: gui_click by target %q: %q does not say the accessibility tree located it", out, name, textOf(res))
		}
	}
}

// TestWaylandDoctorElementTree: guiagent doctor on sway, run as the
// compositor's user, reports the element tree working, with the focused
// window's elements.
func TestWaylandDoctorElementTree(t *testing.T) {
	s := swaytest.Start(t)
	bus := s.SessionBus(t)
	const title = "guiagent-elements doctor"
	s.StartElements(t, bus, title)
	s.Float(t, title, swaytest.Output1, 100, 100)
	bin := filepath.Join(s.Dir, "guiagent")
	if err := os.Link(binary, bin); err != nil {
		b, err := os.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := s.Command(bin, []string{"doctor", "--backend", "wayland"}, "DBUS_SESSION_BUS_ADDRESS="+bus,
		"XDG_STATE_HOME="+filepath.Join(s.Dir, "state"))
	out, _ := cmd.CombinedOutput() // doctor exits 1 on the missing model
	var row string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "element tree") {
			row = l
		}
	}
	t.Logf("doctor: %s", row)
	if !strings.Contains(row, "atspi: ") || !strings.Contains(row, fmt.Sprintf("%q", title)) || strings.Contains(row, "warn") {
		t.Errorf("doctor's element tree row is %q; want the AT-SPI snapshot of the focused window %q; doctor said:\n%s", row, title, out)
	}
}
