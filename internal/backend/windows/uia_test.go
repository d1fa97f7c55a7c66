package windows

import (
	"context"
	"fmt"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/uitree"
)

func TestControlTypesMapToRoles(t *testing.T) {
	for id, want := range map[int]desktop.Role{
		50000: desktop.RoleButton, 50002: desktop.RoleCheckbox, 50003: desktop.RoleCombobox, 50004: desktop.RoleTextbox,
		50005: desktop.RoleLink, 50007: desktop.RoleListItem, 50008: desktop.RoleList, 50011: desktop.RoleMenuItem,
		50013: desktop.RoleRadio, 50018: desktop.RoleTabList, 50019: desktop.RoleTab, 50020: desktop.RoleText,
		50024: desktop.RoleTreeItem, 50029: desktop.RoleRow, 50031: desktop.RoleButton, 50032: desktop.RoleWindow,
		50033: desktop.RoleGeneric, 50035: desktop.RoleColumnHeader, 99999: desktop.RoleGeneric,
	} {
		if got := controlTypeOf(id).role; got != want {
			t.Errorf("control type %d (%s) -> %q, want %q", id, controlTypeOf(id).name, got, want)
		}
	}
	for id := 50000; id <= 50040; id++ {
		ct, ok := controlTypes[id]
		if !ok {
			t.Errorf("control type %d is not in the table", id)
			continue
		}
		// The platform names are UIA's, and normalize as the roles do.
		if ct.role != desktop.RoleGeneric && uitree.NormalizeRole(string(ct.role), desktop.States{}) != ct.role {
			t.Errorf("%s maps to %q, which is no normalized role", ct.name, ct.role)
		}
	}
	if n := controlTypeOf(50100).name; n != "ControlType50100" {
		t.Errorf("an unknown control type is named %q", n)
	}
}

func TestPropsToNode(t *testing.T) {
	lay := mustLayout(t, mon("A", 0, 0, 2880, 1620, 144, true)) // 150%
	edit := uiaProps{ControlType: 50004, Name: "Name", Rect: physRect{150, 300, 300, 36}, Enabled: true, Focused: true,
		HasValue: true, Value: "Ada", Toggle: patternUnsupported, Expand: patternUnsupported}
	n := edit.node(lay, "h")
	if n.Role != desktop.RoleTextbox || n.PlatformRole != "Edit" || n.Value != "Ada" || !n.States.Editable || !n.States.Focused || !n.States.Enabled {
		t.Errorf("edit: %+v", n)
	}
	if n.Box != rect(100, 200, 200, 24) {
		t.Errorf("edit box %v at 150%%, want 200x24+100+200", n.Box)
	}
	ro := edit
	ro.ReadOnly = true
	if ro.node(lay, "").States.Editable {
		t.Error("a read-only edit is editable")
	}
	pw := edit
	pw.Password = true
	if n := pw.node(lay, ""); n.Value != "" || !n.States.Protected {
		t.Errorf("password: value %q protected %v", n.Value, n.States.Protected)
	}
	cb := uiaProps{ControlType: 50002, Name: "Remember", Toggle: toggleOn, Expand: patternUnsupported, Enabled: true}
	if n := cb.node(lay, ""); !n.States.Checked || !n.Leaf {
		t.Errorf("checkbox: %+v", n)
	}
	tree := uiaProps{ControlType: 50024, Name: "Folder", Toggle: patternUnsupported, Expand: expandExpanded, HasSelected: true, Selected: true}
	if n := tree.node(lay, ""); !n.States.Expanded || !n.States.Selected || n.Leaf {
		t.Errorf("tree item: %+v", n)
	}
	slider := uiaProps{ControlType: 50015, HasRange: true, Range: 42.5, Toggle: patternUnsupported, Expand: patternUnsupported}
	if v := slider.node(lay, "").Value; v != "42.5" {
		t.Errorf("slider value %q", v)
	}
	off := uiaProps{ControlType: 50000, Name: "Hidden", Offscreen: true, Rect: physRect{0, 0, 10, 10}}
	if !off.node(lay, "").Hidden {
		t.Error("an offscreen element is not hidden")
	}
}

func TestLogicalRect(t *testing.T) {
	// 100%, 150%, and mixed: a 100% primary with a 150% monitor right of it.
	one := mustLayout(t, mon("A", 0, 0, 1920, 1080, 96, true))
	if got := one.logicalRect(physRect{10, 20, 30, 40}); got != rect(10, 20, 30, 40) {
		t.Errorf("100%%: %v", got)
	}
	half := mustLayout(t, mon("A", 0, 0, 2880, 1620, 144, true))
	if got := half.logicalRect(physRect{300, 150, 150, 45}); got != rect(200, 100, 100, 30) {
		t.Errorf("150%%: %v, want 100x30+200+100", got)
	}
	mixed := mustLayout(t, mon("A", 0, 0, 1920, 1080, 96, true), mon("B", 1920, 0, 2880, 1620, 144, false))
	if got := mixed.logicalRect(physRect{1920 + 300, 150, 150, 45}); got != rect(1920+200, 100, 100, 30) {
		t.Errorf("mixed, on the 150%% monitor: %v, want 100x30+2120+100", got)
	}
	if b := mixed.logicalBounds(); fmt.Sprint(b) != fmt.Sprint([]any{rect(0, 0, 1920, 1080), rect(1920, 0, 1920, 1080)}) {
		t.Errorf("bounds %v", b)
	}
	if got := mixed.logicalRect(physRect{100, 100, 0, 10}); !got.Empty() {
		t.Errorf("an empty rectangle maps to %v", got)
	}
	neg := mustLayout(t, mon("L", -2880, 0, 2880, 1620, 144, false), mon("P", 0, 0, 1920, 1080, 96, true))
	if got := neg.logicalRect(physRect{-2880 + 30, 30, 300, 60}); got != rect(-1920+20, 20, 200, 40) {
		t.Errorf("left of the primary at 150%%: %v, want 200x40-1900+20", got)
	}
}

func TestUIAHandles(t *testing.T) {
	h := uiaHandle{HWND: 0x1a2b, ControlType: 50032}.child(3, 50026).child(0, 50000)
	s := h.String()
	back, err := parseUIAHandle(s)
	if err != nil || fmt.Sprint(back) != fmt.Sprint(h) {
		t.Errorf("%q parsed back as %+v, %v; want %+v", s, back, err, h)
	}
	if w, err := parseUIAHandle(uiaHandle{HWND: 7, ControlType: 50032}.String()); err != nil || len(w.Path) != 0 {
		t.Errorf("a window's handle: %+v %v", w, err)
	}
	for _, bad := range []string{"", "atspi:/org/a11y", "uia:zz:1:50000", "uia:0:1:50000", "uia:1a:x:50000", "uia:1a:-1:50000"} {
		if _, err := parseUIAHandle(bad); err == nil {
			t.Errorf("handle %q accepted", bad)
		}
	}
}

func TestAppName(t *testing.T) {
	for in, want := range map[string]string{`C:\Windows\notepad.exe`: "notepad", `C:\x\Code.EXE`: "Code", "calc": "calc", `C:/a/b.exe`: "b"} {
		if got := appName(in); got != want {
			t.Errorf("appName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUIANodesThroughTheBuilder walks a UIA-shaped tree (a window whose
// list has thousands of items) through the builder: the list is cut at the
// caps and leaves are never asked for children.
func TestUIANodesThroughTheBuilder(t *testing.T) {
	lay := mustLayout(t, mon("A", 0, 0, 1920, 1080, 96, true))
	winP := uiaProps{ControlType: 50032, Name: "Form", Rect: physRect{0, 0, 800, 600}, Toggle: -1, Expand: -1}
	list := uiaProps{ControlType: 50008, Name: "Rows", Rect: physRect{0, 0, 800, 600}, Toggle: -1, Expand: -1}
	button := uiaProps{ControlType: 50000, Name: "OK", Rect: physRect{0, 0, 80, 30}, Toggle: -1, Expand: -1, Enabled: true}
	asked := map[string]int{}
	children := func(ctx context.Context, n *uitree.Node, limit int) ([]*uitree.Node, error) {
		asked[n.Name]++
		switch n.Name {
		case "Form":
			return []*uitree.Node{button.node(lay, "b"), list.node(lay, "l")}, nil
		case "Rows":
			var out []*uitree.Node
			for i := range min(limit, 9860) {
				p := uiaProps{ControlType: 50007, Name: fmt.Sprintf("row %d", i), Rect: physRect{0, i % 600, 800, 20}, Toggle: -1, Expand: -1}
				out = append(out, p.node(lay, ""))
			}
			return out, nil
		}
		return nil, nil
	}
	q, _ := desktop.ElementQuery{MaxElements: 100}.Normalize()
	b := uitree.NewBuilder("uia", q)
	b.Window(context.Background(), "app", winP.node(lay, "w"), children)
	s := b.Snapshot()
	if len(s.Elements) != 100 || s.TruncatedBy != "max_elements" {
		t.Errorf("%d elements truncated by %q; want 100, max_elements", len(s.Elements), s.TruncatedBy)
	}
	if asked["OK"] != 0 {
		t.Error("a button was asked for its children")
	}
	if asked["Rows"] != 1 {
		t.Errorf("the list was asked for its children %d times, want once", asked["Rows"])
	}
}
