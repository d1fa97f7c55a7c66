package x11

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/geom"
)

// rootMonitor is one monitor in X root-window coordinates.
type rootMonitor struct {
	name    string
	rect    geom.Rect // root coordinates
	primary bool
}

// Displays lists the monitors from RandR 1.5 (GetMonitors), ordered left to
// right then top to bottom, with ids "0", "1", ... Without RandR monitors the
// whole root window is one display. Scale is always 1 on X11. Bounds are global:
// the primary monitor's top-left is (0,0).
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mons := b.monitors()
	pi := 0
	for i, m := range mons {
		if m.primary {
			pi = i
			break
		}
	}
	origin := geom.GlobalPoint{X: mons[pi].rect.X, Y: mons[pi].rect.Y}
	b.layoutMu.Lock()
	b.origin = origin
	b.layoutMu.Unlock()
	out := make([]geom.Display, len(mons))
	for i, m := range mons {
		r := m.rect
		r.X -= origin.X
		r.Y -= origin.Y
		out[i] = geom.Display{ID: strconv.Itoa(i), Name: m.name, Bounds: r, Scale: 1, Primary: i == pi}
	}
	return out, nil
}

// monitors returns the RandR monitors sorted by position, or the root window.
func (b *Backend) monitors() []rootMonitor {
	root := geom.Rect{W: int(b.screen.WidthInPixels), H: int(b.screen.HeightInPixels)}
	var mons []rootMonitor
	if b.hasRandr {
		if rep, err := randr.GetMonitors(b.conn, b.root, true).Reply(); err == nil {
			for _, m := range rep.Monitors {
				r := geom.Rect{X: int(m.X), Y: int(m.Y), W: int(m.Width), H: int(m.Height)}
				if r.Empty() {
					continue
				}
				mons = append(mons, rootMonitor{name: b.atomName(m.Name), rect: r, primary: m.Primary})
			}
		} else {
			b.log.Debug("randr GetMonitors failed; using the root window", "err", err)
		}
	}
	if len(mons) == 0 {
		return []rootMonitor{{name: "screen", rect: root, primary: true}}
	}
	sort.SliceStable(mons, func(i, j int) bool {
		if mons[i].rect.X != mons[j].rect.X {
			return mons[i].rect.X < mons[j].rect.X
		}
		return mons[i].rect.Y < mons[j].rect.Y
	})
	hasPrimary := false
	for _, m := range mons {
		hasPrimary = hasPrimary || m.primary
	}
	if !hasPrimary { // the monitor at the root origin, else the first
		idx := 0
		for i, m := range mons {
			if m.rect.Contains(geom.GlobalPoint{}) {
				idx = i
				break
			}
		}
		mons[idx].primary = true
	}
	return mons
}

func (b *Backend) atomName(a xproto.Atom) string {
	if a == 0 {
		return ""
	}
	rep, err := xproto.GetAtomName(b.conn, a).Reply()
	if err != nil {
		return fmt.Sprintf("atom%d", a)
	}
	return rep.Name
}

// toRoot maps a global point to root-window coordinates.
func (b *Backend) toRoot(p geom.GlobalPoint) (int, int) {
	b.layoutMu.Lock()
	o := b.origin
	b.layoutMu.Unlock()
	return p.X + o.X, p.Y + o.Y
}

// fromRoot maps root-window coordinates to a global point.
func (b *Backend) fromRoot(x, y int) geom.GlobalPoint {
	b.layoutMu.Lock()
	o := b.origin
	b.layoutMu.Unlock()
	return geom.GlobalPoint{X: x - o.X, Y: y - o.Y}
}
