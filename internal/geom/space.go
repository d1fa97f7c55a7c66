package geom

import (
	"fmt"
	"strings"
)

// Space names a coordinate space in which a caller gives a point: pixels of an
// image, global screen pixels, or a grid normalized over an image. It is the one
// vocabulary of space names: the MCP tools' `space` argument, the coordinate
// mode of the configuration (GUI_AGENT_COORDINATE_MODE) and the space every
// action point carries all use it.
type Space string

// The spaces. Normalized spaces are read over the whole image of a frame
// (padding included): value / divisor * image side.
const (
	// SpaceImage is pixels of the image of a frame, origin at its top-left pixel centre.
	SpaceImage Space = "image"
	// SpaceScreen is global logical pixels of the virtual desktop.
	SpaceScreen Space = "screen"
	// SpaceNorm1000 is a 0-1000 grid over the image.
	SpaceNorm1000 Space = "normalized-1000"
	// SpaceNorm999 is a 0-999 grid over the image, read like SpaceNorm1000
	// (divided by 1000), as Gemini's computer-use tools write it.
	SpaceNorm999 Space = "normalized-999"
	// SpaceNorm1 is a 0-1 grid over the image.
	SpaceNorm1 Space = "normalized-0-1"
	// SpaceYXNorm1000 is a 0-1000 grid whose arrays are written y first
	// ([y, x], boxes [ymin, xmin, ymax, xmax]); named x and y are never swapped.
	SpaceYXNorm1000 Space = "yx-normalized-1000"
)

// spaceRow is one row of the space table.
type spaceRow struct {
	space   Space
	aliases []string
	divisor float64 // 0: pixels
	order   Order
	mode    string // its name as a coordinate mode ("" when it is not one)
}

// spaceTable defines every space, its aliases and its arithmetic once.
var spaceTable = []spaceRow{
	{SpaceImage, []string{"image-absolute", "pixels", "absolute"}, 0, XY, "image-absolute"},
	{SpaceScreen, []string{"global"}, 0, XY, ""},
	{SpaceNorm1000, []string{"norm1000"}, 1000, XY, "normalized-1000"},
	{SpaceNorm999, []string{"norm999"}, 1000, XY, "normalized-999"},
	{SpaceNorm1, []string{"normalized-1", "norm1"}, 1, XY, "normalized-0-1"},
	{SpaceYXNorm1000, []string{"gemini"}, 1000, YX, "yx-normalized-1000"},
}

// CoordinateModes lists the model coordinate modes (GUI_AGENT_COORDINATE_MODE):
// every space but screen, pixels spelled "image-absolute".
var CoordinateModes = func() []string {
	var out []string
	for _, r := range spaceTable {
		if r.mode != "" {
			out = append(out, r.mode)
		}
	}
	return out
}()

// SpaceNames lists the names a caller may give for a space: image, screen and
// the coordinate modes (the MCP tools' `space` enum).
var SpaceNames = append([]string{string(SpaceImage), string(SpaceScreen)}, CoordinateModes...)

func (sp Space) row() (spaceRow, bool) {
	for _, r := range spaceTable {
		if r.space == sp {
			return r, true
		}
	}
	return spaceRow{}, false
}

// ParseSpace returns the space named v (case-insensitive; aliases such as
// "pixels", "global", "norm1000" and "gemini" are accepted); "" gives def.
func ParseSpace(v string, def Space) (Space, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" {
		return def, nil
	}
	for _, r := range spaceTable {
		if v == string(r.space) || v == r.mode {
			return r.space, nil
		}
		for _, a := range r.aliases {
			if v == a {
				return r.space, nil
			}
		}
	}
	return "", fmt.Errorf("unknown coordinate space %q: use one of %s", v, strings.Join(SpaceNames, ", "))
}

// Valid reports whether sp is one of the spaces.
func (sp Space) Valid() bool { _, ok := sp.row(); return ok }

// Divisor is the grid size of a normalized space (1000, 1), or 0 for pixels.
func (sp Space) Divisor() float64 { r, _ := sp.row(); return r.divisor }

// Order is the axis order of the space's arrays (YX only for yx-normalized-1000).
func (sp Space) Order() Order { r, _ := sp.row(); return r.order }

// Named returns the space a named (x, y) point of sp is in: sp itself, except
// that yx-normalized-1000 becomes normalized-1000 (the order only concerns arrays).
func (sp Space) Named() Space {
	if sp == SpaceYXNorm1000 {
		return SpaceNorm1000
	}
	return sp
}

// Space returns the space of the numbers a model of profile p writes.
// Profiles use divisors 0 (image pixels), 1 and 1000.
func (p Profile) Space() Space {
	switch {
	case p.Divisor == 0:
		return SpaceImage
	case p.Divisor == 1:
		return SpaceNorm1
	case p.Order == YX:
		return SpaceYXNorm1000
	}
	return SpaceNorm1000
}

// WithMode returns p with its coordinate convention replaced by a named mode:
// any space of ParseSpace but screen (image-absolute, normalized-1000,
// normalized-999, normalized-0-1, yx-normalized-1000, or an alias).
func (p Profile) WithMode(mode string) (Profile, error) {
	sp, err := ParseSpace(mode, "")
	if err != nil || sp == "" || sp == SpaceScreen {
		return p, fmt.Errorf("unknown coordinate mode %q: use one of %s", mode, strings.Join(CoordinateModes, ", "))
	}
	p.Divisor, p.Order = sp.Divisor(), sp.Order()
	return p, nil
}
