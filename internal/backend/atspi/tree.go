package atspi

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/godbus/dbus/v5"
)

// node is one accessible object of an application.
type node struct {
	path     dbus.ObjectPath
	parent   dbus.ObjectPath
	index    int32
	nchild   int32
	children []*node
	ifaces   uint8
	name     string
	role     uint32
	st       stateSet
	box      extents
	boxKnown bool
}

// tree is what the client knows of one application's objects.
type tree struct {
	a      *app
	root   *node
	nodes  map[dbus.ObjectPath]*node
	cached bool // from Cache.GetItems (else walked call by call)
	// truncated is set when the walk of an application without a cache
	// stopped at its node limit or the budget.
	truncated string
}

// inflight is how many calls the client keeps outstanding per application:
// enough to hide the round trips, few enough that the application serves
// its own events between them.
const inflight = 64

// errNoCache says an application offers no org.a11y.atspi.Cache.
var errNoCache = errors.New("no cache")

// load reads a's tree: from its cache when it has one, else by walking it
// from the root (at most maxNodes objects, only into showing ones).
func (c *Client) load(ctx context.Context, bus *dbus.Conn, a *app, maxNodes int) (*tree, error) {
	if c.bigTree(a) {
		return c.loadWalk(ctx, a, maxNodes)
	}
	start := time.Now()
	t, err := c.loadCache(ctx, bus, a)
	if err == nil && time.Since(start) > slowCache || errors.Is(err, errHung) || errors.Is(err, context.DeadlineExceeded) {
		c.mu.Lock()
		c.big[a.bus] = true
		c.mu.Unlock()
	}
	if err == nil || !errors.Is(err, errNoCache) {
		return t, err
	}
	return c.loadWalk(ctx, a, maxNodes)
}

// An application's cache is read whole, in one call its main loop cannot
// interrupt, and at-spi2-atk takes seconds for tens of thousands of objects.
// An application whose cache answered slower than slowCache (or not in
// time) is walked from its windows from then on. (Asking first how big the
// tree is, with Collection.GetMatches and a count, blocks such an
// application for longer still.)
const slowCache = 800 * time.Millisecond

// bigTree reports whether a's cache proved too slow to read.
func (c *Client) bigTree(a *app) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.big[a.bus]
}

func (c *Client) loadCache(ctx context.Context, bus *dbus.Conn, a *app) (*tree, error) {
	timeout := max(c.o.CallTimeout, 2*time.Second) // one reply with the whole tree
	call, err := a.p.do(ctx, timeout, cachePath, ifaceCache, "GetItems")
	if err != nil && unknownMethod(err) && a.p.dest == "" {
		// The application may not have seen the listener registration on
		// its bus connection yet when asked on its own: ask on the bus.
		call, err = peer{conn: bus, dest: a.bus}.do(ctx, timeout, cachePath, ifaceCache, "GetItems")
	}
	if err != nil {
		if unknownMethod(err) {
			return nil, errNoCache
		}
		return nil, err
	}
	t := &tree{a: a, nodes: map[dbus.ObjectPath]*node{}, cached: true}
	var items []cacheItem
	var err1 error
	if raw, ok := call.Body[0].(rawItems); ok {
		if items, ok = raw.items(); !ok {
			err1 = errors.New("the reply is cut short")
		}
	} else {
		err1 = call.Store(&items)
	}
	if err1 == nil {
		for _, it := range items {
			t.add(&node{path: it.Obj.Path, parent: it.Parent.Path, index: it.Index, nchild: it.Count,
				ifaces: interfaces(it.Ifaces), name: it.Name, role: it.Role, st: states(it.States)})
		}
		t.link(nil)
		return t, nil
	}
	var legacy []legacyCacheItem
	if err := call.Store(&legacy); err != nil {
		return nil, storeErr("Cache.GetItems", err)
	}
	kids := map[dbus.ObjectPath][]ref{}
	for _, it := range legacy {
		t.add(&node{path: it.Obj.Path, parent: it.Parent.Path, nchild: int32(len(it.Children)),
			ifaces: interfaces(it.Ifaces), name: it.Name, role: it.Role, st: states(it.States)})
		kids[it.Obj.Path] = it.Children
	}
	t.link(kids)
	return t, nil
}

func (t *tree) add(n *node) {
	t.nodes[n.path] = n
	if n.path == rootPath {
		t.root = n
	}
}

// link fills the children lists: from kids when the cache listed them, else
// from each node's parent and index.
func (t *tree) link(kids map[dbus.ObjectPath][]ref) {
	if kids != nil {
		for p, ks := range kids {
			n := t.nodes[p]
			for i, k := range ks {
				if ch, ok := t.nodes[k.Path]; ok {
					ch.index = int32(i)
					n.children = append(n.children, ch)
				}
			}
		}
	} else {
		for _, n := range t.nodes {
			if p, ok := t.nodes[n.parent]; ok && n != p {
				p.children = append(p.children, n)
			}
		}
		for _, n := range t.nodes {
			sort.Slice(n.children, func(i, j int) bool { return n.children[i].index < n.children[j].index })
		}
	}
	if t.root == nil {
		t.root = &node{path: rootPath, role: roleApplication}
		for _, n := range t.nodes {
			if _, ok := t.nodes[n.parent]; !ok {
				t.root.children = append(t.root.children, n)
			}
		}
	}
}

// loadWalk reads an application without a cache down to its windows; the
// snapshot walks the windows it covers (walkFrom).
func (c *Client) loadWalk(ctx context.Context, a *app, _ int) (*tree, error) {
	root := &node{path: rootPath}
	t := &tree{a: a, root: root, nodes: map[dbus.ObjectPath]*node{rootPath: root}}
	if err := c.fetchProps(ctx, a.p, []*node{root}, false); err != nil {
		return nil, err
	}
	root.st |= 1 << stateShowing // an application is not itself shown
	if err := c.walkFrom(ctx, t, root, 64); err != nil {
		return nil, err
	}
	return t, nil
}

// walkFrom reads the subtree under from (its children replaced), entering
// only showing objects, at most maxNodes in all. Its calls stream: each new
// object's name, role, states and children are asked for together, and
// its children's calls are issued as soon as its answers say it is
// showing, with up to inflight calls outstanding and no wait for a level to
// finish; the longest chain of round trips is the tree's depth. Objects a
// cache already holds keep what the cache says of them and under them (a
// cache leaves out only some children: transient ones such as popovers, or
// Chromium's web content). Containers that manage their descendants are
// left to expand. Below the application's root only its windows are read
// (the snapshot walks those it covers).
func (c *Client) walkFrom(ctx context.Context, t *tree, from *node, maxNodes int) error {
	from.children = nil
	type pend struct {
		n    *node
		kind int // 0 GetAll, 1 GetRole, 2 GetState, 3 GetChildren
	}
	added := 0
	p := t.a.p
	return stream(ctx, p, inflight, c.o.CallTimeout, []pend{{n: from, kind: 3}}, func(ctx context.Context, q *pend) *dbus.Call {
		switch q.kind {
		case 0:
			return p.call(ctx, q.n.path, ifaceProps, "GetAll", ifAccessible)
		case 1:
			return p.call(ctx, q.n.path, ifAccessible, "GetRole")
		case 2:
			return p.call(ctx, q.n.path, ifAccessible, "GetState")
		}
		return p.call(ctx, q.n.path, ifAccessible, "GetChildren")
	}, func(q *pend, call *dbus.Call, push func(pend)) error {
		if call.Err != nil {
			return nil
		}
		n := q.n
		if q.kind != 3 {
			storeProp(n, q.kind, call)
			return nil
		}
		if n != from && (!n.st.has(stateShowing) || n.st.has(stateManagesDescendants) || n.parent == rootPath && t.root == from) {
			return nil // not shown, a list to expand, or a window of a walk that stops at the windows
		}
		var refs []ref
		if call.Store(&refs) != nil {
			return nil
		}
		n.children = nil
		for k, r := range refs {
			if r.Path == "/org/a11y/atspi/null" || r.Path == n.path {
				continue
			}
			if added >= maxNodes {
				t.truncated = "max_elements"
				break
			}
			ch, seen := t.nodes[r.Path]
			if seen && t.cached {
				ch.parent, ch.index = n.path, int32(k)
				n.children = append(n.children, ch)
				continue
			}
			if !seen {
				ch = &node{path: r.Path}
				t.nodes[r.Path] = ch
			}
			ch.parent, ch.index, ch.children = n.path, int32(k), nil
			n.children = append(n.children, ch)
			added++
			for kind := range 4 {
				push(pend{n: ch, kind: kind})
			}
		}
		return nil
	})
}

// truncation names why a walk stopped early for the snapshot's truncated_by.
func truncation(err error) string {
	if errors.Is(err, errHung) {
		return "unresponsive"
	}
	return "budget"
}

// fetchProps reads the name, child count, role and states of nodes (and
// their extents when withBox), all calls pipelined. The interfaces are not
// asked for (a call more per object): the calls that need one (extents,
// text, value) are made where the role calls for them and may fail.
func (c *Client) fetchProps(ctx context.Context, p peer, nodes []*node, withBox bool) error {
	per := 3
	if withBox {
		per = 4
	}
	return pipeline(ctx, p, len(nodes)*per, inflight, c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		n := nodes[i/per]
		switch i % per {
		case 0:
			return p.call(ctx, n.path, ifaceProps, "GetAll", ifAccessible)
		case 1:
			return p.call(ctx, n.path, ifAccessible, "GetRole")
		case 2:
			return p.call(ctx, n.path, ifAccessible, "GetState")
		}
		return p.call(ctx, n.path, ifaceComp, "GetExtents", uint32(0))
	}, func(i int, call *dbus.Call) error {
		storeProp(nodes[i/per], i%per, call)
		return nil
	})
}

// storeProp stores the reply to one of fetchProps's calls: 0 GetAll (name,
// child count), 1 GetRole, 2 GetState, 3 GetExtents.
func storeProp(n *node, kind int, call *dbus.Call) {
	switch kind {
	case 0:
		replyProps(call, n)
	case 1:
		if r, ok := replyUint32(call); ok {
			n.role = r
		}
	case 2:
		if st, ok := replyStates(call); ok {
			n.st = st
		}
	case 3:
		n.box, n.boxKnown = replyExtents(call)
	}
}
