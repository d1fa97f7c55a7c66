// Package wine drives the Windows build of guiagent over MCP stdio under Wine:
// `wine guiagent.exe serve` on a private Xvfb, operating Wine's notepad with
// the official go-sdk client. CI installs Wine (see .ci/run); a machine
// without it fails these tests with what to install.
package wine

import (
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/winetest"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// buildExe cross-compiles guiagent for Windows into dir.
func buildExe(t *testing.T, dir string) string {
	t.Helper()
	exe := filepath.Join(dir, "guiagent.exe")
	cmd := exec.Command("go", "build", "-o", exe, "github.com/guiagent/guiagent/cmd/guiagent")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cross-compile guiagent.exe: %v\n%s", err, out)
	}
	return exe
}

// notepad is Wine's notepad running on a private X display.
type notepad struct {
	display string
	exited  chan struct{} // closed when notepad's process ends
}

func startNotepad(t *testing.T, p *winetest.Prefix, display string) *notepad {
	t.Helper()
	cmd := p.Command(context.Background(), display, "notepad.exe")
	cmd.Dir = ""
	// Wine's background processes inherit the output: a file, not a pipe.
	log, err := os.Create(filepath.Join(t.TempDir(), "notepad.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("wine notepad.exe: %v", err)
	}
	n := &notepad{display: display, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() { p.Stop(t); <-n.exited })
	return n
}

func (n *notepad) running() bool {
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// connect starts `wine guiagent.exe serve` and connects to it over stdio.
func connect(t *testing.T, p *winetest.Prefix, display, exe string) *mcp.ClientSession {
	t.Helper()
	cmd := p.Command(context.Background(), display, exe, "serve")
	for _, kv := range os.Environ() { // none of the caller's guiagent settings
		if strings.HasPrefix(kv, "GUI_AGENT_") {
			cmd.Env = slicesDelete(cmd.Env, kv)
		}
	}
	// A file, not a pipe: Wine's helper processes inherit stderr and outlive the server.
	logPath := filepath.Join(t.TempDir(), "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	cmd.Stderr = logFile
	logs := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-wine", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to wine guiagent.exe serve over stdio: %v\nserver log:\n%s", err, logs())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", logs())
		}
	})
	return cs
}

func slicesDelete(env []string, kv string) []string {
	out := env[:0]
	for _, e := range env {
		if e != kv {
			out = append(out, e)
		}
	}
	return out
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	var s []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s = append(s, tc.Text)
		}
	}
	return res, strings.Join(s, "\n")
}

func ok(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, text := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	return text
}

// screenshot returns the primary display's image (image pixels = global pixels at scale 1).
func screenshot(t *testing.T, cs *mcp.ClientSession) image.Image {
	t.Helper()
	res, text := callTool(t, cs, "gui_screenshot", nil)
	if res.IsError {
		t.Fatalf("gui_screenshot failed: %s", text)
	}
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img, err := imaging.Decode(ic.Data)
			if err != nil {
				t.Fatalf("decode the screenshot: %v", err)
			}
			return img
		}
	}
	t.Fatalf("gui_screenshot returned no image: %s", text)
	return nil
}

// whiteArea returns the bounding box of the white pixels of img: notepad's
// edit control, the only white thing on the screen.
func whiteArea(img image.Image) image.Rectangle {
	var box image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 >= 250 && g>>8 >= 250 && bl>>8 >= 250 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// editTopLeft walks from (x, y), inside notepad's empty edit control, up and
// left while the pixels are white, and returns the control's left and top
// edges (the white area of waitWhite also holds the menu bar above it).
func editTopLeft(img image.Image, x, y int) (left, top int) {
	white := func(x, y int) bool {
		r, g, b, _ := img.At(x, y).RGBA()
		return r>>8 >= 250 && g>>8 >= 250 && b>>8 >= 250
	}
	for left = x; left > img.Bounds().Min.X && white(left-1, y); left-- {
	}
	for top = y; top > img.Bounds().Min.Y && white(x, top-1); top-- {
	}
	return left, top
}

// waitWhite waits until a large white area (notepad's edit control) is on the screen.
func waitWhite(t *testing.T, cs *mcp.ClientSession) image.Rectangle {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		box := whiteArea(screenshot(t, cs))
		if box.Dx() > 200 && box.Dy() > 100 {
			return box
		}
		if time.Now().After(deadline) {
			t.Fatalf("notepad's edit area did not appear on the screen within 30 s (white area %v)", box)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// copied selects all of notepad's text, copies it and returns the clipboard,
// polling until it equals want or the timeout passes.
func copied(t *testing.T, cs *mcp.ClientSession, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok(t, cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "a"}})
		ok(t, cs, "gui_hotkey", map[string]any{"keys": []string{"ctrl", "c"}})
		got := ok(t, cs, "gui_clipboard", map[string]any{"action": "get"})
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestNotepadOverMCPUnderWine drives notepad through `wine guiagent.exe serve`:
// clicks into the edit area (one moving the caret), Unicode typing,
// ctrl+a/ctrl+c, the clipboard read back through gui_clipboard, a long text
// (gui_type says it may still be arriving), alt+f4 refused by policy, and the
// session's run record in %LOCALAPPDATA%.
func TestNotepadOverMCPUnderWine(t *testing.T) {
	p := winetest.NewPrefix(t)
	exe := buildExe(t, t.TempDir())
	vd := xvfbtest.Start(t, 1280, 800)
	np := startNotepad(t, p, vd.Display)
	cs := connect(t, p, vd.Display, exe)

	edit := waitWhite(t, cs)
	x, y := float64(edit.Min.X+edit.Max.X)/2, float64(edit.Min.Y+edit.Max.Y)/2
	left, top := editTopLeft(screenshot(t, cs), int(x), int(y)) // while it is empty
	ok(t, cs, "gui_click", map[string]any{"x": x, "y": y})

	const text = "Grüße 世界 ✓ 42 — naïve café, Ελληνικά, русский, 😀 done"
	out := ok(t, cs, "gui_type", map[string]any{"text": text})
	if n := utf8.RuneCountInString(text); !strings.Contains(out, fmt.Sprintf("typed %d characters", n)) {
		t.Errorf("gui_type said %q, want it to report the %d characters typed", out, n)
	}
	if got := copied(t, cs, text, 30*time.Second); got != text {
		t.Errorf("after typing %q into notepad, ctrl+a ctrl+c and gui_clipboard get returned %q", text, got)
	}

	// A click at the start of the first line puts the caret there: what is
	// typed next comes before the text.
	ok(t, cs, "gui_click", map[string]any{"x": float64(left + 2), "y": float64(top + 6)})
	ok(t, cs, "gui_type", map[string]any{"text": "» "})
	if got := copied(t, cs, "» "+text, 30*time.Second); got != "» "+text {
		t.Errorf("after a click at the start of the first line and typing %q, notepad holds %q, want %q", "» ", got, "» "+text)
	}

	// A long text: gui_type returns once the keystrokes are queued, and says
	// that the application may still be receiving them; all of it arrives.
	long := strings.Repeat("Müller & Søn ✓ 東京 0123456789 ", 12) // 348 characters, replacing the selection
	start := time.Now()
	out = ok(t, cs, "gui_type", map[string]any{"text": long})
	returned := time.Since(start)
	if !strings.Contains(out, "may still be receiving them") || !strings.Contains(out, "do not type it again") {
		t.Errorf("gui_type of %d characters said %q, want the note that a slow application may still be receiving them", utf8.RuneCountInString(long), out)
	}
	if got := copied(t, cs, long, 60*time.Second); got != long {
		t.Errorf("after typing %d characters into notepad the clipboard holds %d: %q", utf8.RuneCountInString(long), utf8.RuneCountInString(got), got)
	}
	t.Logf("gui_type of %d characters returned after %v; notepad held all of them %v after the call began",
		utf8.RuneCountInString(long), returned.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	// alt+f4 is refused and notepad stays open.
	res, msg := callTool(t, cs, "gui_hotkey", map[string]any{"keys": []string{"alt", "f4"}})
	if !res.IsError || !strings.Contains(strings.ToLower(msg), "alt+f4") {
		t.Errorf("gui_hotkey alt+f4 returned %q (error %v), want a refusal naming alt+f4", msg, res.IsError)
	}
	time.Sleep(time.Second)
	if !np.running() {
		t.Fatal("notepad exited after the refused alt+f4")
	}
	if box := whiteArea(screenshot(t, cs)); box.Dx() < 200 {
		t.Errorf("notepad's edit area is gone after the refused alt+f4 (white area %v)", box)
	}

	// The session's record lands in %LOCALAPPDATA%\guiagent\runs, as on Windows.
	if err := cs.Close(); err != nil {
		t.Logf("closing the MCP session: %v", err)
	}
	runs, _ := filepath.Glob(filepath.Join(p.Dir, "drive_c", "users", "*", "AppData", "Local", "guiagent", "runs", "*"))
	if len(runs) == 0 {
		t.Errorf("no run record under %%LOCALAPPDATA%%\\guiagent\\runs in %s after the session", p.Dir)
	}
}
