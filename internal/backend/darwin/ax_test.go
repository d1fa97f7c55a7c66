package darwin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// fakeAX is an AX tree in memory: refs index elems.
type fakeAX struct {
	trusted  bool
	elems    map[axRef]axAttrs
	windows  map[int][]axRef
	apps     []axApp
	pressed  []axRef
	hang     chan struct{} // Attributes blocks on it when set
	retained int
}

func (f *fakeAX) Trusted() bool { return f.trusted }
func (f *fakeAX) Frontmost() (axApp, error) {
	if len(f.apps) == 0 {
		return axApp{}, errors.New("no app")
	}
	return f.apps[0], nil
}
func (f *fakeAX) Apps() ([]axApp, error) { return f.apps, nil }
func (f *fakeAX) Windows(pid int) ([]axRef, error) {
	f.retained += len(f.windows[pid])
	return append([]axRef(nil), f.windows[pid]...), nil
}
func (f *fakeAX) Attributes(e axRef) (axAttrs, error) {
	if f.hang != nil {
		<-f.hang
	}
	a, ok := f.elems[e]
	if !ok {
		return axAttrs{}, errors.New("invalid element")
	}
	f.retained += len(a.Children)
	a.Children = append([]axRef(nil), a.Children...)
	return a, nil
}
func (f *fakeAX) Press(e axRef) error { f.pressed = append(f.pressed, e); return nil }
func (f *fakeAX) SetValue(e axRef, v string) error {
	a := f.elems[e]
	if a.Role != "AXTextField" {
		return fmt.Errorf("AXValue is not settable: %w", desktop.ErrUnsupported)
	}
	a.Value = v
	f.elems[e] = a
	return nil
}
func (f *fakeAX) Value(e axRef) (string, error) { return f.elems[e].Value, nil }
func (f *fakeAX) Release(e axRef)               { f.retained-- }

// form is TextEdit-like: a window on the second (Retina) display with a
// field, its label, a button, a secure field and a checkbox.
func form() *fakeAX {
	fr := func(x, y, w, h float64) cgRect { return cgRect{x, y, w, h} }
	return &fakeAX{trusted: true, apps: []axApp{{PID: 42, Name: "Form"}}, windows: map[int][]axRef{42: {1}},
		elems: map[axRef]axAttrs{
			1: {Role: "AXWindow", Subrole: "AXStandardWindow", Title: "Sign in", Frame: fr(1440, 25, 600, 400), HasFrame: true, Children: []axRef{2, 3, 4, 5, 6, 7}},
			2: {Role: "AXStaticText", Value: "User:", Frame: fr(1460, 60, 50, 20), HasFrame: true, Enabled: true, HasEnabled: true},
			3: {Role: "AXTextField", Value: "ada", Frame: fr(1520.4, 60, 200, 22), HasFrame: true, Enabled: true, HasEnabled: true, Focused: true},
			4: {Role: "AXTextField", Subrole: "AXSecureTextField", Description: "Password", Value: "secret", Frame: fr(1520, 90, 200, 22), HasFrame: true, Enabled: true, HasEnabled: true},
			5: {Role: "AXCheckBox", Title: "Remember me", Value: "1", Frame: fr(1460, 120, 120, 20), HasFrame: true, Enabled: true, HasEnabled: true},
			6: {Role: "AXButton", Title: "Sign In", Frame: fr(1900, 360, 100, 30), HasFrame: true, Enabled: true, HasEnabled: true},
			7: {Role: "AXButton", Title: "Off screen", Frame: fr(9000, 360, 100, 30), HasFrame: true, Enabled: true, HasEnabled: true},
		}}
}

func displays(context.Context) ([]geom.Rect, error) {
	return []geom.Rect{{W: 1440, H: 900}, {X: 1440, W: 1728, H: 1117}}, nil
}

func TestAXSnapshot(t *testing.T) {
	f := form()
	s := &axSource{ax: f, bounds: displays}
	snap, err := s.Elements(context.Background(), desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range snap.Elements {
		got = append(got, fmt.Sprintf("%s %s %s %q v=%q %v %v <-%s", e.Ref, e.Role, e.PlatformRole, e.Name, e.Value, e.States.List(), e.Box, e.Parent))
	}
	want := []string{
		`e1 window AXWindow "Sign in" v="" [enabled] 600x400+1440+25 <-`,
		`e2 text AXStaticText "User:" v="" [enabled] 50x20+1460+60 <-e1`,
		`e3 textbox AXTextField "User:" v="ada" [focused enabled editable] 200x22+1520+60 <-e1`,
		`e4 textbox AXTextField/AXSecureTextField "Password" v="" [enabled editable protected] 200x22+1520+90 <-e1`,
		`e5 checkbox AXCheckBox "Remember me" v="" [enabled checked] 120x20+1460+120 <-e1`,
		`e6 button AXButton "Sign In" v="" [enabled] 100x30+1900+360 <-e1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("snapshot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if snap.Window != "Sign in" || snap.Source != "ax" || len(snap.Apps) != 1 || snap.Apps[0] != "Form" {
		t.Errorf("window %q source %q apps %v", snap.Window, snap.Source, snap.Apps)
	}
	if f.retained != 0 {
		t.Errorf("%d element refs left retained after the walk", f.retained)
	}

	// Acting by handle: press the button, set the field, refuse a stale handle.
	e6, _ := snap.Lookup("e6")
	if err := s.Press(context.Background(), e6.Handle); err != nil || len(f.pressed) != 1 || f.pressed[0] != 6 {
		t.Errorf("press: %v, pressed %v", err, f.pressed)
	}
	e3, _ := snap.Lookup("e3")
	if err := s.SetText(context.Background(), e3.Handle, "grace"); err != nil || f.elems[3].Value != "grace" {
		t.Errorf("set value: %v, the field holds %q", err, f.elems[3].Value)
	}
	if err := s.SetText(context.Background(), e6.Handle, "x"); !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("setting a button's value: %v, want ErrUnsupported", err)
	}
	f.elems[6] = axAttrs{Role: "AXStaticText"}
	if err := s.Press(context.Background(), e6.Handle); err == nil || !strings.Contains(err.Error(), "fresh snapshot") {
		t.Errorf("a changed element: %v", err)
	}
	if f.retained != 0 {
		t.Errorf("%d element refs left retained after acting", f.retained)
	}
}

func TestAXPermission(t *testing.T) {
	f := form()
	f.trusted = false
	s := &axSource{ax: f, bounds: displays}
	_, err := s.Elements(context.Background(), desktop.ElementQuery{})
	if !errors.Is(err, ErrAccessibility) || !strings.Contains(err.Error(), "System Settings > Privacy & Security > Accessibility") {
		t.Errorf("untrusted: %v", err)
	}
	if err := s.Press(context.Background(), "ax:42:0.5:AXButton"); !errors.Is(err, ErrAccessibility) {
		t.Errorf("untrusted press: %v", err)
	}
}

func TestAXBounds(t *testing.T) {
	f := &fakeAX{trusted: true, apps: []axApp{{PID: 7, Name: "Big"}}, windows: map[int][]axRef{7: {1}},
		elems: map[axRef]axAttrs{1: {Role: "AXWindow", Title: "W", Frame: cgRect{0, 0, 800, 600}, HasFrame: true, Children: []axRef{2}},
			2: {Role: "AXTable", Frame: cgRect{0, 0, 800, 600}, HasFrame: true}}}
	var rows []axRef
	for i := range 9860 {
		r := axRef(100 + i)
		rows = append(rows, r)
		f.elems[r] = axAttrs{Role: "AXRow", Title: fmt.Sprint("row ", i), Frame: cgRect{0, float64(i % 580), 800, 20}, HasFrame: true}
	}
	a := f.elems[2]
	a.Children = rows
	f.elems[2] = a
	s := &axSource{ax: f, bounds: displays}
	start := time.Now()
	snap, err := s.Elements(context.Background(), desktop.ElementQuery{MaxElements: 50})
	if err != nil || len(snap.Elements) != 50 || snap.TruncatedBy != "max_elements" {
		t.Fatalf("%v: %d elements truncated by %q", err, len(snap.Elements), snap.TruncatedBy)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}

	// A hung application: the snapshot returns at its budget, marked.
	f.hang = make(chan struct{})
	defer close(f.hang)
	start = time.Now()
	snap, err = s.Elements(context.Background(), desktop.ElementQuery{Budget: 200 * time.Millisecond})
	if d := time.Since(start); err != nil || d > 200*time.Millisecond+walkMargin+200*time.Millisecond || snap.TruncatedBy != "unresponsive" {
		t.Errorf("hung app: %v after %v, truncated by %q", err, d, snap.TruncatedBy)
	}
}

func TestAXRolesAndHandles(t *testing.T) {
	for _, c := range []struct {
		role, sub string
		want      desktop.Role
	}{{"AXButton", "", desktop.RoleButton}, {"AXWindow", "AXDialog", desktop.RoleDialog}, {"AXRadioButton", "AXTabButton", desktop.RoleTab},
		{"AXRow", "AXOutlineRow", desktop.RoleTreeItem}, {"AXPopUpButton", "", desktop.RoleCombobox}, {"AXWhatever", "", desktop.RoleGeneric},
		{"AXStaticText", "", desktop.RoleText}, {"AXTextArea", "", desktop.RoleTextbox}} {
		if got, _ := axRole(c.role, c.sub); got != c.want {
			t.Errorf("axRole(%s, %s) = %s, want %s", c.role, c.sub, got, c.want)
		}
	}
	h := axHandle{PID: 42, Path: []int{0}}.child(3, "AXGroup").child(1, "AXButton")
	back, err := parseAXHandle(h.String())
	if err != nil || fmt.Sprint(back) != fmt.Sprint(h) {
		t.Errorf("%q -> %+v %v", h.String(), back, err)
	}
	for _, bad := range []string{"", "uia:1a:0:50000", "ax:0:0:AXButton", "ax:4::AXButton", "ax:4:x:AXButton"} {
		if _, err := parseAXHandle(bad); err == nil {
			t.Errorf("handle %q accepted", bad)
		}
	}
	// Frames: fractional points round; no frame is no box.
	if r := frameRect(axAttrs{Frame: cgRect{10.4, 20.6, 99.8, 30}, HasFrame: true}); r != (geom.Rect{X: 10, Y: 21, W: 100, H: 30}) {
		t.Errorf("frame %v", r)
	}
	if r := frameRect(axAttrs{}); !r.Empty() {
		t.Errorf("no frame: %v", r)
	}
}
