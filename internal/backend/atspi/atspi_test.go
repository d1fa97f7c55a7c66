//go:build linux

package atspi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/uitree"
)

// session is an X display and a private session bus (on which the
// accessibility bus starts), and a client of it.
type session struct {
	display, bus string
	c            *atspi.Client
}

func newSession(t testing.TB, mode atspi.Mode) *session {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Xvfb, a D-Bus session and GTK applications")
	}
	vd := xvfbtest.Start(t, 1280, 800)
	bus := atspitest.Bus(t, vd.Display)
	c := atspi.New(atspi.Options{SessionBus: bus, Mode: mode})
	t.Cleanup(func() { _ = c.Close() })
	return &session{display: vd.Display, bus: bus, c: c}
}

// screen is the Xvfb's one display in root-window pixels.
var screen = []geom.Rect{{W: 1280, H: 800}}

// waitFor takes snapshots until ok accepts one (15 s at most) and returns the last.
func (s *session) waitFor(t testing.TB, q desktop.ElementQuery, what string, ok func(*desktop.ElementSnapshot) bool) *desktop.ElementSnapshot {
	t.Helper()
	q.Bounds = screen
	var snap *desktop.ElementSnapshot
	var err error
	if !atspitest.Wait(context.Background(), 15*time.Second, func() bool {
		snap, err = s.c.Elements(context.Background(), q)
		return err == nil && ok(snap)
	}) {
		out := ""
		if snap != nil {
			out = fmt.Sprintf("(truncated %v by %q, took %v)\n%s", snap.Truncated, snap.TruncatedBy, snap.Took, uitree.Outline(snap.Elements, nil))
		}
		t.Fatalf("no snapshot with %s within 15 s (last error %v); last snapshot:\n%s", what, err, out)
	}
	return snap
}

func find(t testing.TB, snap *desktop.ElementSnapshot, target string) desktop.Element {
	t.Helper()
	e, _, err := uitree.Find(snap.Elements, target)
	if err != nil {
		t.Fatalf("find %q: %v\n%s", target, err, uitree.Outline(snap.Elements, nil))
	}
	return e
}

func hasName(name string) func(*desktop.ElementSnapshot) bool {
	return func(s *desktop.ElementSnapshot) bool {
		for _, e := range s.Elements {
			if e.Name == name {
				return true
			}
		}
		return false
	}
}

func TestFormSnapshot(t *testing.T) { testForm(t, atspi.ModeAuto) }

// TestFormSnapshotFromCache reads the form through the application's cache,
// which ATK applications offer once a client listens to events (ModeOn).
func TestFormSnapshotFromCache(t *testing.T) { testForm(t, atspi.ModeOn) }

func testForm(t *testing.T, mode atspi.Mode) {
	s := newSession(t, mode)
	atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp()...)
	snap := s.waitFor(t, desktop.ElementQuery{}, `a "Save" button`, hasName("Save"))
	if snap.Window != "Form" || snap.Truncated || snap.Source != "atspi" {
		t.Errorf("window %q truncated %v source %q: want the form window, whole", snap.Window, snap.Truncated, snap.Source)
	}
	name := find(t, snap, "Name field")
	if name.NameFrom != desktop.NameFromRelation || name.Value != "Ada" || !name.States.Focused || !name.States.Editable {
		t.Errorf("Name field %+v: want name from the labelled-by relation, value Ada, focused, editable", name)
	}
	email := find(t, snap, "Email field")
	if email.NameFrom != desktop.NameFromLabel || email.Value != "ada@example.org" {
		t.Errorf("Email field %+v: want name from the label beside it, value ada@example.org", email)
	}
	pw := find(t, snap, "Password field")
	if !pw.States.Protected || pw.Value != "" || pw.PlatformRole != "password text" {
		t.Errorf("Password field %+v: want protected, no value", pw)
	}
	if _, _, err := uitree.Find(snap.Elements, "orphan"); err == nil {
		t.Errorf("the field with no label got a name")
	}
	check := find(t, snap, "Remember me checkbox")
	if !check.States.Checked || !check.States.Enabled {
		t.Errorf("checkbox %+v: want checked and enabled", check)
	}
	cherry := find(t, snap, "Cherry")
	if cherry.Role != desktop.RoleCell || cherry.Parent == "" {
		t.Errorf("list row %+v: want a cell inside the list", cherry)
	}
	if save := find(t, snap, "Save button"); save.Role != desktop.RoleButton || save.Depth != 1 || save.Parent != "e1" || save.App != "form.py" {
		t.Errorf("Save %+v: want a button under the window e1 of form.py", save)
	}
	compareWithPyatspi(t, s, "Form", snap)
}

// compareWithPyatspi checks a snapshot against pyatspi's walk of the same
// window: every element pyatspi sees that the snapshot should return (not a
// nameless container or text) is there with the same role and (accessible) name and
// a box within 2 px, and the snapshot returns nothing pyatspi does not see.
func compareWithPyatspi(t *testing.T, s *session, title string, snap *desktop.ElementSnapshot) {
	t.Helper()
	oracle := runOracle(t, s, title, 1)
	want := oracleWant(oracle)
	if len(want) < 5 {
		t.Fatalf("pyatspi sees only %d elements of %q: %+v", len(want), title, oracle.Elements)
	}
	t.Logf("%q: pyatspi sees %d elements to return, the snapshot has %d", title, len(want), len(snap.Elements))
	used := make([]bool, len(snap.Elements))
	for _, o := range want {
		found := false
		for i, e := range snap.Elements {
			if !used[i] && e.PlatformRole == o.Role && near(e.Box, o.Box) && (e.NameFrom != desktop.NameFromAccessible || e.Name == o.Name) {
				used[i], found = true, true
				if v, ok := o.Value.(string); ok && e.Role == desktop.RoleTextbox && e.Value != v && !strings.HasSuffix(e.Value, "…") {
					t.Errorf("%s %s %q has the value %q; pyatspi reads %q", e.Ref, e.PlatformRole, e.Name, e.Value, v)
				}
				break
			}
		}
		if !found {
			t.Errorf("pyatspi sees %s %q at %v; the snapshot has no such element", o.Role, o.Name, o.Box)
		}
	}
	for i, e := range snap.Elements {
		if !used[i] {
			t.Errorf("the snapshot has %s %s %q at %v, which pyatspi does not see", e.Ref, e.PlatformRole, e.Name, e.Box)
		}
	}
}

// oracleWant returns the objects of pyatspi's walk that a snapshot returns:
// those with a box on screen, but for nameless containers and text.
func oracleWant(oracle oracleResult) []oracleElement {
	var want []oracleElement
	for _, o := range oracle.Elements {
		role := uitree.NormalizeRole(o.Role, desktop.States{Editable: o.Role == "text"})
		if o.Box == nil || ((role == desktop.RoleGeneric || role == desktop.RoleText) && o.Name == "") || o.Box[2] <= 0 || o.Box[3] <= 0 || o.Box[0] < -1000 {
			continue
		}
		want = append(want, o)
	}
	return want
}

type oracleElement struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Box  []int  `json:"box"`
	// Value is a text field's text (a string) or a Value's current value (a number).
	Value any `json:"value"`
}

type oracleResult struct {
	Elements []oracleElement `json:"elements"`
	Seconds  []float64       `json:"seconds"`
	Error    string          `json:"error"`
}

func runOracle(t testing.TB, s *session, title string, repeat int) oracleResult {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(atspitest.Python, filepath.Join(filepath.Dir(file), "testdata", "oracle.py"), title, "--repeat", itoa(repeat))
	cmd.Env = atspitest.Env(s.display, s.bus)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("pyatspi oracle: %v\n%s\n%s", err, out, ee.Stderr)
		}
		t.Fatalf("pyatspi oracle (install python3-pyatspi): %v", err)
	}
	var r oracleResult
	if err := json.Unmarshal(out, &r); err != nil || r.Error != "" {
		t.Fatalf("pyatspi oracle: %v %s\n%s", err, r.Error, out)
	}
	return r
}

func itoa(n int) string { return strconv.Itoa(n) }

func near(r geom.Rect, box []int) bool {
	d := func(a, b int) bool { return a-b <= 2 && b-a <= 2 }
	return d(r.X, box[0]) && d(r.Y, box[1]) && d(r.W, box[2]) && d(r.H, box[3])
}

func TestZenityEntry(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	atspitest.Start(t, s.display, s.bus, "", "zenity", "--entry", "--title", "Zenity entry", "--text", "Your name:", "--entry-text", "Grace")
	snap := s.waitFor(t, desktop.ElementQuery{}, "zenity's OK button", hasName("OK"))
	if snap.Window != "Zenity entry" {
		t.Errorf("window %q, want the zenity dialog", snap.Window)
	}
	ok := find(t, snap, "OK button")
	cancel := find(t, snap, "Cancel button")
	if ok.Box.X <= cancel.Box.X || !ok.States.Enabled {
		t.Errorf("OK %v, Cancel %v: want OK enabled, right of Cancel", ok.Box, cancel.Box)
	}
	entry := find(t, snap, "field")
	if entry.Value != "Grace" || entry.Name != "Your name:" {
		t.Errorf("entry %+v: want value Grace, named after its label", entry)
	}
	compareWithPyatspi(t, s, "Zenity entry", snap)
}

func TestZenityQuestion(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	atspitest.Start(t, s.display, s.bus, "", "zenity", "--question", "--title", "Zenity question", "--text", "Delete the file?")
	snap := s.waitFor(t, desktop.ElementQuery{}, "zenity's Yes button", hasName("Yes"))
	find(t, snap, "No button")
	find(t, snap, "Delete the file?")
	if _, _, err := uitree.Find(snap.Elements, "Maybe button"); err == nil {
		t.Errorf("found a Maybe button in a yes/no question")
	}
}

func TestChromiumPage(t *testing.T) {
	s := newSession(t, atspi.ModeOn)
	// IsEnabled first: Chromium decides at start whether to expose its tree.
	if err := s.c.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: apt-get install chromium")
	}
	_, file, _, _ := runtime.Caller(0)
	page := "file://" + filepath.Join(filepath.Dir(file), "testdata", "page.html")
	atspitest.Start(t, s.display, s.bus, "", bin, "--no-sandbox", "--user-data-dir="+t.TempDir(), "--no-first-run",
		"--no-default-browser-check", "--disable-gpu", "--password-store=basic", "--force-renderer-accessibility",
		"--window-position=0,0", "--window-size=1100,750", page)
	// Chromium exposes the page before it has named every element (a
	// checkbox's name from its label comes later under load).
	snap := s.waitFor(t, desktop.ElementQuery{}, "the page's Send button and named checkbox", func(snap *desktop.ElementSnapshot) bool {
		_, _, err := uitree.Find(snap.Elements, "Subscribe checkbox")
		return hasName("Send")(snap) && err == nil
	})
	if !strings.HasPrefix(snap.Window, "Local page") {
		t.Errorf("window %q: want the page's", snap.Window)
	}
	send := find(t, snap, "Send button")
	terms := find(t, snap, "Terms link")
	user := find(t, snap, "User name field")
	if user.Value != "grace" || terms.Box.X <= send.Box.X {
		t.Errorf("user field %+v, Send %v, Terms %v: want value grace and the link right of the button", user, send.Box, terms.Box)
	}
	if pw := find(t, snap, "Password field"); !pw.States.Protected || pw.Value != "" {
		t.Errorf("password field %+v: want protected, no value", pw)
	}
	if box := find(t, snap, "Subscribe checkbox"); !box.States.Checked {
		t.Errorf("checkbox %+v: want checked", box)
	}
	find(t, snap, "Sign up heading")
	t.Logf("%d elements in %v:\n%s", len(snap.Elements), snap.Took, uitree.Outline(snap.Elements, nil))
}

// rowNames returns the names of the returned list rows.
func rowNames(snap *desktop.ElementSnapshot) []string {
	var rows []string
	for _, e := range snap.Elements {
		if strings.HasPrefix(e.Name, "Row ") {
			rows = append(rows, e.Name)
		}
	}
	return rows
}

// responsiveBound is how long the application may take to answer while a
// snapshot walks its 20000-row list, and to run a click right after.
const responsiveBound = 500 * time.Millisecond

func TestLongTreeView(t *testing.T) { testLongList(t, false) }

// TestLongListBox: every row is a widget, so every row is in the tree.
func TestLongListBox(t *testing.T) { testLongList(t, true) }

// testLongList snapshots a 20000-row list: the snapshot returns the rows in
// view (and no others) within its budget, marked truncated by max_elements
// (the list has more rows than a walk may read), and the application keeps
// answering: a probe asks it for the Ping button's role every 5 ms while
// snapshots run, and a click (AT-SPI's Action, run on its main loop) right
// after the last one is done within responsiveBound.
func testLongList(t *testing.T, listbox bool) {
	s := newSession(t, atspi.ModeAuto)
	args := []string{"--rows", "20000"}
	if listbox {
		args = append(args, "--listbox")
	}
	atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp(args...)...)
	snap := s.waitFor(t, desktop.ElementQuery{}, "the list's first row", hasName("Row 0"))
	rows := rowNames(snap)
	// The rows in view (the window is 600 px high, a row about 23) and no others.
	if len(rows) < 10 || len(rows) > 40 || rows[0] != "Row 0" || rows[len(rows)-1] != "Row "+strconv.Itoa(len(rows)-1) {
		t.Errorf("rows %v: want Row 0 to the last row in view", rows)
	}
	probe := prober(t, s, find(t, snap, "Ping 0"))
	stop := probe()
	q := desktop.ElementQuery{Bounds: screen}
	var took []time.Duration
	for range 3 {
		start := time.Now()
		snap, err := s.c.Elements(context.Background(), q)
		wall := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		took = append(took, wall)
		if !snap.Truncated || snap.TruncatedBy != "max_elements" || wall > 2*time.Second+250*time.Millisecond {
			t.Errorf("snapshot of a 20000-row list: %d elements in %v, truncated %v by %q: want it within its 2 s budget, truncated by max_elements",
				len(snap.Elements), wall, snap.Truncated, snap.TruncatedBy)
		}
	}
	worst := stop()
	start := time.Now()
	if err := atspitest.DoAction(s.bus, find(t, snap, "Ping 0").Handle); err != nil {
		t.Fatalf("press Ping: %v", err)
	}
	click := time.Since(start)
	t.Logf("snapshots took %v; the application answered within %v during them and ran a click in %v right after", took, worst, click)
	if worst > responsiveBound || click > responsiveBound {
		t.Errorf("the application took %v to answer during the snapshots and %v to run a click after them: want both within %v", worst, click, responsiveBound)
	}
	s.waitFor(t, desktop.ElementQuery{}, "the Ping button counting the press", hasName("Ping 1"))
	small, err := s.c.Elements(context.Background(), desktop.ElementQuery{MaxElements: 8, Bounds: screen})
	if err != nil || !small.Truncated || small.TruncatedBy != "max_elements" || len(small.Elements) != 8 {
		t.Errorf("max_elements 8: %v, %v: want 8 elements, truncated by max_elements", small, err)
	}
	quick, err := s.c.Elements(context.Background(), desktop.ElementQuery{Budget: 20 * time.Millisecond, Bounds: screen})
	if err != nil || !quick.Truncated || quick.Took > 20*time.Millisecond+250*time.Millisecond {
		t.Errorf("a 20 ms budget: %v, %v: want a snapshot marked truncated, within the budget", quick, err)
	}
}

// TestHungApplication stops an application (SIGSTOP): a snapshot costs at
// most its budget and says the application did not answer, still returns
// the windows of an application that answers, and the client answers other
// calls meanwhile (a snapshot of the other application, started while the
// first waits, returns first, in its usual time).
func TestHungApplication(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	form := atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp()...)
	atspitest.Start(t, s.display, s.bus, "", "zenity", "--question", "--title", "Other", "--text", "Still here?")
	s.waitFor(t, desktop.ElementQuery{Scope: desktop.ScopeAll}, "the form and zenity", func(snap *desktop.ElementSnapshot) bool {
		return hasName("Save")(snap) && hasName("Yes")(snap)
	})
	if err := form.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = form.Cmd.Process.Signal(syscall.SIGCONT) }()
	const budget = 1500 * time.Millisecond
	type result struct {
		snap *desktop.ElementSnapshot
		err  error
		at   time.Duration
	}
	start := time.Now()
	hung := make(chan result, 1)
	go func() {
		snap, err := s.c.Elements(context.Background(), desktop.ElementQuery{Scope: desktop.ScopeAll, Budget: budget, Bounds: screen})
		hung <- result{snap, err, time.Since(start)}
	}()
	time.Sleep(200 * time.Millisecond)
	other, err := s.c.Elements(context.Background(), desktop.ElementQuery{Scope: desktop.ScopeApp, App: "zenity", Bounds: screen})
	otherAt := time.Since(start)
	if err != nil || !hasName("Yes")(other) || other.Truncated {
		t.Errorf("a snapshot of zenity while the form is stopped: %v, %v: want zenity's window, whole", other, err)
	}
	h := <-hung
	t.Logf("the snapshot with the stopped application returned after %v; the one of zenity, started 200 ms in, after %v", h.at, otherAt)
	if otherAt >= h.at || otherAt > 200*time.Millisecond+time.Second {
		t.Errorf("the snapshot of zenity returned after %v, the one waiting for the stopped application after %v: want zenity's first, within a second", otherAt, h.at)
	}
	if h.err != nil {
		t.Fatalf("snapshot with a stopped application: %v", h.err)
	}
	if !h.snap.Truncated || h.snap.TruncatedBy != "unresponsive" || h.at > budget+250*time.Millisecond {
		t.Errorf("snapshot with a stopped application: truncated %v by %q after %v, want truncated by unresponsive within the %v budget", h.snap.Truncated, h.snap.TruncatedBy, h.at, budget)
	}
	if !hasName("Yes")(h.snap) || hasName("Save")(h.snap) {
		t.Errorf("snapshot of every window with the form stopped:\n%s\nwant zenity's window and nothing of the form", uitree.Outline(h.snap.Elements, nil))
	}
}

func TestCheck(t *testing.T) {
	s := newSession(t, atspi.ModeAuto)
	atspitest.Start(t, s.display, s.bus, "ready", atspitest.FormApp()...)
	var r atspi.Report
	atspitest.Wait(context.Background(), 10*time.Second, func() bool {
		r = atspi.Check(context.Background(), atspi.Options{SessionBus: s.bus})
		return len(r.Apps) > 0
	})
	if !r.Reachable || r.Problem != "" || !r.EnabledKnown {
		t.Errorf("report %+v: want a reachable bus and IsEnabled read", r)
	}
	if len(r.Apps) != 1 || r.Apps[0].Name != "form.py" || r.Apps[0].Windows != 1 {
		t.Errorf("apps %+v: want form.py with one window", r.Apps)
	}
	on := atspi.New(atspi.Options{SessionBus: s.bus, Mode: atspi.ModeOn})
	defer on.Close()
	if err := on.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := atspi.Check(context.Background(), atspi.Options{SessionBus: s.bus}); !r.Enabled {
		t.Errorf("after a ModeOn client connected: %+v, want IsEnabled set", r)
	}
	none := atspi.Check(context.Background(), atspi.Options{})
	if none.Reachable || !strings.Contains(none.Problem, "DBUS_SESSION_BUS_ADDRESS is not set") {
		t.Errorf("no session bus: %+v, want a problem naming DBUS_SESSION_BUS_ADDRESS", none)
	}
}
