package flow

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// A form filled again and again in the same running application, which has
// no accessibility tree: the text field holds what the last run typed, and
// the replay must find it all the same (its fingerprint leaves out what it
// holds), after the window moved too, while a different field at the
// cached place (another label beside it) is refused and the model asked.

// refillFlow presses the Submit button, then replaces the Name field's text.
const refillFlow = `name: refill
steps:
  - click: the Submit button
  - type: {target: the Name field, text: "${name}", mode: replace}
`

// refillRun is one run of refillFlow: what it typed, how many model calls
// it made and how it used the cache.
type refillRun struct {
	name  string
	calls int
	uses  []string
}

// runRefill runs refillFlow with name against the cache at path and checks
// the step results; field reads the field's text once the flow is done.
func (e *x11Env) runRefill(t *testing.T, path, name string, field func() string) refillRun {
	t.Helper()
	vars := map[string]string{"name": name}
	f, err := Parse([]byte(refillFlow), vars)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := OpenCache(path, ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	seer := &flowtest.ColorSeer{}
	res := e.runner(t, seer).Run(context.Background(), f, vars, cache)
	if res.Status != Passed {
		t.Fatalf("run typing %q: %s: %s; steps %+v", name, res.Status, res.Summary, res.Steps)
	}
	if res.ModelCalls != len(seer.Locates()) {
		t.Errorf("run typing %q: %d model calls counted, the model saw %d", name, res.ModelCalls, len(seer.Locates()))
	}
	deadline := time.Now().Add(5 * time.Second)
	got := field()
	for got != name && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got = field()
	}
	if got != name {
		t.Errorf("run typing %q: the Name field holds %q (mode replace)", name, got)
	}
	return refillRun{name, res.ModelCalls, cacheUses(res)}
}

// checkRefills checks the runs: the first asks the model for both elements,
// the second replays at the cached places, the third (the window moved)
// where they went, and the last, with another label beside the field at its
// place, asks the model for the field only.
func checkRefills(t *testing.T, runs []refillRun) {
	t.Helper()
	want := []refillRun{
		{runs[0].name, 2, []string{CacheMiss, CacheMiss}},
		{runs[1].name, 0, []string{CacheHit, CacheHit}},
		{runs[2].name, 0, []string{CacheMoved, CacheMoved}},
		{runs[3].name, 1, []string{CacheHit, CacheMiss}},
	}
	what := []string{"first run", "second run, same window", "third run, window moved", "another field at the place"}
	for i, r := range runs {
		if r.calls != want[i].calls || !slices.Equal(r.uses, want[i].uses) {
			t.Errorf("%s: %d model calls, cache %q; want %d, %q", what[i], r.calls, r.uses, want[i].calls, want[i].uses)
		}
	}
}

func TestFieldReplayInTheSampleApp(t *testing.T) {
	e := startX11(t)
	path := filepath.Join(t.TempDir(), "refill.cache.yaml")
	app := e.app(t, 0, 0, nil)
	field := func() string { return app.Field("name") }
	var runs []refillRun
	runs = append(runs, e.runRefill(t, path, "Ada", field), e.runRefill(t, path, "Grace Hopper", field))
	if err := app.Move(150, 90); err != nil {
		t.Fatal(err)
	}
	runs = append(runs, e.runRefill(t, path, "Alan", field))
	app.Close()
	// The same window, but the field at the cached place is labelled Nickname.
	other := e.app(t, 150, 90, map[string]string{"name": "Nickname"})
	defer other.Close()
	runs = append(runs, e.runRefill(t, path, "Edsger", func() string { return other.Field("name") }))
	checkRefills(t, runs)
}

// tkForm is a Tk form: a Submit button above two labelled entries, the
// entries and the button in the sample app's colours (the test model finds
// them by colour). It runs the Tcl commands it reads on stdin and answers
// each with "ok RESULT" (or "error MESSAGE") on one line.
const tkForm = `
wm geometry . +0+0
. configure -padx 30 -pady 30
button .submit -text Submit -background #3c78d8 -activebackground #3c78d8 -foreground white -activeforeground white -command {puts submitted; flush stdout}
label .lname -text Name: -width 8 -anchor e
entry .name -width 28 -background #fff2cc
label .lcity -text City: -width 8 -anchor e
entry .city -width 28 -background #cfe2f3
grid .submit -row 0 -column 1 -sticky w -pady 12
grid .lname .name -padx 6 -pady 8
grid .lcity .city -padx 6 -pady 8
fileevent stdin readable {
	if {[gets stdin line] < 0} { exit }
	if {[catch {uplevel #0 $line} r]} { puts "error $r" } else { puts "ok $r" }
	flush stdout
}
update
puts ready; flush stdout
`

// tkApp is a running Tk form with its command channel.
type tkApp struct {
	t     *testing.T
	in    io.Writer
	lines chan string
}

func startTkForm(t *testing.T, display string) *tkApp {
	t.Helper()
	if _, err := exec.LookPath("wish"); err != nil {
		t.Fatalf("wish is needed for this test (Debian package tk, in scripts/debian-packages.sh): %v", err)
	}
	p := filepath.Join(t.TempDir(), "form.tcl")
	if err := os.WriteFile(p, []byte(tkForm), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("wish", p)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start wish: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	a := &tkApp{t: t, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			a.lines <- strings.TrimSpace(sc.Text())
		}
		close(a.lines)
	}()
	if got := a.line(); got != "ready" {
		t.Fatalf("the Tk form did not start: printed %q", got)
	}
	return a
}

func (a *tkApp) line() string {
	a.t.Helper()
	select {
	case l, ok := <-a.lines:
		if !ok {
			a.t.Fatal("the Tk form exited")
		}
		return l
	case <-time.After(20 * time.Second):
		a.t.Fatal("the Tk form said nothing for 20 s")
	}
	return ""
}

// do runs a Tcl command in the form and returns its result; the Submit
// button's own lines are skipped.
func (a *tkApp) do(cmd string) string {
	a.t.Helper()
	if _, err := fmt.Fprintln(a.in, cmd); err != nil {
		a.t.Fatalf("send %q to the Tk form: %v", cmd, err)
	}
	for {
		switch l := a.line(); {
		case l == "submitted":
		case strings.HasPrefix(l, "ok"):
			return strings.TrimPrefix(strings.TrimPrefix(l, "ok"), " ")
		default:
			a.t.Fatalf("the Tk form answered %q to %q", l, cmd)
		}
	}
}

func TestFieldReplayInATkForm(t *testing.T) {
	e := startX11(t)
	tk := startTkForm(t, e.display)
	path := filepath.Join(t.TempDir(), "refill.cache.yaml")
	field := func() string { return tk.do(".name get") }
	var runs []refillRun
	runs = append(runs, e.runRefill(t, path, "Ada", field), e.runRefill(t, path, "Grace Hopper", field))
	tk.do("wm geometry . +150+90; update")
	runs = append(runs, e.runRefill(t, path, "Alan", field))
	// The field at the cached place is now labelled Nickname.
	tk.do(".lname configure -text Nickname:; update")
	runs = append(runs, e.runRefill(t, path, "Edsger", field))
	checkRefills(t, runs)
}
