package x11

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// atoms the backend uses.
type atoms struct {
	clipboard, utf8String, targets, text, textPlain, incr, property xproto.Atom
	netActiveWindow, netWMName                                      xproto.Atom
}

func (a *atoms) intern(conn *xgb.Conn) error {
	names := []struct {
		dst  *xproto.Atom
		name string
	}{
		{&a.clipboard, "CLIPBOARD"}, {&a.utf8String, "UTF8_STRING"}, {&a.targets, "TARGETS"},
		{&a.text, "TEXT"}, {&a.textPlain, "text/plain;charset=utf-8"}, {&a.incr, "INCR"},
		{&a.property, "GUIAGENT_SELECTION"}, {&a.netActiveWindow, "_NET_ACTIVE_WINDOW"},
		{&a.netWMName, "_NET_WM_NAME"},
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

// selection is the state of the CLIPBOARD selection as this backend owns it.
type selection struct {
	mu     sync.Mutex
	owned  bool
	text   string
	gen    int           // incremented at every ownership change
	served int           // generation whose text a client last fetched
	change chan struct{} // closed and replaced when served or ownership changes

	opMu   sync.Mutex                       // one clipboard read or paste at a time
	notify chan xproto.SelectionNotifyEvent // conversions answered to our window
}

func (s *selection) init() {
	s.change = make(chan struct{})
	s.notify = make(chan xproto.SelectionNotifyEvent, 4)
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
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard {
				b.keymap.stale.Store(true)
			}
		}
	}
}

// maxPropertyBytes is the most text one ChangeProperty request can carry.
func (b *Backend) maxPropertyBytes() int { return int(b.setup.MaximumRequestLength)*4 - 64 }

// serveSelection answers a client's request for our CLIPBOARD text.
func (b *Backend) serveSelection(e xproto.SelectionRequestEvent) {
	b.sel.mu.Lock()
	owned, text, gen := b.sel.owned, b.sel.text, b.sel.gen
	b.sel.mu.Unlock()
	prop := e.Property
	if prop == 0 { // obsolete client: use the target as the property
		prop = e.Target
	}
	reply := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	servedText := false
	switch {
	case !owned || e.Selection != b.atoms.clipboard:
		reply.Property = 0
	case e.Target == b.atoms.targets:
		list := []xproto.Atom{b.atoms.targets, b.atoms.utf8String, xproto.AtomString, b.atoms.text, b.atoms.textPlain}
		buf := make([]byte, 4*len(list))
		for i, a := range list {
			xgb.Put32(buf[4*i:], uint32(a))
		}
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.Requestor, prop, xproto.AtomAtom, 32, uint32(len(list)), buf)
	case e.Target == b.atoms.utf8String || e.Target == b.atoms.text || e.Target == b.atoms.textPlain:
		data := []byte(text)
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.Requestor, prop, b.atoms.utf8String, 8, uint32(len(data)), data)
		servedText = true
	case e.Target == xproto.AtomString:
		data := toLatin1(text)
		xproto.ChangeProperty(b.conn, xproto.PropModeReplace, e.Requestor, prop, xproto.AtomString, 8, uint32(len(data)), data)
		servedText = true
	default:
		reply.Property = 0
	}
	xproto.SendEvent(b.conn, false, e.Requestor, xproto.EventMaskNoEvent, string(reply.Bytes()))
	if servedText {
		b.sel.mu.Lock()
		if b.sel.gen == gen {
			b.sel.served = gen
			b.sel.signal()
		}
		b.sel.mu.Unlock()
	}
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

// own makes the backend the CLIPBOARD owner serving text and returns the
// ownership generation.
func (b *Backend) own(text string) (int, error) {
	if len(text) > b.maxPropertyBytes() {
		return 0, fmt.Errorf("x11 clipboard: %d bytes of text exceed the %d bytes this backend can serve in one piece (INCR transfers are not supported)", len(text), b.maxPropertyBytes())
	}
	b.sel.mu.Lock()
	b.sel.owned, b.sel.text = true, text
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
	b.sel.owned, b.sel.text = false, ""
	b.sel.gen++
	b.sel.signal()
	b.sel.mu.Unlock()
	return xproto.SetSelectionOwnerChecked(b.conn, xproto.WindowNone, b.atoms.clipboard, xproto.TimeCurrentTime).Check()
}

// WriteClipboard puts text on the CLIPBOARD; the backend serves it until
// another client takes the clipboard or the backend closes.
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
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	_, err := b.own(text)
	return err
}

// ReadClipboard returns the CLIPBOARD text ("" when nobody owns it). It asks for
// UTF8_STRING, then STRING, and waits up to 2 s for the owner's answer.
func (b *Backend) ReadClipboard(ctx context.Context) (string, error) {
	if err := b.ready(); err != nil {
		return "", err
	}
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	text, _, err := b.readClipboard(ctx)
	return text, err
}

// readClipboard reads the clipboard; present is false when nobody owns it.
// Caller holds sel.opMu.
func (b *Backend) readClipboard(ctx context.Context) (text string, present bool, err error) {
	b.sel.mu.Lock()
	if b.sel.owned {
		t := b.sel.text
		b.sel.mu.Unlock()
		return t, true, nil
	}
	b.sel.mu.Unlock()
	owner, err := xproto.GetSelectionOwner(b.conn, b.atoms.clipboard).Reply()
	if err != nil {
		return "", false, fmt.Errorf("x11 clipboard: %w", err)
	}
	if owner.Owner == xproto.WindowNone {
		return "", false, nil
	}
	for _, target := range []xproto.Atom{b.atoms.utf8String, xproto.AtomString} {
		text, ok, err := b.convert(ctx, target)
		if err != nil {
			return "", true, err
		}
		if ok {
			return text, true, nil
		}
	}
	return "", true, errors.New("x11 clipboard: the owner offers no text (neither UTF8_STRING nor STRING)")
}

// convert asks the owner for target and returns the text; ok is false when the
// owner refused that target.
func (b *Backend) convert(ctx context.Context, target xproto.Atom) (string, bool, error) {
	for { // drop answers to earlier, abandoned requests
		select {
		case <-b.sel.notify:
			continue
		default:
		}
		break
	}
	xproto.DeleteProperty(b.conn, b.hidden, b.atoms.property)
	if err := xproto.ConvertSelectionChecked(b.conn, b.hidden, b.atoms.clipboard, target, b.atoms.property, xproto.TimeCurrentTime).Check(); err != nil {
		return "", false, fmt.Errorf("x11 clipboard: ConvertSelection: %w", err)
	}
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", false, ctx.Err()
		case <-timer.C:
			return "", false, errors.New("x11 clipboard: the clipboard owner did not answer within 2s; the application holding the clipboard may be frozen")
		case e := <-b.sel.notify:
			if e.Selection != b.atoms.clipboard || e.Target != target {
				continue
			}
			if e.Property == xproto.AtomNone {
				return "", false, nil
			}
			rep, err := xproto.GetProperty(b.conn, true, b.hidden, e.Property, xproto.GetPropertyTypeAny, 0, uint32(b.maxPropertyBytes()/4)).Reply()
			if err != nil {
				return "", false, fmt.Errorf("x11 clipboard: read the answer: %w", err)
			}
			if rep.Type == b.atoms.incr {
				return "", false, errors.New("x11 clipboard: the owner sends the text incrementally (INCR, large text), which is not supported")
			}
			if rep.Type == xproto.AtomString {
				return fromLatin1(rep.Value), true, nil
			}
			return string(rep.Value), true, nil
		}
	}
}
