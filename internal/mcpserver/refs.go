package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/uitree"
)

// Refs: the elements of a session's latest snapshot (gui_snapshot, or the
// candidates of an ambiguous target), by their ref. Refs are numbered on
// from one snapshot to the next within a session (e1..e40, then e41..e75),
// so a ref of an earlier snapshot is recognised as stale, never taken for
// another element.

// Errors of a ref the session's latest snapshot does not hold.
var (
	ErrStaleRef   = errors.New("stale ref")
	ErrUnknownRef = errors.New("unknown ref")
)

// heldSnap is a session's latest snapshot, its refs renumbered, and the
// frame its boxes are shown in.
type heldSnap struct {
	snap        *desktop.ElementSnapshot
	frame       geom.Frame
	first, last int // the numbers of its first and last refs
}

// snapStore keeps the latest snapshot of each session. Safe for concurrent use.
type snapStore struct {
	mu     sync.Mutex
	latest map[*mcp.ServerSession]*heldSnap
	next   map[*mcp.ServerSession]int // refs handed out so far
}

func newSnapStore() *snapStore {
	return &snapStore{latest: map[*mcp.ServerSession]*heldSnap{}, next: map[*mcp.ServerSession]int{}}
}

// put renumbers snap's refs after the session's earlier ones and makes it the
// session's latest snapshot, shown in frame f.
func (st *snapStore) put(ss *mcp.ServerSession, snap *desktop.ElementSnapshot, f geom.Frame) *heldSnap {
	st.mu.Lock()
	defer st.mu.Unlock()
	base := st.next[ss]
	renumber := func(ref string) string {
		n, ok := refNumber(ref)
		if !ok {
			return ref
		}
		return "e" + strconv.Itoa(base+n)
	}
	for i := range snap.Elements {
		e := &snap.Elements[i]
		e.Ref = renumber(e.Ref)
		if e.Parent != "" {
			e.Parent = renumber(e.Parent)
		}
	}
	n := len(snap.Elements)
	h := &heldSnap{snap: snap, frame: f, first: base + 1, last: base + n}
	st.next[ss] = base + n
	st.latest[ss] = h
	return h
}

// forget drops an ended session's snapshot.
func (st *snapStore) forget(ss *mcp.ServerSession) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.latest, ss)
	delete(st.next, ss)
}

func refNumber(ref string) (int, bool) {
	if !strings.HasPrefix(ref, "e") {
		return 0, false
	}
	n, err := strconv.Atoi(ref[1:])
	return n, err == nil && n > 0
}

// lookup returns the element ref names in the session's latest snapshot, or
// an error that says why it cannot be used and to take a new snapshot.
func (st *snapStore) lookup(ss *mcp.ServerSession, ref string) (desktop.Element, *heldSnap, error) {
	ref = strings.TrimSpace(ref)
	st.mu.Lock()
	h := st.latest[ss]
	st.mu.Unlock()
	n, ok := refNumber(ref)
	switch {
	case !ok:
		return desktop.Element{}, nil, fmt.Errorf("%w %q: refs look like e12, from gui_snapshot; call gui_snapshot and use one of its refs", ErrUnknownRef, ref)
	case h == nil:
		return desktop.Element{}, nil, fmt.Errorf("%w %q: this session has no snapshot; call gui_snapshot and use one of its refs", ErrUnknownRef, ref)
	case n < h.first:
		return desktop.Element{}, nil, fmt.Errorf("%w %q: it belongs to an earlier snapshot, and the UI may have changed since (the latest snapshot's refs are %s); call gui_snapshot again and use one of its refs",
			ErrStaleRef, ref, h.span())
	}
	e, found := h.snap.Lookup(ref)
	if !found {
		return desktop.Element{}, nil, fmt.Errorf("%w %q: the latest snapshot's refs are %s; call gui_snapshot again and use one of its refs", ErrUnknownRef, ref, h.span())
	}
	return e, h, nil
}

func (h *heldSnap) span() string {
	if h.last < h.first {
		return "none (it found no element)"
	}
	return fmt.Sprintf("e%d to e%d", h.first, h.last)
}

// boxText is an element's box in image pixels of the frame (global pixels
// when the frame is zero), as results show it.
func boxText(r geom.Rect, f geom.Frame) string {
	x1, y1, x2, y2 := imageBox(r, f)
	return fmt.Sprintf("[%d,%d,%d,%d]", x1, y1, x2, y2)
}

// imageBox maps a global box to whole image pixels of frame f (through the
// frame's mapping, as every image point is); a zero frame leaves it global.
func imageBox(r geom.Rect, f geom.Frame) (x1, y1, x2, y2 int) {
	if f.ID == "" {
		return r.X, r.Y, r.X + r.W, r.Y + r.H
	}
	a := f.GlobalToImage(geom.GlobalPoint{X: r.X, Y: r.Y})
	b := f.GlobalToImage(geom.GlobalPoint{X: r.X + r.W, Y: r.Y + r.H})
	return int(a.X + 0.5), int(a.Y + 0.5), int(b.X + 0.5), int(b.Y + 0.5)
}

// elementPlace places the centre of element e, shown in frame f, on the
// screen through the resolver: its image point in f, resolved as a point the
// caller gave in image space would be. by is the locate step (ByRef or
// ByAccessibility).
func (s *Server) elementPlace(ctx context.Context, e desktop.Element, f geom.Frame, by string) (point, error) {
	ds, err := s.displays(ctx)
	if err != nil {
		return point{}, err
	}
	d, err := geom.FindDisplay(ds, f.Display.ID)
	if err != nil {
		return point{}, err
	}
	if f.Display.Bounds != d.Bounds || f.Display.ScaleFactor() != d.ScaleFactor() {
		return point{}, fmt.Errorf("%w %s: display %s changed from %v to %v since the snapshot; call gui_snapshot again", ErrStaleRef, e.Ref, d.ID, f.Display.Bounds, d.Bounds)
	}
	if rv, ok := desktop.CapabilityOf[desktop.Revealer](s.screen); ok && e.Handle != "" {
		// A page scrolls: bring the element into view, and act only where
		// the element itself is (an element covered by another is an error
		// that names the cover).
		box, err := rv.Reveal(ctx, e.Handle)
		if err != nil {
			return point{}, fmt.Errorf("%s %s %q: %w", e.Ref, e.Role, e.Name, err)
		}
		e.Box = box
	}
	if e.Box.W <= 0 || e.Box.H <= 0 {
		return point{}, fmt.Errorf("%s %s %q has no box on the screen to act at; use another element, or coordinates", e.Ref, e.Role, e.Name)
	}
	ctr := f.GlobalToImage(geom.GlobalPoint{X: e.Box.X + e.Box.W/2, Y: e.Box.Y + e.Box.H/2})
	r, err := action.Point{Space: geom.SpaceImage, X: ctr.X, Y: ctr.Y}.Resolve(f, ds, imageTolerancePx)
	if err != nil {
		return point{}, fmt.Errorf("%s %s %q: %w", e.Ref, e.Role, e.Name, err)
	}
	t := target{Image: r.Image, Global: r.Global, Display: d, FrameID: f.ID, Source: fromSession, Warning: r.Warning}
	p := t.place()
	p.LocatedBy = by
	x1, y1, x2, y2 := imageBox(e.Box, f)
	p.Box = &geom.ImageRect{X: x1, Y: y1, W: x2 - x1, H: y2 - y1}
	name := ""
	if e.Name != "" {
		name = fmt.Sprintf(" %q", e.Name)
	}
	p.Note = fmt.Sprintf("located_by %s: %s %s%s box %s of frame %s", by, e.Ref, e.Role, name, boxText(e.Box, f), f.ID)
	return point{place: p, t: &t, display: d}, nil
}

// refPoint reads a ref argument: the element of the session's latest
// snapshot, placed at its box centre. A stale or unknown ref is an error,
// never anything else.
func (s *Server) refPoint(ctx context.Context, c *call, ref string) (point, error) {
	e, h, err := s.snaps.lookup(c.ss, ref)
	if err != nil {
		return point{}, err
	}
	return s.elementPlace(ctx, e, h.frame, operate.ByRef)
}

// treeLocator is the locate chain's accessibility step for one call: the
// target's words matched against a snapshot of the focused window on the
// display (operate.FindElement), no model. An ambiguous match becomes the
// session's latest snapshot, so the refs its error lists can be used.
type treeLocator struct {
	s *Server
	c *call
}

func (l treeLocator) By() string { return operate.ByAccessibility }

func (l treeLocator) Locate(ctx context.Context, t operate.Target) (operate.Place, error) {
	d, _, err := l.s.display(ctx, t.Display)
	if err != nil {
		return operate.Place{}, err
	}
	e, snap, how, err := operate.FindElement(ctx, l.s.elements, desktop.ElementQuery{Bounds: []geom.Rect{d.Bounds}}, t.Words)
	var me *uitree.MatchError
	if err != nil && !(errors.As(err, &me) && me.Ambiguous) {
		return operate.Place{}, err
	}
	f, _, ferr := l.s.frameFor(l.c.ss, d, "")
	if ferr != nil {
		return operate.Place{}, ferr
	}
	if err != nil {
		h := l.s.snaps.put(l.c.ss, snap, f)
		_, _, err = uitree.Find(h.snap.Elements, t.Words) // the same candidates, with the refs the session now holds
		return operate.Place{}, fmt.Errorf("%w; nothing was done", err)
	}
	p, err := l.s.elementPlace(ctx, e, f, operate.ByAccessibility)
	if err != nil {
		return operate.Place{}, err
	}
	p.place.Note += " (" + how + " match of " + fmt.Sprintf("%q", t.Words) + ")"
	return *p.place, nil
}
