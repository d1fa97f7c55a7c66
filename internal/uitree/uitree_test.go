package uitree

import (
	"errors"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestNormalizeRole(t *testing.T) {
	cases := []struct {
		platform string
		st       desktop.States
		want     desktop.Role
	}{
		{"push button", desktop.States{}, desktop.RoleButton},
		{"toggle button", desktop.States{}, desktop.RoleButton},
		{"Check Box", desktop.States{}, desktop.RoleCheckbox},
		{"text", desktop.States{Editable: true}, desktop.RoleTextbox},
		{"text", desktop.States{}, desktop.RoleText},
		{"password text", desktop.States{Protected: true}, desktop.RoleTextbox},
		{"entry", desktop.States{}, desktop.RoleTextbox},
		{"label", desktop.States{}, desktop.RoleText},
		{"page tab", desktop.States{}, desktop.RoleTab},
		{"frame", desktop.States{}, desktop.RoleWindow},
		{"table cell", desktop.States{}, desktop.RoleCell},
		{"filler", desktop.States{}, desktop.RoleGeneric},
		{"no such role", desktop.States{}, desktop.RoleGeneric},
		{"button", desktop.States{}, desktop.RoleButton}, // normalized names map to themselves
	}
	for _, c := range cases {
		if got := NormalizeRole(c.platform, c.st); got != c.want {
			t.Errorf("NormalizeRole(%q, %+v) = %q, want %q", c.platform, c.st, got, c.want)
		}
	}
}

func el(ref string, role desktop.Role, name string, x, y, w, h int) desktop.Element {
	return desktop.Element{Ref: ref, Role: role, Name: name, Box: geom.Rect{X: x, Y: y, W: w, H: h}, States: desktop.States{Enabled: true}, App: "form", Parent: "e1", Depth: 1}
}

// form is a GTK-like form: labels left of their entries, one label above a
// field, an entry with no label, a named button.
func form() []desktop.Element {
	win := el("e1", desktop.RoleWindow, "Form", 0, 0, 600, 400)
	win.Parent, win.Depth = "", 0
	return []desktop.Element{
		win,
		el("e2", desktop.RoleText, "Name", 10, 12, 60, 20),
		el("e3", desktop.RoleTextbox, "", 100, 10, 200, 26),
		el("e4", desktop.RoleText, "Email", 10, 52, 60, 20),
		el("e5", desktop.RoleTextbox, "", 100, 50, 200, 26),
		el("e6", desktop.RoleText, "Comment", 100, 90, 80, 18),
		el("e7", desktop.RoleTextbox, "", 100, 112, 300, 60),
		el("e8", desktop.RoleTextbox, "", 100, 300, 200, 26),
		el("e9", desktop.RoleButton, "Save", 420, 350, 80, 30),
		el("e10", desktop.RoleButton, "Save as", 320, 350, 80, 30),
		el("e11", desktop.RoleCheckbox, "Remember me", 10, 200, 120, 20),
		el("e12", desktop.RoleTextbox, "Named", 400, 10, 100, 26),
	}
}

func TestNameFromLabels(t *testing.T) {
	els := form()
	NameFromLabels(els)
	want := map[string]string{"e3": "Name", "e5": "Email", "e7": "Comment", "e8": "", "e12": "Named"}
	for _, e := range els {
		w, ok := want[e.Ref]
		if !ok {
			continue
		}
		if e.Name != w {
			t.Errorf("%s: name %q, want %q", e.Ref, e.Name, w)
		}
		wantFrom := desktop.NameFromLabel
		if w == "" || e.Ref == "e12" {
			wantFrom = desktop.NameFromAccessible
		}
		if e.NameFrom != wantFrom {
			t.Errorf("%s: name_from %q, want %q", e.Ref, e.NameFrom, wantFrom)
		}
	}
}

func TestNameFromLabelsOneLabelOneField(t *testing.T) {
	// Two fields on one line right of one label: only the nearer gets it.
	els := []desktop.Element{
		el("e2", desktop.RoleText, "City", 10, 10, 40, 20),
		el("e3", desktop.RoleTextbox, "", 60, 8, 80, 24),
		el("e4", desktop.RoleTextbox, "", 150, 8, 80, 24),
	}
	NameFromLabels(els)
	if els[1].Name != "City" || els[2].Name != "" {
		t.Errorf("names %q, %q; want City for the nearer field only", els[1].Name, els[2].Name)
	}
}

func TestNameFromLabelsStaysInItsWindow(t *testing.T) {
	a := el("e1", desktop.RoleWindow, "A", 0, 0, 300, 300)
	a.Parent = ""
	b := el("e3", desktop.RoleWindow, "B", 0, 0, 300, 300)
	b.Parent = ""
	label := el("e2", desktop.RoleText, "Name", 10, 10, 40, 20)
	field := el("e4", desktop.RoleTextbox, "", 60, 8, 80, 24)
	field.Parent = "e3"
	els := []desktop.Element{a, label, b, field}
	NameFromLabels(els)
	if els[3].Name != "" {
		t.Errorf("a field of window B took the label %q of window A", els[3].Name)
	}
}

func TestFind(t *testing.T) {
	els := form()
	NameFromLabels(els)
	cases := []struct {
		target, ref, how string
	}{
		{"Save", "e9", MatchExact},
		{"the Save button", "e9", MatchExact},
		{`"save as"`, "e10", MatchExact},
		{"Email field", "e5", MatchExact},
		{"Email", "e5", MatchExact},        // the field beats its label
		{"remember", "e11", MatchContains}, // contains
		{"Remember me checkbox", "e11", MatchExact},
		{"Rememver me", "e11", MatchClose}, // a typo
		{"checkbox", "e11", MatchExact},    // a role word alone
		{"Comment field", "e7", MatchExact},
	}
	for _, c := range cases {
		e, how, err := Find(els, c.target)
		if err != nil {
			t.Errorf("Find(%q): %v", c.target, err)
			continue
		}
		if e.Ref != c.ref || how != c.how {
			t.Errorf("Find(%q) = %s (%s), want %s (%s)", c.target, e.Ref, how, c.ref, c.how)
		}
	}
}

func TestFindAmbiguousListsCandidates(t *testing.T) {
	_, _, err := Find(form(), "sav")
	var me *MatchError
	if !errors.As(err, &me) || !me.Ambiguous {
		t.Fatalf("Find(sav) = %v, want an ambiguous MatchError", err)
	}
	for _, want := range []string{`e9 button "Save"`, `e10 button "Save as"`, "ambiguous"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestFindNoMatch(t *testing.T) {
	_, _, err := Find(form(), "Delete everything button")
	var me *MatchError
	if !errors.As(err, &me) || me.Ambiguous {
		t.Fatalf("Find = %v, want a no-match MatchError", err)
	}
	if len(me.Candidates) == 0 || me.Candidates[0].Role != desktop.RoleButton {
		t.Errorf("closest candidates %v: want buttons only (the role word narrows them)", me.Candidates)
	}
	if !strings.Contains(err.Error(), "no element matches") {
		t.Errorf("error %q does not say nothing matched", err)
	}
}

func TestParseTarget(t *testing.T) {
	tg := ParseTarget("  The   'OK'  Button ")
	if tg.Name != "ok" || len(tg.Roles) != 1 || tg.Roles[0] != desktop.RoleButton {
		t.Errorf("ParseTarget = %+v, want name ok, role button", tg)
	}
	if tg := ParseTarget("Settings tab"); tg.Name != "settings" || tg.Roles[0] != desktop.RoleTab {
		t.Errorf("ParseTarget(Settings tab) = %+v", tg)
	}
	if tg := ParseTarget("Tabulator"); tg.Name != "tabulator" || tg.Roles != nil {
		t.Errorf("ParseTarget(Tabulator) = %+v: a word that starts with a role word is no role word", tg)
	}
}

func TestOutline(t *testing.T) {
	els := form()[:3]
	els[2].Value = "Ada"
	els[2].States.Focused = true
	got := Outline(els, nil)
	want := "e1 window \"Form\" [0,0,600,400]\n  e2 text \"Name\" [10,12,70,32]\n  e3 textbox value=\"Ada\" focused [100,10,300,36]\n"
	if got != want {
		t.Errorf("Outline =\n%s\nwant\n%s", got, want)
	}
	half := Outline(els[:1], func(r geom.Rect) (int, int, int, int) { return r.X / 2, r.Y / 2, (r.X + r.W) / 2, (r.Y + r.H) / 2 })
	if half != "e1 window \"Form\" [0,0,300,200]\n" {
		t.Errorf("Outline with a box mapping = %q", half)
	}
}
