package wayland

import (
	"context"
	"encoding/binary"
	"sync"
)

// toplevelActivated is the activated value of zwlr_foreign_toplevel_handle_v1.state.
const toplevelActivated = 2

// toplevel is one window as zwlr_foreign_toplevel_management_v1 tells it.
type toplevel struct {
	title, pendingTitle string
	active, pendingAct  bool
}

// toplevels is the compositor's window list.
type toplevels struct {
	mu   sync.Mutex
	mgr  uint32
	err  error
	list map[uint32]*toplevel
}

func (b *Backend) startToplevels() error {
	t := &b.tops
	t.mu.Lock()
	defer t.mu.Unlock()
	t.list = map[uint32]*toplevel{}
	if _, ok := b.find(ifToplevels); !ok {
		t.err = b.missing(ifToplevels)
		return t.err
	}
	mgr, _, err := b.bind(ifToplevels, b.toplevelManagerEvent)
	t.mgr, t.err = mgr, err
	return err
}

func (b *Backend) toplevelManagerEvent(op uint16, d *decoder) {
	t := &b.tops
	if op != 0 { // finished
		return
	}
	id := d.uint()
	tl := &toplevel{}
	t.mu.Lock()
	t.list[id] = tl
	t.mu.Unlock()
	b.c.register(id, "zwlr_foreign_toplevel_handle_v1", func(op uint16, d *decoder) {
		t.mu.Lock()
		defer t.mu.Unlock()
		switch op {
		case 0:
			tl.pendingTitle = d.string()
		case 4:
			st := d.array()
			tl.pendingAct = false
			for i := 0; i+4 <= len(st); i += 4 {
				if binary.LittleEndian.Uint32(st[i:]) == toplevelActivated {
					tl.pendingAct = true
				}
			}
		case 5: // done
			tl.title, tl.active = tl.pendingTitle, tl.pendingAct
		case 6: // closed
			delete(t.list, id)
			_ = b.c.send(id, 7) // destroy
			b.c.forget(id)
		}
	})
}

// ActiveWindowTitle returns the title of the activated toplevel, "" when no
// window has focus.
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) {
	if err := b.c.roundtrip(ctx); err != nil {
		return "", err
	}
	t := &b.tops
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return "", t.err
	}
	if t.mgr == 0 {
		return "", b.missing(ifToplevels)
	}
	for _, tl := range t.list {
		if tl.active {
			return tl.title, nil
		}
	}
	return "", nil
}
