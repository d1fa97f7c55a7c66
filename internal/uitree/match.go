package uitree

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/guiagent/guiagent/internal/desktop"
)

// roleWords are the words of a target phrase that narrow the role: "the Save
// button", "Name field", "Remember me checkbox". Longer phrases are tried first.
var roleWords = []struct {
	words string
	roles []desktop.Role
}{
	{"text field", []desktop.Role{desktop.RoleTextbox, desktop.RoleCombobox, desktop.RoleSpinButton}},
	{"text box", []desktop.Role{desktop.RoleTextbox}},
	{"check box", []desktop.Role{desktop.RoleCheckbox}},
	{"radio button", []desktop.Role{desktop.RoleRadio}},
	{"menu item", []desktop.Role{desktop.RoleMenuItem}},
	{"combo box", []desktop.Role{desktop.RoleCombobox}},
	{"list item", []desktop.Role{desktop.RoleListItem}},
	{"drop-down", []desktop.Role{desktop.RoleCombobox}},
	{"dropdown", []desktop.Role{desktop.RoleCombobox}},
	{"button", []desktop.Role{desktop.RoleButton}},
	{"field", []desktop.Role{desktop.RoleTextbox, desktop.RoleCombobox, desktop.RoleSpinButton}},
	{"textbox", []desktop.Role{desktop.RoleTextbox}},
	{"input", []desktop.Role{desktop.RoleTextbox, desktop.RoleCombobox, desktop.RoleSpinButton}},
	{"entry", []desktop.Role{desktop.RoleTextbox}},
	{"checkbox", []desktop.Role{desktop.RoleCheckbox}},
	{"radio", []desktop.Role{desktop.RoleRadio}},
	{"combobox", []desktop.Role{desktop.RoleCombobox}},
	{"link", []desktop.Role{desktop.RoleLink}},
	{"menu", []desktop.Role{desktop.RoleMenu, desktop.RoleMenuItem, desktop.RoleMenuBar}},
	{"tab", []desktop.Role{desktop.RoleTab}},
	{"slider", []desktop.Role{desktop.RoleSlider}},
	{"list", []desktop.Role{desktop.RoleList}},
	{"item", []desktop.Role{desktop.RoleListItem, desktop.RoleTreeItem, desktop.RoleMenuItem}},
	{"heading", []desktop.Role{desktop.RoleHeading}},
	{"image", []desktop.Role{desktop.RoleImage}},
	{"icon", []desktop.Role{desktop.RoleImage, desktop.RoleButton}},
	{"label", []desktop.Role{desktop.RoleText}},
	{"dialog", []desktop.Role{desktop.RoleDialog}},
	{"window", []desktop.Role{desktop.RoleWindow, desktop.RoleDialog}},
}

// Target is a target phrase taken apart: the name to look for and the roles
// its role word allows (nil: any role).
type Target struct {
	Name  string
	Roles []desktop.Role
}

// ParseTarget splits a phrase such as `the "Save" button` into the name
// ("save", normalized) and the roles the role word allows. A phrase that is
// only a role word ("checkbox") keeps an empty name.
func ParseTarget(phrase string) Target {
	s := normalize(phrase)
	for _, a := range []string{"the ", "a ", "an "} {
		s = strings.TrimPrefix(s, a)
	}
	for _, rw := range roleWords {
		switch {
		case s == rw.words:
			return Target{Roles: rw.roles}
		case strings.HasSuffix(s, " "+rw.words):
			return Target{Name: strings.TrimSpace(strings.TrimSuffix(s, rw.words)), Roles: rw.roles}
		case strings.HasPrefix(s, rw.words+" "):
			return Target{Name: strings.TrimSpace(strings.TrimPrefix(s, rw.words)), Roles: rw.roles}
		}
	}
	return Target{Name: s}
}

// normalize lower-cases s, drops quotes and collapses white space.
func normalize(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '"', '\'', '“', '”', '‘', '’', '`', '_':
			return -1
		}
		if unicode.IsSpace(r) {
			return ' '
		}
		return unicode.ToLower(r)
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// How a target was matched.
const (
	MatchExact    = "exact"
	MatchContains = "contains"
	MatchClose    = "close"
)

// MatchError is returned when a target matches no element or more than one.
type MatchError struct {
	Target     string
	Ambiguous  bool
	Candidates []desktop.Element // the ambiguous matches, or the closest names when none matched
	Elements   int               // elements searched
}

func (e *MatchError) Error() string {
	var b strings.Builder
	if e.Ambiguous {
		fmt.Fprintf(&b, "target %q is ambiguous: %d elements match; use one's ref, or add words (its role, its exact name) to pick one:", e.Target, len(e.Candidates))
	} else {
		fmt.Fprintf(&b, "no element matches target %q among %d elements; take a snapshot to see their names", e.Target, e.Elements)
		if len(e.Candidates) > 0 {
			b.WriteString("; the closest are:")
		}
	}
	for i, c := range e.Candidates {
		if i == 10 {
			fmt.Fprintf(&b, " ... and %d more", len(e.Candidates)-i)
			break
		}
		fmt.Fprintf(&b, " %s %s %q;", c.Ref, c.Role, c.Name)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Find returns the element a target phrase means, and how it matched: an
// exact name first (the whole phrase, then the phrase less its role word),
// then a name that contains it, then a close name. A role word narrows the
// roles. Several matches of the best kind are narrowed to the interactive
// ones, then the enabled ones; still several is an ambiguous *MatchError
// listing them with their refs, none is a *MatchError with the closest names.
func Find(els []desktop.Element, phrase string) (desktop.Element, string, error) {
	if whole := normalize(phrase); whole != "" {
		if m := narrow(filter(els, nil, func(n string) bool { return n == whole })); len(m) == 1 {
			return m[0], MatchExact, nil
		}
	}
	t := ParseTarget(phrase)
	tiers := []struct {
		how string
		ok  func(string) bool
	}{
		{MatchExact, func(n string) bool { return n == t.Name || (t.Name == "" && len(t.Roles) > 0) }},
		{MatchContains, func(n string) bool { return t.Name != "" && strings.Contains(n, t.Name) }},
		{MatchClose, func(n string) bool { return t.Name != "" && nearName(n, t.Name) }},
	}
	for _, tier := range tiers {
		m := narrow(filter(els, t.Roles, tier.ok))
		switch {
		case len(m) == 1:
			return m[0], tier.how, nil
		case len(m) > 1:
			return desktop.Element{}, "", &MatchError{Target: phrase, Ambiguous: true, Candidates: m, Elements: len(els)}
		}
	}
	return desktop.Element{}, "", &MatchError{Target: phrase, Candidates: closest(els, t), Elements: len(els)}
}

func filter(els []desktop.Element, roles []desktop.Role, ok func(name string) bool) []desktop.Element {
	var out []desktop.Element
	for _, e := range els {
		if len(roles) > 0 && !hasRole(roles, e.Role) {
			continue
		}
		if ok(normalize(e.Name)) {
			out = append(out, e)
		}
	}
	return out
}

func hasRole(roles []desktop.Role, r desktop.Role) bool {
	for _, x := range roles {
		if x == r {
			return true
		}
	}
	return false
}

// narrow keeps the interactive elements of m when it has any, then the
// enabled ones when it has any.
func narrow(m []desktop.Element) []desktop.Element {
	for _, keep := range []func(desktop.Element) bool{
		func(e desktop.Element) bool { return Interactive(e.Role) },
		func(e desktop.Element) bool { return e.States.Enabled },
	} {
		if len(m) < 2 {
			return m
		}
		var k []desktop.Element
		for _, e := range m {
			if keep(e) {
				k = append(k, e)
			}
		}
		if len(k) > 0 {
			m = k
		}
	}
	return m
}

// nearName reports whether name is a close match for want: an edit distance of
// at most a quarter of the longer one (typos, a missing word ending), or every
// word of want starting a word of name.
func nearName(name, want string) bool {
	if name == "" {
		return false
	}
	if d := editDistance(name, want); d*4 <= max(len([]rune(name)), len([]rune(want))) {
		return true
	}
	words := strings.Fields(name)
	for _, w := range strings.Fields(want) {
		found := false
		for _, n := range words {
			if strings.HasPrefix(n, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// closest returns up to 5 named elements of the allowed roles whose names are
// nearest want by edit distance.
func closest(els []desktop.Element, t Target) []desktop.Element {
	type scored struct {
		e desktop.Element
		d int
	}
	var s []scored
	for _, e := range els {
		if e.Name == "" || (len(t.Roles) > 0 && !hasRole(t.Roles, e.Role)) {
			continue
		}
		s = append(s, scored{e, editDistance(normalize(e.Name), t.Name)})
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].d < s[j-1].d; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	var out []desktop.Element
	for i := 0; i < len(s) && i < 5; i++ {
		out = append(out, s[i].e)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
