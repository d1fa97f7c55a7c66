package flow

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/uitree"
	"github.com/guiagent/guiagent/internal/vision"
)

// Locating through the accessibility tree (when the desktop has an element
// source): a step's words are matched against the elements before any model
// is asked, and the cache keeps the element's identity beside its pixel
// fingerprint, so a replay is verified by identity first: a text field
// whose content changed between runs is still the same element.

// Identity is an element as the accessibility tree names it: its
// application, role and name, and the roles and names of its ancestors
// from the window down ("window Form", "panel").
type Identity struct {
	App       string   `yaml:"app,omitempty"`
	Role      string   `yaml:"role"`
	Name      string   `yaml:"name,omitempty"`
	Ancestors []string `yaml:"ancestors,omitempty"`
}

// identityOf is e's identity in its snapshot.
func identityOf(els []desktop.Element, e desktop.Element) *Identity {
	id := &Identity{App: e.App, Role: string(e.Role), Name: e.Name}
	byRef := map[string]desktop.Element{}
	for _, x := range els {
		byRef[x.Ref] = x
	}
	for p := e.Parent; p != ""; {
		a, ok := byRef[p]
		if !ok {
			break
		}
		id.Ancestors = append([]string{strings.TrimSpace(string(a.Role) + " " + a.Name)}, id.Ancestors...)
		p = a.Parent
	}
	return id
}

func (id *Identity) equal(o *Identity) bool {
	return id.App == o.App && id.Role == o.Role && id.Name == o.Name && strings.Join(id.Ancestors, "\x00") == strings.Join(o.Ancestors, "\x00")
}

// byIdentity returns the one element of els with identity id.
func byIdentity(els []desktop.Element, id *Identity) (desktop.Element, bool) {
	var found []desktop.Element
	for _, e := range els {
		if e.Role == desktop.Role(id.Role) && e.Name == id.Name && identityOf(els, e).equal(id) {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		return desktop.Element{}, false
	}
	return found[0], true
}

// elementAt is the smallest element of els (not a window) whose box holds g.
func elementAt(els []desktop.Element, g geom.GlobalPoint) (desktop.Element, bool) {
	var best desktop.Element
	ok := false
	for _, e := range els {
		if e.Depth == 0 || !e.Box.Contains(g) {
			continue
		}
		if !ok || e.Box.W*e.Box.H < best.Box.W*best.Box.H {
			best, ok = e, true
		}
	}
	return best, ok
}

// snapshot reads the flow display's elements (nil when the desktop has no
// element source or the read fails: the step goes on by pixels).
func (ru *run) snapshot() *desktop.ElementSnapshot {
	src, ok := desktop.ElementsOf(ru.r.o.Screen)
	if !ok {
		return nil
	}
	snap, err := src.Elements(ru.ctx, desktop.ElementQuery{Bounds: []geom.Rect{ru.display.Bounds}})
	if err != nil {
		ru.r.o.Logger.Debug("flow: no accessibility snapshot", "error", err)
		return nil
	}
	return snap
}

// imageBoxOf is an element's global box in image pixels of shot.
func imageBoxOf(r geom.Rect, shot *imaging.Shot) vision.Box {
	a := shot.Frame.GlobalToImage(geom.GlobalPoint{X: r.X, Y: r.Y})
	b := shot.Frame.GlobalToImage(geom.GlobalPoint{X: r.X + r.W, Y: r.Y + r.H})
	return vision.Box{X1: a.X, Y1: a.Y, X2: b.X, Y2: b.Y}
}

// replayIdentity verifies a cache entry by the element's identity: the one
// element of the tree that has it, wherever it is now and whatever it shows.
func (ru *run) replayIdentity(e *CacheEntry, snap *desktop.ElementSnapshot, shot *imaging.Shot, st Step) (vision.Box, bool) {
	if e.Element == nil || snap == nil {
		return vision.Box{}, false
	}
	el, ok := byIdentity(snap.Elements, e.Element)
	if !ok {
		return vision.Box{}, false
	}
	box := imageBoxOf(el.Box, shot)
	ru.rememberElement(e.Model, st, e.Role, e.Description, shot, box, e.Element)
	return box, true
}

// locateInTree matches desc against the tree's elements (no model). found is
// false when nothing matches (the model is asked next); an ambiguous match
// is an error listing the candidates.
func (ru *run) locateInTree(st Step, role, desc string, snap *desktop.ElementSnapshot, shot *imaging.Shot) (vision.Box, bool, error) {
	if snap == nil {
		return vision.Box{}, false, nil
	}
	e, _, err := uitree.Find(snap.Elements, desc)
	var me *uitree.MatchError
	switch {
	case errors.As(err, &me) && !me.Ambiguous:
		return vision.Box{}, false, nil
	case err != nil:
		return vision.Box{}, false, fmt.Errorf("the accessibility tree: %w", err)
	}
	box := imageBoxOf(e.Box, shot)
	ru.rememberElement(operate.ByAccessibility, st, role, desc, shot, box, identityOf(snap.Elements, e))
	return box, true, nil
}

// rememberElement stores a located box with its fingerprint and the
// element's identity (nil: none known).
func (ru *run) rememberElement(by string, st Step, role, desc string, shot *imaging.Shot, box vision.Box, id *Identity) {
	ru.rememberBy(by, st, role, desc, shot, box, ru.fingerprintFor(st, role, desc, shot.Pixels, box), id)
}

// identityAt is the identity of the element at the centre of box, for an
// entry the model located.
func identityAt(snap *desktop.ElementSnapshot, shot *imaging.Shot, box vision.Box) *Identity {
	if snap == nil {
		return nil
	}
	c := box.Center()
	x, y := shot.Frame.ImageToGlobalF(c)
	e, ok := elementAt(snap.Elements, geom.GlobalPoint{X: int(math.Round(x)), Y: int(math.Round(y))})
	if !ok {
		return nil
	}
	return identityOf(snap.Elements, e)
}
