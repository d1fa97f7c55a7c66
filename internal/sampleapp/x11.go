package sampleapp

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"math/bits"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// ui is the application's X11 side. Only the event loop goroutine touches it.
type ui struct {
	c       *xgb.Conn
	setup   *xproto.SetupInfo
	screen  *xproto.ScreenInfo
	win     xproto.Window
	gc      xproto.Gcontext
	buf     xproto.Pixmap // back buffer of bufSize
	bufSize image.Point
	masks   [3]uint32 // red, green, blue masks of the root visual

	hasFont                bool
	charW, ascent, descent int

	w, h    int
	scene   string
	widgets []Widget
	km      keymap
	out     io.Writer
	app     *App

	atomClipboard, atomUTF8, atomString, atomPaste, atomIncr xproto.Atom
	atomProtocols, atomDelete, atomNetWMName                 xproto.Atom

	mapped, exposed, ready bool
	dialogScreen           int
	focus                  string
	values                 map[string]string
	selected               bool // ctrl+a, or Home then shift+End, selected the focused field's text
	caret                  int  // where typing inserts, in bytes of the focused value; -1: at its end
	status                 string
	labels                 map[string]string // Options.Labels
}

func run(ctx context.Context, o Options, a *App) error {
	scene := o.Scene
	if scene == "" {
		scene = SceneForm
	}
	if !validScene(scene) {
		return fmt.Errorf("%w %q: use one of %v", ErrUnknownScene, scene, Scenes)
	}
	c, err := xgb.NewConnDisplay(o.Display)
	if err != nil {
		return fmt.Errorf("sample app: connect to X display %q: %w (start an X server or set Options.Display / $DISPLAY)", o.Display, err)
	}
	defer c.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			c.Close()
		case <-stop:
		}
	}()
	u := &ui{c: c, scene: scene, out: o.Out, app: a, values: map[string]string{}, dialogScreen: 1, caret: -1}
	if err := u.init(o); err != nil {
		return err
	}
	a.mu.Lock()
	a.move = func(x, y int) error {
		if err := xproto.ConfigureWindowChecked(c, u.win, xproto.ConfigWindowX|xproto.ConfigWindowY, []uint32{uint32(int32(x)), uint32(int32(y))}).Check(); err != nil {
			return fmt.Errorf("sample app: move the window: %w", err)
		}
		return nil
	}
	a.mu.Unlock()
	for {
		ev, xerr := c.WaitForEvent()
		if ev == nil && xerr == nil {
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("sample app: the X connection closed (did the X server exit?)")
		}
		if xerr != nil {
			slog.Debug("sample app: X error", "error", xerr)
			continue
		}
		if done := u.handle(ev); done {
			return nil
		}
	}
}

func (u *ui) atom(name string) (xproto.Atom, error) {
	r, err := xproto.InternAtom(u.c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("sample app: intern atom %s: %w", name, err)
	}
	return r.Atom, nil
}

func (u *ui) init(o Options) error {
	c := u.c
	u.setup = xproto.Setup(c)
	u.screen = u.setup.DefaultScreen(c)
	u.w, u.h = o.Width, o.Height
	if u.w <= 0 {
		u.w = int(u.screen.WidthInPixels)
	}
	if u.h <= 0 {
		u.h = int(u.screen.HeightInPixels)
	}
	var err error
	if u.widgets, err = Layout(u.scene, u.w, u.h); err != nil {
		return err
	}
	u.labels = o.Labels
	if err := relabel(u.widgets, o.Labels); err != nil {
		return err
	}
	for _, d := range u.screen.AllowedDepths {
		for _, v := range d.Visuals {
			if v.VisualId == u.screen.RootVisual {
				u.masks = [3]uint32{v.RedMask, v.GreenMask, v.BlueMask}
			}
		}
	}
	if u.masks[0] == 0 {
		return errors.New("sample app: the root visual has no colour masks; run the X server at depth 24 (Xvfb -screen 0 1280x800x24)")
	}
	for _, p := range []struct {
		a    *xproto.Atom
		name string
	}{{&u.atomClipboard, "CLIPBOARD"}, {&u.atomUTF8, "UTF8_STRING"}, {&u.atomString, "STRING"},
		{&u.atomPaste, "GUIAGENT_SAMPLE_PASTE"}, {&u.atomIncr, "INCR"}, {&u.atomProtocols, "WM_PROTOCOLS"},
		{&u.atomDelete, "WM_DELETE_WINDOW"}, {&u.atomNetWMName, "_NET_WM_NAME"}} {
		if *p.a, err = u.atom(p.name); err != nil {
			return err
		}
	}
	if u.km, err = loadKeymap(c, u.setup); err != nil {
		return fmt.Errorf("sample app: read the keyboard mapping: %w", err)
	}

	wid, err := xproto.NewWindowId(c)
	if err != nil {
		return fmt.Errorf("sample app: allocate a window id: %w", err)
	}
	u.win = wid
	mask := uint32(xproto.EventMaskExposure | xproto.EventMaskKeyPress | xproto.EventMaskButtonPress |
		xproto.EventMaskStructureNotify | xproto.EventMaskFocusChange)
	if err := xproto.CreateWindowChecked(c, u.screen.RootDepth, wid, u.screen.Root, int16(o.X), int16(o.Y), uint16(u.w), uint16(u.h), 0,
		xproto.WindowClassInputOutput, u.screen.RootVisual, xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{u.pixel(BackgroundColor), mask}).Check(); err != nil {
		return fmt.Errorf("sample app: create window: %w", err)
	}
	title := "guiagent sample: " + u.scene
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, u.atomNetWMName, u.atomUTF8, 8, uint32(len(title)), []byte(title))
	class := "guiagent-sample\x00GuiagentSample\x00"
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, xproto.AtomWmClass, xproto.AtomString, 8, uint32(len(class)), []byte(class))
	del := make([]byte, 4)
	xgb.Put32(del, uint32(u.atomDelete))
	xproto.ChangeProperty(c, xproto.PropModeReplace, wid, u.atomProtocols, xproto.AtomAtom, 32, 1, del)

	fid, err := xproto.NewFontId(c)
	if err == nil {
		if err = xproto.OpenFontChecked(c, fid, uint16(len("fixed")), "fixed").Check(); err == nil {
			if q, qerr := xproto.QueryFont(c, xproto.Fontable(fid)).Reply(); qerr == nil {
				u.hasFont = true
				u.charW = int(q.MaxBounds.CharacterWidth)
				u.ascent, u.descent = int(q.FontAscent), int(q.FontDescent)
			}
		}
	}
	if !u.hasFont {
		slog.Warn("sample app: the X server has no font \"fixed\"; labels are not drawn", "error", err)
	}
	gid, err := xproto.NewGcontextId(c)
	if err != nil {
		return fmt.Errorf("sample app: allocate a graphics context: %w", err)
	}
	u.gc = gid
	gcMask := uint32(xproto.GcForeground | xproto.GcBackground | xproto.GcGraphicsExposures)
	vals := []uint32{u.pixel(TextColor), u.pixel(BackgroundColor), 0}
	if u.hasFont {
		gcMask = xproto.GcForeground | xproto.GcBackground | xproto.GcFont | xproto.GcGraphicsExposures
		vals = []uint32{u.pixel(TextColor), u.pixel(BackgroundColor), uint32(fid), 0}
	}
	if err := xproto.CreateGCChecked(c, gid, xproto.Drawable(wid), gcMask, vals).Check(); err != nil {
		return fmt.Errorf("sample app: create graphics context: %w", err)
	}
	if u.scene == SceneTyping {
		u.focus = "text"
	}
	if err := xproto.MapWindowChecked(c, wid).Check(); err != nil {
		return fmt.Errorf("sample app: map window: %w", err)
	}
	return nil
}

// pixel converts a colour to the root visual's pixel value.
func (u *ui) pixel(c Color) uint32 {
	put := func(v uint8, mask uint32) uint32 {
		if mask == 0 {
			return 0
		}
		shift := bits.TrailingZeros32(mask)
		n := bits.OnesCount32(mask)
		x := uint32(v)
		if n < 8 {
			x >>= 8 - n
		} else {
			x <<= n - 8
		}
		return (x << shift) & mask
	}
	return put(uint8(c>>16), u.masks[0]) | put(uint8(c>>8), u.masks[1]) | put(uint8(c), u.masks[2])
}

// handle processes one event; true means the window was closed.
func (u *ui) handle(ev xgb.Event) bool {
	switch e := ev.(type) {
	case xproto.MapNotifyEvent:
		u.mapped = true
		u.becomeReady()
	case xproto.ExposeEvent:
		if e.Count == 0 {
			u.exposed = true
			u.redraw()
			u.becomeReady()
		}
	case xproto.ConfigureNotifyEvent:
		if e.Window == u.win && (int(e.Width) != u.w || int(e.Height) != u.h) && e.Width > 0 && e.Height > 0 {
			u.w, u.h = int(e.Width), int(e.Height)
			u.widgets, _ = Layout(u.scene, u.w, u.h)
			_ = relabel(u.widgets, u.labels) // checked in init
			u.redraw()
		}
	case xproto.ButtonPressEvent:
		u.button(e)
	case xproto.KeyPressEvent:
		u.key(e)
	case xproto.MappingNotifyEvent:
		if e.Request == xproto.MappingKeyboard || e.Request == xproto.MappingModifier {
			if km, err := loadKeymap(u.c, u.setup); err == nil {
				u.km = km
			}
		}
	case xproto.SelectionNotifyEvent:
		u.pasteArrived(e)
	case xproto.ClientMessageEvent:
		if e.Type == u.atomProtocols && xproto.Atom(e.Data.Data32[0]) == u.atomDelete {
			u.emit(Event{Event: "closed"})
			return true
		}
	case xproto.DestroyNotifyEvent:
		if e.Window == u.win {
			return true
		}
	}
	return false
}

// becomeReady raises and focuses the window once it is mapped and exposed.
func (u *ui) becomeReady() {
	if u.ready || !u.mapped || !u.exposed {
		return
	}
	xproto.ConfigureWindow(u.c, u.win, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	xproto.SetInputFocus(u.c, xproto.InputFocusParent, u.win, xproto.TimeCurrentTime)
	_, _ = xproto.GetInputFocus(u.c).Reply() // round trip: focus is set before ready is reported
	u.ready = true
	u.emit(Event{Event: "ready", Scene: u.scene, Width: u.w, Height: u.h})
}

func (u *ui) emit(e Event) { u.app.emit(u.out, e) }

// visible returns the widgets shown now.
func (u *ui) visible() []Widget {
	var out []Widget
	for _, w := range u.widgets {
		if w.Screen == 0 || w.Screen == u.dialogScreen {
			out = append(out, w)
		}
	}
	return out
}

var mouseNames = map[xproto.Button]string{1: "left", 2: "middle", 3: "right"}
var scrollNames = map[xproto.Button]string{4: "up", 5: "down", 6: "left", 7: "right"}

func (u *ui) button(e xproto.ButtonPressEvent) {
	x, y := int(e.EventX), int(e.EventY)
	if d, ok := scrollNames[e.Detail]; ok {
		u.emit(Event{Event: "scroll", Direction: d, X: x, Y: y})
		return
	}
	mouse, ok := mouseNames[e.Detail]
	if !ok {
		return
	}
	var hit *Widget
	for _, w := range u.visible() {
		if (image.Point{X: x, Y: y}).In(w.Rect) {
			hit = &w
			break
		}
	}
	ev := Event{Event: "click", Mouse: mouse, X: x, Y: y}
	if hit != nil {
		ev.Target = hit.Name
		if hit.Kind == KindButton {
			ev.Button = hit.Name
		}
	}
	u.emit(ev)
	if hit == nil || mouse != "left" {
		return
	}
	switch {
	case hit.Kind == KindField:
		u.setFocus(hit.Name)
	case hit.Name == "submit":
		u.submit()
	case hit.Name == "next":
		u.dialogScreen = 2
		u.status = ""
		u.emit(Event{Event: "screen", Screen: 2})
	case hit.Name == "ok":
		u.status = "Confirmed."
		u.emit(Event{Event: "confirmed"})
	case hit.Name == "cancel":
		u.dialogScreen = 1
		u.status = "Cancelled."
		u.emit(Event{Event: "cancelled"})
		u.emit(Event{Event: "screen", Screen: 1})
	default:
		u.status = "Clicked " + hit.Label + "."
	}
	u.redraw()
}

func (u *ui) setFocus(name string) {
	u.selected, u.caret = false, -1
	if u.focus == name {
		u.redraw()
		return
	}
	u.focus = name
	u.emit(Event{Event: "focus", Field: name})
	u.redraw()
}

func (u *ui) submit() {
	f := map[string]string{"name": u.values["name"], "email": u.values["email"], "city": u.values["city"]}
	u.status = "Submitted."
	u.emit(Event{Event: "submit", Fields: f})
}

// fieldNames returns the scene's fields in tab order.
func (u *ui) fieldNames() []string {
	var out []string
	for _, w := range u.visible() {
		if w.Kind == KindField {
			out = append(out, w.Name)
		}
	}
	return out
}

func (u *ui) key(e xproto.KeyPressEvent) {
	ks := u.km.keysym(e.Detail, e.State)
	ctrl := e.State&xproto.ModMaskControl != 0
	alt := e.State&xproto.ModMask1 != 0
	switch {
	case ctrl && (ks == 'a' || ks == 'A'):
		if u.focus != "" {
			u.selected = true
			u.redraw()
		}
	case ks == ksHome || ks == ksEnd:
		u.caretKey(ks, e.State&xproto.ModMaskShift != 0)
	case ctrl && (ks == 'v' || ks == 'V'):
		if u.focus != "" {
			xproto.ConvertSelection(u.c, u.win, u.atomClipboard, u.atomUTF8, u.atomPaste, e.Time)
		}
	case ks == ksTab || ks == ksISOLeftTab:
		names := u.fieldNames()
		if len(names) < 2 {
			return
		}
		i := -1
		for j, n := range names {
			if n == u.focus {
				i = j
			}
		}
		step := 1
		if ks == ksISOLeftTab || e.State&xproto.ModMaskShift != 0 {
			step = len(names) - 1
		}
		u.setFocus(names[(max(i, 0)+step)%len(names)])
	case ks == ksReturn || ks == ksKPEnter:
		switch u.scene {
		case SceneForm:
			u.submit()
			u.redraw()
		case SceneTyping:
			u.emit(Event{Event: "text", Value: u.values["text"]})
		}
	case ks == ksBackSpace:
		if u.focus == "" {
			return
		}
		v := u.values[u.focus]
		switch {
		case u.selected:
			v, u.caret = "", -1
		case u.caret > 0 && u.caret <= len(v):
			_, n := utf8.DecodeLastRuneInString(v[:u.caret])
			v, u.caret = v[:u.caret-n]+v[u.caret:], u.caret-n
		case u.caret < 0:
			if _, n := utf8.DecodeLastRuneInString(v); n > 0 {
				v = v[:len(v)-n]
			}
		}
		u.selected = false
		u.set(v)
	case ks == ksEscape:
		u.selected = false
		u.redraw()
	case !ctrl && !alt:
		if r := keysymRune(ks); r != 0 && u.focus != "" {
			u.insert(string(r))
		}
	}
}

// caretKey moves the caret as a one-line field does: Home (with ctrl too)
// to the start, End to the end; with shift, End from the start selects all.
func (u *ui) caretKey(ks xproto.Keysym, shift bool) {
	if u.focus == "" {
		return
	}
	switch {
	case ks == ksHome && !shift:
		u.caret, u.selected = 0, false
	case ks == ksEnd && shift:
		u.selected = u.selected || u.caret == 0
		u.caret = -1
	case ks == ksEnd:
		u.caret, u.selected = -1, false
	}
	u.redraw()
}

// insert adds s at the caret of the focused field, replacing a selection.
func (u *ui) insert(s string) {
	if u.focus == "" || s == "" {
		return
	}
	old := u.values[u.focus]
	v := old + s
	switch {
	case u.selected:
		v, u.caret = s, -1
	case u.caret >= 0 && u.caret <= len(old):
		v = old[:u.caret] + s + old[u.caret:]
		u.caret += len(s)
	}
	u.selected = false
	u.set(v)
}

// set stores the focused field's value, reports the change and redraws.
func (u *ui) set(v string) {
	if u.values[u.focus] == v {
		u.redraw()
		return
	}
	u.values[u.focus] = v
	u.app.setField(u.focus, v)
	u.emit(Event{Event: "change", Field: u.focus, Value: v})
	u.redraw()
}

// pasteArrived reads the converted CLIPBOARD and inserts it.
func (u *ui) pasteArrived(e xproto.SelectionNotifyEvent) {
	if e.Requestor != u.win || e.Selection != u.atomClipboard {
		return
	}
	if e.Property == xproto.AtomNone {
		if e.Target == u.atomUTF8 { // the owner may only offer STRING
			xproto.ConvertSelection(u.c, u.win, u.atomClipboard, u.atomString, u.atomPaste, e.Time)
		}
		return
	}
	r, err := xproto.GetProperty(u.c, true, u.win, e.Property, xproto.GetPropertyTypeAny, 0, 1<<22).Reply()
	if err != nil {
		slog.Warn("sample app: read pasted text", "error", err)
		return
	}
	if r.Type == u.atomIncr {
		slog.Warn("sample app: the clipboard owner sent the text incrementally (INCR), which this app does not read")
		return
	}
	text := string(r.Value)
	if r.Type == u.atomString { // Latin-1
		rs := make([]rune, len(r.Value))
		for i, b := range r.Value {
			rs[i] = rune(b)
		}
		text = string(rs)
	}
	u.insert(text)
}
