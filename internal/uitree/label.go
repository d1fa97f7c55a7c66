package uitree

import (
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// How far a label may sit from the field it names, in logical pixels.
const (
	labelLeftGap  = 250 // a label left of the field, on the same line
	labelAboveGap = 40  // a label above the field
	labelSlack    = 4   // overlap tolerated between label and field
)

// NameFromLabels names the unnamed fields of els (textbox, combobox, slider,
// spin button) after the text element that sits next to them in the same
// window: left of the field on its line first, else just above it, the
// nearest one winning. A label names one field only (the one it is nearest
// to). Named fields get NameFrom "label". els is changed in place.
func NameFromLabels(els []desktop.Element) {
	roots := windowRoots(els)
	type pick struct {
		label int
		dist  int
	}
	best := map[int]pick{} // field index -> label
	taken := map[int]int{} // label index -> field index
	for i, f := range els {
		if f.Name != "" || !Field(f.Role) || f.Box.Empty() {
			continue
		}
		p := pick{label: -1}
		for j, l := range els {
			if l.Role != desktop.RoleText || l.Name == "" || l.App != f.App || roots[j] != roots[i] {
				continue
			}
			if d, ok := labelDistance(l.Box, f.Box); ok && (p.label < 0 || d < p.dist) {
				p = pick{j, d}
			}
		}
		if p.label < 0 {
			continue
		}
		if other, ok := taken[p.label]; ok {
			if best[other].dist <= p.dist {
				continue
			}
			delete(best, other)
		}
		best[i], taken[p.label] = p, i
	}
	for i, p := range best {
		els[i].Name, els[i].NameFrom = els[p.label].Name, desktop.NameFromLabel
	}
}

// labelDistance says whether label l sits where a label of field f sits, and
// how far it is: left of f on its line (distance = the gap), else above f
// (distance = the gap plus labelLeftGap, so that a label on the line wins).
func labelDistance(l, f geom.Rect) (int, bool) {
	lcy, fcy := l.Y+l.H/2, f.Y+f.H/2
	if gap := f.X - (l.X + l.W); gap >= -labelSlack && gap <= labelLeftGap && abs(lcy-fcy) <= max(f.H/2, l.H/2) {
		return max(gap, 0), true
	}
	if gap := f.Y - (l.Y + l.H); gap >= -labelSlack && gap <= labelAboveGap && l.X >= f.X-20 && l.X <= f.X+f.W/2 {
		return labelLeftGap + max(gap, 0), true
	}
	return 0, false
}

// windowRoots returns, for each element, the ref of its topmost ancestor
// (its own for a window; the parent ref where the chain leaves els).
func windowRoots(els []desktop.Element) []string {
	byRef := make(map[string]int, len(els))
	for i, e := range els {
		byRef[e.Ref] = i
	}
	roots := make([]string, len(els))
	for i, e := range els {
		r := e.Ref
		for n := 0; e.Parent != "" && n < len(els); n++ {
			r = e.Parent
			p, ok := byRef[e.Parent]
			if !ok {
				break
			}
			e = els[p]
		}
		roots[i] = r
	}
	return roots
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
