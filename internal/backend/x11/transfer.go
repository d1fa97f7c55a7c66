package x11

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

const (
	// maxClipboardBytes caps one clipboard target read or written (64 MiB).
	maxClipboardBytes = 64 << 20
	// convertTimeout bounds the wait for the owner's answer and each INCR chunk.
	convertTimeout = 2 * time.Second
	// incrIdle abandons an INCR serve whose requestor stopped fetching.
	incrIdle = 5 * time.Second
)

// metaTarget reports targets a snapshot must not save: those about the
// selection itself, and those whose conversion acts on the owner (ICCCM
// DELETE deletes the selected data, INSERT_* insert into it).
func (b *Backend) metaTarget(a xproto.Atom) bool {
	switch a {
	case b.atoms.targets, b.atoms.multiple, b.atoms.timestamp, b.atoms.saveTargets, 0,
		b.atoms.delete, b.atoms.insertSelection, b.atoms.insertProperty:
		return true
	}
	return false
}

// snapshot saves every target the CLIPBOARD owner offers (text, text/html,
// image/png, ...) byte for byte; present is false when nobody owns it.
// Caller holds sel.opMu.
func (b *Backend) snapshot(ctx context.Context) (items []clipItem, present bool, err error) {
	b.sel.mu.Lock()
	if b.sel.owned {
		items := b.sel.items
		b.sel.mu.Unlock()
		return items, true, nil
	}
	b.sel.mu.Unlock()
	if owner, err := b.clipboardOwner(); err != nil || owner == xproto.WindowNone {
		return nil, false, err
	}
	list, ok, err := b.convert(ctx, b.atoms.clipboard, b.atoms.targets)
	if err != nil {
		return nil, true, err
	}
	if !ok || list.format != 32 {
		return nil, true, errors.New("x11 clipboard: the owner does not list its TARGETS")
	}
	total := 0
	for i := 0; i+4 <= len(list.data); i += 4 {
		target := xproto.Atom(xgb.Get32(list.data[i:]))
		if b.metaTarget(target) {
			continue
		}
		it, ok, err := b.convert(ctx, b.atoms.clipboard, target)
		if err != nil {
			return nil, true, fmt.Errorf("x11 clipboard: save target %s: %w", b.atomName(target), err)
		}
		if !ok || it.typ == b.atoms.atomPair {
			continue // refused, or a side-effect target such as DELETE
		}
		if total += len(it.data); total > maxClipboardBytes {
			return nil, true, fmt.Errorf("x11 clipboard: the clipboard holds more than %d bytes, too much to save", maxClipboardBytes)
		}
		items = append(items, it)
	}
	return items, true, nil
}

// convert asks selection's owner for target into our property and returns
// the answer whole, following INCR for large data; ok is false when the owner
// refused the target. Caller holds sel.opMu.
func (b *Backend) convert(ctx context.Context, selection, target xproto.Atom) (clipItem, bool, error) {
	for { // drop answers to earlier, abandoned requests and stale property notices
		select {
		case <-b.sel.notify:
			continue
		case <-b.sel.props:
			continue
		default:
		}
		break
	}
	xproto.DeleteProperty(b.conn, b.hidden, b.atoms.property)
	if err := xproto.ConvertSelectionChecked(b.conn, b.hidden, selection, target, b.atoms.property, xproto.TimeCurrentTime).Check(); err != nil {
		return clipItem{}, false, fmt.Errorf("x11 clipboard: ConvertSelection: %w", err)
	}
	e, err := b.waitNotify(ctx, selection, target, convertTimeout)
	if err != nil {
		return clipItem{}, false, err
	}
	if e.Property == xproto.AtomNone {
		return clipItem{}, false, nil
	}
	it, err := b.readProperty(e.Property, true)
	if err != nil {
		return clipItem{}, false, err
	}
	it.target = target
	if it.typ == b.atoms.incr {
		return b.readIncr(ctx, target)
	}
	return it, true, nil
}

// waitNotify waits for the SelectionNotify answering (selection, target).
func (b *Backend) waitNotify(ctx context.Context, selection, target xproto.Atom, d time.Duration) (xproto.SelectionNotifyEvent, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return xproto.SelectionNotifyEvent{}, ctx.Err()
		case <-timer.C:
			return xproto.SelectionNotifyEvent{}, fmt.Errorf("x11 clipboard: the owner of %s did not answer within %v; the application holding it may be frozen", b.atomName(selection), d)
		case e := <-b.sel.notify:
			if e.Selection == selection && e.Target == target {
				return e, nil
			}
		}
	}
}

// readProperty reads our property whole, in pieces when it is large, and
// deletes it when del is set.
func (b *Backend) readProperty(prop xproto.Atom, del bool) (clipItem, error) {
	const piece = 1 << 18 // 32-bit units per GetProperty: 1 MiB
	var it clipItem
	for offset := uint32(0); ; {
		rep, err := xproto.GetProperty(b.conn, false, b.hidden, prop, xproto.GetPropertyTypeAny, offset, piece).Reply()
		if err != nil {
			return it, fmt.Errorf("x11 clipboard: read the answer: %w", err)
		}
		it.typ, it.format = rep.Type, rep.Format
		it.data = append(it.data, rep.Value...)
		if len(it.data) > maxClipboardBytes {
			return it, fmt.Errorf("x11 clipboard: the answer exceeds the %d-byte clipboard limit", maxClipboardBytes)
		}
		if rep.BytesAfter == 0 {
			break
		}
		offset += uint32(len(rep.Value) / 4)
	}
	if del {
		xproto.DeleteProperty(b.conn, b.hidden, prop)
	}
	return it, nil
}

// readIncr receives an INCR transfer: the owner writes a chunk whenever we
// deleted the previous one, and a zero-length chunk ends it. Our DeleteProperty
// of the INCR announcement (readProperty) started it.
func (b *Backend) readIncr(ctx context.Context, target xproto.Atom) (clipItem, bool, error) {
	it := clipItem{target: target}
	for {
		timer := time.NewTimer(convertTimeout)
		select {
		case <-ctx.Done():
			timer.Stop()
			return it, false, ctx.Err()
		case <-timer.C:
			return it, false, fmt.Errorf("x11 clipboard: the owner stopped sending %s after %d bytes (INCR transfer stalled for %v)", b.atomName(target), len(it.data), convertTimeout)
		case <-b.sel.props:
			timer.Stop()
		}
		chunk, err := b.readProperty(b.atoms.property, false)
		if err != nil {
			return it, false, err
		}
		if chunk.typ == xproto.AtomNone {
			continue // a notification for a property already read
		}
		xproto.DeleteProperty(b.conn, b.hidden, b.atoms.property)
		if len(chunk.data) == 0 {
			return it, true, nil
		}
		it.typ, it.format = chunk.typ, chunk.format
		it.data = append(it.data, chunk.data...)
		if len(it.data) > maxClipboardBytes {
			return it, false, fmt.Errorf("x11 clipboard: %s exceeds the %d-byte clipboard limit", b.atomName(target), maxClipboardBytes)
		}
	}
}

// incrKey identifies an INCR serve: the requestor's window and property.
type incrKey struct {
	win  xproto.Window
	prop xproto.Atom
}

// incrOut is an INCR serve in progress.
type incrOut struct {
	item  clipItem
	sent  int
	gen   int
	timer *time.Timer
}

// incrChunk is the size of each chunk of an INCR serve.
func (b *Backend) incrChunk() int { return min(b.maxPropertyBytes(), 256<<10) &^ 3 }

// startIncr announces an INCR transfer of it to win's prop. Runs on the event loop.
func (b *Backend) startIncr(win xproto.Window, prop xproto.Atom, it clipItem) {
	xproto.ChangeWindowAttributes(b.conn, win, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange})
	size := make([]byte, 4)
	xgb.Put32(size, uint32(len(it.data)))
	key := incrKey{win, prop}
	b.sel.mu.Lock()
	o := &incrOut{item: it, gen: b.sel.gen}
	if old := b.sel.out[key]; old != nil {
		old.timer.Stop()
	}
	b.sel.out[key] = o
	o.timer = time.AfterFunc(incrIdle, func() { b.dropIncr(key, o) })
	b.sel.mu.Unlock()
	xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, b.atoms.incr, 32, 1, size)
}

// dropIncr abandons o if it is still the transfer for key.
func (b *Backend) dropIncr(key incrKey, o *incrOut) {
	b.sel.mu.Lock()
	defer b.sel.mu.Unlock()
	if b.sel.out[key] == o {
		delete(b.sel.out, key)
		b.log.Debug("x11 clipboard: abandoned an INCR transfer the requestor stopped reading", "sent", o.sent, "of", len(o.item.data))
	}
}

// incrNext sends the next chunk of the transfer for key, if any, after the
// requestor deleted the previous one. Runs on the event loop.
func (b *Backend) incrNext(key incrKey) {
	b.sel.mu.Lock()
	o := b.sel.out[key]
	if o == nil {
		b.sel.mu.Unlock()
		return
	}
	o.timer.Reset(incrIdle)
	chunk := o.item.data[o.sent:min(o.sent+b.incrChunk(), len(o.item.data))]
	done := len(chunk) == 0
	o.sent += len(chunk)
	if done {
		o.timer.Stop()
		delete(b.sel.out, key)
	}
	b.sel.mu.Unlock()
	unit := max(int(o.item.format)/8, 1)
	xproto.ChangeProperty(b.conn, xproto.PropModeReplace, key.win, key.prop, o.item.typ, o.item.format, uint32(len(chunk)/unit), chunk)
	if done {
		b.sel.mu.Lock()
		busy := false
		for k := range b.sel.out {
			busy = busy || k.win == key.win
		}
		b.sel.mu.Unlock()
		if !busy {
			xproto.ChangeWindowAttributes(b.conn, key.win, xproto.CwEventMask, []uint32{xproto.EventMaskNoEvent})
		}
		b.markServed(o.gen)
	}
}
