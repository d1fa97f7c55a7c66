package regions

// line is a line of text being grouped: the box of its components, and the
// height of its tallest component (its glyphs' height, which the box of a
// line that dips and rises may exceed).
type line struct {
	x0, y0, x1, y1 int
	glyphH         int
}

// gapFactor is the widest gap between two glyphs of one line, in glyph
// heights: a word space is a third of one, the space between a label and a
// button's text several.
const gapFactor = 1.0

// group joins components, sorted by x, into lines: a component joins the
// line it overlaps most vertically (by at least half the shorter height),
// when the line ends at most a gap before it and neither is more than twice
// as tall as the other (a dot or comma aside, which joins the line it sits in).
func group(comps []comp) []line {
	var done, open []line
	for _, c := range comps {
		best, bestOv := -1, 0
		keep := open[:0]
		for _, l := range open { // lines too far left for any later component are done
			if c.x0-l.x1 > int(2*gapFactor*float64(l.glyphH)) { // a joining component is at most twice as tall
				done = append(done, l)
				continue
			}
			keep = append(keep, l)
		}
		open = keep
		for i, l := range open {
			if ov, ok := joins(l, c); ok && ov > bestOv {
				best, bestOv = i, ov
			}
		}
		if best < 0 {
			open = append(open, line{c.x0, c.y0, c.x1, c.y1, c.h()})
			continue
		}
		l := &open[best]
		l.x0, l.y0, l.x1, l.y1 = min(l.x0, c.x0), min(l.y0, c.y0), max(l.x1, c.x1), max(l.y1, c.y1)
		l.glyphH = max(l.glyphH, c.h())
	}
	return append(done, open...)
}

// joins reports whether c continues line l, and their vertical overlap.
func joins(l line, c comp) (int, bool) {
	ch := c.h()
	ov := min(l.y1, c.y1) - max(l.y0, c.y0)
	if ov <= 0 || 2*ov < min(ch, l.glyphH) {
		return 0, false
	}
	// A dot, comma or dash inside the line's band joins whatever its height.
	small := 2*ch <= l.glyphH && c.w() <= l.glyphH && ov == ch
	if !small && (ch > 2*l.glyphH || l.glyphH > 2*ch) {
		return 0, false
	}
	if gap := c.x0 - l.x1; gap > int(gapFactor*float64(max(l.glyphH, ch))) {
		return 0, false
	}
	return ov, true
}
