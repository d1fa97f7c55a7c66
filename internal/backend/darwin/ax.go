package darwin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/uitree"
)

// The element source over the macOS Accessibility (AX) API, written against
// axAPI so that the walk, roles, frames, bounds and the permission path are
// tested on every OS with a fake (ax_test.go); ax_darwin.go implements axAPI
// with purego. Untested on a real Mac.

// axRef is an AXUIElementRef (retained; Release frees it).
type axRef uintptr

// axAttrs are the attributes one AXUIElementCopyMultipleAttributeValues call
// reads of an element.
type axAttrs struct {
	Role, Subrole, Title, Description, Value string
	Frame                                    cgRect // AXFrame: global top-left points
	HasFrame                                 bool
	Enabled, Focused, HasEnabled             bool
	Selected, Expanded                       bool
	Children                                 []axRef // AXChildren, retained
}

// axApp is a running application with windows.
type axApp struct {
	PID  int
	Name string
}

// axAPI is what the element source needs of the AX API.
type axAPI interface {
	// Trusted is AXIsProcessTrusted: the Accessibility permission.
	Trusted() bool
	// Frontmost is the application owning the frontmost ordinary window.
	Frontmost() (axApp, error)
	// Apps lists the applications with windows on screen, front to back.
	Apps() ([]axApp, error)
	// Windows returns an application's AXWindows, retained.
	Windows(pid int) ([]axRef, error)
	// Attributes reads e's attributes in one call.
	Attributes(e axRef) (axAttrs, error)
	Press(e axRef) error
	SetValue(e axRef, v string) error
	Value(e axRef) (string, error)
	Release(e axRef)
}

// axPermissionError says how to grant the Accessibility permission, which
// reading other applications' elements needs as input does.
func axPermissionError() error {
	return fmt.Errorf("reading the UI as elements: %w, so macOS hides other applications' UI elements: grant it to %s in System Settings > Privacy & Security > Accessibility, then restart that app",
		ErrAccessibility, whoNeedsPermission())
}

// axRoles maps AX roles (and role/subrole pairs) to normalized roles.
var axRoles = map[string]desktop.Role{
	"AXButton": desktop.RoleButton, "AXPopUpButton": desktop.RoleCombobox, "AXMenuButton": desktop.RoleButton,
	"AXTextField": desktop.RoleTextbox, "AXTextArea": desktop.RoleTextbox, "AXSearchField": desktop.RoleTextbox,
	"AXCheckBox": desktop.RoleCheckbox, "AXRadioButton": desktop.RoleRadio, "AXComboBox": desktop.RoleCombobox,
	"AXLink": desktop.RoleLink, "AXMenu": desktop.RoleMenu, "AXMenuBar": desktop.RoleMenuBar,
	"AXMenuItem": desktop.RoleMenuItem, "AXMenuBarItem": desktop.RoleMenuItem, "AXTabGroup": desktop.RoleTabList,
	"AXList": desktop.RoleList, "AXOutline": desktop.RoleTree, "AXTable": desktop.RoleTable, "AXBrowser": desktop.RoleTree,
	"AXRow": desktop.RoleRow, "AXCell": desktop.RoleCell, "AXColumn": desktop.RoleGeneric,
	"AXSlider": desktop.RoleSlider, "AXIncrementor": desktop.RoleSpinButton, "AXStepper": desktop.RoleSpinButton,
	"AXScrollBar": desktop.RoleScrollBar, "AXProgressIndicator": desktop.RoleProgressBar, "AXBusyIndicator": desktop.RoleProgressBar,
	"AXHeading": desktop.RoleHeading, "AXStaticText": desktop.RoleText, "AXImage": desktop.RoleImage,
	"AXSheet": desktop.RoleDialog, "AXDrawer": desktop.RoleGroup, "AXWindow": desktop.RoleWindow,
	"AXToolbar": desktop.RoleToolbar, "AXHelpTag": desktop.RoleTooltip, "AXGroup": desktop.RoleGroup,
	"AXRadioGroup": desktop.RoleGroup, "AXWebArea": desktop.RoleDocument, "AXSplitter": desktop.RoleSeparator,
	"AXApplication": desktop.RoleApplication, "AXScrollArea": desktop.RoleGeneric, "AXSplitGroup": desktop.RoleGeneric,
	"AXLayoutArea": desktop.RoleGeneric, "AXUnknown": desktop.RoleGeneric, "AXDisclosureTriangle": desktop.RoleButton,
	"AXColorWell": desktop.RoleButton, "AXDateField": desktop.RoleTextbox, "AXLevelIndicator": desktop.RoleProgressBar,
	"AXValueIndicator": desktop.RoleGeneric, "AXGrowArea": desktop.RoleGeneric, "AXMatte": desktop.RoleGeneric,
	// subroles that change the role
	"AXWindow/AXDialog": desktop.RoleDialog, "AXWindow/AXSystemDialog": desktop.RoleDialog,
	"AXRadioButton/AXTabButton": desktop.RoleTab, "AXButton/AXTabButton": desktop.RoleTab,
	"AXRow/AXOutlineRow": desktop.RoleTreeItem, "AXGroup/AXApplicationAlert": desktop.RoleAlert,
	"AXGroup/AXApplicationStatus": desktop.RoleStatus, "AXGroup/AXLandmarkMain": desktop.RoleGroup,
	"AXTextField/AXSecureTextField": desktop.RoleTextbox, "AXButton/AXToggle": desktop.RoleButton,
	"AXCheckBox/AXSwitch": desktop.RoleCheckbox, "AXStaticText/AXHeading": desktop.RoleHeading,
	"AXList/AXContentList": desktop.RoleList, "AXGroup/AXDocument": desktop.RoleDocument,
}

// axRole maps an AX role and subrole to a normalized role and the platform
// role shown ("AXButton", "AXWindow/AXDialog").
func axRole(role, subrole string) (desktop.Role, string) {
	if subrole != "" {
		if r, ok := axRoles[role+"/"+subrole]; ok {
			return r, role + "/" + subrole
		}
	}
	if r, ok := axRoles[role]; ok {
		return r, role
	}
	return desktop.RoleGeneric, role
}

// axLeaves are roles whose children are not worth reading.
var axLeaves = map[string]bool{"AXButton": true, "AXTextField": true, "AXStaticText": true, "AXImage": true,
	"AXCheckBox": true, "AXRadioButton": true, "AXSlider": true, "AXScrollBar": true, "AXProgressIndicator": true,
	"AXIncrementor": true, "AXSplitter": true, "AXPopUpButton": true, "AXMenuButton": true, "AXValueIndicator": true}

// frameRect maps an AX frame (global top-left points: the space the
// backend's displays are in) to a global logical rectangle.
func frameRect(a axAttrs) geom.Rect {
	if !a.HasFrame || a.Frame.W <= 0 || a.Frame.H <= 0 {
		return geom.Rect{}
	}
	return pointsRect(a.Frame)
}

// axNode turns an element's attributes into a uitree node.
func axNode(a axAttrs, handle string) *uitree.Node {
	role, platform := axRole(a.Role, a.Subrole)
	name := a.Title
	if name == "" {
		name = a.Description
	}
	secure := a.Subrole == "AXSecureTextField"
	st := desktop.States{Focused: a.Focused, Enabled: a.Enabled || !a.HasEnabled, Selected: a.Selected, Expanded: a.Expanded,
		Editable: (role == desktop.RoleTextbox || role == desktop.RoleCombobox) && (a.Enabled || !a.HasEnabled), Protected: secure}
	n := &uitree.Node{PlatformRole: platform, Role: role, Name: name, States: st, Box: frameRect(a),
		Leaf: axLeaves[a.Role], Handle: handle, Clips: a.Role == "AXScrollArea"}
	switch {
	case secure:
	case role == desktop.RoleCheckbox || role == desktop.RoleRadio || (a.Role == "AXButton" && a.Subrole == "AXToggle"):
		n.States.Checked = a.Value == "1"
	case role == desktop.RoleText && name == "":
		n.Name = a.Value // a static text's text is its value
	case role == desktop.RoleTextbox || role == desktop.RoleCombobox || role == desktop.RoleSlider || role == desktop.RoleSpinButton || role == desktop.RoleProgressBar:
		n.Value = a.Value
	}
	return n
}

// axHandle addresses an element: the application's pid and child indices
// from its window list, with the role the element had.
type axHandle struct {
	PID  int
	Path []int // Path[0] is the window's index in AXWindows
	Role string
}

func (h axHandle) String() string {
	p := make([]string, len(h.Path))
	for i, v := range h.Path {
		p[i] = strconv.Itoa(v)
	}
	return "ax:" + strconv.Itoa(h.PID) + ":" + strings.Join(p, ".") + ":" + h.Role
}

func (h axHandle) child(i int, role string) axHandle {
	return axHandle{PID: h.PID, Path: append(append([]int(nil), h.Path...), i), Role: role}
}

func parseAXHandle(s string) (axHandle, error) {
	bad := fmt.Errorf("element handle %q is not an accessibility handle of this backend: take a fresh snapshot and use its refs", s)
	f := strings.SplitN(s, ":", 4)
	if len(f) != 4 || f[0] != "ax" || f[2] == "" {
		return axHandle{}, bad
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return axHandle{}, bad
	}
	h := axHandle{PID: pid, Role: f[3]}
	for _, p := range strings.Split(f[2], ".") {
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 {
			return axHandle{}, bad
		}
		h.Path = append(h.Path, i)
	}
	return h, nil
}

// axSource is the element source over an axAPI.
type axSource struct {
	ax     axAPI
	bounds func(ctx context.Context) ([]geom.Rect, error) // the displays, global points
}

// walkMargin is how long past its budget a snapshot may take to give up on
// a call that blocks.
const walkMargin = 250 * time.Millisecond

// Elements walks the applications q's scope covers. The walk runs in a
// goroutine and is abandoned at the budget (plus walkMargin) if an
// application's call blocks.
func (s *axSource) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	start := time.Now()
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	if !s.ax.Trusted() {
		return nil, axPermissionError()
	}
	if q.Bounds == nil && s.bounds != nil {
		if q.Bounds, err = s.bounds(ctx); err != nil {
			return nil, err
		}
	}
	apps, err := s.scopeApps(q)
	if err != nil {
		return nil, err
	}
	bld := uitree.NewBuilder("ax", q)
	wctx, cancel := context.WithTimeout(ctx, q.Budget)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.walk(wctx, q, apps, bld)
	}()
	timer := time.NewTimer(q.Budget + walkMargin)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		bld.Abandon("unresponsive")
	}
	snap := bld.Snapshot()
	snap.Took = time.Since(start)
	return snap, nil
}

func (s *axSource) scopeApps(q desktop.ElementQuery) ([]axApp, error) {
	if q.Scope == desktop.ScopeFocused {
		a, err := s.ax.Frontmost()
		if err != nil {
			return nil, err
		}
		return []axApp{a}, nil
	}
	all, err := s.ax.Apps()
	if err != nil {
		return nil, err
	}
	if q.Scope == desktop.ScopeAll {
		return all, nil
	}
	var names []string
	for _, a := range all {
		if strings.EqualFold(a.Name, q.App) {
			return []axApp{a}, nil
		}
		names = append(names, a.Name)
	}
	return nil, fmt.Errorf("no application named %q has a window; the applications with windows are: %s", q.App, strings.Join(names, ", "))
}

type axData struct {
	ref axRef
	h   axHandle
	kid []axRef
}

func (s *axSource) walk(ctx context.Context, q desktop.ElementQuery, apps []axApp, bld *uitree.Builder) {
	var held []axRef
	defer func() {
		for _, r := range held {
			s.ax.Release(r)
		}
	}()
	node := func(r axRef, h axHandle) (*uitree.Node, error) {
		a, err := s.ax.Attributes(r)
		if err != nil {
			return nil, err
		}
		held = append(held, a.Children...)
		h.Role = a.Role
		n := axNode(a, h.String())
		n.Data = axData{ref: r, h: h, kid: a.Children}
		return n, nil
	}
	children := func(ctx context.Context, n *uitree.Node, limit int) ([]*uitree.Node, error) {
		d := n.Data.(axData)
		var out []*uitree.Node
		for i, k := range d.kid {
			if len(out) == limit {
				break
			}
			if err := ctx.Err(); err != nil {
				return out, err
			}
			c, err := node(k, d.h.child(i, ""))
			if err != nil {
				if errors.Is(err, uitree.ErrUnresponsive) {
					return out, err
				}
				continue // an element that went away meanwhile
			}
			out = append(out, c)
		}
		return out, nil
	}
	for _, app := range apps {
		wins, err := s.ax.Windows(app.PID)
		if err != nil {
			if errors.Is(err, uitree.ErrUnresponsive) {
				bld.Truncate("unresponsive")
			}
			continue
		}
		held = append(held, wins...)
		for i, w := range wins {
			n, err := node(w, axHandle{PID: app.PID, Path: []int{i}})
			if err != nil {
				continue
			}
			if q.Scope == desktop.ScopeFocused {
				bld.SetWindow(n.Name)
			}
			if !bld.Window(ctx, app.Name, n, children) {
				return
			}
			if q.Scope == desktop.ScopeFocused {
				break // the front window of the front application
			}
		}
	}
}

// resolve finds the element h addresses, checking its role; the caller
// releases it.
func (s *axSource) resolve(h axHandle) (axRef, error) {
	if !s.ax.Trusted() {
		return 0, axPermissionError()
	}
	wins, err := s.ax.Windows(h.PID)
	if err != nil {
		return 0, fmt.Errorf("the element's application is gone (%v): take a fresh snapshot", err)
	}
	gone := errors.New("the element is gone from its window: take a fresh snapshot")
	if len(h.Path) == 0 || h.Path[0] >= len(wins) {
		s.releaseAll(wins)
		return 0, gone
	}
	cur := wins[h.Path[0]]
	s.releaseAll(wins[:h.Path[0]])
	s.releaseAll(wins[h.Path[0]+1:])
	var a axAttrs
	for _, i := range h.Path[1:] {
		if a, err = s.ax.Attributes(cur); err != nil {
			s.ax.Release(cur)
			return 0, err
		}
		s.ax.Release(cur)
		if i >= len(a.Children) {
			s.releaseAll(a.Children)
			return 0, gone
		}
		cur = a.Children[i]
		s.releaseAll(a.Children[:i])
		s.releaseAll(a.Children[i+1:])
	}
	if a, err = s.ax.Attributes(cur); err == nil {
		s.releaseAll(a.Children)
	}
	if err != nil || a.Role != h.Role {
		s.ax.Release(cur)
		return 0, fmt.Errorf("the element changed (an %s where the snapshot had an %s): take a fresh snapshot", a.Role, h.Role)
	}
	return cur, nil
}

func (s *axSource) releaseAll(rs []axRef) {
	for _, r := range rs {
		s.ax.Release(r)
	}
}

// withElement resolves the element handle names afresh and runs f with it,
// releasing it after.
func (s *axSource) withElement(handle string, f func(e axRef) error) error {
	h, err := parseAXHandle(handle)
	if err != nil {
		return err
	}
	e, err := s.resolve(h)
	if err != nil {
		return err
	}
	defer s.ax.Release(e)
	return f(e)
}

// SetText sets AXValue and reads it back.
func (s *axSource) SetText(ctx context.Context, handle, value string) error {
	return s.withElement(handle, func(e axRef) error {
		if err := s.ax.SetValue(e, value); err != nil {
			return err
		}
		got, err := s.ax.Value(e)
		if err != nil {
			return err
		}
		if got != value {
			return fmt.Errorf("setting AXValue did not take: the element reads %d characters back, not the %d set", len(got), len(value))
		}
		return nil
	})
}

// Text reads AXValue.
func (s *axSource) Text(ctx context.Context, handle string) (string, error) {
	var text string
	err := s.withElement(handle, func(e axRef) error {
		var err error
		text, err = s.ax.Value(e)
		return err
	})
	return text, err
}

// Press performs AXPress.
func (s *axSource) Press(ctx context.Context, handle string) error {
	return s.withElement(handle, func(e axRef) error { return s.ax.Press(e) })
}
