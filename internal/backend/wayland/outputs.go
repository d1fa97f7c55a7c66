package wayland

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/guiagent/guiagent/internal/geom"
)

// output is what the compositor told about one wl_output.
type output struct {
	global uint32 // registry name
	id     uint32 // wl_output object
	xdg    uint32 // zxdg_output_v1 object, 0 without the manager
	name   string

	// From wl_output.
	geomX, geomY int32
	transform    int32
	modeW, modeH int32
	scale        int32
	// From zxdg_output_v1 (logical pixels of the layout).
	lx, ly, lw, lh int32
	hasLogical     bool
}

// outputs tracks the compositor's outputs as they come and go.
type outputs struct {
	mu      sync.Mutex
	byName  map[uint32]*output
	started bool
}

func (o *outputs) init() { o.byName = map[uint32]*output{} }

func (o *outputs) live() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.started
}

func (o *outputs) start() {
	o.mu.Lock()
	o.started = true
	o.mu.Unlock()
}

func (o *outputs) remove(global uint32) {
	o.mu.Lock()
	delete(o.byName, global)
	o.mu.Unlock()
}

// bindOutput binds one wl_output global and, with the xdg-output manager, its
// zxdg_output_v1.
func (b *Backend) bindOutput(g global) {
	out := &output{global: g.name, scale: 1}
	b.outs.mu.Lock()
	if _, dup := b.outs.byName[g.name]; dup {
		b.outs.mu.Unlock()
		return
	}
	b.outs.byName[g.name] = out
	b.outs.mu.Unlock()
	id, _, err := b.bindGlobal(g, func(op uint16, d *decoder) { b.outputEvent(out, op, d) })
	if err != nil {
		return
	}
	b.outs.mu.Lock()
	out.id = id
	b.outs.mu.Unlock()
	b.regMu.Lock()
	mgr, ok := b.bound[ifXdgOutput]
	b.regMu.Unlock()
	if ok {
		var xid uint32
		if b.c.send(mgr, 1, newObj{h: func(op uint16, d *decoder) { b.xdgOutputEvent(out, op, d) }, out: &xid}, id) == nil {
			b.outs.mu.Lock()
			out.xdg = xid
			b.outs.mu.Unlock()
		}
	}
}

func (b *Backend) outputEvent(o *output, op uint16, d *decoder) {
	b.outs.mu.Lock()
	defer b.outs.mu.Unlock()
	switch op {
	case 0: // geometry
		o.geomX, o.geomY = d.int(), d.int()
		d.int()
		d.int()
		d.int()
		d.string()
		d.string()
		o.transform = d.int()
	case 1: // mode
		flags, w, h := d.uint(), d.int(), d.int()
		if flags&1 != 0 { // current
			o.modeW, o.modeH = w, h
		}
	case 3:
		o.scale = max(d.int(), 1)
	case 4:
		if o.name == "" || o.xdg == 0 {
			o.name = d.string()
		}
	}
}

func (b *Backend) xdgOutputEvent(o *output, op uint16, d *decoder) {
	b.outs.mu.Lock()
	defer b.outs.mu.Unlock()
	switch op {
	case 0:
		o.lx, o.ly = d.int(), d.int()
	case 1:
		o.lw, o.lh = d.int(), d.int()
		o.hasLogical = true
	case 3:
		o.name = d.string()
	}
}

// place is one output in layout coordinates, with its device size.
type place struct {
	name     string
	id       uint32 // wl_output
	logical  geom.Rect
	physical geom.Size
}

// placeOf returns o's logical rectangle and device size; false while the
// compositor has not told enough.
func placeOf(o output) (place, bool) {
	pw, ph := int(o.modeW), int(o.modeH)
	if o.transform%2 == 1 { // 90 and 270 degrees, flipped or not
		pw, ph = ph, pw
	}
	if pw <= 0 || ph <= 0 {
		return place{}, false
	}
	p := place{name: o.name, id: o.id, physical: geom.Size{W: pw, H: ph}}
	if o.hasLogical && o.lw > 0 && o.lh > 0 {
		p.logical = geom.Rect{X: int(o.lx), Y: int(o.ly), W: int(o.lw), H: int(o.lh)}
	} else {
		s := int(max(o.scale, 1))
		p.logical = geom.Rect{X: int(o.geomX), Y: int(o.geomY), W: pw / s, H: ph / s}
	}
	if p.name == "" {
		p.name = "output" + strconv.Itoa(int(o.global))
	}
	return p, true
}

// layout orders places left to right then top to bottom and makes them
// displays: the output at the layout's origin (else the first) is primary and
// the global origin; the scale is device pixels per logical pixel.
func layout(ps []place) ([]geom.Display, geom.GlobalPoint) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].logical.X != ps[j].logical.X {
			return ps[i].logical.X < ps[j].logical.X
		}
		return ps[i].logical.Y < ps[j].logical.Y
	})
	pi := 0
	for i, p := range ps {
		if p.logical.X == 0 && p.logical.Y == 0 {
			pi = i
			break
		}
	}
	if len(ps) == 0 {
		return nil, geom.GlobalPoint{}
	}
	origin := geom.GlobalPoint{X: ps[pi].logical.X, Y: ps[pi].logical.Y}
	out := make([]geom.Display, len(ps))
	for i, p := range ps {
		r := p.logical
		r.X -= origin.X
		r.Y -= origin.Y
		out[i] = geom.Display{ID: strconv.Itoa(i), Name: p.name, Bounds: r, Scale: float64(p.physical.W) / float64(p.logical.W), Primary: i == pi}
	}
	return out, origin
}

// places returns the known outputs' places, in layout order, and the origin.
func (b *Backend) places() ([]place, geom.GlobalPoint) {
	b.outs.mu.Lock()
	var ps []place
	for _, o := range b.outs.byName {
		if p, ok := placeOf(*o); ok {
			ps = append(ps, p)
		}
	}
	b.outs.mu.Unlock()
	_, origin := layout(ps)
	return ps, origin
}

// Displays lists the outputs, ordered left to right then top to bottom, with
// ids "0", "1", ... in global logical pixels (the primary output's top-left
// is the origin).
func (b *Backend) Displays(ctx context.Context) ([]geom.Display, error) {
	if err := b.c.roundtrip(ctx); err != nil {
		return nil, err
	}
	ps, _ := b.places()
	ds, _ := layout(ps)
	if len(ds) == 0 {
		return nil, fmt.Errorf("wayland: %s has no output with a mode: nothing to show", b.compositor)
	}
	return ds, nil
}

// outputAt returns the output holding the most of region (global), region
// clipped to it, and the layout origin.
func (b *Backend) outputAt(region geom.Rect) (place, geom.Rect, geom.GlobalPoint, error) {
	ps, origin := b.places()
	best, area := -1, 0
	var clip geom.Rect
	for i, p := range ps {
		g := p.logical
		g.X -= origin.X
		g.Y -= origin.Y
		in := g.Intersect(region)
		if a := in.W * in.H; a > area {
			best, area, clip = i, a, in
		}
	}
	if best < 0 {
		return place{}, geom.Rect{}, origin, fmt.Errorf("wayland: region %v lies on no output: %w", region, geom.ErrOutside)
	}
	return ps[best], clip, origin, nil
}
