package uitree

import "github.com/guiagent/guiagent/internal/geom"

// Clip clips r to the first of bounds it overlaps and reports whether it
// overlaps any; nil bounds keep r as it is.
func Clip(r geom.Rect, bounds []geom.Rect) (geom.Rect, bool) {
	if r.Empty() {
		return r, false
	}
	if bounds == nil {
		return r, true
	}
	for _, b := range bounds {
		if c := r.Intersect(b); !c.Empty() {
			return c, true
		}
	}
	return geom.Rect{}, false
}
