package atspi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/uitree"
)

// Elements takes a snapshot as q asks. Boxes are in AT-SPI screen
// coordinates (X root-window pixels); the X11 backend shifts them into global
// logical pixels and fills q.Bounds and q.ActiveWindow. With Options.Place
// (Wayland) each window's boxes are moved by its place, and only the
// windows the compositor places are walked.
func (c *Client) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	start := time.Now()
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(q.Budget))
	defer cancel()
	conn, apps, err := c.connectAndList(ctx)
	if err != nil {
		return nil, err
	}
	if q.Scope == desktop.ScopeApp {
		var keep []*app
		for _, a := range apps {
			if strings.EqualFold(a.name, q.App) {
				keep = append(keep, a)
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("no application named %q exposes an accessibility tree; the applications on the bus are: %s", q.App, appNames(apps))
		}
		apps = keep
	}
	pl, err := c.place(ctx, conn, apps)
	if err != nil {
		return nil, placeErr(err)
	}
	snap := &desktop.ElementSnapshot{Source: "atspi", Query: q}
	trees := c.loadAll(ctx, conn, apps, q, snap)
	var offs map[*node]offset
	var focused *node
	if pl != nil {
		offs, focused = pl.origins(trees)
	}
	wins := chooseWindows(trees, q, snap, offs, focused)
	w := &walker{c: c, q: q, snap: snap}
	for _, win := range wins {
		w.off = offset{}
		if o, ok := offs[win.n]; ok {
			w.off = c.inset(ctx, win.t, win.n, o)
		}
		if err := w.window(ctx, win.t, win.n); err != nil {
			w.stop(err)
			break
		}
	}
	uitree.NameFromLabels(snap.Elements)
	snap.Took = time.Since(start)
	return snap, nil
}

// connectAndList connects (again, once, when the bus went away) and lists the applications.
func (c *Client) connectAndList(ctx context.Context) (*dbus.Conn, []*app, error) {
	conn, err := c.bus(ctx)
	if err != nil {
		return nil, nil, err
	}
	apps, err := c.apps(ctx, conn)
	if err != nil {
		c.mu.Lock()
		if c.conn == conn {
			c.dropLocked()
		}
		c.mu.Unlock()
		if conn, err = c.bus(ctx); err != nil {
			return nil, nil, err
		}
		if apps, err = c.apps(ctx, conn); err != nil {
			return nil, nil, err
		}
	}
	return conn, apps, nil
}

// loadAll loads the applications' trees concurrently; an application that
// does not answer in time is left out and marks the snapshot truncated.
func (c *Client) loadAll(ctx context.Context, conn *dbus.Conn, apps []*app, q desktop.ElementQuery, snap *desktop.ElementSnapshot) []*tree {
	trees := make([]*tree, len(apps))
	errs := make([]error, len(apps))
	// An application that hangs is given up on with a quarter of the
	// budget left, for walking the windows of those that answered.
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Until(dl)/4))
		defer cancel()
	}
	var wg sync.WaitGroup
	for i, a := range apps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.p = c.peerOf(ctx, conn, a.bus)
			trees[i], errs[i] = c.load(ctx, conn, a, 4*q.MaxElements)
			if a.p.d != nil && errors.Is(errs[i], errClosed) {
				// An application that closes its own connection at once
				// (at-spi2-atk lets in only its own user, where the bus
				// lets in root too): its calls go through the bus.
				c.mu.Lock()
				c.peers[a.bus] = nil
				c.mu.Unlock()
				a.p = peer{conn: conn, dest: a.bus}
				trees[i], errs[i] = c.load(ctx, conn, a, 4*q.MaxElements)
			}
		}()
	}
	wg.Wait()
	var out []*tree
	for i, t := range trees {
		switch {
		case errs[i] != nil:
			c.log.Debug("read an application's tree", "app", apps[i].name, "err", errs[i])
			if errors.Is(errs[i], errHung) || errors.Is(errs[i], context.DeadlineExceeded) {
				snap.Truncated, snap.TruncatedBy = true, "unresponsive" // it did not answer within the budget
			}
		case t != nil:
			if t.truncated != "" {
				snap.Truncated, snap.TruncatedBy = true, t.truncated
			}
			out = append(out, t)
		}
	}
	return out
}

type window struct {
	t *tree
	n *node
}

// chooseWindows returns the windows the scope covers. For ScopeFocused: the
// window with the active state, else the one titled q.ActiveWindow, else the
// one holding the focused element, else the only window; with several
// candidates and no sign of focus, all of them. With placed (not nil) only
// the windows in it are candidates, and focused, the one the compositor
// says has the focus, comes first.
func chooseWindows(trees []*tree, q desktop.ElementQuery, snap *desktop.ElementSnapshot, placed map[*node]offset, focused *node) []window {
	var all []window
	for _, t := range trees {
		for _, n := range t.root.children {
			if _, ok := placed[n]; placed != nil && !ok {
				continue
			}
			if n.st.has(stateShowing) {
				all = append(all, window{t, n})
			}
		}
	}
	if q.Scope != desktop.ScopeFocused || len(all) <= 1 {
		for _, w := range all {
			snap.Apps = appendOnce(snap.Apps, w.t.a.name)
		}
		if len(all) == 1 && q.Scope == desktop.ScopeFocused {
			snap.Window = all[0].n.name
		}
		return all
	}
	pick := func(ok func(w window) bool) []window {
		for _, w := range all {
			if ok(w) {
				snap.Window = w.n.name
				snap.Apps = []string{w.t.a.name}
				return []window{w}
			}
		}
		return nil
	}
	if w := pick(func(w window) bool { return focused != nil && w.n == focused }); w != nil {
		return w
	}
	if w := pick(func(w window) bool { return w.n.st.has(stateActive) }); w != nil {
		return w
	}
	if q.ActiveWindow != "" {
		if w := pick(func(w window) bool { return w.n.name == q.ActiveWindow }); w != nil {
			return w
		}
	}
	if w := pick(func(w window) bool { return hasFocus(w.n, 0) }); w != nil {
		return w
	}
	for _, w := range all {
		snap.Apps = appendOnce(snap.Apps, w.t.a.name)
	}
	return all
}

func hasFocus(n *node, depth int) bool {
	if n.st.has(stateFocused) {
		return true
	}
	if depth > 64 || !n.st.has(stateShowing) {
		return false
	}
	for _, ch := range n.children {
		if hasFocus(ch, depth+1) {
			return true
		}
	}
	return false
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// cand is a showing object of a window, in tree order.
type cand struct {
	n       *node
	parent  int // the nearest candidate ancestor, -1 for the window
	role    desktop.Role
	keep    bool // returned when on screen (not an unnamed generic container)
	clipper bool // a scroll pane or viewport: its box clips its descendants
	// filled as boxes arrive:
	clip geom.Rect // what the ancestors' scroll areas leave visible (W<0: unclipped)
	elem int       // index in snap.Elements, -1 when not returned
	anc  int       // the nearest returned ancestor-or-self's index in snap.Elements, -1 for none
}

// walker turns windows into elements.
type walker struct {
	c    *Client
	q    desktop.ElementQuery
	snap *desktop.ElementSnapshot
	// per returned element, its node (for its extras).
	nodes []*node
	// off moves the boxes of the window being walked onto the screen
	// (Options.Place); zero otherwise.
	off offset
}

// errFull stops a walk that has MaxElements elements.
var errFull = errors.New("full")

func (w *walker) stop(err error) {
	if errors.Is(err, errFull) {
		return
	}
	w.snap.Truncated = true
	if w.snap.TruncatedBy == "" {
		w.snap.TruncatedBy = truncation(err)
	}
}

func (w *walker) truncate(by string) {
	w.snap.Truncated = true
	if w.snap.TruncatedBy == "" {
		w.snap.TruncatedBy = by
	}
}

// window collects win's showing objects and streams the calls it needs:
// the boxes (in tree order), and for each element returned as soon as its
// box settles it, its extras, in the same stream.
func (w *walker) window(ctx context.Context, t *tree, win *node) error {
	var cands []cand
	if err := w.collect(ctx, t, win, 0, -1, &cands); err != nil {
		return err
	}
	if t.truncated != "" {
		w.truncate(t.truncated)
	}
	var queue []job
	for i, cd := range cands {
		if (cd.keep || cd.clipper) && !cd.n.boxKnown && (cd.n.ifaces&ifComponent != 0 || cd.n.ifaces == 0) && !w.echo(cands, i) {
			queue = append(queue, job{kind: jobBox, cand: i})
		}
	}
	queue = append(queue, job{kind: jobDecide, cand: len(cands) - 1})
	next, full := 0, false // the next candidate to decide; MaxElements reached
	decide := func(upTo int, push func(job)) {
		for ; next <= upTo && !full; next++ {
			before := len(w.snap.Elements)
			if err := w.decide(t, cands, next); err != nil {
				full = true // errFull: the extras already queued still go out
				return
			}
			w.extraJobs(before, push)
		}
	}
	err := stream(ctx, t.a.p, inflight, w.c.o.CallTimeout, queue, func(ctx context.Context, j *job) *dbus.Call {
		switch j.kind {
		case jobBox:
			if full {
				return nil
			}
			return t.a.p.call(ctx, cands[j.cand].n.path, ifaceComp, "GetExtents", uint32(0))
		case jobDecide:
			return nil
		}
		return w.issueExtra(ctx, t.a.p, j)
	}, func(j *job, call *dbus.Call, push func(job)) error {
		switch j.kind {
		case jobBox:
			n := cands[j.cand].n
			n.box, n.boxKnown = replyExtents(call)
			decide(j.cand, push)
		case jobDecide:
			decide(j.cand, push)
		default:
			w.applyExtra(t, j, call, push)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if full {
		return errFull
	}
	return nil
}

// echo reports whether candidate i is a text that says what its nearest
// kept ancestor says (a link's or a heading's text), one that has a box:
// decide leaves it out when that ancestor is returned, and it lies inside
// that ancestor, so its
// box (an X round trip in a GTK application) is not asked for; without one
// it is not returned either.
func (w *walker) echo(cands []cand, i int) bool {
	cd := cands[i]
	if cd.role != desktop.RoleText || w.q.Generic || cd.clipper {
		return false
	}
	for p := cd.parent; p >= 0; p = cands[p].parent {
		if a := cands[p]; a.keep {
			boxed := a.n.boxKnown || a.n.ifaces&ifComponent != 0 || a.n.ifaces == 0
			return boxed && a.n.name == cd.n.name
		}
	}
	return false
}

// collect appends n and its showing descendants to cands in tree order.
func (w *walker) collect(ctx context.Context, t *tree, n *node, depth, parent int, cands *[]cand) error {
	if len(*cands) >= 4*w.q.MaxElements {
		w.truncate("max_elements")
		return nil
	}
	if !n.st.has(stateShowing) {
		return nil
	}
	if depth >= w.q.MaxDepth {
		w.truncate("depth")
		return nil
	}
	role := uitree.NormalizeRole(roleName(n.role), statesOf(n))
	idx := len(*cands)
	*cands = append(*cands, cand{n: n, parent: parent, role: role,
		keep:    w.q.Generic || n.name != "" || (role != desktop.RoleGeneric && role != desktop.RoleText),
		clipper: n.role == roleScrollPane || n.role == roleViewport, elem: -1, anc: -1})
	kids := n.children
	// A count of -1 is a container that manages its descendants (the cache
	// leaves them out); more children than the tree holds is a cache that
	// missed some (Chromium's web content).
	switch {
	case n.nchild < 0 || (n.nchild > 0 && n.st.has(stateManagesDescendants)):
		var err error
		if kids, err = w.c.expand(ctx, t, n, w.q.MaxElements); err != nil {
			return err
		}
		if int(n.nchild) > 4*w.q.MaxElements {
			// More rows than a walk may read: the rows in view stand for
			// a list that was not read whole.
			w.truncate("max_elements")
		}
	case int(n.nchild) > len(kids):
		if err := w.c.walkFrom(ctx, t, n, 4*w.q.MaxElements); err != nil {
			return err
		}
		kids = n.children
	}
	for _, k := range kids {
		if err := w.collect(ctx, t, k, depth+1, idx, cands); err != nil {
			return err
		}
	}
	return nil
}

// decide settles candidate i once its box (and its ancestors') is known:
// its clip for its descendants, and whether it is returned.
func (w *walker) decide(t *tree, cands []cand, i int) error {
	cd := &cands[i]
	cd.clip, cd.anc = geom.Rect{W: -1}, -1
	if cd.parent >= 0 {
		cd.clip, cd.anc = cands[cd.parent].clip, cands[cd.parent].anc
	}
	box, ok := boxOf(cd.n)
	box.X, box.Y = box.X+w.off.x, box.Y+w.off.y
	if ok && cd.clip.W >= 0 {
		box = box.Intersect(cd.clip)
		ok = !box.Empty()
	}
	if cd.clipper && ok {
		cd.clip = box
	}
	if !cd.keep || !ok {
		return nil
	}
	if box, ok = uitree.Clip(box, w.q.Bounds); !ok {
		return nil
	}
	if cd.role == desktop.RoleText && cd.anc >= 0 && w.snap.Elements[cd.anc].Name == cd.n.name && !w.q.Generic {
		return nil // the text inside a heading, link or button that says the same
	}
	if len(w.snap.Elements) == w.q.MaxElements {
		w.truncate("max_elements")
		return errFull
	}
	e := desktop.Element{
		Ref: fmt.Sprintf("e%d", len(w.snap.Elements)+1), Role: cd.role, PlatformRole: roleName(cd.n.role),
		Name: cd.n.name, States: statesOf(cd.n), Box: box, App: t.a.name,
		Handle: t.a.bus + string(cd.n.path),
	}
	if cd.anc >= 0 {
		e.Parent, e.Depth = w.snap.Elements[cd.anc].Ref, w.snap.Elements[cd.anc].Depth+1
	}
	cd.elem, cd.anc = len(w.snap.Elements), len(w.snap.Elements)
	w.snap.Elements = append(w.snap.Elements, e)
	w.nodes = append(w.nodes, cd.n)
	return nil
}

// boxOf is n's box when it has a real one (GTK reports G_MININT for rows
// scrolled out of view).
func boxOf(n *node) (geom.Rect, bool) {
	b := n.box
	if !n.boxKnown || b.W <= 0 || b.H <= 0 || b.X == minInt32 || b.Y == minInt32 {
		return geom.Rect{}, false
	}
	return geom.Rect{X: int(b.X), Y: int(b.Y), W: int(b.W), H: int(b.H)}, true
}

func statesOf(n *node) desktop.States {
	s := n.st
	return desktop.States{
		Focused:   s.has(stateFocused),
		Enabled:   s.has(stateEnabled) || s.has(stateSensitive),
		Checked:   s.has(stateChecked) || (n.role == 62 && s.has(statePressed)), // a pressed toggle button
		Selected:  s.has(stateSelected),
		Expanded:  s.has(stateExpanded),
		Editable:  s.has(stateEditable),
		Protected: n.role == 40, // password text
	}
}
