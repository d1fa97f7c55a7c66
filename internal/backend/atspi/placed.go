package atspi

import (
	"context"
	"fmt"
	"slices"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/geom"
)

// Placed is a toplevel window where the compositor placed it. On Wayland an
// application's extents (screen or window coordinates alike) are relative
// to its own window, which the client never learns the place of: the
// compositor's word (Options.Place) maps them onto the screen.
type Placed struct {
	// PID is the application's process id (0: unknown).
	PID int
	// Title is the window's title, matched with the window's accessible name.
	Title string
	// Rect is the window's content (what the application's coordinates are
	// relative to) in the coordinates the snapshot's boxes are to be in.
	Rect geom.Rect
	// Focused is set on the window with the keyboard focus.
	Focused bool
	// Absolute is set on a window whose application reports boxes in those
	// coordinates already (an X11 client under XWayland).
	Absolute bool
}

// placement is what one snapshot knows of where windows are.
type placement struct {
	wins []Placed
	pids map[string]int // application bus name -> process id
}

// place asks where the windows are and which process each application is,
// or returns nil when the client has no Place.
func (c *Client) place(ctx context.Context, conn *dbus.Conn, apps []*app) (*placement, error) {
	if c.o.Place == nil {
		return nil, nil
	}
	wins, err := c.o.Place(ctx)
	if err != nil {
		return nil, err
	}
	return &placement{wins: wins, pids: c.pids(ctx, conn, apps)}, nil
}

// pids returns the process id of each application's connection to the
// accessibility bus (org.freedesktop.DBus.GetConnectionUnixProcessID, as
// pyatspi's get_process_id), remembered per bus name, which is never reused.
func (c *Client) pids(ctx context.Context, conn *dbus.Conn, apps []*app) map[string]int {
	c.mu.Lock()
	if c.pidOf == nil {
		c.pidOf = map[string]int{}
	}
	out := make(map[string]int, len(apps))
	var ask []*app
	for _, a := range apps {
		if pid, ok := c.pidOf[a.bus]; ok {
			out[a.bus] = pid
		} else {
			ask = append(ask, a)
		}
	}
	c.mu.Unlock()
	bus := peer{conn: conn, dest: "org.freedesktop.DBus"}
	_ = pipeline(ctx, peer{}, len(ask), 32, c.o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		return bus.call(ctx, "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", ask[i].bus)
	}, func(i int, call *dbus.Call) error {
		if pid, ok := replyUint32(call); ok {
			out[ask[i].bus] = int(pid)
		}
		return nil
	})
	c.mu.Lock()
	for _, a := range ask {
		if pid, ok := out[a.bus]; ok {
			c.pidOf[a.bus] = pid
		}
	}
	c.mu.Unlock()
	return out
}

// origins matches the showing windows of the trees with the compositor's
// windows: by process id, then by title (the only window of a process the
// compositor lists matches the only window its application shows, whatever
// their titles); an application whose process the compositor does not know
// (a sandbox's own process ids) is matched by title alone. It returns each
// matched window's origin and the window that has the focus, if matched.
// Windows it cannot match (menus and popups, which are no toplevels, and
// windows on hidden workspaces) are not in the map.
func (pl *placement) origins(trees []*tree) (map[*node]offset, *node) {
	out := map[*node]offset{}
	var focused *node
	taken := make([]bool, len(pl.wins))
	match := func(n *node, i int) {
		taken[i] = true
		w := pl.wins[i]
		if w.Absolute {
			out[n] = offset{}
		} else {
			out[n] = offset{x: w.Rect.X, y: w.Rect.Y, w: w.Rect.W, h: w.Rect.H}
		}
		if w.Focused {
			focused = n
		}
	}
	known := map[int]bool{} // processes with an application on the bus
	for _, t := range trees {
		if pid := pl.pids[t.a.bus]; pid > 0 {
			known[pid] = true
		}
	}
	// First each application with its own process's windows, then those
	// whose process the compositor does not list with the windows of no
	// application's process.
	for pass := range 2 {
		for _, t := range trees {
			pid := pl.pids[t.a.bus]
			var pool []int
			for i, w := range pl.wins {
				if (pass == 0 && pid > 0 && w.PID == pid) || (pass == 1 && !known[w.PID]) {
					pool = append(pool, i)
				}
			}
			if pass == 1 && pid > 0 && slices.ContainsFunc(pl.wins, func(w Placed) bool { return w.PID == pid }) {
				continue // matched in the first pass
			}
			var showing []*node
			for _, n := range t.root.children {
				if _, done := out[n]; !done && n.st.has(stateShowing) {
					showing = append(showing, n)
				}
			}
			for _, n := range showing {
				for _, i := range pool {
					if !taken[i] && pl.wins[i].Title == n.name {
						match(n, i)
						break
					}
				}
			}
			if pass == 0 && len(showing) == 1 && len(pool) == 1 && !taken[pool[0]] {
				if _, ok := out[showing[0]]; !ok {
					match(showing[0], pool[0])
				}
			}
		}
	}
	return out, focused
}

// offset moves a window's boxes onto the screen; w and h are the size of
// the window's content as the compositor placed it (0 for a window whose
// boxes are the screen's already).
type offset struct{ x, y, w, h int }

// maxInsetProbes bounds the children of a window inset reads.
const maxInsetProbes = 8

// inset corrects o for a client-side-decorated window (GTK 3's header-bar
// windows, GTK 4): its surface holds its shadow around the window, its
// coordinates count from the surface's corner, and the compositor places
// the window geometry, the shadow left out. Such a window's own box is
// larger than what the compositor placed, and its children begin where
// the window geometry begins: o moves back by that inset. It costs the
// window's box (which the walk would ask for anyway) and, only for such a
// window, its children's.
func (c *Client) inset(ctx context.Context, t *tree, win *node, o offset) offset {
	if o.w <= 0 || o.h <= 0 {
		return o
	}
	if !win.boxKnown {
		call, err := t.a.p.do(ctx, c.o.CallTimeout, win.path, ifaceComp, "GetExtents", uint32(0))
		if err != nil {
			return o
		}
		win.box, win.boxKnown = replyExtents(call)
	}
	b, ok := boxOf(win)
	if !ok || (b.W <= o.w && b.H <= o.h) {
		return o
	}
	dx, dy := b.W, b.H
	for i, ch := range win.children {
		if i == maxInsetProbes {
			break
		}
		if !ch.st.has(stateShowing) {
			continue
		}
		if !ch.boxKnown {
			call, err := t.a.p.do(ctx, c.o.CallTimeout, ch.path, ifaceComp, "GetExtents", uint32(0))
			if err != nil {
				return o
			}
			ch.box, ch.boxKnown = replyExtents(call)
		}
		if cb, ok := boxOf(ch); ok {
			dx, dy = min(dx, cb.X-b.X), min(dy, cb.Y-b.Y)
		}
	}
	o.x -= min(max(dx, 0), b.W-o.w)
	o.y -= min(max(dy, 0), b.H-o.h)
	return o
}

// placeErr is the error of a snapshot whose windows could not be placed.
func placeErr(err error) error {
	return fmt.Errorf("reading the UI as elements: %w", err)
}
