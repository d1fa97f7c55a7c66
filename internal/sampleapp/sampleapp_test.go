package sampleapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
	"github.com/jezek/xgb/xproto"
)

// syncBuffer is the app's output, read while it writes.
type syncBuffer struct{ testenv.Buffer }

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

type env struct {
	app *App
	drv *driver
	out *syncBuffer
	ws  map[string]Widget
	dpy string
}

func start(t *testing.T, scene string) *env {
	t.Helper()
	vd := xvfbtest.Start(t, 1280, 800)
	out := &syncBuffer{}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	app, err := Start(ctx, Options{Display: vd.Display, Scene: scene, Out: out})
	if err != nil {
		t.Fatalf("Start(%s): %v", scene, err)
	}
	t.Cleanup(func() {
		if err := app.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ws, err := Layout(scene, 1280, 800)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Widget{}
	for _, w := range ws {
		m[w.Name] = w
	}
	return &env{app: app, drv: newDriver(t, vd.Display), out: out, ws: m, dpy: vd.Display}
}

func (e *env) wait(t *testing.T, what string, pred func(Event) bool) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ev, err := e.app.WaitFor(ctx, pred)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return ev
}

func (e *env) clickWidget(t *testing.T, name string) image.Point {
	t.Helper()
	w, ok := e.ws[name]
	if !ok {
		t.Fatalf("no widget %q", name)
	}
	p := w.Center()
	e.drv.click(p.X, p.Y, 1)
	return p
}

func kind(k string) func(Event) bool { return func(e Event) bool { return e.Event == k } }

func fieldIs(field, value string) func(Event) bool {
	return func(e Event) bool { return e.Event == "change" && e.Field == field && e.Value == value }
}

func TestFormFillAndSubmit(t *testing.T) {
	e := start(t, SceneForm)
	e.wait(t, "ready", kind("ready"))
	e.clickWidget(t, "name")
	e.wait(t, "focus on name", func(ev Event) bool { return ev.Event == "focus" && ev.Field == "name" })
	e.drv.typeASCII("Ada Lovelace")
	e.wait(t, "name typed", fieldIs("name", "Ada Lovelace"))
	e.drv.tap(ksTab)
	e.wait(t, "tab to email", func(ev Event) bool { return ev.Event == "focus" && ev.Field == "email" })
	e.drv.typeASCII("ada@example.org")
	e.wait(t, "email typed", fieldIs("email", "ada@example.org"))
	e.clickWidget(t, "city")
	e.drv.typeASCII("London, UK!")
	e.wait(t, "city typed", fieldIs("city", "London, UK!"))
	p := e.clickWidget(t, "submit")
	click := e.wait(t, "click on submit", kind("click"))
	if click.Button != "submit" || click.Mouse != "left" || click.X != p.X || click.Y != p.Y {
		t.Errorf("submit click reported as %+v, want button submit at %v", click, p)
	}
	sub := e.wait(t, "submit", kind("submit"))
	want := map[string]string{"name": "Ada Lovelace", "email": "ada@example.org", "city": "London, UK!"}
	for k, v := range want {
		if sub.Fields[k] != v {
			t.Errorf("submitted %s = %q, want %q (all: %v)", k, sub.Fields[k], v, sub.Fields)
		}
	}
	// The JSON lines say the same.
	var found bool
	for _, m := range e.out.lines(t) {
		if m["event"] == "submit" {
			found = true
			f, _ := m["fields"].(map[string]any)
			if f["name"] != "Ada Lovelace" || f["email"] != "ada@example.org" || f["city"] != "London, UK!" {
				t.Errorf("submit line has fields %v", f)
			}
		}
		if m["event"] == "ready" {
			if _, has := m["x"]; has {
				t.Errorf("ready line carries a position: %v", m)
			}
		}
	}
	if !found {
		t.Errorf("no submit line in the output")
	}
}

func TestFormEditingKeys(t *testing.T) {
	e := start(t, SceneForm)
	e.clickWidget(t, "email")
	e.drv.typeASCII("wrong")
	e.wait(t, "typed", fieldIs("email", "wrong"))
	e.drv.tap(ksBackSpace)
	e.drv.tap(ksBackSpace)
	e.wait(t, "backspace twice", fieldIs("email", "wro"))
	e.drv.tap('a', ksControlL)
	e.drv.typeASCII("x@y.z")
	e.wait(t, "ctrl+a then typing replaces", fieldIs("email", "x@y.z"))
	e.drv.tap(ksTab, ksShiftL)
	e.wait(t, "shift+tab to name", func(ev Event) bool { return ev.Event == "focus" && ev.Field == "name" })

	// ctrl+v pastes the CLIPBOARD as UTF-8.
	clipboardOwner(t, e.dpy, "Grüße 世界 ✓")
	e.drv.tap('v', ksControlL)
	e.wait(t, "paste", fieldIs("name", "Grüße 世界 ✓"))

	// A character missing from the keymap typed through a remapped keycode.
	e.drv.typeRemapped('ß')
	e.wait(t, "remapped key", fieldIs("name", "Grüße 世界 ✓ß"))
	e.drv.typeRemapped('é')
	e.wait(t, "second remap", fieldIs("name", "Grüße 世界 ✓ßé"))
	if got := e.app.Field("name"); got != "Grüße 世界 ✓ßé" {
		t.Errorf("Field(name) = %q", got)
	}
	// ctrl+a then BackSpace empties it.
	e.drv.tap('a', ksControlL)
	e.drv.tap(ksBackSpace)
	e.wait(t, "cleared", fieldIs("name", ""))
}

func TestDialogScreens(t *testing.T) {
	e := start(t, SceneDialog)
	// On screen 1, OK is not there: clicking its place is a background click.
	ok := e.ws["ok"].Center()
	e.drv.click(ok.X, ok.Y, 1)
	if c := e.wait(t, "click", kind("click")); c.Target == "ok" {
		t.Fatalf("OK was clickable on screen 1: %+v", c)
	}
	if got := e.drv.pixel(e.ws["next"].Rect.Min.X+3, e.ws["next"].Rect.Min.Y+3); got != NextColor.ToRGBA() {
		t.Errorf("Next button pixel %v, want %v", got, NextColor.ToRGBA())
	}
	e.clickWidget(t, "next")
	if s := e.wait(t, "screen 2", kind("screen")); s.Screen != 2 {
		t.Fatalf("screen event %+v, want screen 2", s)
	}
	e.drv.sync()
	for _, name := range []string{"ok", "cancel"} {
		w := e.ws[name]
		deadline := time.Now().Add(5 * time.Second)
		for e.drv.pixel(w.Rect.Min.X+3, w.Rect.Min.Y+3) != w.Color.ToRGBA() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if got := e.drv.pixel(w.Rect.Min.X+3, w.Rect.Min.Y+3); got != w.Color.ToRGBA() {
			t.Errorf("%s button pixel %v, want %v", name, got, w.Color.ToRGBA())
		}
	}
	e.clickWidget(t, "ok")
	e.wait(t, "confirmed", kind("confirmed"))
}

func TestDialogCancelReturnsToFirstScreen(t *testing.T) {
	e := start(t, SceneDialog)
	e.clickWidget(t, "next")
	e.wait(t, "screen 2", func(ev Event) bool { return ev.Event == "screen" && ev.Screen == 2 })
	e.clickWidget(t, "cancel")
	e.wait(t, "cancelled", kind("cancelled"))
	e.wait(t, "screen 1", func(ev Event) bool { return ev.Event == "screen" && ev.Screen == 1 })
	for _, ev := range e.app.History() {
		if ev.Event == "confirmed" {
			t.Errorf("cancel produced a confirmation")
		}
	}
}

func TestButtonsReportNameAndPoint(t *testing.T) {
	e := start(t, SceneButtons)
	for _, name := range []string{"red", "green", "blue", "yellow", "purple"} {
		w := e.ws[name]
		if got := e.drv.pixel(w.Rect.Min.X+4, w.Rect.Max.Y-4); got != w.Color.ToRGBA() {
			t.Errorf("%s button pixel %v, want its colour %v", name, got, w.Color.ToRGBA())
		}
		p := w.Rect.Min.Add(image.Pt(17, 11))
		e.drv.click(p.X, p.Y, 1)
		c := e.wait(t, name+" click", kind("click"))
		if c.Button != name || c.X != p.X || c.Y != p.Y || c.Mouse != "left" {
			t.Errorf("clicked %s at %v, got %+v", name, p, c)
		}
	}
	// Right click on the background and a scroll are reported too.
	e.drv.click(20, 780, 3)
	if c := e.wait(t, "right click", kind("click")); c.Mouse != "right" || c.Button != "" || c.X != 20 || c.Y != 780 {
		t.Errorf("background right click reported as %+v", c)
	}
	e.drv.click(600, 300, 5)
	if s := e.wait(t, "scroll", kind("scroll")); s.Direction != "down" || s.X != 600 || s.Y != 300 {
		t.Errorf("scroll reported as %+v", s)
	}
}

func TestTypingSceneReportsLineOnReturn(t *testing.T) {
	e := start(t, SceneTyping)
	e.drv.typeASCII("Hello, world 42")
	e.drv.tap(ksReturn)
	if ev := e.wait(t, "text", kind("text")); ev.Value != "Hello, world 42" {
		t.Errorf("text event value %q", ev.Value)
	}
}

func TestEventsChannelAndClose(t *testing.T) {
	e := start(t, SceneTyping)
	e.drv.typeASCII("ab")
	e.wait(t, "typed", fieldIs("text", "ab"))
	ch := e.app.Events()
	var kinds []string
	for ev := range ch {
		kinds = append(kinds, ev.Event+":"+ev.Value)
		if ev.Value == "ab" {
			break
		}
	}
	if want := "ready: change:a change:ab"; strings.Join(kinds, " ") != want {
		t.Errorf("Events() gave %q, want %q", strings.Join(kinds, " "), want)
	}
	if err := e.app.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The channel drains and closes once the app stopped.
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, open := <-ch:
			if !open {
				return
			}
		case <-timeout:
			t.Fatal("Events() channel not closed after Close")
		}
	}
}

func TestRunStopsWithContextAndReportsErrors(t *testing.T) {
	vd := xvfbtest.Start(t, 800, 600)
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Display: vd.Display, Scene: SceneButtons, Out: out}) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(out.lines(t)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	lines := out.lines(t)
	if len(lines) == 0 || lines[0]["event"] != "ready" || lines[0]["width"] != 800.0 || lines[0]["height"] != 600.0 {
		t.Fatalf("first output line %v, want ready at the screen size 800x600", lines)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel returned %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}

	if err := Run(t.Context(), Options{Display: vd.Display, Scene: "spreadsheet"}); !errors.Is(err, ErrUnknownScene) || !strings.Contains(err.Error(), "form") {
		t.Errorf("unknown scene: %v, want ErrUnknownScene listing the scenes", err)
	}
	err := Run(t.Context(), Options{Display: ":4097"})
	if err == nil || !strings.Contains(err.Error(), ":4097") {
		t.Errorf("missing display: %v, want an error naming it", err)
	}
}

func TestLayoutScalesAndColoursAreDistinct(t *testing.T) {
	seen := map[Color]string{BackgroundColor: "background", TextColor: "text", FocusBorderColor: "focus border"}
	for _, s := range Scenes {
		small, err := Layout(s, 1280, 800)
		if err != nil {
			t.Fatal(err)
		}
		big, _ := Layout(s, 2560, 1600)
		for i, w := range small {
			if !w.Rect.In(image.Rect(0, 0, 1280, 800)) || w.Rect.Dx() < 40 || w.Rect.Dy() < 30 {
				t.Errorf("%s/%s: rect %v is outside the window or too small to hit", s, w.Name, w.Rect)
			}
			if big[i].Rect != (image.Rectangle{Min: w.Rect.Min.Mul(2), Max: w.Rect.Max.Mul(2)}) {
				t.Errorf("%s/%s: at 2x the window it is %v, want %v doubled", s, w.Name, big[i].Rect, w.Rect)
			}
			if other, dup := seen[w.Color]; dup {
				t.Errorf("%s/%s shares colour %06x with %s", s, w.Name, uint32(w.Color), other)
			}
			seen[w.Color] = s + "/" + w.Name
			for _, o := range small[:i] {
				if o.Screen == w.Screen && o.Rect.Overlaps(w.Rect) {
					t.Errorf("%s: %s and %s overlap", s, o.Name, w.Name)
				}
			}
		}
	}
	if _, err := Layout("nope", 10, 10); err == nil {
		t.Error("Layout of an unknown scene succeeded")
	}
}

func TestKeysymLevels(t *testing.T) {
	km := keymap{min: 10, per: 2, keysyms: []xproto.Keysym{'a', 0, '1', '!', 0xfc, 0xdc}}
	cases := []struct {
		kc    xproto.Keycode
		state uint16
		want  rune
	}{
		{10, 0, 'a'}, {10, xproto.ModMaskShift, 'A'}, {10, xproto.ModMaskLock, 'A'},
		{10, xproto.ModMaskLock | xproto.ModMaskShift, 'a'}, {11, 0, '1'}, {11, xproto.ModMaskShift, '!'},
		{11, xproto.ModMaskLock, '1'}, {12, 0, 'ü'}, {12, xproto.ModMaskShift, 'Ü'},
	}
	for _, c := range cases {
		if got := keysymRune(km.keysym(c.kc, c.state)); got != c.want {
			t.Errorf("keycode %d state %#x typed %q, want %q", c.kc, c.state, got, c.want)
		}
	}
	if r := keysymRune(0x01004e16); r != '世' {
		t.Errorf("unicode keysym gave %q", r)
	}
}

func TestPositionAndLabelsOptions(t *testing.T) {
	vd := xvfbtest.Start(t, 1280, 800)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := Start(ctx, Options{Display: vd.Display, Labels: map[string]string{"nope": "x"}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("Labels with an unknown widget: err = %v, want one naming it", err)
	}
	app, err := Start(ctx, Options{Display: vd.Display, Width: 640, Height: 400, X: 150, Y: 90, Labels: map[string]string{"submit": "Send"}})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	ws, _ := Layout(SceneForm, 640, 400)
	drv := newDriver(t, vd.Display)
	sub := ws[3]
	at := sub.Center().Add(image.Pt(150, 90))
	if got := drv.pixel(at.X, sub.Rect.Min.Y+92); got != SubmitColor.ToRGBA() {
		t.Errorf("pixel of the moved Submit button %v, want %v", got, SubmitColor.ToRGBA())
	}
	drv.click(at.X, at.Y, 1)
	ev, err := app.WaitFor(ctx, func(e Event) bool { return e.Event == "click" })
	if err != nil || ev.Target != "submit" {
		t.Errorf("click at the moved Submit button's centre %v reported %+v (%v)", at, ev, err)
	}
	// Move takes the running window elsewhere; it is drawn and clicked there.
	if err := app.Move(400, 300); err != nil {
		t.Fatal(err)
	}
	at = sub.Center().Add(image.Pt(400, 300))
	deadline := time.Now().Add(5 * time.Second)
	for drv.pixel(at.X, sub.Rect.Min.Y+302) != SubmitColor.ToRGBA() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := drv.pixel(at.X, sub.Rect.Min.Y+302); got != SubmitColor.ToRGBA() {
		t.Errorf("pixel of the Submit button after Move %v, want %v", got, SubmitColor.ToRGBA())
	}
	drv.click(at.X, at.Y, 1)
	ev, err = app.WaitFor(ctx, func(e Event) bool { return e.Event == "click" })
	if err != nil || ev.Target != "submit" {
		t.Errorf("click at the Submit button's centre %v after Move reported %+v (%v)", at, ev, err)
	}
}
