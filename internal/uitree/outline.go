package uitree

import (
	"fmt"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Outline is the compact text form of elements for a model: one line per
// element, indented two spaces per depth: ref, role, quoted name, value, the
// states that are set (enabled is the norm, so "disabled" is shown instead),
// and the box as x1,y1,x2,y2. box maps a global box to the numbers shown (the
// image pixels of a frame); nil shows global pixels.
func Outline(els []desktop.Element, box func(geom.Rect) (x1, y1, x2, y2 int)) string {
	if box == nil {
		box = func(r geom.Rect) (int, int, int, int) { return r.X, r.Y, r.X + r.W, r.Y + r.H }
	}
	var b strings.Builder
	for _, e := range els {
		b.WriteString(strings.Repeat("  ", e.Depth))
		b.WriteString(e.Ref)
		b.WriteByte(' ')
		b.WriteString(string(e.Role))
		if e.Name != "" {
			fmt.Fprintf(&b, " %q", e.Name)
		}
		if e.Value != "" {
			fmt.Fprintf(&b, " value=%q", e.Value)
		}
		for _, s := range e.States.List() {
			if s != "enabled" {
				b.WriteString(" " + s)
			}
		}
		if !e.States.Enabled && Interactive(e.Role) {
			b.WriteString(" disabled")
		}
		x1, y1, x2, y2 := box(e.Box)
		fmt.Fprintf(&b, " [%d,%d,%d,%d]\n", x1, y1, x2, y2)
	}
	return b.String()
}

// Number gives els, a tree in depth-first order with each element's Depth
// set, their refs ("e1", "e2", ...) and each one's Parent: the ref of the
// nearest element before it that is one level shallower.
func Number(els []desktop.Element) {
	var stack []string // stack[d] = ref of the latest element at depth d
	for i := range els {
		e := &els[i]
		e.Ref = fmt.Sprintf("e%d", i+1)
		if e.Depth < 0 {
			e.Depth = 0
		}
		if e.Depth > len(stack) {
			e.Depth = len(stack)
		}
		stack = append(stack[:e.Depth], e.Ref)
		e.Parent = ""
		if e.Depth > 0 {
			e.Parent = stack[e.Depth-1]
		}
	}
}
