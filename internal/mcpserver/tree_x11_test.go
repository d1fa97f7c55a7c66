//go:build linux

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// The accessibility tree through the MCP tools on real applications: a
// private Xvfb and session bus (atspitest), the X11 backend with the AT-SPI2
// client as its element source, and no OCR and no model: every target is
// found in the tree.

type treeEnv struct {
	cs           *mcp.ClientSession
	display, bus string
	client       *atspi.Client
}

// startTreeEnv starts the display, the bus and a server whose screenshots
// are at most longEdge pixels wide (0: the default), so boxes in image
// pixels differ from global ones.
func startTreeEnv(tb testing.TB, mode atspi.Mode, longEdge int) *treeEnv {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts Xvfb, a D-Bus session and GTK applications")
	}
	vd := xvfbtest.Start(tb, 1280, 800)
	bus := atspitest.Bus(tb, vd.Display)
	client := atspi.New(atspi.Options{SessionBus: bus, Mode: mode, Logger: slog.New(slog.DiscardHandler)})
	be := x11.New(x11.Options{Display: vd.Display, Elements: client, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		tb.Fatalf("x11 backend on %s: %v", vd.Display, err)
	}
	tb.Cleanup(func() { _ = be.Close() })
	if mode == atspi.ModeOn {
		if err := client.Connect(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	srv, err := New(Options{Screen: be, Logger: slog.New(slog.DiscardHandler), Shot: imaging.Options{MaxLongEdge: longEdge},
		OCRMissing: errNoOCR})
	if err != nil {
		tb.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Close() })
	return &treeEnv{cs: cs, display: vd.Display, bus: bus, client: client}
}

// snapshotUntil takes snapshots until one has an element named name (15 s at most).
func (e *treeEnv) snapshotUntil(tb testing.TB, name string) (SnapshotResult, string) {
	tb.Helper()
	return e.snapshotWithin(tb, name, 15*time.Second)
}

// snapshotWithin is snapshotUntil waiting at most d.
func (e *treeEnv) snapshotWithin(tb testing.TB, name string, d time.Duration) (SnapshotResult, string) {
	tb.Helper()
	var r SnapshotResult
	var outline string
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		res := callTool(tb, e.cs, "gui_snapshot", nil)
		if !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			r = SnapshotResult{}
			_ = json.Unmarshal(b, &r)
			outline = text(res)
			for _, el := range r.Elements {
				if el.Name == name {
					return r, outline
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.Fatalf("no snapshot with %q within %v; the last:\n%s", name, d, outline)
	return r, outline
}

// startApp runs argv on the env's display and bus with its output kept.
func (e *treeEnv) startApp(tb testing.TB, argv ...string) (*exec.Cmd, *bytes.Buffer, chan error) {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = atspitest.Env(e.display, e.bus)
	out := &bytes.Buffer{}
	cmd.Stdout = out
	testenv.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tb.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd, out, done
}

func waitExit(tb testing.TB, done chan error, what string) error {
	tb.Helper()
	select {
	case err := <-done:
		done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		tb.Fatalf("%s did not end within 10 s", what)
	}
	return nil
}

func TestTreeZenityQuestionYesByTarget(t *testing.T) {
	e := startTreeEnv(t, atspi.ModeAuto, 0)
	_, _, done := e.startApp(t, "zenity", "--question", "--title", "Zenity question", "--text", "Delete the file?")
	e.snapshotUntil(t, "Yes")
	msg := ok(t, e.cs, "gui_click", map[string]any{"target": "Yes button"})
	if !strings.Contains(msg, `located_by accessibility:`) || !strings.Contains(msg, `button "Yes"`) {
		t.Errorf("result %q: want the button found in the tree", msg)
	}
	if err := waitExit(t, done, "zenity --question"); err != nil {
		t.Fatalf("zenity ended with %v: Yes (exit 0) was not clicked", err)
	}
}

func TestTreeZenityEntryReplaceThenOK(t *testing.T) {
	e := startTreeEnv(t, atspi.ModeAuto, 0)
	_, out, done := e.startApp(t, "zenity", "--entry", "--title", "Zenity entry", "--text", "Your name:", "--entry-text", "Grace")
	r, outline := e.snapshotUntil(t, "OK")
	t.Logf("outline of zenity --entry: %d elements, %d bytes:\n%s", len(r.Elements), len(outline), outline)
	var field SnapElement
	for _, el := range r.Elements {
		if el.Role == "textbox" {
			field = el
		}
	}
	if field.Value != "Grace" {
		t.Fatalf("entry %+v: want value Grace", field)
	}
	msg := ok(t, e.cs, "gui_type", map[string]any{"ref": field.Ref, "text": "Ada Lovelace", "mode": "replace"})
	if !strings.Contains(msg, "EditableText") || !strings.Contains(msg, "verified by reading it back") {
		t.Errorf("replace: %q", msg)
	}
	ok(t, e.cs, "gui_click", map[string]any{"target": "OK"})
	if err := waitExit(t, done, "zenity --entry"); err != nil {
		t.Fatalf("zenity ended with %v", err)
	}
	if got := strings.TrimSpace(out.String()); got != "Ada Lovelace" {
		t.Errorf("zenity printed %q, want the replaced text", got)
	}
}

// TestTreeFormSnapshot: the GTK form fixture, screenshots at half size:
// every box of gui_snapshot, in image pixels of its frame, doubled, is the
// box of an element pyatspi sees, within 2 px; the outline's size is logged.
func TestTreeFormSnapshot(t *testing.T) {
	e := startTreeEnv(t, atspi.ModeAuto, 640)
	atspitest.Start(t, e.display, e.bus, "ready", atspitest.FormApp()...)
	r, outline := e.snapshotUntil(t, "Save")
	t.Logf("outline of the form: %d elements, %d bytes:\n%s", len(r.Elements), len(outline), outline)
	oracle := pyatspiBoxes(t, e, "Form")
	within := func(got [4]float64, box []int) bool {
		w := [4]float64{float64(box[0]), float64(box[1]), float64(box[0] + box[2]), float64(box[1] + box[3])}
		for i := range got {
			if d := got[i] - w[i]; d > 2+1 || d < -2-1 { // 2 px, and one of rounding at half size
				return false
			}
		}
		return true
	}
	for _, el := range r.Elements {
		got := [4]float64{el.Box.X1 * 2, el.Box.Y1 * 2, el.Box.X2 * 2, el.Box.Y2 * 2}
		found := false
		for _, o := range oracle {
			found = found || within(got, o)
		}
		if !found {
			t.Errorf("%s %s %q: box %v in image pixels = %v global; pyatspi has no element there", el.Ref, el.Role, el.Name, el.Box, got)
		}
	}
	// Stale refs, and a target the tree resolves on the real form.
	old := r.Elements[len(r.Elements)-1].Ref
	e.snapshotUntil(t, "Save")
	fails(t, e.cs, "gui_click", map[string]any{"ref": old}, "stale ref", "gui_snapshot again")
	msg := ok(t, e.cs, "gui_type", map[string]any{"target": "Email field", "text": "grace@example.org", "mode": "replace"})
	if !strings.Contains(msg, "verified by reading it back") {
		t.Errorf("replace in the GTK entry: %q", msg)
	}
	after, _ := e.snapshotUntil(t, "Save")
	for _, el := range after.Elements {
		if el.Name == "Email" && el.Role == "textbox" && el.Value != "grace@example.org" {
			t.Errorf("Email field reads %q after replace", el.Value)
		}
	}
}

// TestTreeAmbiguousTargetOnGTK: a real GTK window with two buttons named
// "OK" and no model: gui_click by target fails, listing both buttons with
// their refs and how to choose, and clicks neither; a click by the ref
// the error lists for the later button in the tree (the lower one) clicks
// that button and only it: the window's status, which lists every click,
// reads "Clicked: lower".
func TestTreeAmbiguousTargetOnGTK(t *testing.T) {
	e := startTreeEnv(t, atspi.ModeAuto, 0)
	atspitest.Start(t, e.display, e.bus, "ready", atspitest.FormApp("--twins")...)
	r, outline := e.snapshotUntil(t, "No clicks")
	var buttons []string
	for _, el := range r.Elements {
		if el.Role == "button" && el.Name == "OK" {
			buttons = append(buttons, el.Ref)
		}
	}
	if len(buttons) != 2 {
		t.Fatalf("the snapshot has %d OK buttons, want 2:\n%s", len(buttons), outline)
	}
	msg := fails(t, e.cs, "gui_click", map[string]any{"target": "OK button"}, "ambiguous", "2 elements",
		"use one's ref", "nothing was done")
	t.Logf("the ambiguity error: %s", msg)
	refs := refsIn(msg)
	if len(refs) != 2 || !strings.Contains(msg, refs[0]+` button "OK"`) || !strings.Contains(msg, refs[1]+` button "OK"`) {
		t.Fatalf("the error %q does not list the two OK buttons with their refs (found %v)", msg, refs)
	}
	second := refs[0]
	if n0, _ := refNumber(refs[0]); func() bool { n1, _ := refNumber(refs[1]); return n1 > n0 }() {
		second = refs[1]
	}
	msg = ok(t, e.cs, "gui_click", map[string]any{"ref": second})
	if !strings.Contains(msg, `button "OK"`) {
		t.Errorf("click by ref %s: %q", second, msg)
	}
	// The status lists every click in order: "Clicked: lower" alone says
	// the ambiguous call clicked nothing and the ref clicked that button.
	e.snapshotUntil(t, "Clicked: lower")
	time.Sleep(300 * time.Millisecond) // a click still on its way would show now
	after, outline := e.snapshotUntil(t, "Clicked: lower")
	for _, el := range after.Elements {
		if strings.HasPrefix(el.Name, "Clicked") && el.Name != "Clicked: lower" {
			t.Errorf("status %q, want only the lower button clicked once:\n%s", el.Name, outline)
		}
	}
}

// refsIn returns the element refs (e12) a message names, in order, once each.
func refsIn(msg string) []string {
	var refs []string
	for _, f := range strings.FieldsFunc(msg, func(r rune) bool { return r == ' ' || r == ';' || r == ':' || r == ',' }) {
		if _, isRef := refNumber(f); isRef && !slices.Contains(refs, f) {
			refs = append(refs, f)
		}
	}
	return refs
}

// pyatspiBoxes runs the AT-SPI tests' oracle on the window: the boxes (x,
// y, w, h in global pixels) of the elements it sees.
func pyatspiBoxes(t *testing.T, e *treeEnv, title string) [][]int {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(atspitest.Python, filepath.Join(filepath.Dir(file), "..", "backend", "atspi", "testdata", "oracle.py"), title)
	cmd.Env = atspitest.Env(e.display, e.bus)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyatspi oracle (python3-pyatspi): %v\n%s", err, out)
	}
	var r struct {
		Elements []struct {
			Name string `json:"name"`
			Box  []int  `json:"box"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	var boxes [][]int
	for _, el := range r.Elements {
		if len(el.Box) == 4 {
			boxes = append(boxes, el.Box)
		}
	}
	if len(boxes) < 10 {
		t.Fatalf("pyatspi sees only %d elements of %q", len(boxes), title)
	}
	return boxes
}

// TestTreeTkEntryReplaceByKeys: Tk exposes no accessibility tree, so
// replace selects with the executor's keys (operate.FieldKeys, not ctrl+a,
// which moves to the line start in Tk) and the result says it could not
// verify; Tk's own report of the entry's text shows the old text is gone.
func TestTreeTkEntryReplaceByKeys(t *testing.T) {
	e := startTreeEnv(t, atspi.ModeAuto, 0)
	script := filepath.Join(t.TempDir(), "entry.tcl")
	if err := os.WriteFile(script, []byte(`wm geometry . 300x40+50+50
entry .e -width 30; .e insert 0 "old text"; pack .e -fill both -expand 1
bind .e <Return> {puts "text=[.e get]"; flush stdout; exit}
update; focus -force .e; puts ready; flush stdout
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, done := e.startApp(t, "wish", script)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "ready") {
		if time.Now().After(deadline) {
			t.Fatalf("wish did not start: %q", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	ok(t, e.cs, "gui_click", map[string]any{"x": 200, "y": 70, "space": "screen"})
	msg := ok(t, e.cs, "gui_type", map[string]any{"text": "new", "mode": "replace"})
	if !strings.Contains(msg, "selected the field's text and typed 3 characters; not verified: no focused text field is in the accessibility tree") {
		t.Errorf("replace in Tk: %q", msg)
	}
	ok(t, e.cs, "gui_press_key", map[string]any{"key": "Return"})
	if err := waitExit(t, done, "wish"); err != nil {
		t.Fatalf("wish ended with %v", err)
	}
	if got := out.String(); !strings.Contains(got, "text=new\n") {
		t.Errorf("Tk's entry holds %q after replace, want text=new", got)
	}
}

// BenchmarkClickByTargetTree: gui_click by target on the GTK form, found
// in the accessibility tree (no OCR, no model): the time from the call to
// its result (the click done). The server has no model to call.
func BenchmarkClickByTargetTree(b *testing.B) {
	e := startTreeEnv(b, atspi.ModeAuto, 0)
	atspitest.Start(b, e.display, e.bus, "ready", atspitest.FormApp("--rows", "5")...)
	e.snapshotUntil(b, "Ping 0")
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		ok(b, e.cs, "gui_click", map[string]any{"target": "Ping button"})
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	e.snapshotUntil(b, fmt.Sprintf("Ping %d", b.N)) // every click reached the button
}

// TestTreeChromiumPage: Chromium (IsEnabled set first, the renderer's tree
// forced) on a local page: gui_snapshot's boxes, doubled from the half-size
// frame, are pyatspi's within 2 px; a click by target with no model presses
// the page's button (the page says so), and replace sets the input.
func TestTreeChromiumPage(t *testing.T) {
	testenv.NeedChromium(t)
	e := startTreeEnv(t, atspi.ModeOn, 640)
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: apt-get install chromium")
	}
	_, file, _, _ := runtime.Caller(0)
	page := "file://" + filepath.Join(filepath.Dir(file), "testdata", "tree_page.html")
	e.startApp(t, bin, "--no-sandbox", "--user-data-dir="+t.TempDir(), "--no-first-run", "--no-default-browser-check",
		"--disable-gpu", "--password-store=basic", "--force-renderer-accessibility", "--window-position=0,0", "--window-size=1000,700", page)
	// Chromium lays the page out again when its infobar (the --no-sandbox
	// warning) slides in, so a snapshot taken in between holds the old
	// document box. Compare a fresh snapshot with a fresh oracle until they
	// agree, a few times at most; what is left after that is a real mismatch.
	var mismatches []string
	for attempt := 0; attempt < 5; attempt++ {
		r, outline := e.snapshotWithin(t, "Send order", time.Minute) // a loaded machine starts Chromium slowly
		if attempt == 0 {
			t.Logf("outline of the page: %d elements, %d bytes:\n%s", len(r.Elements), len(outline), outline)
		}
		mismatches = treeBoxMismatches(r, pyatspiBoxes(t, e, r.Window))
		if len(mismatches) == 0 {
			break
		}
		t.Logf("attempt %d: %d boxes differ from pyatspi's, looking again", attempt+1, len(mismatches))
		time.Sleep(500 * time.Millisecond)
	}
	for _, m := range mismatches {
		t.Error(m)
	}
	msg := ok(t, e.cs, "gui_click", map[string]any{"target": "Send order button"})
	if !strings.Contains(msg, "located_by accessibility") {
		t.Errorf("click: %q", msg)
	}
	e.snapshotUntil(t, "Order sent")
	msg = ok(t, e.cs, "gui_type", map[string]any{"target": "Quantity field", "text": "12", "mode": "replace"})
	if !strings.Contains(msg, "verified") || strings.Contains(msg, "not verified") {
		t.Errorf("replace in Chromium's input: %q", msg)
	}
}

// treeBoxMismatches names each element of r whose box, doubled from the
// half-size frame, is not within 2 px of one of pyatspi's boxes.
func treeBoxMismatches(r SnapshotResult, oracle [][]int) []string {
	var out []string
	for _, el := range r.Elements {
		got := [4]float64{el.Box.X1 * 2, el.Box.Y1 * 2, el.Box.X2 * 2, el.Box.Y2 * 2}
		found := false
		for _, o := range oracle {
			w := [4]float64{float64(o[0]), float64(o[1]), float64(o[0] + o[2]), float64(o[1] + o[3])}
			near := true
			for i := range got {
				near = near && got[i]-w[i] <= 3 && w[i]-got[i] <= 3 // 2 px, and one of rounding at half size
			}
			found = found || near
		}
		if !found {
			out = append(out, fmt.Sprintf("%s %s %q: box %v (image) = %v global; pyatspi has no element there", el.Ref, el.Role, el.Name, el.Box, got))
		}
	}
	return out
}
