package darwin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/uitree"
)

// sysAX implements axAPI with the AX functions of ApplicationServices.
type sysAX struct {
	b *Backend
	a *api

	once  sync.Once
	attrs uintptr            // CFArray of the attribute names Attributes reads
	names map[string]uintptr // CFStrings by name, created once
}

// errAXUnresponsive is an application that did not answer an AX call
// (kAXErrorCannotComplete after the messaging timeout).
var errAXUnresponsive = fmt.Errorf("the application did not answer the accessibility call: %w", uitree.ErrUnresponsive)

// AX error codes (AXError.h).
const (
	axErrSuccess              = 0
	axErrAttributeUnsupported = -25205
	axErrActionUnsupported    = -25206
	axErrCannotComplete       = -25204
	axErrAPIDisabled          = -25211
	axErrNoValue              = -25212
	axValueCGRect             = 3 // kAXValueCGRectType
	axMessagingTimeout        = 1 // seconds an application may take per call
)

var axAttrNames = []string{"AXRole", "AXSubrole", "AXTitle", "AXDescription", "AXValue", "AXFrame",
	"AXEnabled", "AXFocused", "AXSelected", "AXExpanded", "AXChildren"}

func (s *sysAX) str(name string) uintptr {
	s.once.Do(func() {
		s.names = map[string]uintptr{}
		for _, n := range append(axAttrNames, "AXWindows", "AXPress", "AXValue") {
			b := append([]byte(n), 0)
			s.names[n] = s.a.CFStringCreateWithCString(0, &b[0], cfStringUTF8)
		}
		vals := make([]uintptr, len(axAttrNames))
		for i, n := range axAttrNames {
			vals[i] = s.names[n]
		}
		s.attrs = s.a.CFArrayCreate(0, &vals[0], len(vals), s.a.kCFTypeArrayCallBacks)
	})
	return s.names[name]
}

func axErr(what string, code int32) error {
	switch code {
	case axErrSuccess:
		return nil
	case axErrCannotComplete:
		return fmt.Errorf("%s: %w", what, errAXUnresponsive)
	case axErrAPIDisabled:
		return axPermissionError()
	case axErrAttributeUnsupported, axErrActionUnsupported, axErrNoValue:
		return fmt.Errorf("%s: %w (AXError %d)", what, desktop.ErrUnsupported, code)
	}
	return fmt.Errorf("%s: AXError %d", what, code)
}

func (s *sysAX) Trusted() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.b.accessibilityTrusted(false)
}

// Apps lists the owners of on-screen ordinary windows, front to back.
func (s *sysAX) Apps() ([]axApp, error) {
	a := s.a
	if a.kCGWindowOwnerPID == 0 {
		return nil, errors.New("macOS: kCGWindowOwnerPID is missing: the element tree needs macOS 10.15 or later")
	}
	list := a.CGWindowListCopyWindowInfo(windowListOnScreenOnly|windowListExcludeDesktopElements, 0)
	if list == 0 {
		return nil, errors.New("macOS: CGWindowListCopyWindowInfo returned nothing: run guiagent inside a logged-in GUI session")
	}
	defer a.CFRelease(list)
	var out []axApp
	seen := map[int]bool{}
	for i := range a.CFArrayGetCount(list) {
		d := a.CFArrayGetValueAtIndex(list, i)
		if d == 0 || a.CFGetTypeID(d) != a.CFDictionaryGetTypeID() {
			continue
		}
		if layer, ok := a.cfInt(a.CFDictionaryGetValue(d, a.kCGWindowLayer)); !ok || layer != 0 {
			continue
		}
		pid, ok := a.cfInt(a.CFDictionaryGetValue(d, a.kCGWindowOwnerPID))
		if !ok || seen[int(pid)] {
			continue
		}
		seen[int(pid)] = true
		out = append(out, axApp{PID: int(pid), Name: a.cfString(a.CFDictionaryGetValue(d, a.kCGWindowOwnerName))})
	}
	return out, nil
}

func (s *sysAX) Frontmost() (axApp, error) {
	apps, err := s.Apps()
	if err != nil {
		return axApp{}, err
	}
	if len(apps) == 0 {
		return axApp{}, errors.New("no application has a window on screen: bring one to the front, or ask for scope all")
	}
	return apps[0], nil
}

func (s *sysAX) Windows(pid int) ([]axRef, error) {
	a := s.a
	app := a.AXUIElementCreateApplication(int32(pid))
	if app == 0 {
		return nil, fmt.Errorf("AXUIElementCreateApplication(%d) failed", pid)
	}
	defer a.CFRelease(app)
	if a.AXUIElementSetMessagingTimeout != nil {
		a.AXUIElementSetMessagingTimeout(app, axMessagingTimeout)
	}
	var arr uintptr
	if err := axErr("AXWindows", a.AXUIElementCopyAttributeValue(app, s.str("AXWindows"), &arr)); err != nil {
		return nil, err
	}
	defer a.CFRelease(arr)
	return s.retainedElements(arr), nil
}

// retainedElements returns the elements of a CFArray, each retained.
func (s *sysAX) retainedElements(arr uintptr) []axRef {
	a := s.a
	if arr == 0 || a.CFGetTypeID(arr) != a.CFArrayGetTypeID() {
		return nil
	}
	n := a.CFArrayGetCount(arr)
	out := make([]axRef, 0, n)
	for i := range n {
		if e := a.CFArrayGetValueAtIndex(arr, i); e != 0 {
			out = append(out, axRef(a.CFRetain(e)))
		}
	}
	return out
}

func (s *sysAX) Attributes(e axRef) (axAttrs, error) {
	a := s.a
	var vals uintptr
	s.str("") // creates the names and s.attrs
	if err := axErr("AXUIElementCopyMultipleAttributeValues", a.AXUIElementCopyMultipleAttributeValues(uintptr(e), s.attrs, 0, &vals)); err != nil {
		return axAttrs{}, err
	}
	defer a.CFRelease(vals)
	get := func(i int) uintptr {
		if i >= a.CFArrayGetCount(vals) {
			return 0
		}
		return a.CFArrayGetValueAtIndex(vals, i)
	}
	boolean := func(v uintptr) (bool, bool) {
		if v == 0 || a.CFGetTypeID(v) != a.CFBooleanGetTypeID() {
			return false, false
		}
		return a.CFBooleanGetValue(v), true
	}
	var out axAttrs
	out.Role, out.Subrole = a.cfString(get(0)), a.cfString(get(1))
	out.Title, out.Description = a.cfString(get(2)), a.cfString(get(3))
	switch v := get(4); {
	case v != 0 && a.CFGetTypeID(v) == a.CFStringGetTypeID():
		out.Value = a.cfString(v)
	case v != 0 && a.CFGetTypeID(v) == a.CFNumberGetTypeID():
		if f, ok := a.cfFloat(v); ok {
			out.Value = fmt.Sprint(f)
		}
	case v != 0 && a.CFGetTypeID(v) == a.CFBooleanGetTypeID():
		if a.CFBooleanGetValue(v) {
			out.Value = "1"
		} else {
			out.Value = "0"
		}
	}
	if v := get(5); v != 0 && a.AXValueGetTypeID != nil && a.CFGetTypeID(v) == a.AXValueGetTypeID() {
		out.HasFrame = a.AXValueGetValue(v, axValueCGRect, unsafe.Pointer(&out.Frame))
	}
	out.Enabled, out.HasEnabled = boolean(get(6))
	out.Focused, _ = boolean(get(7))
	out.Selected, _ = boolean(get(8))
	out.Expanded, _ = boolean(get(9))
	out.Children = s.retainedElements(get(10))
	return out, nil
}

func (s *sysAX) Press(e axRef) error {
	return axErr("AXPress", s.a.AXUIElementPerformAction(uintptr(e), s.str("AXPress")))
}

func (s *sysAX) SetValue(e axRef, v string) error {
	b := append([]byte(v), 0)
	str := s.a.CFStringCreateWithCString(0, &b[0], cfStringUTF8)
	if str == 0 {
		return errors.New("the value is not valid UTF-8 text")
	}
	defer s.a.CFRelease(str)
	return axErr("setting AXValue", s.a.AXUIElementSetAttributeValue(uintptr(e), s.str("AXValue"), str))
}

func (s *sysAX) Value(e axRef) (string, error) {
	var v uintptr
	if err := axErr("AXValue", s.a.AXUIElementCopyAttributeValue(uintptr(e), s.str("AXValue"), &v)); err != nil {
		return "", err
	}
	defer s.a.CFRelease(v)
	return s.a.cfString(v), nil
}

func (s *sysAX) Release(e axRef) {
	if e != 0 {
		s.a.CFRelease(uintptr(e))
	}
}

// elements returns the backend's AX element source, or an error when this
// macOS lacks the AX functions.
func (b *Backend) elements() (*axSource, error) {
	if b.opts.NoElements {
		return nil, fmt.Errorf("reading the UI as elements: %w: accessibility is off (set the accessibility setting to auto; guiagent doctor names it)", desktop.ErrUnsupported)
	}
	a, err := b.apiReady()
	if err != nil {
		return nil, err
	}
	if a.AXUIElementCreateApplication == nil || a.AXUIElementCopyMultipleAttributeValues == nil || a.AXValueGetValue == nil {
		return nil, fmt.Errorf("reading the UI as elements: %w: this macOS lacks the AX element functions", desktop.ErrUnsupported)
	}
	b.axOnce.Do(func() {
		b.ax = &axSource{ax: &sysAX{b: b, a: a}, bounds: func(ctx context.Context) ([]geom.Rect, error) {
			ds, err := b.Displays(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]geom.Rect, len(ds))
			for i, d := range ds {
				out[i] = d.Bounds
			}
			return out, nil
		}}
	})
	return b.ax, nil
}

var (
	_ desktop.ElementSource = (*Backend)(nil)
	_ desktop.ElementGate   = (*Backend)(nil)
	_ desktop.ElementActor  = (*Backend)(nil)
)

// ElementsAvailable reports whether the element source is on (Options.NoElements).
func (b *Backend) ElementsAvailable() bool { return !b.opts.NoElements }

// Elements reads the UI through the macOS Accessibility API (AX). Boxes are
// AX frames, global top-left points: the global logical pixels of the
// backend's displays. It needs the Accessibility permission.
func (b *Backend) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	s, err := b.elements()
	if err != nil {
		return nil, err
	}
	return s.Elements(ctx, q)
}

// SetText sets an element's AXValue and reads it back.
func (b *Backend) SetText(ctx context.Context, handle, value string) error {
	s, err := b.elements()
	if err != nil {
		return err
	}
	return s.SetText(ctx, handle, value)
}

// Text reads an element's AXValue.
func (b *Backend) Text(ctx context.Context, handle string) (string, error) {
	s, err := b.elements()
	if err != nil {
		return "", err
	}
	return s.Text(ctx, handle)
}

// Press performs AXPress on an element.
func (b *Backend) Press(ctx context.Context, handle string) error {
	s, err := b.elements()
	if err != nil {
		return err
	}
	return s.Press(ctx, handle)
}
