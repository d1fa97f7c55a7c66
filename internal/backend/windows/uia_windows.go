package windows

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	win "golang.org/x/sys/windows"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
)

var (
	_ desktop.ElementSource = (*Backend)(nil)
	_ desktop.ElementGate   = (*Backend)(nil)
	_ desktop.ElementActor  = (*Backend)(nil)
)

// ElementsAvailable reports whether the element source is on (Options.NoElements).
func (b *Backend) ElementsAvailable() bool { return !b.opts.NoElements }

// errElementsOff is the answer with Options.NoElements.
var errElementsOff = fmt.Errorf("reading the UI as elements: %w: accessibility is off (set the accessibility setting to auto; guiagent doctor names it)", desktop.ErrUnsupported)

// A walk runs on a COM thread of its own and is abandoned when its budget
// is up (plus walkMargin) while a call into a hung application blocks it.
// Such a thread ends when the call returns; while maxStuck of them wait, no
// new walk starts (the answer is "unresponsive" at once).
const (
	walkMargin = 250 * time.Millisecond
	maxStuck   = 2
)

var stuckWalks atomic.Int32

// errStuck is returned while maxStuck walks wait on a hung application.
var errStuck = errors.New("UI Automation: earlier snapshots are still waiting on an application that does not answer; try again when it responds")

// Elements takes a snapshot through UI Automation: per container one
// FindAllBuildCache call fetches all its children with every property the
// snapshot needs (name, control type, bounding rectangle, enabled, offscreen,
// keyboard focus, value, toggle, expand/collapse and selection states), never
// one call per property or element. Boxes are mapped from physical pixels to
// global logical pixels through the monitor layout.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	if b.opts.NoElements {
		return nil, errElementsOff
	}
	start := time.Now()
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	lay, err := b.currentLayout(ctx)
	if err != nil {
		return nil, err
	}
	if q.Bounds == nil {
		q.Bounds = lay.logicalBounds()
	}
	bld := uitree.NewBuilder("uia", q)
	err = onCOMThread(ctx, q.Budget, func(ctx context.Context, u *uia) error {
		return walkUIA(ctx, u, lay, q, bld)
	})
	switch {
	case errors.Is(err, errWalkTimedOut):
		bld.Abandon("unresponsive")
	case errors.Is(err, errStuck):
		bld.Abandon("unresponsive")
	case err != nil:
		return nil, fmt.Errorf("reading the UI as elements: %w", err)
	}
	snap := bld.Snapshot()
	snap.Took = time.Since(start)
	return snap, nil
}

var errWalkTimedOut = errors.New("UI Automation call did not return within the budget")

// onCOMThread runs fn on a new locked OS thread with COM and a UIA object,
// under a deadline of budget, and returns errWalkTimedOut when fn has not
// returned by budget+walkMargin (fn goes on until its blocked call returns).
func onCOMThread(ctx context.Context, budget time.Duration, fn func(context.Context, *uia) error) error {
	if stuckWalks.Load() >= maxStuck {
		return errStuck
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, COM state and all
		uninit, err := initCOM()
		if err != nil {
			done <- err
			return
		}
		defer uninit()
		u, err := newUIA()
		if err != nil {
			done <- err
			return
		}
		defer u.release()
		done <- fn(ctx, u)
	}()
	timer := time.NewTimer(budget + walkMargin)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	stuckWalks.Add(1)
	go func() {
		<-done
		stuckWalks.Add(-1)
	}()
	return errWalkTimedOut
}

// uiaNode is what a uitree.Node of this source carries: the element (with
// its cache) and its handle.
type uiaNode struct {
	e *comObj
	h uiaHandle
}

// walkUIA picks the windows of q's scope and walks them into bld.
func walkUIA(ctx context.Context, u *uia, lay layout, q desktop.ElementQuery, bld *uitree.Builder) error {
	var held []*comObj
	defer func() {
		for _, e := range held {
			e.release()
		}
	}()
	wins, err := uiaWindows(u, q, &held)
	if err != nil {
		return err
	}
	names := map[int]string{}
	children := func(ctx context.Context, n *uitree.Node, limit int) ([]*uitree.Node, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := n.Data.(uiaNode)
		kids, err := u.children(w.e, limit, true)
		if err != nil {
			return nil, err
		}
		held = append(held, kids...)
		out := make([]*uitree.Node, len(kids))
		for i, k := range kids {
			p := props(k)
			h := w.h.child(i, p.ControlType)
			out[i] = p.node(lay, h.String())
			out[i].Data = uiaNode{k, h}
		}
		return out, nil
	}
	for _, w := range wins {
		p := props(w.e)
		h := uiaHandle{HWND: w.hwnd, ControlType: p.ControlType}
		n := p.node(lay, h.String())
		n.Data = uiaNode{w.e, h}
		if q.Scope == desktop.ScopeFocused {
			bld.SetWindow(p.Name)
		}
		if !bld.Window(ctx, processName(names, w.pid), n, children) {
			break
		}
	}
	return nil
}

type uiaWindow struct {
	e    *comObj
	hwnd uintptr
	pid  int
}

// uiaWindows returns the top-level windows q's scope covers.
func uiaWindows(u *uia, q desktop.ElementQuery, held *[]*comObj) ([]uiaWindow, error) {
	if q.Scope == desktop.ScopeFocused {
		hwnd := uintptr(win.GetForegroundWindow())
		if hwnd == 0 {
			return nil, errors.New("no window has the focus: bring one to the front, or ask for scope all")
		}
		e, err := u.fromHandle(hwnd, true)
		if err != nil {
			return nil, err
		}
		*held = append(*held, e)
		return []uiaWindow{{e: e, hwnd: hwnd, pid: props(e).PID}}, nil
	}
	root, err := u.root()
	if err != nil {
		return nil, err
	}
	*held = append(*held, root)
	tops, err := u.children(root, 4*q.MaxElements, true)
	if err != nil {
		return nil, err
	}
	*held = append(*held, tops...)
	names := map[int]string{}
	var out []uiaWindow
	var apps []string
	for _, e := range tops {
		p := props(e)
		name := processName(names, p.PID)
		apps = append(apps, name)
		if p.HWND == 0 || (q.Scope == desktop.ScopeApp && !strings.EqualFold(name, q.App)) {
			continue
		}
		out = append(out, uiaWindow{e: e, hwnd: p.HWND, pid: p.PID})
	}
	if q.Scope == desktop.ScopeApp && len(out) == 0 {
		return nil, fmt.Errorf("no application named %q has a window; the applications with windows are: %s", q.App, strings.Join(uniq(apps), ", "))
	}
	return out, nil
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// processName is the executable name of process pid ("notepad"), cached in names.
func processName(names map[int]string, pid int) string {
	if n, ok := names[pid]; ok {
		return n
	}
	name := fmt.Sprintf("pid %d", pid)
	const processQueryLimitedInformation = 0x1000
	if h, err := win.OpenProcess(processQueryLimitedInformation, false, uint32(pid)); err == nil {
		buf := make([]uint16, win.MAX_PATH)
		n := uint32(len(buf))
		if win.QueryFullProcessImageName(h, 0, &buf[0], &n) == nil {
			name = appName(win.UTF16ToString(buf[:n]))
		}
		_ = win.CloseHandle(h)
	}
	names[pid] = name
	return name
}

// resolve finds the element h addresses, checking its control type.
func (u *uia) resolve(h uiaHandle) (*comObj, error) {
	e, err := u.fromHandle(h.HWND, false)
	if err != nil {
		return nil, fmt.Errorf("the element's window is gone (%v): take a fresh snapshot", err)
	}
	for _, i := range h.Path {
		kids, err := u.children(e, i+1, false)
		e.release()
		if err != nil {
			return nil, err
		}
		if len(kids) <= i {
			for _, k := range kids {
				k.release()
			}
			return nil, errors.New("the element is gone from its window: take a fresh snapshot")
		}
		for _, k := range kids[:i] {
			k.release()
		}
		e = kids[i]
	}
	if ct := currentControlType(e); ct != h.ControlType {
		e.release()
		return nil, fmt.Errorf("the element changed (a %s where the snapshot had a %s): take a fresh snapshot",
			controlTypeOf(ct).name, controlTypeOf(h.ControlType).name)
	}
	return e, nil
}

// withPattern resolves the element handle names afresh on the COM thread
// and runs f with its pattern id (interface iid, named name), releasing
// both after; doing says what was attempted when the element lacks it.
func (b *Backend) withPattern(ctx context.Context, handle string, id uintptr, iid *win.GUID, name, doing string, f func(p *comObj) error) error {
	if err := b.ready(); err != nil {
		return err
	}
	if b.opts.NoElements {
		return errElementsOff
	}
	h, err := parseUIAHandle(handle)
	if err != nil {
		return err
	}
	return onCOMThread(ctx, desktop.DefaultBudget, func(ctx context.Context, u *uia) error {
		e, err := u.resolve(h)
		if err != nil {
			return err
		}
		defer e.release()
		p := pattern(e, id, iid)
		if p == nil {
			return fmt.Errorf("%s a %s: %w: it has no UI Automation %s", doing, controlTypeOf(h.ControlType).name, desktop.ErrUnsupported, name)
		}
		defer p.release()
		return f(p)
	})
}

// currentValue reads ValuePattern.CurrentValue of vp.
func currentValue(vp *comObj) (string, error) {
	var got bstr
	if err := hresult("ValuePattern.CurrentValue", vp.call(4, bstrOut(&got))); err != nil {
		return "", err
	}
	defer freeBSTR(got)
	return bstrString(got), nil
}

// SetText sets the element's value through its ValuePattern and
// reads it back.
func (b *Backend) SetText(ctx context.Context, handle, value string) error {
	return b.withPattern(ctx, handle, patternIDValue, &iidValuePattern, "ValuePattern", "setting the value of", func(vp *comObj) error {
		bs, err := newBSTR(value)
		if err != nil {
			return err
		}
		defer freeBSTR(bs)
		if err := hresult("ValuePattern.SetValue", vp.call(3, uintptr(unsafe.Pointer(bs)))); err != nil {
			return err
		}
		s, err := currentValue(vp)
		if err != nil {
			return err
		}
		if s != value {
			return fmt.Errorf("ValuePattern.SetValue did not take: the element reads %d characters back, not the %d set", len(s), len(value))
		}
		return nil
	})
}

// Text reads the element's value through its ValuePattern.
func (b *Backend) Text(ctx context.Context, handle string) (string, error) {
	var text string
	err := b.withPattern(ctx, handle, patternIDValue, &iidValuePattern, "ValuePattern", "reading the value of", func(vp *comObj) error {
		var err error
		text, err = currentValue(vp)
		return err
	})
	return text, err
}

// Press performs the element's default action through its InvokePattern.
func (b *Backend) Press(ctx context.Context, handle string) error {
	return b.withPattern(ctx, handle, patternIDInvoke, &iidInvokePattern, "InvokePattern", "invoking", func(ip *comObj) error {
		return hresult("InvokePattern.Invoke", ip.call(3))
	})
}
