package x11

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// atoms the backend uses.
type atoms struct {
	clipboard, utf8String, targets, text, textPlain, incr, property xproto.Atom
	multiple, timestamp, atomPair, saveTargets, clipboardManager    xproto.Atom
	delete, insertSelection, insertProperty                         xproto.Atom
	netActiveWindow, netWMName                                      xproto.Atom
}

func (a *atoms) intern(conn *xgb.Conn) error {
	names := []struct {
		dst  *xproto.Atom
		name string
	}{
		{&a.clipboard, "CLIPBOARD"}, {&a.utf8String, "UTF8_STRING"}, {&a.targets, "TARGETS"},
		{&a.text, "TEXT"}, {&a.textPlain, "text/plain;charset=utf-8"}, {&a.incr, "INCR"},
		{&a.property, "GUIAGENT_SELECTION"}, {&a.multiple, "MULTIPLE"}, {&a.timestamp, "TIMESTAMP"},
		{&a.atomPair, "ATOM_PAIR"}, {&a.saveTargets, "SAVE_TARGETS"}, {&a.clipboardManager, "CLIPBOARD_MANAGER"},
		{&a.delete, "DELETE"}, {&a.insertSelection, "INSERT_SELECTION"}, {&a.insertProperty, "INSERT_PROPERTY"},
		{&a.netActiveWindow, "_NET_ACTIVE_WINDOW"}, {&a.netWMName, "_NET_WM_NAME"},
	}
	cookies := make([]xproto.InternAtomCookie, len(names))
	for i, n := range names {
		cookies[i] = xproto.InternAtom(conn, false, uint16(len(n.name)), n.name)
	}
	for i, c := range cookies {
		rep, err := c.Reply()
		if err != nil {
			return fmt.Errorf("%s: %w", names[i].name, err)
		}
		*names[i].dst = rep.Atom
	}
	return nil
}

// clipItem is one target of a clipboard's content, as its owner answered it:
// the property type, format (8, 16 or 32) and raw bytes.
type clipItem struct {
	target, typ xproto.Atom
	format      byte
	data        []byte
}

// textItems is the content WriteClipboard and paste serve for text.
func (b *Backend) textItems(text string) []clipItem {
	u := []byte(text)
	return []clipItem{
		{b.atoms.utf8String, b.atoms.utf8String, 8, u},
		{b.atoms.textPlain, b.atoms.textPlain, 8, u},
		{b.atoms.text, b.atoms.utf8String, 8, u},
		{xproto.AtomString, xproto.AtomString, 8, toLatin1(text)},
	}
}

// selection is the state of the CLIPBOARD selection as this backend owns it.
type selection struct {
	mu     sync.Mutex
	owned  bool
	items  []clipItem
	gen    int           // incremented at every ownership change
	served int           // generation whose content a client last fetched
	change chan struct{} // closed and replaced when served or ownership changes
	out    map[incrKey]*incrOut

	opMu   sync.Mutex                       // one clipboard read or paste at a time
	notify chan xproto.SelectionNotifyEvent // conversions answered to our window
	props  chan struct{}                    // a new value of our GUIAGENT_SELECTION property (INCR reads)
}

func (s *selection) init() {
	s.change = make(chan struct{})
	s.notify = make(chan xproto.SelectionNotifyEvent, 4)
	s.props = make(chan struct{}, 64)
	s.out = map[incrKey]*incrOut{}
}

// signal wakes waiters. Caller holds mu.
func (s *selection) signal() {
	close(s.change)
	s.change = make(chan struct{})
}

// eventLoop handles the events of our connection: serving the clipboard,
// collecting conversion results and noticing keymap changes.
func (b *Backend) eventLoop() {
	defer close(b.loopDone)
	for {
		ev, xerr := b.conn.WaitForEvent()
		if ev == nil && xerr == nil {
			return // connection closed
		}
		if xerr != nil {
			b.log.Debug("x11 asynchronous error", "err", xerr)
			continue
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			b.serveSelection(e)
		case xproto.SelectionClearEvent:
			if e.Selection == b.atoms.clipboard {
				b.sel.mu.Lock()
				b.sel.owned = false
				b.sel.gen++
				b.sel.signal()
				b.sel.mu.Unlock()
			}
		case xproto.SelectionNotifyEvent:
			select {
			case b.sel.notify <- e:
			default:
				b.log.Debug("x11 dropped a stale SelectionNotify")
			}
		case xproto.PropertyNotifyEvent:
			b.propertyChanged(e)
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard {
				b.keymap.stale.Store(true)
			}
		}
	}
}

// propertyChanged feeds INCR transfers: a new chunk for our reads, a deleted
// chunk (the requestor's go-ahead) for our serves.
func (b *Backend) propertyChanged(e xproto.PropertyNotifyEvent) {
	if e.Window == b.hidden && e.Atom == b.atoms.property && e.State == xproto.PropertyNewValue {
		select {
		case b.sel.props <- struct{}{}:
		default:
		}
		return
	}
	if e.State == xproto.PropertyDelete {
		b.incrNext(incrKey{e.Window, e.Atom})
	}
}

// maxPropertyBytes is the most data one ChangeProperty request can carry;
// larger targets are served with INCR.
func (b *Backend) maxPropertyBytes() int { return int(b.setup.MaximumRequestLength)*4 - 64 }

// serveSelection answers a client's request for our CLIPBOARD content.
func (b *Backend) serveSelection(e xproto.SelectionRequestEvent) {
	b.sel.mu.Lock()
	owned, items, gen := b.sel.owned, b.sel.items, b.sel.gen
	b.sel.mu.Unlock()
	prop := e.Property
	if prop == 0 { // obsolete client: use the target as the property
		prop = e.Target
	}
	reply := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	served := false
	switch {
	case !owned || e.Selection != b.atoms.clipboard:
		reply.Property = 0
	case e.Target == b.atoms.multiple:
		served = b.serveMultiple(e.Requestor, prop, items)
	default:
		ok, data := b.serveTarget(e.Requestor, e.Target, prop, items)
		if !ok {
			reply.Property = 0
		}
		served = data
	}
	xproto.SendEvent(b.conn, false, e.Requestor, xproto.EventMaskNoEvent, string(reply.Bytes()))
	if served {
		b.markServed(gen)
	}
}

// markServed records that a client fetched generation gen's content.
func (b *Backend) markServed(gen int) {
	b.sel.mu.Lock()
	if b.sel.gen == gen {
		b.sel.served = gen
		b.sel.signal()
	}
	b.sel.mu.Unlock()
}

// serveTarget writes target into the requestor's property; data reports
// whether content (not TARGETS or TIMESTAMP) was delivered whole. A target too
// large for one request is served with INCR, and counts as delivered when the
// transfer ends.
func (b *Backend) serveTarget(win xproto.Window, target, prop xproto.Atom, items []clipItem) (ok, data bool) {
	switch target {
	case b.atoms.targets:
		list := []xproto.Atom{b.atoms.targets, b.atoms.multiple, b.atoms.timestamp}
		for _, it := range items {
			list = append(list, it.target)
		}
		buf := make([]byte, 4*len(list))
		for i, a := range list {
			xgb.Put32(buf[4*i:], uint32(a))
		}
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, xproto.AtomAtom, 32, uint32(len(list)), buf)
		return true, false
	case b.atoms.timestamp:
		buf := make([]byte, 4) // CurrentTime: we do not track the ownership timestamp
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, xproto.AtomInteger, 32, 1, buf)
		return true, false
	}
	for _, it := range items {
		if it.target != target {
			continue
		}
		if len(it.data) > b.maxPropertyBytes() {
			b.startIncr(win, prop, it)
			return true, false
		}
		unit := max(int(it.format)/8, 1)
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, it.typ, it.format, uint32(len(it.data)/unit), it.data)
		return true, true
	}
	return false, false
}

// serveMultiple answers a MULTIPLE request: prop holds (target, property)
// pairs; a pair the owner cannot convert gets its property set to None.
func (b *Backend) serveMultiple(win xproto.Window, prop xproto.Atom, items []clipItem) bool {
	rep, err := xproto.GetProperty(b.conn, false, win, prop, b.atoms.atomPair, 0, 1<<16).Reply()
	if err != nil || rep.Format != 32 {
		return false
	}
	pairs := rep.Value
	served := false
	for i := 0; i+8 <= len(pairs); i += 8 {
		target, p := xproto.Atom(xgb.Get32(pairs[i:])), xproto.Atom(xgb.Get32(pairs[i+4:]))
		ok, data := b.serveTarget(win, target, p, items)
		if !ok {
			xgb.Put32(pairs[i+4:], 0)
		}
		served = served || data
	}
	xproto.ChangeProperty(b.conn, xproto.PropModeReplace, win, prop, b.atoms.atomPair, 32, uint32(len(pairs)/4), pairs)
	return served
}

func toLatin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0x100 {
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return out
}

func fromLatin1(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// own makes the backend the CLIPBOARD owner serving items and returns the
// ownership generation.
func (b *Backend) own(items []clipItem) (int, error) {
	b.sel.mu.Lock()
	b.sel.owned, b.sel.items = true, items
	b.sel.gen++
	gen := b.sel.gen
	b.sel.signal()
	b.sel.mu.Unlock()
	if err := xproto.SetSelectionOwnerChecked(b.conn, b.hidden, b.atoms.clipboard, xproto.TimeCurrentTime).Check(); err != nil {
		return 0, fmt.Errorf("x11 clipboard: take ownership: %w", err)
	}
	rep, err := xproto.GetSelectionOwner(b.conn, b.atoms.clipboard).Reply()
	if err != nil {
		return 0, fmt.Errorf("x11 clipboard: check ownership: %w", err)
	}
	if rep.Owner != b.hidden {
		return 0, errors.New("x11 clipboard: another client took the clipboard at the same moment; try again")
	}
	return gen, nil
}

// disown gives up the CLIPBOARD if generation gen still owns it.
func (b *Backend) disown(gen int) error {
	b.sel.mu.Lock()
	if !b.sel.owned || b.sel.gen != gen {
		b.sel.mu.Unlock()
		return nil
	}
	b.sel.owned, b.sel.items = false, nil
	b.sel.gen++
	b.sel.signal()
	b.sel.mu.Unlock()
	return xproto.SetSelectionOwnerChecked(b.conn, xproto.WindowNone, b.atoms.clipboard, xproto.TimeCurrentTime).Check()
}

// WriteClipboard puts text on the CLIPBOARD; the backend serves it until
// another client takes the clipboard, and at Close hands it to the clipboard
// manager or a keeper process (see handOff).
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !utf8.ValidString(text) {
		return errors.New("x11 clipboard: text is not valid UTF-8")
	}
	if len(text) > maxClipboardBytes {
		return fmt.Errorf("x11 clipboard: %d bytes of text exceed the %d-byte clipboard limit", len(text), maxClipboardBytes)
	}
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	_, err := b.own(b.textItems(text))
	return err
}

// ReadClipboard returns the CLIPBOARD text ("" when nobody owns it). It asks for
// UTF8_STRING, then STRING, waits up to 2 s for each answer (and each INCR
// chunk), and returns the whole text or an error, never part of it.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	if err := b.ready(); err != nil {
		return "", err
	}
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	b.sel.mu.Lock()
	if b.sel.owned {
		items := b.sel.items
		b.sel.mu.Unlock()
		for _, it := range items {
			if it.target == b.atoms.utf8String {
				return string(it.data), nil
			}
		}
		return "", errors.New("x11 clipboard: the clipboard holds no text (only other formats such as images)")
	}
	b.sel.mu.Unlock()
	if owner, err := b.clipboardOwner(); err != nil || owner == xproto.WindowNone {
		return "", err
	}
	for _, target := range []xproto.Atom{b.atoms.utf8String, xproto.AtomString} {
		it, ok, err := b.convert(ctx, b.atoms.clipboard, target)
		if err != nil {
			return "", err
		}
		if ok && it.typ == xproto.AtomString {
			return fromLatin1(it.data), nil
		}
		if ok {
			return string(it.data), nil
		}
	}
	return "", errors.New("x11 clipboard: the owner offers no text (neither UTF8_STRING nor STRING)")
}

func (b *Backend) clipboardOwner() (xproto.Window, error) {
	owner, err := xproto.GetSelectionOwner(b.conn, b.atoms.clipboard).Reply()
	if err != nil {
		return 0, fmt.Errorf("x11 clipboard: %w", err)
	}
	return owner.Owner, nil
}
