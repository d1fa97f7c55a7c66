// Package e2e builds the guiagent binary and drives it over MCP, with the
// official go-sdk client over stdio and Streamable HTTP, against a private Xvfb
// running a real X application (internal/sampleapp).
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/harmony/harmonytest"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/testenv"
)

// binary is the guiagent executable built by TestMain.
var binary string

func TestMain(m *testing.M) {
	if harmonytest.IsFake() { // the harmony backend started this binary as its hdc
		os.Exit(harmonytest.Main(os.Args[1:], os.Stdout))
	}
	dir, err := os.MkdirTemp("", "guiagent-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "guiagent")
	// Built as go test builds the packages (cgo as the machine has it, no
	// -trimpath), so the build reuses what the test run compiled and
	// compiles only package main: a static build would compile the whole
	// tree a second time, minutes on a fresh machine. The Dockerfile's
	// static build is checked without compiling it (TestDockerBuildIsStatic).
	build := exec.Command("go", "build", "-o", binary, "github.com/guiagent/guiagent/cmd/guiagent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building guiagent failed: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	screenW, screenH = 1280, 800
	httpToken        = "e2e-token-0123456789abcdef0123"
	unicodeText      = "Grüße 世界 ✓ 42"
)

// desktop is a private X server with the sample application on it.
type desktop struct {
	display string
	app     *sampleapp.App
}

func startDesktop(t *testing.T, scene string) desktop {
	t.Helper()
	testenv.NeedX(t)
	vd := xvfbtest.Start(t, screenW, screenH)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	app, err := sampleapp.Start(ctx, sampleapp.Options{Display: vd.Display, Scene: scene})
	if err != nil {
		t.Fatalf("starting the sample app (%s) on %s: %v", scene, vd.Display, err)
	}
	t.Cleanup(func() { app.Close() })
	return desktop{display: vd.Display, app: app}
}

// serverEnv is the environment of the guiagent process: nothing of the
// caller's GUI_AGENT_* settings, a private state directory.
func serverEnv(t *testing.T, extra ...string) []string {
	state := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state, "GUI_AGENT_LOG_LEVEL=debug"}
	return append(env, extra...)
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, textOf(res))
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var s []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s = append(s, tc.Text)
		}
	}
	return strings.Join(s, "\n")
}

type shotInfo struct {
	FrameID     string  `json:"frame_id"`
	ImageWidth  int     `json:"image_width"`
	ImageHeight int     `json:"image_height"`
	Scale       float64 `json:"scale"`
}

func screenshot(t *testing.T, cs *mcp.ClientSession, args map[string]any) (shotInfo, image.Image) {
	t.Helper()
	res := call(t, cs, "gui_screenshot", args)
	var info shotInfo
	var img image.Image
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			m, err := imaging.Decode(c.Data)
			if err != nil {
				t.Fatalf("decoding the screenshot (%s): %v", c.MIMEType, err)
			}
			img = m
		case *mcp.TextContent:
			if err := json.Unmarshal([]byte(c.Text), &info); err != nil {
				t.Fatalf("screenshot metadata %q: %v", c.Text, err)
			}
		}
	}
	if img == nil || info.FrameID == "" {
		t.Fatalf("screenshot without image or metadata: %s", textOf(res))
	}
	if img.Bounds().Dx() != info.ImageWidth || img.Bounds().Dy() != info.ImageHeight {
		t.Fatalf("image is %v but metadata says %dx%d", img.Bounds(), info.ImageWidth, info.ImageHeight)
	}
	return info, img
}

// findColor returns the bounding box of the pixels within tol of c per channel.
func findColor(t *testing.T, img image.Image, c sampleapp.Color, tol int) image.Rectangle {
	t.Helper()
	want := c.ToRGBA()
	box := image.Rectangle{}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if nearColor(img.At(x, y), want, tol) {
				p := image.Rect(x, y, x+1, y+1)
				if n == 0 {
					box = p
				} else {
					box = box.Union(p)
				}
				n++
			}
		}
	}
	if n < 50 {
		t.Fatalf("colour %06X not found in the screenshot (%d pixels)", uint32(c), n)
	}
	return box
}

func nearColor(c color.Color, want color.RGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(v uint32, w uint8) bool { x := int(v>>8) - int(w); return x >= -tol && x <= tol }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

func centre(r image.Rectangle) (float64, float64) {
	return float64(r.Min.X+r.Max.X-1) / 2, float64(r.Min.Y+r.Max.Y-1) / 2
}

func waitEvent(t *testing.T, app *sampleapp.App, what string, pred func(sampleapp.Event) bool) sampleapp.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ev, err := app.WaitFor(ctx, pred)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return ev
}

// The form: find the Name field by colour in a screenshot, click it, type
// Unicode text, submit with the Submit button, and check what the app received.
func TestFormOverMCP(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			_, cs := tr.connect(t, serverConfig{display: d.display}, nil)

			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, tl := range tools.Tools {
				names[tl.Name] = true
			}
			for _, want := range []string{"gui_screenshot", "gui_click", "gui_type", "gui_hotkey", "gui_list_displays"} {
				if !names[want] {
					t.Fatalf("tool %s missing from %v", want, names)
				}
			}

			info, img := screenshot(t, cs, map[string]any{"format": "png"})
			if info.ImageWidth != screenW || info.ImageHeight != screenH {
				t.Fatalf("screenshot %dx%d, want %dx%d", info.ImageWidth, info.ImageHeight, screenW, screenH)
			}
			x, y := centre(findColor(t, img, sampleapp.NameFieldColor, 6))
			call(t, cs, "gui_click", map[string]any{"x": x, "y": y})
			waitEvent(t, d.app, "focus on the name field", func(e sampleapp.Event) bool { return e.Event == "focus" && e.Field == "name" })

			call(t, cs, "gui_type", map[string]any{"text": unicodeText})
			waitEvent(t, d.app, "the typed text", func(e sampleapp.Event) bool {
				return e.Event == "change" && e.Field == "name" && e.Value == unicodeText
			})

			bx, by := centre(findColor(t, img, sampleapp.SubmitColor, 6))
			call(t, cs, "gui_click", map[string]any{"x": bx, "y": by})
			ev := waitEvent(t, d.app, "submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
			if got := ev.Fields["name"]; got != unicodeText {
				t.Fatalf("the app received name %q, want %q", got, unicodeText)
			}
		})
	}
}

// A screenshot smaller than the screen: clicking at its image coordinates
// lands on the button seen there.
func TestDownscaledScreenshotClick(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneButtons)
			_, cs := tr.connect(t, serverConfig{display: d.display}, nil)
			info, img := screenshot(t, cs, map[string]any{"max_long_edge": 640})
			if info.ImageWidth != 640 || info.ImageHeight != 400 || info.Scale != 0.5 {
				t.Fatalf("downscaled screenshot: %+v, want 640x400 at scale 0.5", info)
			}
			for _, b := range []struct {
				name  string
				color sampleapp.Color
			}{{"green", sampleapp.GreenButtonColor}, {"purple", sampleapp.PurpleColor}} {
				x, y := centre(findColor(t, img, b.color, 40))
				res := call(t, cs, "gui_click", map[string]any{"x": x, "y": y})
				ev := waitEvent(t, d.app, "a click on "+b.name, func(e sampleapp.Event) bool { return e.Event == "click" })
				if ev.Button != b.name {
					t.Fatalf("clicking image (%.1f,%.1f) hit %q at window (%d,%d), want the %s button (%s)",
						x, y, ev.Button, ev.X, ev.Y, b.name, textOf(res))
				}
				if wx, wy := 2*x, 2*y; abs(float64(ev.X)-wx) > 3 || abs(float64(ev.Y)-wy) > 3 {
					t.Fatalf("click at image (%.1f,%.1f) arrived at window (%d,%d), want about (%.0f,%.0f)", x, y, ev.X, ev.Y, wx, wy)
				}
			}
		})
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
