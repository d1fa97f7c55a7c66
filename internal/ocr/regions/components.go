package regions

import (
	"cmp"
	"slices"
)

// comp is one 8-connected component of edge pixels: its bounding box
// [x0,x1) x [y0,y1), its pixel count, and how many of its pixels lie in its
// interior (the box inset by a margin; see hollow).
type comp struct {
	x0, y0, x1, y1 int
	n, inner       int
}

func (c comp) w() int { return c.x1 - c.x0 }
func (c comp) h() int { return c.y1 - c.y0 }

// run is a horizontal run of edge pixels of one row, [x0, x1), and the
// index of its component.
type run struct{ y, x0, x1, comp int }

// components labels the 8-connected components of e (w x h): runs of each
// row joined to the runs of the row above that touch them, with union-find.
// It returns the components sorted by x and the runs, each naming its
// component's index.
func components(e []bool, w, h int) ([]comp, []run) {
	var runs []run
	var parent []int
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	prevStart, prevEnd := 0, 0 // the runs of the row above: runs[prevStart:prevEnd]
	for y := range h {
		start := len(runs)
		row := e[y*w : (y+1)*w]
		for x := 0; x < w; {
			if !row[x] {
				x++
				continue
			}
			x0 := x
			for x < w && row[x] {
				x++
			}
			id := len(runs)
			runs = append(runs, run{y: y, x0: x0, x1: x})
			parent = append(parent, id)
			// The runs above are sorted by x: skip those that end before this
			// one starts, join those that touch it (diagonally counts).
			for prevStart < prevEnd && runs[prevStart].x1 < x0 {
				prevStart++
			}
			for p := prevStart; p < prevEnd && runs[p].x0 <= x; p++ {
				a, b := find(p), find(id)
				if a != b {
					parent[max(a, b)] = min(a, b)
				}
			}
		}
		prevStart, prevEnd = start, len(runs)
	}
	byRoot := map[int]int{} // root run -> index in comps
	var comps []comp
	roots := make([]int, len(runs))
	for i, r := range runs {
		root := find(i)
		roots[i] = root
		k, ok := byRoot[root]
		if !ok {
			k = len(comps)
			byRoot[root] = k
			comps = append(comps, comp{x0: r.x0, y0: r.y, x1: r.x1, y1: r.y + 1})
		}
		c := &comps[k]
		c.x0, c.x1 = min(c.x0, r.x0), max(c.x1, r.x1)
		c.y1 = max(c.y1, r.y+1)
		c.n += r.x1 - r.x0
	}
	for i, r := range runs { // pixels inside each component's interior
		runs[i].comp = byRoot[roots[i]]
		c := &comps[runs[i].comp]
		m := innerMargin(*c)
		if r.y < c.y0+m || r.y >= c.y1-m {
			continue
		}
		lo, hi := max(r.x0, c.x0+m), min(r.x1, c.x1-m)
		if hi > lo {
			c.inner += hi - lo
		}
	}
	order := make([]int, len(comps)) // sort by x, renumbering the runs' components
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(comps[a].x0, comps[b].x0), cmp.Compare(comps[a].y0, comps[b].y0))
	})
	rank := make([]int, len(comps))
	sorted := make([]comp, len(comps))
	for k, i := range order {
		rank[i], sorted[k] = k, comps[i]
	}
	for i := range runs {
		runs[i].comp = rank[runs[i].comp]
	}
	return sorted, runs
}

// innerMargin is how far in from its box a component's interior starts.
func innerMargin(c comp) int { return max(3, min(c.w(), c.h())/5) }

// hollow reports whether c is an outline: almost none of its pixels inside.
func hollow(c comp) bool {
	m := innerMargin(c)
	return c.w() > 2*m && c.h() > 2*m && c.inner*50 <= c.n
}

// The kinds of component.
const (
	glyph = iota // may be (part of) a glyph
	rule         // a rule or the frame of a button or field: whited out of crops
	other        // too tall for text (a picture, a panel): ignored
)

// kind tells what c is: a glyph unless taller than a line of text, a rule
// (a line one or two pixels thick), or the frame of a button or field
// (hollow, and wider than text is tall or larger than a glyph; an "O" is
// hollow too, but neither).
func kind(c comp, o Options) int {
	w, h := c.w(), c.h()
	switch {
	case h <= 2 && w >= thinLine: // a horizontal rule (a shorter one is a dash)
		return rule
	case w <= 2 && h >= 15: // a vertical rule
		return rule
	case hollow(c) && (2*w >= 5*h || min(w, h) >= 28):
		return rule
	case h > o.MaxHeight:
		return other
	}
	return glyph
}
