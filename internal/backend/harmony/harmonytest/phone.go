// Package harmonytest is a fake hdc for tests: the test binary itself,
// linked as "hdc" beside a scripted HarmonyOS phone's state (a JSON file)
// and started by the backend as hdc, answers the hdc commands from that
// phone (Main); Phone is the Go side of it, which tests read and change.
//
// What the fake prints is copied from the tools' sources and documents:
// `uitest uiInput` ("No Error", the coordinate and parameter refusals and
// the key order of CombinedKeys: openharmony/testfwk_arkxtest
// uitest/input/ui_input.cpp, core/frontend_error_defines.h,
// core/ui_action.h), `uitest dumpLayout` ("DumpLayout saved to:PATH", the
// JSON of core/ui_driver.cpp DumpUiHierarchy and core/dump_handler.cpp,
// attribute names of core/ui_model.h ATTR_NAMES), snapshot_display (a
// JPEG at quality 75, /data/local/tmp and .jpeg only, its "process:" and
// "success:" lines: openharmony/window_window_manager
// snapshot/src/snapshot_display.cpp, snapshot_utils.cpp), aa ("start
// ability successfully.", "error: failed to start ability.", "force stop
// process successfully.": openharmony/docs tools/aa-tool.md), bm dump
// ("ID: 100:" and a tab-indented bundle a line; "BUNDLE:" and its JSON
// with mainEntry and hapModuleInfos), `hdc list targets` (a connect key a
// line, "[Empty]" for none). Text after hdc's "[Fail]" is the fake's own.
package harmonytest

import (
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Event is what the fake phone's input saw: "click", "doubleClick",
// "longClick", "swipe", "drag" (with X2, Y2 and the speed), "key_down",
// "key_up" (Key: an OpenHarmony key code).
type Event struct {
	Kind      string `json:"kind"`
	X         int    `json:"x,omitempty"`
	Y         int    `json:"y,omitempty"`
	X2        int    `json:"x2,omitempty"`
	Y2        int    `json:"y2,omitempty"`
	Velocity  int    `json:"velocity,omitempty"`
	Key       int    `json:"key,omitempty"`
	KeyByName string `json:"key_name,omitempty"`
}

// Fill is a painted rectangle of the screen (pixels).
type Fill struct {
	R image.Rectangle `json:"r"`
	C color.RGBA      `json:"c"`
}

// App is an installed bundle.
type App struct {
	Bundle, Module, MainAbility string
}

// State is the scripted phone.
type State struct {
	Keys          []string // connect keys `hdc list targets` prints
	W, H          int      // pixels, portrait
	Rotation      int      // 0 portrait, 1 landscape
	DeveloperMode bool
	NoText        bool // an older uitest without `uiInput text`
	Fills         []Fill
	Field         string
	Focused       bool
	Counter       int
	Toggle        bool
	Events        []Event
	Commands      []string // the shell lines run
	Apps          []App
	Front         string
	Running       map[string]bool
	Clipboard     string
}

// Layout of the scripted app, in pixels of the portrait screen.
var (
	FieldRect  = image.Rect(40, 200, 680, 280)
	ButtonRect = image.Rect(40, 400, 360, 480)
	ToggleRect = image.Rect(560, 400, 680, 460)
)

// Bundle is the scripted app's bundle name.
const Bundle = "com.example.counter"

// Phone is a started fake: HDC is the program to run, Key the device's
// connect key.
type Phone struct {
	HDC, Key string
	dir      string
	mu       sync.Mutex
}

// Program is the name the fake is started by: a test binary started as
// Program is the fake hdc (see IsFake).
const Program = "hdc"

// IsFake reports whether this process was started as the fake hdc: the
// test binary's TestMain then runs Main instead of the tests.
func IsFake() bool {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == Program
}

// Start makes the running test binary the fake hdc of a phone of its own
// (a link to it named hdc in a folder with the phone's state: 720x1280
// pixels, developer mode on, the counter app in front). The test package's
// TestMain must run Main when IsFake.
func Start(t testing.TB) *Phone {
	t.Helper()
	prog, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name := Program
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	hdc := filepath.Join(dir, name)
	if err := os.Link(prog, hdc); err != nil {
		data, rerr := os.ReadFile(prog)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err := os.WriteFile(hdc, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &Phone{HDC: hdc, Key: "FMR0223C13000649", dir: dir}
	st := &State{Keys: []string{p.Key}, W: 720, H: 1280, DeveloperMode: true, Front: Bundle,
		Apps: []App{{Bundle: Bundle, Module: "entry", MainAbility: "EntryAbility"},
			{Bundle: "com.huawei.hmos.settings", Module: "phone_settings", MainAbility: "com.huawei.hmos.settings.MainAbility"}},
		Running: map[string]bool{Bundle: true}}
	if err := SaveState(dir, st); err != nil {
		t.Fatal(err)
	}
	return p
}

// Update changes the phone's state under its lock.
func (p *Phone) Update(f func(*State)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := WithState(p.dir, func(s *State) error { f(s); return nil }); err != nil {
		panic(err)
	}
}

// Read returns a copy of the phone's state.
func (p *Phone) Read() State {
	var out State
	p.Update(func(s *State) { out = *s })
	return out
}

// Events returns the input events since the last call.
func (p *Phone) Events() []Event {
	var e []Event
	p.Update(func(s *State) { e, s.Events = s.Events, nil })
	return e
}

// Commands returns the shell lines run since the last call.
func (p *Phone) Commands() []string {
	var c []string
	p.Update(func(s *State) { c, s.Commands = s.Commands, nil })
	return c
}

func statePath(dir string) string { return filepath.Join(dir, "phone.json") }

// LoadState reads the state of the phone in dir.
func LoadState(dir string) (*State, error) {
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, err
	}
	var s State
	return &s, json.Unmarshal(data, &s)
}

// SaveState writes the state of the phone in dir.
func SaveState(dir string, s *State) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}

// WithState runs f on the state of the phone in dir under a lock file
// (the fake program and the test change it in turn) and saves it.
func WithState(dir string, f func(*State) error) error {
	lock := filepath.Join(dir, "phone.lock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			l.Close()
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the fake phone's lock is held: " + lock)
		}
		time.Sleep(2 * time.Millisecond)
	}
	defer os.Remove(lock)
	s, err := LoadState(dir)
	if err != nil {
		return err
	}
	if err := f(s); err != nil {
		return err
	}
	return SaveState(dir, s)
}
