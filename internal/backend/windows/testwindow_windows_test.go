package windows

import (
	"errors"
	"fmt"
	"image/color"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unsafe"

	win "golang.org/x/sys/windows"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/suite"
	"github.com/guiagent/guiagent/internal/geom"
)

// Win32 entry points only the test window needs.
var (
	procRegisterClassExW    = user32.NewProc("RegisterClassExW")
	procCreateWindowExW     = user32.NewProc("CreateWindowExW")
	procDefWindowProcW      = user32.NewProc("DefWindowProcW")
	procDestroyWindow       = user32.NewProc("DestroyWindow")
	procGetMessageW         = user32.NewProc("GetMessageW")
	procTranslateMessage    = user32.NewProc("TranslateMessage")
	procDispatchMessageW    = user32.NewProc("DispatchMessageW")
	procPostQuitMessage     = user32.NewProc("PostQuitMessage")
	procSendMessageW        = user32.NewProc("SendMessageW")
	procBeginPaint          = user32.NewProc("BeginPaint")
	procEndPaint            = user32.NewProc("EndPaint")
	procFillRect            = user32.NewProc("FillRect")
	procInvalidateRect      = user32.NewProc("InvalidateRect")
	procUpdateWindow        = user32.NewProc("UpdateWindow")
	procSetForegroundWindow = user32.NewProc("SetForegroundWindow")
	procSetFocus            = user32.NewProc("SetFocus")
	procGetKeyState         = user32.NewProc("GetKeyState")
	procLoadCursorW         = user32.NewProc("LoadCursorW")
	procGetPixel            = gdi32.NewProc("GetPixel")
	procCreateSolidBrush    = gdi32.NewProc("CreateSolidBrush")
)

// Window messages and styles the test window uses (WinUser.h).
const (
	wmDestroy     = 0x0002
	wmPaint       = 0x000F
	wmClose       = 0x0010
	wmEraseBkgnd  = 0x0014
	wmKeyDown     = 0x0100
	wmKeyUp       = 0x0101
	wmChar        = 0x0102
	wmSysKeyDown  = 0x0104
	wmSysKeyUp    = 0x0105
	wmSysChar     = 0x0106
	wmMouseMove   = 0x0200
	wmLButtonDown = 0x0201
	wmLButtonUp   = 0x0202
	wmRButtonDown = 0x0204
	wmRButtonUp   = 0x0205
	wmMButtonDown = 0x0207
	wmMButtonUp   = 0x0208
	wmMouseWheel  = 0x020A
	wmMouseHWheel = 0x020E
	wmAppFocus    = 0x8001 // WM_APP+1: take the foreground and the keyboard focus

	wsPopup      = 0x80000000
	wsVisible    = 0x10000000
	wsExTopmost  = 0x00000008
	idcArrow     = 32512
	mkShift      = 0x0004
	mkControl    = 0x0008
	vkPacket     = 0xE7
	vkMarker     = 0x88 // unassigned: the drain marker
	vkShift      = 0x10
	vkControl    = 0x11
	vkMenu       = 0x12 // Alt
	vkLWin       = 0x5B
	vkRWin       = 0x5C
	scanRShift   = 0x36
	testClassStr = "guiagentConformanceWindow"
)

// wndClassEx is WNDCLASSEXW.
type wndClassEx struct {
	Size       uint32
	Style      uint32
	WndProc    uintptr
	ClsExtra   int32
	WndExtra   int32
	Instance   win.Handle
	Icon       win.Handle
	Cursor     win.Handle
	Background win.Handle
	MenuName   *uint16
	ClassName  *uint16
	IconSm     win.Handle
}

// msg is MSG.
type msg struct {
	Hwnd    uintptr
	Message uint32
	WParam  uintptr
	LParam  uintptr
	Time    uint32
	Pt      winPoint
	Private uint32
}

// paintStruct is PAINTSTRUCT.
type paintStruct struct {
	Hdc         uintptr
	Erase       int32
	Paint       winRect
	Restore     int32
	IncUpdate   int32
	RGBReserved [32]byte
}

// fillCmd is one rectangle the window paints, in physical pixels of the virtual screen.
type fillCmd struct {
	r physRect
	c color.RGBA
}

// testWindow is a full-screen, top-most window covering the whole virtual
// screen. It paints the fills the suite asks for over a grey background and
// records every mouse, key and character message it receives, as an
// application would see them.
type testWindow struct {
	hwnd   uintptr
	origin winPoint // the window's top-left: the virtual screen's, physical pixels

	mu     sync.Mutex
	lay    layout // converts received physical positions to global logical ones
	fills  []fillCmd
	events []suite.Received
	text   []uint16
	marks  int           // drain markers (key up of vkMarker) seen
	wake   chan struct{} // receives a value (non-blocking) when an event or character arrives
	done   chan struct{} // closed when the message loop has ended
}

// theWindow is the window the window procedure serves: Windows calls the
// procedure without a Go context, and a test binary opens one window.
var theWindow *testWindow

// openTestWindow creates the window on its own locked OS thread, which then
// runs its message loop until the test binary ends. The process must already
// be per-monitor DPI aware (Backend.Start makes it so) so that the window and
// its messages use physical pixels.
func openTestWindow(lay layout) (*testWindow, error) {
	vs := virtualScreen()
	w := &testWindow{origin: winPoint{X: int32(vs.X), Y: int32(vs.Y)}, lay: lay, wake: make(chan struct{}, 1), done: make(chan struct{})}
	theWindow = w
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the window belongs to this thread for good
		defer close(w.done)
		if err := w.create(vs); err != nil {
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
		return nil, err
	}
	return w, nil
}

func (w *testWindow) create(vs physRect) error {
	var inst win.Handle
	if err := win.GetModuleHandleEx(0, nil, &inst); err != nil {
		return fmt.Errorf("GetModuleHandleEx: %w", err)
	}
	class, _ := win.UTF16PtrFromString(testClassStr)
	cursor, _, _ := procLoadCursorW.Call(0, idcArrow)
	wc := wndClassEx{WndProc: win.NewCallback(testWndProc), Instance: inst, Cursor: win.Handle(cursor), ClassName: class}
	wc.Size = uint32(unsafe.Sizeof(wc))
	if r, _, e := procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc))); r == 0 {
		return callErr("RegisterClassExW", e)
	}
	title, _ := win.UTF16PtrFromString("guiagent conformance")
	h, _, e := procCreateWindowExW.Call(wsExTopmost, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(title)),
		wsPopup|wsVisible, uintptr(vs.X), uintptr(vs.Y), uintptr(vs.W), uintptr(vs.H), 0, 0, uintptr(inst), 0)
	if h == 0 {
		return callErr("CreateWindowExW", e)
	}
	w.hwnd = h
	procUpdateWindow.Call(h)
	procSetForegroundWindow.Call(h)
	procSetFocus.Call(h)
	return nil
}

// close destroys the window and waits until its message loop has ended, so
// that no window message reaches Go code while the process exits.
func (w *testWindow) close() {
	procSendMessageW.Call(w.hwnd, wmClose, 0, 0)
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
	}
}

// focus brings the window to the foreground with the keyboard focus.
func (w *testWindow) focus() {
	procSendMessageW.Call(w.hwnd, wmAppFocus, 0, 0)
}

// testWndProc is the window procedure: it paints and records.
func testWndProc(hwnd, m, wp, lp uintptr) uintptr {
	w := theWindow
	switch uint32(m) {
	case wmPaint:
		w.paint(hwnd)
		return 0
	case wmEraseBkgnd:
		return 1 // wmPaint covers every pixel
	case wmAppFocus:
		procSetForegroundWindow.Call(hwnd)
		procSetFocus.Call(hwnd)
		return 0
	case wmClose:
		procDestroyWindow.Call(hwnd)
		return 0
	case wmDestroy:
		procPostQuitMessage.Call(0)
		return 0
	case wmChar, wmSysChar:
		w.char(uint16(wp))
		if uint32(m) == wmChar {
			return 0
		}
	}
	if (uint32(m) == wmKeyDown || uint32(m) == wmKeyUp) && wp == vkMarker {
		if uint32(m) == wmKeyUp {
			w.mu.Lock()
			w.marks++
			w.mu.Unlock()
			w.signal()
		}
		return 0
	}
	if e, ok := w.message(uint32(m), wp, lp); ok {
		w.record(e)
	}
	r, _, _ := procDefWindowProcW.Call(hwnd, m, wp, lp)
	return r
}

// colorRef is a COLORREF (0x00BBGGRR).
func colorRef(c color.RGBA) uintptr {
	return uintptr(c.R) | uintptr(c.G)<<8 | uintptr(c.B)<<16
}

var backgroundColour = color.RGBA{R: 128, G: 128, B: 128, A: 255}

func (w *testWindow) paint(hwnd uintptr) {
	var ps paintStruct
	hdc, _, _ := procBeginPaint.Call(hwnd, uintptr(unsafe.Pointer(&ps)))
	defer procEndPaint.Call(hwnd, uintptr(unsafe.Pointer(&ps)))
	w.mu.Lock()
	fills := slices.Clone(w.fills)
	w.mu.Unlock()
	vs := virtualScreen()
	all := append([]fillCmd{{r: physRect{X: vs.X, Y: vs.Y, W: vs.W, H: vs.H}, c: backgroundColour}}, fills...)
	for _, f := range all {
		rc := winRect{Left: int32(f.r.X) - w.origin.X, Top: int32(f.r.Y) - w.origin.Y}
		rc.Right, rc.Bottom = rc.Left+int32(f.r.W), rc.Top+int32(f.r.H)
		brush, _, _ := procCreateSolidBrush.Call(colorRef(f.c))
		procFillRect.Call(hdc, uintptr(unsafe.Pointer(&rc)), brush)
		procDeleteObject.Call(brush)
	}
}

// fill paints r (global logical pixels) in c and waits until the screen shows it.
func (w *testWindow) fill(t testing.TB, r geom.Rect, c color.RGBA) {
	t.Helper()
	w.mu.Lock()
	pr, err := w.lay.physicalRegion(r)
	if err == nil && r.Empty() {
		err = errors.New("empty rectangle")
	}
	if err == nil {
		// Older fills entirely under this one can be forgotten.
		w.fills = slices.DeleteFunc(w.fills, func(f fillCmd) bool { return inside(f.r, pr) })
		w.fills = append(w.fills, fillCmd{r: pr, c: c})
	}
	w.mu.Unlock()
	if err != nil {
		t.Fatalf("test window: fill %v: %v", r, err)
	}
	procInvalidateRect.Call(w.hwnd, 0, 0)
	procUpdateWindow.Call(w.hwnd)
	// The screen may show the window's pixels a moment later (Wine flushes
	// window surfaces to X asynchronously): wait until the centre has the colour.
	cx, cy := pr.X+pr.W/2, pr.Y+pr.H/2
	hdc, _, _ := procGetDC.Call(0)
	defer procReleaseDC.Call(0, hdc)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if px, _, _ := procGetPixel.Call(hdc, uintptr(int32(cx)), uintptr(int32(cy))); px == colorRef(c) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("test window: the screen did not show fill %v (physical %+v) in %v within 3s; the capture check will tell", r, pr, c)
}

func inside(a, b physRect) bool {
	return a.X >= b.X && a.Y >= b.Y && a.X+a.W <= b.X+b.W && a.Y+a.H <= b.Y+b.H
}

// char records one UTF-16 code unit of typed text: Return as "\n",
// BackSpace removing the last character, other control characters ignored.
func (w *testWindow) char(u uint16) {
	w.mu.Lock()
	switch {
	case u == '\r':
		w.text = append(w.text, '\n')
	case u == '\b':
		if n := len(w.text); n > 0 {
			w.text = w.text[:n-1]
		}
	case u < 0x20 && u != '\t':
	default:
		w.text = append(w.text, u)
	}
	w.mu.Unlock()
	w.signal()
}

func (w *testWindow) record(e suite.Received) {
	w.mu.Lock()
	w.events = append(w.events, e)
	w.mu.Unlock()
	w.signal()
}

func (w *testWindow) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func keyDown(vk int) bool {
	r, _, _ := procGetKeyState.Call(uintptr(vk))
	return int16(r) < 0
}

// modifiers lists the held modifiers, sorted, as the suite names them.
func modifiers(ctrl, shift bool) []string {
	var out []string
	if keyDown(vkMenu) {
		out = append(out, "alt")
	}
	if ctrl {
		out = append(out, "ctrl")
	}
	if shift {
		out = append(out, "shift")
	}
	if keyDown(vkLWin) || keyDown(vkRWin) {
		out = append(out, "super")
	}
	return out
}

// signedXY splits an lParam holding two signed 16-bit coordinates.
func signedXY(lp uintptr) (int, int) {
	return int(int16(uint16(lp))), int(int16(uint16(lp >> 16)))
}

// message turns a window message into what the suite calls a received event.
func (w *testWindow) message(m uint32, wp, lp uintptr) (suite.Received, bool) {
	w.mu.Lock()
	lay := w.lay
	w.mu.Unlock()
	client := func() geom.GlobalPoint {
		x, y := signedXY(lp)
		return lay.toLogical(x+int(w.origin.X), y+int(w.origin.Y))
	}
	mouseMods := func() []string { return modifiers(wp&mkControl != 0, wp&mkShift != 0) }
	buttons := map[uint32]struct {
		kind string
		b    desktop.Button
	}{
		wmLButtonDown: {"button_down", desktop.Left}, wmLButtonUp: {"button_up", desktop.Left},
		wmRButtonDown: {"button_down", desktop.Right}, wmRButtonUp: {"button_up", desktop.Right},
		wmMButtonDown: {"button_down", desktop.Middle}, wmMButtonUp: {"button_up", desktop.Middle},
	}
	switch {
	case m == wmMouseMove:
		return suite.Received{Kind: "motion", At: client()}, true
	case buttons[m].kind != "":
		return suite.Received{Kind: buttons[m].kind, Button: buttons[m].b, At: client(), Modifiers: mouseMods()}, true
	case m == wmMouseWheel || m == wmMouseHWheel:
		x, y := signedXY(lp) // wheel messages carry screen coordinates
		return suite.Received{Kind: "scroll", Direction: wheelDirection(m, int16(uint16(wp>>16))), At: lay.toLogical(x, y)}, true
	case m == wmKeyDown || m == wmSysKeyDown || m == wmKeyUp || m == wmSysKeyUp:
		if wp == vkPacket {
			return suite.Received{}, false // a typed character: recorded as text
		}
		kind := "key_down"
		if m == wmKeyUp || m == wmSysKeyUp {
			kind = "key_up"
		}
		return suite.Received{Kind: kind, Key: vkName(uint16(wp), lp), Modifiers: modifiers(keyDown(vkControl), keyDown(vkShift))}, true
	}
	return suite.Received{}, false
}

func wheelDirection(m uint32, delta int16) desktop.Direction {
	switch {
	case m == wmMouseWheel && delta > 0:
		return desktop.Up
	case m == wmMouseWheel:
		return desktop.Down
	case delta > 0:
		return desktop.RightD
	}
	return desktop.LeftD
}

// vkName names the key of a key message as desktop.Key does: letters and
// digits as themselves (lower case), modifiers with their side.
func vkName(vk uint16, lp uintptr) desktop.Key {
	ext := lp&(1<<24) != 0 // KF_EXTENDED in the lParam
	switch vk {
	case vkControl:
		if ext {
			return "Control_R"
		}
		return "Control_L"
	case vkShift:
		if (lp>>16)&0xFF == scanRShift {
			return "Shift_R"
		}
		return "Shift_L"
	case vkMenu:
		if ext {
			return "Alt_R"
		}
		return "Alt_L"
	}
	if vk >= '0' && vk <= '9' || vk >= 'A' && vk <= 'Z' {
		return desktop.Key(string(rune(vk | 0x20)))
	}
	var names []desktop.Key
	for name, k := range namedVKs {
		if k.VK == vk {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if namedVKs[name].Extended == ext {
			return name
		}
	}
	if len(names) > 0 {
		return names[0]
	}
	return desktop.Key(fmt.Sprintf("vk_%02x", vk))
}

// events waits until at least n events arrived since the last call, or the
// timeout passes, and returns them all.
func (w *testWindow) takeEvents(n int, timeout time.Duration) []suite.Received {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		if len(w.events) >= n {
			evs := w.events
			w.events = nil
			w.mu.Unlock()
			return evs
		}
		w.mu.Unlock()
		select {
		case <-w.wake:
		case <-deadline.C:
			w.mu.Lock()
			evs := w.events
			w.events = nil
			w.mu.Unlock()
			return evs
		}
	}
}

// typed waits until the typed text is want, or the timeout passes, and returns it.
func (w *testWindow) typed(want string, timeout time.Duration) string {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		got := string(utf16.Decode(w.text))
		w.mu.Unlock()
		if got == want {
			return got
		}
		select {
		case <-w.wake:
		case <-deadline.C:
			return got
		}
	}
}

// drain waits until the window has handled all input sent so far: it sends a
// marker key (an unassigned virtual key) through SendInput, behind everything
// already queued, and waits for it. The window must have the keyboard focus.
func (w *testWindow) drain(t testing.TB) {
	t.Helper()
	w.mu.Lock()
	want := w.marks + 1
	w.mu.Unlock()
	ev := []input{keyEvent(vkKey{VK: vkMarker}, 0, false), keyEvent(vkKey{VK: vkMarker}, 0, true)}
	if n, _, e := procSendInput.Call(uintptr(len(ev)), uintptr(unsafe.Pointer(&ev[0])), uintptr(inputSize)); int(n) != len(ev) {
		t.Fatalf("test window: SendInput of the drain marker: %v", e)
	}
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		done := w.marks >= want
		w.mu.Unlock()
		if done {
			return
		}
		select {
		case <-w.wake:
		case <-deadline.C:
			t.Fatal("test window: the drain marker key did not arrive within 5s: the window lacks the keyboard focus")
		}
	}
}

// reset forgets typed text and recorded events and sets the layout used to
// convert positions.
func (w *testWindow) reset(lay layout) {
	w.mu.Lock()
	w.text, w.events, w.lay = nil, nil, lay
	w.mu.Unlock()
}
