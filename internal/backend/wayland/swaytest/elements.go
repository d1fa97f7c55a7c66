//go:build linux

package swaytest

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

//go:embed elements.py
var elementsApp []byte

// IPC is sway's IPC socket (SWAYSOCK).
func (s *Sway) IPC() string { return s.ipc }

// busConfig is the session bus of the compositor's user, which the test
// process (root, in CI) may use too: the AT-SPI client in the test runs as
// root and asks it for the accessibility bus, whose own configuration lets
// root in.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/session.conf</include>
  <policy context="default">
    <allow user="root"/>
  </policy>
</busconfig>
`

// SessionBus starts a D-Bus session bus as the compositor's user and
// returns its address; it stops when the test ends. The accessibility bus
// launcher of at-spi2-core starts on it when an application asks for it.
func (s *Sway) SessionBus(t testing.TB) string {
	t.Helper()
	cfg := filepath.Join(s.Dir, "session-bus.conf")
	if err := os.WriteFile(cfg, []byte(busConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := s.Command("dbus-daemon", []string{"--config-file=" + cfg, "--nofork", "--print-address=1", "--nopidfile"})
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(s.Dir, "session-bus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v (apt-get install dbus-daemon at-spi2-core)", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			b, _ := os.ReadFile(filepath.Join(s.Dir, "session-bus.log"))
			t.Fatalf("dbus-daemon printed no address: %s", b)
		}
		return addr
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not print its address within 10 s")
	}
	return ""
}

// StartElements starts the element tree's GTK application (elements.py) on
// the session bus bus with a window per title, each 300x200 with a magenta
// button at (30, 30), and waits until it is ready.
func (s *Sway) StartElements(t testing.TB, bus string, titles ...string) *App {
	t.Helper()
	script := filepath.Join(s.Dir, "elements.py")
	if err := os.WriteFile(script, elementsApp, 0o644); err != nil {
		t.Fatal(err)
	}
	a := s.startPython(t, "the GTK elements application", "elements.log", append([]string{script}, titles...), "GDK_BACKEND=wayland", "DBUS_SESSION_BUS_ADDRESS="+bus, "GTK_USE_PORTAL=0")
	a.Send(t, map[string]any{"cmd": "where"})
	a.Where = map[string]Event{}
	a.Wait(5*time.Second, func(e Event) bool {
		if e.Ev == "where" {
			a.Where[e.Win] = e
		}
		return len(a.Where) == len(titles)
	})
	if len(a.Where) != len(titles) {
		t.Fatalf("the GTK elements application told the place of %d of its %d buttons", len(a.Where), len(titles))
	}
	return a
}

// Floating waits until the elements application has laid out its window
// titled title as a floating one (no longer tiled): a header-bar window
// draws its shadow again then, and its widgets move inside its surface by
// the shadow's width, a moment after sway has placed it.
func (a *App) Floating(t testing.TB, title string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		a.Take()
		a.Send(t, map[string]any{"cmd": "state", "win": title})
		if e, ok := a.Wait(2*time.Second, func(e Event) bool { return e.Ev == "state" && e.Win == title }); ok && !e.Tiled {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the window %q was still tiled, as GTK sees it, 10 s after sway floated it", title)
}

// Rect is a rectangle in layout logical pixels.
type Rect struct{ X, Y, W, H int }

// Float floats the window titled title, moves it onto output with its
// top-left at output-local (x, y), focuses it, and returns where its
// content lies in the layout once sway says it is there.
func (s *Sway) Float(t testing.TB, title, output string, x, y int) Rect {
	t.Helper()
	sel := fmt.Sprintf(`[title="^%s$"]`, title)
	s.Msg(t, sel+" floating enable, move container to output "+output)
	s.Msg(t, fmt.Sprintf("%s move position %d %d, focus", sel, x, y))
	var ox, oy int
	for _, o := range s.Outputs(t) {
		if o.Name == output {
			ox, oy = o.Rect.X, o.Rect.Y
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, ok := s.content(t, title)
		if ok && r.X == ox+x && r.Y == oy+y && r.W > 0 {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window %q is at %+v (found %v), not at %s's (%d,%d), within 10 s", title, r, ok, output, x, y)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// content is where the window titled title shows its content (sway's rect
// moved by its window_rect).
func (s *Sway) content(t testing.TB, title string) (Rect, bool) {
	t.Helper()
	var find func(b []byte) (Rect, bool)
	find = func(b []byte) (Rect, bool) {
		var n struct {
			Name       string            `json:"name"`
			PID        int               `json:"pid"`
			Rect       rawRect           `json:"rect"`
			WindowRect rawRect           `json:"window_rect"`
			Nodes      []json.RawMessage `json:"nodes"`
			Floating   []json.RawMessage `json:"floating_nodes"`
		}
		if json.Unmarshal(b, &n) != nil {
			return Rect{}, false
		}
		if n.PID > 0 && n.Name == title {
			return Rect{n.Rect.X + n.WindowRect.X, n.Rect.Y + n.WindowRect.Y, n.WindowRect.Width, n.WindowRect.Height}, true
		}
		for _, c := range append(n.Nodes, n.Floating...) {
			if r, ok := find(c); ok {
				return r, true
			}
		}
		return Rect{}, false
	}
	return find(s.Msg(t, "-t", "get_tree", "-r"))
}

type rawRect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}
