//go:build linux

package swaytest

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed fixture.py
var fixture []byte

// Event is one line the GTK application printed.
type Event struct {
	Ev     string   `json:"ev"`
	Win    string   `json:"win"`
	X      float64  `json:"x"`
	Y      float64  `json:"y"`
	Button string   `json:"button"`
	Dir    string   `json:"dir"`
	Key    string   `json:"key"`
	Mods   []string `json:"mods"`
	Text   string   `json:"text"`
	Seq    int      `json:"seq"`
	Tiled  bool     `json:"tiled"` // for "state"
	// Geometry of the window's widgets, for "where" (window logical pixels).
	ButtonBox Box `json:"button_box"`
	EntryBox  Box `json:"entry_box"`
}

// Box is a widget's rectangle in window logical pixels.
type Box struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// App is the GTK 3 fixture (GDK_BACKEND=wayland): a fullscreen window per
// output with a canvas, an entry at the bottom right (focused) and a button
// at the bottom left.
type App struct {
	in   io.WriteCloser
	mu   sync.Mutex
	evs  []Event
	wake chan struct{}
	seq  int
	// Where holds each window's widget geometry, by output name.
	Where map[string]Event
}

// StartApp starts the fixture on both outputs and waits until its windows
// are fullscreen on them.
func (s *Sway) StartApp(t testing.TB) *App {
	t.Helper()
	script := filepath.Join(s.Dir, "fixture.py")
	if err := os.WriteFile(script, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	a := s.startPython(t, "the GTK fixture", "fixture.log", []string{script, Output1, Output2}, "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1", "GTK_A11Y=none")
	a.waitFullscreen(t, s)
	return a
}

func (a *App) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		a.mu.Lock()
		a.evs = append(a.evs, e)
		a.mu.Unlock()
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// waitFullscreen waits until each window's entry sits at its output's
// bottom right (the output's logical size as sway reports it).
func (a *App) waitFullscreen(t testing.TB, s *Sway) {
	t.Helper()
	want := map[string][2]int{}
	for _, o := range s.Outputs(t) {
		want[o.Name] = [2]int{o.Rect.Width, o.Rect.Height}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		a.Take()
		a.Send(t, map[string]any{"cmd": "where"})
		got := map[string]Event{}
		a.Wait(2*time.Second, func(e Event) bool {
			if e.Ev == "where" {
				got[e.Win] = e
			}
			return len(got) == 2
		})
		ok := len(got) == 2
		for n, e := range got {
			w := want[n]
			ok = ok && e.EntryBox.X+e.EntryBox.W == w[0] && e.EntryBox.Y+e.EntryBox.H == w[1]
		}
		if ok {
			a.Where = got
			a.Take()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture's windows are not fullscreen on their outputs within 15s: %+v; sway tree: %s", got, s.Msg(t, "-t", "get_tree"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Send writes one command to the fixture.
func (a *App) Send(t testing.TB, cmd map[string]any) {
	t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write to the fixture: %v", err)
	}
}

// Take returns and forgets every event received so far.
func (a *App) Take() []Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	evs := a.evs
	a.evs = nil
	return evs
}

// Wait waits until an event satisfying match arrived (leaving later events
// queued) and returns it; false at the timeout.
func (a *App) Wait(timeout time.Duration, match func(Event) bool) (Event, bool) {
	deadline := time.Now().Add(timeout)
	for {
		a.mu.Lock()
		for i, e := range a.evs {
			if match(e) {
				a.evs = append(a.evs[:0:0], a.evs[i+1:]...)
				a.mu.Unlock()
				return e, true
			}
		}
		a.mu.Unlock()
		left := time.Until(deadline)
		if left <= 0 {
			return Event{}, false
		}
		select {
		case <-a.wake:
		case <-time.After(min(left, 50*time.Millisecond)):
		}
	}
}

// Fill paints a rectangle (window logical pixels) on the window of output
// and waits until the application drew it.
func (a *App) Fill(t testing.TB, output string, x, y, w, h int, r, g, b uint8) {
	t.Helper()
	a.seq++
	seq := a.seq
	a.Send(t, map[string]any{"cmd": "fill", "win": output, "x": x, "y": y, "w": w, "h": h, "r": r, "g": g, "b": b, "seq": seq})
	if _, ok := a.Wait(5*time.Second, func(e Event) bool { return e.Ev == "filled" && e.Seq == seq }); !ok {
		t.Fatalf("the fixture did not draw fill %d on %s within 5s", seq, output)
	}
}

// Reset empties the entries, drops the fills and forgets events.
func (a *App) Reset(t testing.TB) {
	t.Helper()
	a.seq++
	seq := a.seq
	a.Send(t, map[string]any{"cmd": "reset", "seq": seq})
	if _, ok := a.Wait(5*time.Second, func(e Event) bool { return e.Ev == "reset" && e.Seq == seq }); !ok {
		t.Fatal("the fixture did not reset within 5s")
	}
	a.Take()
}

// Text returns the latest text of the entry on output ("" when unchanged).
func Text(evs []Event, output string) (string, bool) {
	text, ok := "", false
	for _, e := range evs {
		if e.Ev == "text" && e.Win == output {
			text, ok = e.Text, true
		}
	}
	return text, ok
}

// String formats an event for messages.
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s", e.Ev, e.Win)
	switch e.Ev {
	case "motion", "button_down", "button_up", "scroll":
		fmt.Fprintf(&b, "(%g,%g)%s%s", e.X, e.Y, e.Button, e.Dir)
	case "key_down", "key_up":
		fmt.Fprintf(&b, "(%s)", e.Key)
	case "text":
		fmt.Fprintf(&b, "(%q)", e.Text)
	}
	return b.String()
}

// startPython starts a GTK application of python3 args as the compositor's
// user with env, its stderr in logName beside the compositor's files, and
// waits until it says it is ready; it is stopped at the test's end. what
// names it in errors.
func (s *Sway) startPython(t testing.TB, what, logName string, args []string, env ...string) *App {
	t.Helper()
	cmd := s.Command("/usr/bin/python3", args, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := filepath.Join(s.Dir, logName)
	ef, err := os.Create(stderr)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = ef
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", what, err)
	}
	ef.Close()
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	a := &App{in: in, wake: make(chan struct{}, 1)}
	go a.read(out)
	if _, ok := a.Wait(20*time.Second, func(e Event) bool { return e.Ev == "ready" }); !ok {
		b, _ := os.ReadFile(stderr)
		t.Fatalf("%s did not start within 20s: %s", what, b)
	}
	return a
}
