package windows

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	win "golang.org/x/sys/windows"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// formWindow is a top-level window with standard Win32 controls (BUTTON,
// EDIT, STATIC) at known physical positions, on a thread of its own that
// pumps its messages (UIA's and MSAA's calls into it are window messages).
type formWindow struct {
	hwnd     uintptr
	controls map[string]uintptr // name -> child window
	rects    map[string]physRect
	clicked  atomic.Int32 // BN_CLICKED notifications of the OK button
	done     chan struct{}
}

const (
	wsOverlappedWindow = 0x00CF0000
	wsChild            = 0x40000000
	wsBorder           = 0x00800000
	wsTabStop          = 0x00010000
	wmCommand          = 0x0111
	idOK               = 1
	formClassStr       = "guiagentElementsForm"
)

var (
	theForm           *formWindow
	procGetWindowRect = user32.NewProc("GetWindowRect")
)

func formWndProc(hwnd, m, wp, lp uintptr) uintptr {
	switch uint32(m) {
	case wmCommand:
		if wp&0xffff == idOK && wp>>16 == 0 { // BN_CLICKED of the OK button
			theForm.clicked.Add(1)
		}
	case wmClose:
		procDestroyWindow.Call(hwnd)
		return 0
	case wmDestroy:
		procPostQuitMessage.Call(0)
		return 0
	}
	r, _, _ := procDefWindowProcW.Call(hwnd, m, wp, lp)
	return r
}

// openForm creates the form at physical (x, y), its controls laid out in
// physical pixels scaled by s (the DPI scale, so that they keep their size in
// logical pixels).
func openForm(t *testing.T, x, y int, s float64) *formWindow {
	t.Helper()
	f := &formWindow{controls: map[string]uintptr{}, rects: map[string]physRect{}, done: make(chan struct{})}
	theForm = f
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer close(f.done)
		if err := f.create(x, y, s); err != nil {
			ready <- err
			return
		}
		ready <- nil
		var m msg
		for {
			r, _, _ := procGetMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0)
			if int32(r) <= 0 {
				return
			}
			procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
			procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
		}
	}()
	if err := <-ready; err != nil {
		t.Fatalf("open the form: %v", err)
	}
	t.Cleanup(func() {
		procSendMessageW.Call(f.hwnd, wmClose, 0, 0)
		select {
		case <-f.done:
		case <-time.After(5 * time.Second):
		}
	})
	return f
}

func (f *formWindow) create(x, y int, s float64) error {
	var inst win.Handle
	if err := win.GetModuleHandleEx(0, nil, &inst); err != nil {
		return err
	}
	class, _ := win.UTF16PtrFromString(formClassStr)
	cursor, _, _ := procLoadCursorW.Call(0, idcArrow)
	wc := wndClassEx{WndProc: win.NewCallback(formWndProc), Instance: inst, Cursor: win.Handle(cursor), ClassName: class, Background: win.Handle(16)} // COLOR_BTNFACE+1
	wc.Size = uint32(unsafe.Sizeof(wc))
	procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc)))
	sc := func(v int) int { return int(float64(v) * s) }
	h, err := createWindow(0, formClassStr, "guiagent elements", wsOverlappedWindow|wsVisible, x, y, sc(480), sc(300), 0, 0, inst)
	if err != nil {
		return err
	}
	f.hwnd = h
	for _, c := range []struct {
		name, class, text string
		style             uintptr
		id, x, y, w, h    int
	}{
		{"label", "STATIC", "Name:", 0, 0, 20, 24, 80, 24},
		{"edit", "EDIT", "Ada", wsBorder | wsTabStop, 0, 110, 20, 200, 24},
		{"ok", "BUTTON", "OK", wsTabStop, idOK, 20, 80, 100, 30},
		{"cancel", "BUTTON", "Cancel", wsTabStop, 2, 140, 80, 100, 30},
	} {
		ch, err := createWindow(0, c.class, c.text, wsChild|wsVisible|c.style, sc(c.x), sc(c.y), sc(c.w), sc(c.h), h, uintptr(c.id), inst)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		f.controls[c.name] = ch
		var r winRect
		if r0, _, e := procGetWindowRect.Call(ch, uintptr(unsafe.Pointer(&r))); r0 == 0 {
			return callErr("GetWindowRect", e)
		}
		f.rects[c.name] = physRect{X: int(r.Left), Y: int(r.Top), W: int(r.Right - r.Left), H: int(r.Bottom - r.Top)}
	}
	procUpdateWindow.Call(h)
	procSetForegroundWindow.Call(h)
	procSetFocus.Call(f.controls["edit"])
	return nil
}

func createWindow(ex uintptr, class, title string, style uintptr, x, y, w, h int, parent, id uintptr, inst win.Handle) (uintptr, error) {
	c, _ := win.UTF16PtrFromString(class)
	tt, _ := win.UTF16PtrFromString(title)
	r, _, e := procCreateWindowExW.Call(ex, uintptr(unsafe.Pointer(c)), uintptr(unsafe.Pointer(tt)), style,
		uintptr(x), uintptr(y), uintptr(w), uintptr(h), parent, id, uintptr(inst), 0)
	if r == 0 {
		return 0, callErr("CreateWindowExW "+class, e)
	}
	return r, nil
}

func windowText(hwnd uintptr) string {
	buf := make([]uint16, 256)
	n, _, _ := procGetWindowTextW.Call(hwnd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return win.UTF16ToString(buf[:n])
}

// TestElements reads the form through UI Automation and checks what a user
// of the snapshot relies on: the window, the buttons and the edit control
// with their roles, names, the edit's value and focus, boxes in global
// logical pixels where the controls are (at any DPI), then sets the edit's
// value through its ValuePattern and presses OK through its InvokePattern.
// Each check logs "uia-check NAME ok|FAIL detail", which the Wine test
// collects.
func TestElements(t *testing.T) {
	ctx := context.Background()
	b := New(Options{})
	if err := b.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	lay, err := b.currentLayout(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("layout %s; wine %q", lay.describe(), wineVersion())
	s := lay.Displays[0].ScaleFactor()
	f := openForm(t, int(100*s), int(100*s), s)
	time.Sleep(300 * time.Millisecond)

	snap, err := b.Elements(ctx, desktop.ElementQuery{})
	if errors.Is(err, errNoUIAutomation) && wineVersion() != "" {
		// Wine 8.0 has no IUIAutomation client: what can be checked is
		// that the snapshot fails with the reason, at once, and that the
		// backend goes on working.
		check(t, "unavailable", strings.Contains(err.Error(), "UI Automation is not available"), err.Error())
		start := time.Now()
		_, err2 := b.Elements(ctx, desktop.ElementQuery{})
		check(t, "unavailable-again", errors.Is(err2, errNoUIAutomation) && time.Since(start) < time.Second && stuckWalks.Load() == 0, fmt.Sprintf("%v after %v", err2, time.Since(start)))
		// What else Wine 8.0 lacks, for the record: the flat client API's
		// entry point for another window's tree.
		var node uintptr
		hr, _, _ := win.NewLazySystemDLL("uiautomationcore.dll").NewProc("UiaNodeFromHandle").Call(f.hwnd, uintptr(unsafe.Pointer(&node)))
		t.Logf("under Wine %s UiaNodeFromHandle answers HRESULT %#08x", wineVersion(), uint32(hr))
		_, err3 := b.Displays(ctx)
		check(t, "backend-still-works", err3 == nil, fmt.Sprint(err3))
		t.Skipf("skipped under Wine %s: it has no IUIAutomation (CUIAutomation is not registered and uiautomationcore's DllGetClassObject is a stub): %v", wineVersion(), err)
	}
	check(t, "snapshot", err == nil, fmt.Sprint(err))
	if err != nil {
		return
	}
	t.Logf("snapshot: %d elements in %v, window %q, apps %v, truncated %v %s", len(snap.Elements), snap.Took, snap.Window, snap.Apps, snap.Truncated, snap.TruncatedBy)
	for _, e := range snap.Elements {
		t.Logf("  %s %-10s %-12q %-9s value %q states %v box %v parent %s handle %s", e.Ref, e.Role, e.Name, e.PlatformRole, e.Value, e.States.List(), e.Box, e.Parent, e.Handle)
	}
	find := func(role desktop.Role, name string) (desktop.Element, bool) {
		for _, e := range snap.Elements {
			if e.Role == role && (name == "" || e.Name == name) {
				return e, true
			}
		}
		return desktop.Element{}, false
	}
	w, ok := find(desktop.RoleWindow, "guiagent elements")
	check(t, "window", ok && w.Depth == 0, fmt.Sprintf("%+v", w))
	check(t, "focused-window", snap.Window == "guiagent elements", snap.Window)
	for _, c := range []struct{ key, name string }{{"ok", "OK"}, {"cancel", "Cancel"}} {
		e, ok := find(desktop.RoleButton, c.name)
		check(t, "button-"+c.key, ok && e.Parent != "" && e.States.Enabled, fmt.Sprintf("%+v", e))
		want := lay.logicalRect(f.rects[c.key])
		check(t, "box-"+c.key, ok && near(e.Box, want, 2), fmt.Sprintf("box %v, want %v (physical %+v)", e.Box, want, f.rects[c.key]))
	}
	edit, ok := find(desktop.RoleTextbox, "")
	check(t, "edit", ok, fmt.Sprintf("%+v", edit))
	check(t, "edit-value", ok && edit.Value == "Ada", edit.Value)
	check(t, "edit-name-from-label", ok && edit.Name == "Name:", fmt.Sprintf("name %q from %q", edit.Name, edit.NameFrom))
	check(t, "edit-focused", ok && edit.States.Focused, fmt.Sprint(edit.States.List()))
	check(t, "edit-box", ok && near(edit.Box, lay.logicalRect(f.rects["edit"]), 2), fmt.Sprintf("box %v, want %v", edit.Box, lay.logicalRect(f.rects["edit"])))
	if ok {
		err := b.SetText(ctx, edit.Handle, "Grace Hopper")
		got := windowText(f.controls["edit"])
		check(t, "set-value", err == nil && got == "Grace Hopper", fmt.Sprintf("err %v, the edit control holds %q", err, got))
	}
	if okb, ok := find(desktop.RoleButton, "OK"); ok {
		err := b.Press(ctx, okb.Handle)
		deadline := time.Now().Add(2 * time.Second)
		for f.clicked.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		check(t, "invoke", err == nil && f.clicked.Load() == 1, fmt.Sprintf("err %v, %d clicks", err, f.clicked.Load()))
		err = b.SetText(ctx, okb.Handle, "x")
		check(t, "set-value-unsupported", errors.Is(err, desktop.ErrUnsupported), fmt.Sprint(err))
	}
	// Bounds: one element only, and a stale handle.
	one, err := b.Elements(ctx, desktop.ElementQuery{MaxElements: 1})
	check(t, "max-elements", err == nil && len(one.Elements) == 1 && one.TruncatedBy == "max_elements", fmt.Sprintf("%v %+v", err, one))
	err = b.Press(ctx, uiaHandle{HWND: f.hwnd, Path: []int{99}, ControlType: 50000}.String())
	check(t, "stale-handle", err != nil && strings.Contains(err.Error(), "fresh snapshot"), fmt.Sprint(err))
}

// check logs a named check's outcome for the Wine test to collect, and fails
// the test when it failed.
func check(t *testing.T, name string, ok bool, detail string) {
	t.Helper()
	if ok {
		t.Logf("uia-check %s ok", name)
		return
	}
	t.Logf("uia-check %s FAIL %s", name, detail)
	t.Errorf("%s: %s", name, detail)
}

func near(a, b geom.Rect, tol int) bool {
	d := func(x, y int) bool { return x-y <= tol && y-x <= tol }
	return d(a.X, b.X) && d(a.Y, b.Y) && d(a.W, b.W) && d(a.H, b.H)
}
