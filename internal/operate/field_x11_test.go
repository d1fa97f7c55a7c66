package operate_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// The type modes on real toolkits: a Tk entry (where ctrl+a moves to the
// line start, so the old "replace" left "flow 42old text") and a GTK entry.
// Each app shows one field holding "old text" at the top-left of a private
// Xvfb and prints the field's text when Return is pressed in it.

const tkField = `
wm geometry . 400x60+0+0
entry .e -width 40
.e insert 0 {old text}
pack .e -fill both -expand 1
bind .e <Return> {puts [.e get]; flush stdout}
update
focus -force .e
puts ready; flush stdout
`

// tkText is a multi-line Tk text widget holding two lines.
const tkText = `
wm geometry . 400x60+0+0
text .t -width 40 -height 3
.t insert 1.0 "old\ntext"
pack .t -fill both -expand 1
bind .t <Return> {puts [string map {"\n" |} [.t get 1.0 end-1c]]; flush stdout; break}
update
focus -force .t
puts ready; flush stdout
`

const gtkField = `
import sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib
w = Gtk.Window()
w.move(0, 0)
w.set_default_size(400, 60)
e = Gtk.Entry()
e.set_text("old text")
def done(entry):
    print(entry.get_text(), flush=True)
e.connect("activate", done)
w.add(e)
w.connect("destroy", Gtk.main_quit)
w.show_all()
def ready():
    w.present()
    e.grab_focus()
    print("ready", flush=True)
    return False
GLib.timeout_add(300, ready)
Gtk.main()
`

type fieldApp struct {
	name string
	cmd  func(t *testing.T) (string, []string)
}

var fieldApps = []fieldApp{
	{"tk entry", func(t *testing.T) (string, []string) {
		p := filepath.Join(t.TempDir(), "field.tcl")
		if err := os.WriteFile(p, []byte(tkField), 0o600); err != nil {
			t.Fatal(err)
		}
		return "wish", []string{p}
	}},
	{"tk text", func(t *testing.T) (string, []string) {
		p := filepath.Join(t.TempDir(), "text.tcl")
		if err := os.WriteFile(p, []byte(tkText), 0o600); err != nil {
			t.Fatal(err)
		}
		return "wish", []string{p}
	}},
	{"gtk entry", func(t *testing.T) (string, []string) {
		p := filepath.Join(t.TempDir(), "field.py")
		if err := os.WriteFile(p, []byte(gtkField), 0o600); err != nil {
			t.Fatal(err)
		}
		// The system's python3 has python3-gi; a python3 earlier in PATH (pyenv) may not.
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			return "/usr/bin/python3", []string{p}
		}
		return "python3", []string{p}
	}},
}

// startField starts app on display and returns its stdout lines.
func startField(t *testing.T, app fieldApp, display string) <-chan string {
	t.Helper()
	name, args := app.cmd(t)
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is needed for this test (scripts/debian-packages.sh installs it): %v", name, err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "GTK_A11Y=none", "NO_AT_BRIDGE=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
		close(lines)
	}()
	if got := nextLine(t, lines); got != "ready" {
		t.Fatalf("%s did not start: printed %q", app.name, got)
	}
	return lines
}

func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the field app exited")
		}
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("the field app printed nothing within 20 s")
	}
	return ""
}

func TestTypeModesOnRealToolkits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb, wish and GTK")
	}
	vd := xvfbtest.Start(t, 800, 600)
	be := x11.New(x11.Options{Display: vd.Display, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		t.Fatalf("start the X11 backend: %v", err)
	}
	t.Cleanup(func() { be.Close() })
	ex := operate.New(desktop.NewInput(be), operate.Options{Platform: "linux"})
	cases := []struct {
		mode operate.TypeMode
		want string
	}{
		{operate.Replace, "flow 42"},
		{operate.Append, "old textflow 42"},
	}
	multiLine := map[operate.TypeMode]string{operate.Replace: "flow 42", operate.Append: "old|textflow 42"}
	for _, app := range fieldApps {
		for _, c := range cases {
			t.Run(app.name+"/"+string(c.mode), func(t *testing.T) {
				lines := startField(t, app, vd.Display)
				field := &operate.Place{Global: geom.GlobalPoint{X: 200, Y: 30}}
				do(t, ex, operate.Op{Action: action.Action{Kind: action.Click}, At: field})
				// The click put the caret mid-text: the mode must not depend on where it is.
				do(t, ex, operate.Op{Action: action.Action{Kind: action.TypeText, Text: "flow 42"}, Mode: c.mode})
				do(t, ex, operate.Op{Action: action.Action{Kind: action.KeyPress, Keys: []desktop.Key{"Return"}}})
				want := c.want
				if app.name == "tk text" {
					want = multiLine[c.mode]
				}
				if got := nextLine(t, lines); got != want {
					t.Errorf("%s of \"old text\" with \"flow 42\" left %q, want %q", c.mode, got, want)
				}
			})
		}
	}
}

func do(t *testing.T, ex *operate.Executor, op operate.Op) operate.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := ex.Do(ctx, op)
	if err != nil {
		t.Fatalf("%s: %v", op.Action.Kind, err)
	}
	return res
}
