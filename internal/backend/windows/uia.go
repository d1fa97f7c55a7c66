package windows

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/uitree"
)

// The pure parts of the UI Automation element source: control types to
// roles, the properties of one element to a uitree.Node, rectangles from
// physical to logical pixels, handles. uia_windows.go does the COM calls.

// controlType is one UIA control type: its id (UIA_ButtonControlTypeId...),
// name, normalized role, and whether its children are worth reading (false:
// a Win32 or WPF button's only child is the text that names it again).
type controlType struct {
	name     string
	role     desktop.Role
	children bool
}

// controlTypes maps UIA control-type ids (UIAutomationClient.h) to roles.
var controlTypes = map[int]controlType{
	50000: {"Button", desktop.RoleButton, false},
	50001: {"Calendar", desktop.RoleTable, true},
	50002: {"CheckBox", desktop.RoleCheckbox, false},
	50003: {"ComboBox", desktop.RoleCombobox, true},
	50004: {"Edit", desktop.RoleTextbox, false},
	50005: {"Hyperlink", desktop.RoleLink, false},
	50006: {"Image", desktop.RoleImage, false},
	50007: {"ListItem", desktop.RoleListItem, true},
	50008: {"List", desktop.RoleList, true},
	50009: {"Menu", desktop.RoleMenu, true},
	50010: {"MenuBar", desktop.RoleMenuBar, true},
	50011: {"MenuItem", desktop.RoleMenuItem, true},
	50012: {"ProgressBar", desktop.RoleProgressBar, false},
	50013: {"RadioButton", desktop.RoleRadio, false},
	50014: {"ScrollBar", desktop.RoleScrollBar, false},
	50015: {"Slider", desktop.RoleSlider, false},
	50016: {"Spinner", desktop.RoleSpinButton, false},
	50017: {"StatusBar", desktop.RoleStatus, true},
	50018: {"Tab", desktop.RoleTabList, true},
	50019: {"TabItem", desktop.RoleTab, true},
	50020: {"Text", desktop.RoleText, false},
	50021: {"ToolBar", desktop.RoleToolbar, true},
	50022: {"ToolTip", desktop.RoleTooltip, false},
	50023: {"Tree", desktop.RoleTree, true},
	50024: {"TreeItem", desktop.RoleTreeItem, true},
	50025: {"Custom", desktop.RoleGeneric, true},
	50026: {"Group", desktop.RoleGroup, true},
	50027: {"Thumb", desktop.RoleGeneric, false},
	50028: {"DataGrid", desktop.RoleTable, true},
	50029: {"DataItem", desktop.RoleRow, true},
	50030: {"Document", desktop.RoleDocument, true},
	50031: {"SplitButton", desktop.RoleButton, true},
	50032: {"Window", desktop.RoleWindow, true},
	50033: {"Pane", desktop.RoleGeneric, true},
	50034: {"Header", desktop.RoleGeneric, true},
	50035: {"HeaderItem", desktop.RoleColumnHeader, false},
	50036: {"Table", desktop.RoleTable, true},
	50037: {"TitleBar", desktop.RoleGeneric, false},
	50038: {"Separator", desktop.RoleSeparator, false},
	50039: {"SemanticZoom", desktop.RoleGeneric, true},
	50040: {"AppBar", desktop.RoleToolbar, true},
}

// controlTypeOf returns the control type with id, or an unknown one (generic,
// children read) named by its number.
func controlTypeOf(id int) controlType {
	if ct, ok := controlTypes[id]; ok {
		return ct
	}
	return controlType{name: "ControlType" + strconv.Itoa(id), role: desktop.RoleGeneric, children: true}
}

// UIA toggle and expand/collapse states (ToggleState, ExpandCollapseState).
const (
	toggleOn           = 1
	expandExpanded     = 1
	expandPartially    = 2
	patternUnsupported = -1 // the element has no such pattern
)

// uiaProps are the cached properties of one element.
type uiaProps struct {
	ControlType int
	Name        string
	PID         int
	HWND        uintptr  // NativeWindowHandle: 0 for an element that is no window
	Rect        physRect // BoundingRectangle, physical pixels of the virtual screen
	Enabled     bool
	Focused     bool
	Offscreen   bool
	Password    bool
	// HasValue: ValuePattern; Value, ReadOnly its properties.
	HasValue bool
	Value    string
	ReadOnly bool
	// HasRange: RangeValuePattern, Range its value.
	HasRange bool
	Range    float64
	Toggle   int // ToggleState, or patternUnsupported
	Expand   int // ExpandCollapseState, or patternUnsupported
	// HasSelected: SelectionItemPattern, Selected its IsSelected.
	HasSelected bool
	Selected    bool
}

// node turns p into a uitree node with its box in global logical pixels.
func (p uiaProps) node(lay layout, handle string) *uitree.Node {
	ct := controlTypeOf(p.ControlType)
	st := desktop.States{
		Focused:   p.Focused,
		Enabled:   p.Enabled,
		Checked:   p.Toggle == toggleOn,
		Selected:  p.HasSelected && p.Selected,
		Expanded:  p.Expand == expandExpanded || p.Expand == expandPartially,
		Editable:  (ct.role == desktop.RoleTextbox || ct.role == desktop.RoleDocument || ct.role == desktop.RoleCombobox) && p.HasValue && !p.ReadOnly && p.Enabled,
		Protected: p.Password,
	}
	n := &uitree.Node{PlatformRole: ct.name, Role: ct.role, Name: p.Name, States: st,
		Box: lay.logicalRect(p.Rect), Hidden: p.Offscreen, Leaf: !ct.children, Handle: handle,
		Clips: ct.role == desktop.RoleList || ct.role == desktop.RoleTree || ct.role == desktop.RoleTable || ct.role == desktop.RoleDocument}
	switch {
	case p.Password:
	case p.HasValue:
		n.Value = p.Value
	case p.HasRange:
		n.Value = strconv.FormatFloat(p.Range, 'f', -1, 64)
	}
	return n
}

// logicalRect maps a rectangle in physical pixels to global logical pixels
// through the monitor under its top-left corner (its far corner through the
// monitor under that one). An empty one stays empty.
func (l layout) logicalRect(r physRect) geom.Rect {
	if r.W <= 0 || r.H <= 0 || len(l.Displays) == 0 {
		return geom.Rect{}
	}
	a := l.toLogical(r.X, r.Y)
	b := l.toLogical(r.X+r.W-1, r.Y+r.H-1)
	return geom.Rect{X: a.X, Y: a.Y, W: max(1, b.X-a.X+1), H: max(1, b.Y-a.Y+1)}
}

// logicalBounds are the displays, the visible area a snapshot is clipped to.
func (l layout) logicalBounds() []geom.Rect {
	out := make([]geom.Rect, len(l.Displays))
	for i, d := range l.Displays {
		out[i] = d.Bounds
	}
	return out
}

// uiaHandle addresses an element for acting on it later: the top-level
// window, the child indices from it, and the control type the element had
// (checked when the handle is resolved, so a changed tree is an error and
// not a press on another control).
type uiaHandle struct {
	HWND        uintptr
	Path        []int
	ControlType int
}

func (h uiaHandle) String() string {
	parts := make([]string, len(h.Path))
	for i, p := range h.Path {
		parts[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("uia:%x:%s:%d", h.HWND, strings.Join(parts, "."), h.ControlType)
}

// child returns the handle of h's child number i.
func (h uiaHandle) child(i, controlType int) uiaHandle {
	return uiaHandle{HWND: h.HWND, Path: append(append([]int(nil), h.Path...), i), ControlType: controlType}
}

func parseUIAHandle(s string) (uiaHandle, error) {
	bad := fmt.Errorf("element handle %q is not a UI Automation handle of this backend: take a fresh snapshot and use its refs", s)
	f := strings.Split(s, ":")
	if len(f) != 4 || f[0] != "uia" {
		return uiaHandle{}, bad
	}
	hwnd, err := strconv.ParseUint(f[1], 16, 64)
	if err != nil || hwnd == 0 {
		return uiaHandle{}, bad
	}
	ct, err := strconv.Atoi(f[3])
	if err != nil {
		return uiaHandle{}, bad
	}
	h := uiaHandle{HWND: uintptr(hwnd), ControlType: ct}
	if f[2] != "" {
		for _, p := range strings.Split(f[2], ".") {
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 {
				return uiaHandle{}, bad
			}
			h.Path = append(h.Path, i)
		}
	}
	return h, nil
}

// appName is the application name UIA elements get: the executable's base
// name without ".exe" ("notepad"), which ElementQuery.App matches.
func appName(exePath string) string {
	base := exePath[strings.LastIndexAny(exePath, `\/`)+1:]
	if strings.EqualFold(strings.ToLower(base[max(0, len(base)-4):]), ".exe") {
		base = base[:len(base)-4]
	}
	return base
}
