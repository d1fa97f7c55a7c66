package atspi

import (
	"context"
	"errors"

	"github.com/godbus/dbus/v5"
)

// expandChunk is how many children of a large container are read at a time.
const expandChunk = 32

// expand reads the children of a container that manages its descendants (a
// GTK list or table, whose rows the cache leaves out and which may hold
// thousands). It is not read whole: the walk asks which child sits
// at the top of its box, reads from there in chunks (each chunk's calls
// pipelined: the child, then its name, role, states, interfaces and box) and
// stops after the rows in view, when a chunk's children have no box on
// screen. At most limit children are read.
func (c *Client) expand(ctx context.Context, t *tree, n *node, limit int) ([]*node, error) {
	total := int(n.nchild)
	if total < 0 {
		call, err := t.a.p.do(ctx, c.o.CallTimeout, n.path, ifaceProps, "Get", ifAccessible, "ChildCount")
		if err != nil {
			return nil, err
		}
		var v dbus.Variant
		if call.Store(&v) != nil {
			return nil, nil
		}
		count, _ := v.Value().(int32)
		total = int(count)
		n.nchild = count
	}
	if total <= expandChunk {
		if kids, ok, err := c.readFew(ctx, t, n, total); ok || err != nil {
			n.children = kids
			return kids, err
		}
	}
	from := 0
	if total > expandChunk {
		from = c.firstInView(ctx, t.a.p, n, total)
	}
	var kids []*node
	seenOnScreen := false
	for lo := from; lo < total && len(kids) < limit; lo += expandChunk {
		hi := min(lo+expandChunk, total)
		chunk, err := c.readChildren(ctx, t, n, lo, hi)
		if err != nil {
			return kids, err
		}
		onScreen := 0
		for _, ch := range chunk {
			t.nodes[ch.path] = ch
			if _, ok := boxOf(ch); ok {
				onScreen++
			}
		}
		kids = append(kids, chunk...)
		if onScreen > 0 {
			seenOnScreen = true
		} else if seenOnScreen || lo-from >= 4*expandChunk {
			break // past the rows in view (or none in view near the top)
		}
	}
	n.children = kids
	return kids, nil
}

// readFew reads the children of a container with few of them (total at
// most expandChunk): all their references in one GetChildren, then their
// name, role, states and box (fetchProps), a call less per child than
// GetChildAtIndex. ok is false when GetChildren does not list total
// children (the caller reads them one by one).
func (c *Client) readFew(ctx context.Context, t *tree, n *node, total int) ([]*node, bool, error) {
	call, err := t.a.p.do(ctx, c.o.CallTimeout, n.path, ifAccessible, "GetChildren")
	if err != nil {
		if errors.Is(err, errHung) || ctx.Err() != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	var refs []ref
	if call.Store(&refs) != nil || len(refs) != total {
		return nil, false, nil
	}
	kids := make([]*node, 0, total)
	for i, r := range refs {
		if r.Path == "/org/a11y/atspi/null" || r.Path == n.path {
			continue
		}
		ch, old := t.nodes[r.Path]
		if !old {
			ch = &node{path: r.Path, parent: n.path, index: int32(i)}
		}
		t.nodes[r.Path] = ch
		kids = append(kids, ch)
	}
	return kids, true, c.fetchProps(ctx, t.a.p, kids, true)
}

// readChildren reads n's children lo to hi-1, and their name, role, states
// and box, in one stream: each child's calls go out as soon as its
// reference arrives.
func (c *Client) readChildren(ctx context.Context, t *tree, n *node, lo, hi int) ([]*node, error) {
	type cjob struct {
		kind  int // -1 GetChildAtIndex, else a storeProp kind
		index int
		n     *node
	}
	queue := make([]cjob, 0, 5*(hi-lo))
	for i := lo; i < hi; i++ {
		queue = append(queue, cjob{kind: -1, index: i})
	}
	chunk := make([]*node, 0, hi-lo)
	p := t.a.p
	err := stream(ctx, p, inflight, c.o.CallTimeout, queue, func(ctx context.Context, j *cjob) *dbus.Call {
		switch j.kind {
		case -1:
			return p.call(ctx, n.path, ifAccessible, "GetChildAtIndex", int32(j.index))
		case 0:
			return p.call(ctx, j.n.path, ifaceProps, "GetAll", ifAccessible)
		case 1:
			return p.call(ctx, j.n.path, ifAccessible, "GetRole")
		case 2:
			return p.call(ctx, j.n.path, ifAccessible, "GetState")
		}
		return p.call(ctx, j.n.path, ifaceComp, "GetExtents", uint32(0))
	}, func(j *cjob, call *dbus.Call, push func(cjob)) error {
		if j.kind >= 0 {
			storeProp(j.n, j.kind, call)
			return nil
		}
		r, ok := replyRef(call)
		if !ok || r.Path == "/org/a11y/atspi/null" {
			return nil
		}
		ch, old := t.nodes[r.Path]
		if !old {
			ch = &node{path: r.Path, parent: n.path, index: int32(j.index)}
		}
		chunk = append(chunk, ch)
		for k := 0; k < 4; k++ {
			push(cjob{kind: k, n: ch})
		}
		return nil
	})
	return chunk, err
}

// firstInView returns the index of the child at the top of n's box, or 0.
// A table or tree (GTK's tree view) answers Component.GetAccessibleAtPoint
// from its row layout, so a few points down its middle are asked. Any
// other container (a GTK list box) would test every child's extents for
// it, stalling for seconds with thousands of rows: its children are
// searched by halves instead, on their boxes, which run down the list.
func (c *Client) firstInView(ctx context.Context, p peer, n *node, total int) int {
	call, err := p.do(ctx, c.o.CallTimeout, n.path, ifaceComp, "GetExtents", uint32(0))
	if err != nil || call.Store(&n.box) != nil {
		return 0
	}
	n.boxKnown = true
	if n.role != roleTable && n.role != roleTreeTable && n.role != roleTree {
		return c.searchTop(ctx, p, n, total)
	}
	const probes = 6
	refs := make([]ref, 0, probes)
	_ = pipeline(ctx, p, probes, probes, c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		x, y := n.box.X+n.box.W/2, n.box.Y+int32(i+1)*n.box.H/(2*probes)
		return p.call(ctx, n.path, ifaceComp, "GetAccessibleAtPoint", x, y, uint32(0))
	}, func(i int, call *dbus.Call) error {
		var r ref
		if call.Err == nil && call.Store(&r) == nil && r.Path != "/org/a11y/atspi/null" && r.Path != n.path {
			refs = append(refs, r)
		}
		return nil
	})
	best := -1
	_ = pipeline(ctx, p, len(refs), probes, c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		return p.call(ctx, refs[i].Path, ifAccessible, "GetIndexInParent")
	}, func(i int, call *dbus.Call) error {
		var idx int32
		if call.Err == nil && call.Store(&idx) == nil && idx >= 0 && (best < 0 || int(idx) < best) {
			best = int(idx)
		}
		return nil
	})
	// Start a little before the first row found: rows above it may be partly in view.
	return max(best-expandChunk/4, 0)
}

// searchTop finds by halves the first child of n whose box reaches below
// the top of n's box (two calls per step: the child, its extents).
func (c *Client) searchTop(ctx context.Context, p peer, n *node, total int) int {
	lo, hi := 0, total // the answer is in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		call, err := p.do(ctx, c.o.CallTimeout, n.path, ifAccessible, "GetChildAtIndex", int32(mid))
		var r ref
		if err != nil || call.Store(&r) != nil {
			return 0
		}
		call, err = p.do(ctx, c.o.CallTimeout, r.Path, ifaceComp, "GetExtents", uint32(0))
		var e extents
		if err != nil || call.Store(&e) != nil || e.Y == minInt32 {
			return 0
		}
		if e.Y+e.H <= n.box.Y {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return max(lo-expandChunk/4, 0)
}
