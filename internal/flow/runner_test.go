package flow

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image/color"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/flow/flowtest"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/trace"
)

// fakeDesk is a 1280x800 fake desktop with the form's Submit and OK buttons
// painted in their colours.
func fakeDesk(t *testing.T) *fake.Backend {
	t.Helper()
	b := fake.New(fake.Options{Displays: []geom.Display{{Bounds: geom.Rect{W: 1280, H: 800}}}, Background: color.RGBA{220, 220, 220, 255}})
	b.Fill(geom.Rect{X: 360, Y: 470, W: 200, H: 64}, sampleapp.SubmitColor.ToRGBA())
	return b
}

func fakeRunner(t *testing.T, b *fake.Backend, seer *flowtest.ColorSeer, tasks TaskRunner, rec func(string, agent.Task) (agent.Recorder, error)) *Runner {
	t.Helper()
	r, err := NewRunner(Options{Input: desktop.NewInput(b), Seer: seer, Tasks: tasks, NewRecorder: rec,
		Shot: imaging.Options{Format: "png"}, Settle: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustParse(t *testing.T, y string, vars map[string]string) *Flow {
	t.Helper()
	f, err := Parse([]byte(y), vars)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFailedAssertStopsUnlessContinueOnError(t *testing.T) {
	b := fakeDesk(t)
	f := mustParse(t, `name: checks
steps:
  - assert: the OK button is visible
    continue_on_error: true
  - assert: {assertion: the Submit button is visible}
  - assert: the Cancel button is visible
  - click: the Submit button
`, nil)
	res := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil).Run(context.Background(), f, nil, nil)
	if res.Status != Failed || !strings.Contains(res.Summary, "step 3 (assert: the Cancel button is visible) failed: assertion failed: it is not visible") {
		t.Fatalf("status %s, summary %q", res.Status, res.Summary)
	}
	if len(res.Steps) != 3 || res.Steps[0].Status != Failed || res.Steps[1].Status != Passed {
		t.Errorf("steps %+v", res.Steps)
	}
	for _, ev := range b.Events() {
		if ev.Op == fake.OpButtonDown {
			t.Errorf("a click happened after the failed assert: %v", ev)
		}
	}
}

func TestSaveAsFeedsLaterStepsAndClickResolves(t *testing.T) {
	b := fakeDesk(t)
	f := mustParse(t, `name: vars
steps:
  - query: {question: "How big is the Submit button?", save_as: size}
  - locate: {target: the Submit button, save_as: at}
  - type: "${size} at ${at} by ${who}"
  - click: the Submit button
`, map[string]string{"who": "me"})
	res := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil).Run(context.Background(), f, map[string]string{"who": "me"}, nil)
	if res.Status != Passed {
		t.Fatalf("%s: %s", res.Status, res.Summary)
	}
	if got := b.Typed(); got != "200x64 at 460,502 by me" {
		t.Errorf("typed %q", got)
	}
	var down []geom.GlobalPoint
	for _, ev := range b.Events() {
		if ev.Op == fake.OpButtonDown {
			down = append(down, ev.At)
		}
	}
	if len(down) != 1 || down[0] != (geom.GlobalPoint{X: 460, Y: 502}) {
		t.Errorf("clicks at %v, want one at the Submit button's centre (460,502)", down)
	}
}

func TestWaitForAsksOnlyWhenTheScreenChanged(t *testing.T) {
	b := fakeDesk(t)
	f := mustParse(t, `name: wait
steps:
  - wait_for: {condition: the OK button is visible, timeout_s: 10, interval_ms: 250}
`, nil)
	seer := &flowtest.ColorSeer{}
	go func() { // the screen changes once the model has said "not yet" (waiting on that, not on the clock)
		for deadline := time.Now().Add(time.Minute); seer.Asserts() == 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		b.Fill(geom.Rect{X: 420, Y: 360, W: 180, H: 72}, sampleapp.OKColor.ToRGBA())
	}()
	res := fakeRunner(t, b, seer, nil, nil).Run(context.Background(), f, nil, nil)
	if res.Status != Passed {
		t.Fatalf("%s: %s", res.Status, res.Summary)
	}
	if res.ModelCalls != 2 || seer.Asserts() != 2 {
		t.Errorf("%d model calls (%d asserts) on a screen that changed once, want 2", res.ModelCalls, seer.Asserts())
	}
}

// scriptedTasks is an act step's agent: it records the task and completes it
// by typing a word, or fails.
type scriptedTasks struct {
	in    *desktop.Input
	tasks []string
	fail  bool
}

func (s *scriptedTasks) Run(ctx context.Context, t agent.Task, _ func(agent.Event)) agent.Result {
	s.tasks = append(s.tasks, t.Task)
	if s.fail {
		return agent.Result{Status: agent.Blocked, Summary: "the dialog did not open", RunID: "task-1"}
	}
	_ = s.in.Type(ctx, "done")
	return agent.Result{Status: agent.Completed, Summary: "opened", RunID: "task-1"}
}

func TestActStepRunsTheAgentAndRunIsRecorded(t *testing.T) {
	b := fakeDesk(t)
	tasks := &scriptedTasks{in: desktop.NewInput(b)}
	store := trace.NewStore(trace.Options{Dir: t.TempDir()})
	defer store.Close()
	rec := func(id string, t agent.Task) (agent.Recorder, error) { return store.Begin(id, t.Task, nil) }
	f := mustParse(t, "name: act\nsteps:\n  - act: Open the ${what} dialog\n  - click: the Submit button\n", map[string]string{"what": "sign-up"})
	cache, err := OpenCache(filepath.Join(t.TempDir(), "act.cache.yaml"), ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	r := fakeRunner(t, b, &flowtest.ColorSeer{}, tasks, rec)
	res := r.Run(context.Background(), f, map[string]string{"what": "sign-up"}, cache)
	if res.Status != Passed || len(tasks.tasks) != 1 || tasks.tasks[0] != "Open the sign-up dialog" || b.Typed() != "done" {
		t.Fatalf("status %s (%s), tasks %q, typed %q", res.Status, res.Summary, tasks.tasks, b.Typed())
	}
	if res.Steps[0].TaskRunID != "task-1" || res.Report == "" {
		t.Errorf("act step task run %q, report %q", res.Steps[0].TaskRunID, res.Report)
	}
	events, err := os.ReadFile(filepath.Join(res.RunDir, trace.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"flow: act", "cache: not used (the model located it)", "located at box (360,470)-(560,534)"} {
		if !strings.Contains(string(events), want) {
			t.Errorf("run record lacks %q", want)
		}
	}
	if _, err := os.Stat(res.Report); err != nil {
		t.Errorf("no report: %v", err)
	}
	// A second run replays the click from the cache and records that.
	res2 := r.Run(context.Background(), f, map[string]string{"what": "sign-up"}, cache)
	events2, _ := os.ReadFile(filepath.Join(res2.RunDir, trace.EventsFile))
	if res2.ModelCalls != 0 || !strings.Contains(string(events2), "cache: hit") {
		t.Errorf("second run: %d model calls; record has cache hit: %v", res2.ModelCalls, strings.Contains(string(events2), "cache: hit"))
	}
	tasks.fail = true
	res3 := r.Run(context.Background(), f, map[string]string{"what": "sign-up"}, cache)
	if res3.Status != Failed || !strings.Contains(res3.Summary, "the task ended blocked: the dialog did not open") {
		t.Errorf("failed act: %s %q", res3.Status, res3.Summary)
	}
}

func TestDragScrollAndKeys(t *testing.T) {
	b := fakeDesk(t)
	b.Fill(geom.Rect{X: 420, Y: 360, W: 180, H: 72}, sampleapp.OKColor.ToRGBA())
	f := mustParse(t, `name: moves
steps:
  - drag: {from: the Submit button, to: the OK button}
  - scroll: {target: the OK button, direction: down, amount: 2}
  - scroll: up
  - key: ctrl+s
  - hotkey: [alt, F4]
`, nil)
	res := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil).Run(context.Background(), f, nil, nil)
	if res.Status != Passed || res.ModelCalls != 3 {
		t.Fatalf("%s: %s (%d model calls, want 3: drag from, drag to, scroll target)", res.Status, res.Summary, res.ModelCalls)
	}
	var got []string
	for _, ev := range b.Events() {
		switch ev.Op {
		case fake.OpButtonDown, fake.OpButtonUp, fake.OpScroll, fake.OpKeyDown:
			got = append(got, ev.String())
		}
	}
	want := "button_down(left)(460,502) button_up(left)(510,396) scroll(down,2)(510,396) scroll(up,3)(510,396) key_down(Control_L) key_down(s) key_down(Alt_L) key_down(F4)"
	if strings.Join(got, " ") != want {
		t.Errorf("input:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestCacheStrategies(t *testing.T) {
	b := fakeDesk(t)
	f := mustParse(t, "name: s\nsteps:\n  - click: the Submit button\n", nil)
	path := filepath.Join(t.TempDir(), "s.cache.yaml")
	seer := &flowtest.ColorSeer{}
	r := fakeRunner(t, b, seer, nil, nil)
	runWith := func(st Strategy) Result {
		c, err := OpenCache(path, st)
		if err != nil {
			t.Fatal(err)
		}
		return r.Run(context.Background(), f, nil, c)
	}
	if res := runWith(ReadOnly); res.ModelCalls != 1 {
		t.Errorf("read-only, empty: %d model calls", res.ModelCalls)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("read-only wrote the cache")
	}
	if res := runWith(WriteOnly); res.ModelCalls != 1 {
		t.Errorf("write-only: %d model calls", res.ModelCalls)
	}
	if res := runWith(WriteOnly); res.ModelCalls != 1 {
		t.Errorf("write-only asks every time: %d model calls", res.ModelCalls)
	}
	if res := runWith(ReadOnly); res.ModelCalls != 0 || res.Steps[0].Cache != CacheHit {
		t.Errorf("read-only after write-only: %d model calls, cache %q", res.ModelCalls, res.Steps[0].Cache)
	}
	if res := runWith(CacheOff); res.ModelCalls != 1 || res.Cache != "" {
		t.Errorf("off: %d model calls, cache %q", res.ModelCalls, res.Cache)
	}
	if _, err := ParseStrategy("sometimes"); err == nil {
		t.Error("ParseStrategy accepted sometimes")
	}
	os.WriteFile(path, []byte("entries: [oops"), 0o600)
	if _, err := OpenCache(path, ReadWrite); err == nil || !strings.Contains(err.Error(), "delete it or run with --cache write-only") {
		t.Errorf("broken cache file: %v", err)
	}
}

// TestConfirmBeforeKeys: a hotkey step waits for Confirm; a refusal fails
// the step and nothing is pressed, a yes lets it go.
func TestConfirmBeforeKeys(t *testing.T) {
	f := mustParse(t, "name: close\nsteps:\n  - hotkey: [ctrl, w]\n", nil)
	for _, refuse := range []bool{true, false} {
		b := fakeDesk(t)
		r := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil)
		var asked []string
		r.o.Confirm = func(_ context.Context, keys []desktop.Key) error {
			asked = append(asked, desktop.ComboString(keys))
			if refuse {
				return errors.New("ctrl+w was not sent: the user did not allow it")
			}
			return nil
		}
		res := r.Run(context.Background(), f, nil, nil)
		pressed := false
		for _, ev := range b.Events() {
			pressed = pressed || ev.Op == fake.OpKeyDown && ev.Key == "w"
		}
		if len(asked) != 1 || asked[0] != "ctrl+w" || pressed == refuse || (res.Status == Passed) == refuse {
			t.Errorf("refuse=%v: asked %q, pressed %v, status %s (%s)", refuse, asked, pressed, res.Status, res.Summary)
		}
		if refuse && !strings.Contains(res.Summary, "did not allow") {
			t.Errorf("the refusal is not in the summary: %q", res.Summary)
		}
	}
}

// TestReplayActsOnlyWhereItVerified holds the flow cache's promise that
// replay never acts blindly: a box edited away from its fingerprint, or a
// fingerprint that is a decompression bomb, makes the step ask the model
// (and click where the element really is) instead of acting on the cache.
func TestReplayActsOnlyWhereItVerified(t *testing.T) {
	for _, edit := range []struct {
		name string
		do   func(e *CacheEntry)
	}{
		{"box moved off its fingerprint", func(e *CacheEntry) { e.Box.X1, e.Box.X2 = e.Box.X1+600, e.Box.X2+600 }},
		{"fingerprint a PNG bomb", func(e *CacheEntry) { e.Fingerprint = base64.StdEncoding.EncodeToString(pngBomb(31000, 31000)) }},
	} {
		t.Run(edit.name, func(t *testing.T) {
			b := fakeDesk(t)
			f := mustParse(t, "name: s\nsteps:\n  - click: the Submit button\n", nil)
			path := filepath.Join(t.TempDir(), "s.cache.yaml")
			r := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil)
			c, _ := OpenCache(path, ReadWrite)
			if res := r.Run(context.Background(), f, nil, c); res.Status != Passed {
				t.Fatalf("first run: %+v", res)
			}
			c, _ = OpenCache(path, ReadWrite)
			edit.do(c.file.Entries[0])
			c.dirty = true
			if err := c.Save("s"); err != nil {
				t.Fatal(err)
			}
			c, _ = OpenCache(path, ReadWrite)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			res := r.Run(context.Background(), f, nil, c)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if res.Status != Passed || res.ModelCalls != 1 || res.Steps[0].Cache != CacheMiss {
				t.Fatalf("replay of the edited cache: status %s, %d model calls, cache %q; want the model asked", res.Status, res.ModelCalls, res.Steps[0].Cache)
			}
			if ev := lastButtonDown(t, b); ev.At != (geom.GlobalPoint{X: 460, Y: 502}) {
				t.Errorf("clicked at %v, want the Submit button's centre (460,502)", ev.At)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 256<<20 {
				t.Errorf("the replay allocated %d MB", grown>>20)
			}
		})
	}
}

func lastButtonDown(t *testing.T, b *fake.Backend) fake.Event {
	t.Helper()
	var last *fake.Event
	for _, ev := range b.Events() {
		if ev.Op == fake.OpButtonDown {
			last = &ev
		}
	}
	if last == nil {
		t.Fatal("no click")
	}
	return *last
}

// pngBomb is a PNG whose header announces w x h pixels and carries almost no
// data.
func pngBomb(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 0 // 8-bit gray
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// A cache re-saved by PyYAML (which writes its timestamps as
// "2026-12-01 21:17:10+00:00") still opens and replays.
func TestCacheResavedByPyYAMLReplays(t *testing.T) {
	b := fakeDesk(t)
	f := mustParse(t, "name: s\nsteps:\n  - click: the Submit button\n", nil)
	path := filepath.Join(t.TempDir(), "s.cache.yaml")
	r := fakeRunner(t, b, &flowtest.ColorSeer{}, nil, nil)
	c, _ := OpenCache(path, ReadWrite)
	if res := r.Run(context.Background(), f, nil, c); res.Status != Passed {
		t.Fatalf("first run: %+v", res)
	}
	py := exec.Command("/usr/bin/python3", "-c", `import sys, yaml
p = sys.argv[1]
d = yaml.safe_load(open(p))
open(p, "w").write(yaml.safe_dump(d, allow_unicode=True))`, path)
	if out, err := py.CombinedOutput(); err != nil {
		t.Fatalf("PyYAML (python3-yaml, in scripts/debian-packages.sh) re-saving the cache: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); !regexp.MustCompile(`updated: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00`).Match(b) {
		t.Fatalf("PyYAML did not write its timestamp form:\n%s", b)
	}
	c, err := OpenCache(path, ReadWrite)
	if err != nil {
		t.Fatalf("a cache re-saved by PyYAML: %v", err)
	}
	if res := r.Run(context.Background(), f, nil, c); res.ModelCalls != 0 || res.Steps[0].Cache != CacheHit {
		t.Errorf("replay of the re-saved cache: %d model calls, cache %q", res.ModelCalls, res.Steps[0].Cache)
	}
}
