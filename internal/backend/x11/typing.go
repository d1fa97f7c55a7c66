package x11

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jezek/xgb/xproto"
)

const (
	// typeKeysMaxRunes is the longest text typed as keystrokes; longer text is pasted.
	typeKeysMaxRunes = 50
	// mapSettle lets clients fetch a changed keyboard mapping before keys use it.
	mapSettle = 20 * time.Millisecond
	// restoreSettle waits after the last keystroke before spare keycodes are
	// unmapped, so that clients have translated every key event.
	restoreSettle = 80 * time.Millisecond
	// pasteTimeout bounds the wait for the focused window to fetch pasted text.
	pasteTimeout = 3 * time.Second
	// pasteSettle waits after the text was fetched before the clipboard is restored.
	pasteSettle = 100 * time.Millisecond
)

// stroke is one character as a key press.
type stroke struct {
	kc    xproto.Keycode
	shift bool
}

// TypeText types text exactly. Characters on the keymap are typed as keys;
// characters it lacks each get their own spare keycode for the whole call (and
// the mapping is restored afterwards). Text longer than 50 characters, or with
// more distinct missing characters than spare keycodes, is pasted through the
// clipboard with ctrl+v, and the user's clipboard (every target it offered:
// text, HTML, images...) is restored when the clipboard still holds ours.
// Nothing stays pressed, even on error.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	if err := b.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	runes := []rune(text)
	if len(runes) == 0 {
		return nil
	}
	syms := make([]xproto.Keysym, len(runes))
	for i, r := range runes {
		s, ok := runeKeysym(r)
		if !ok {
			return fmt.Errorf("x11 type: character %U at position %d cannot be typed (control character): remove it or press the key by name", r, i)
		}
		syms[i] = s
	}
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	if err := b.refreshKeymap(); err != nil {
		return err
	}
	if len(runes) > typeKeysMaxRunes {
		return b.pasteOrType(ctx, text, syms)
	}
	if err := b.typeKeys(ctx, syms); !errors.Is(err, errTooManyMissing) {
		return err
	}
	return b.paste(ctx, text)
}

var (
	// errTooManyMissing: the text has more distinct characters missing from
	// the keymap than there are spare keycodes to map them onto.
	errTooManyMissing = errors.New("x11 type: more distinct characters missing from the keyboard map than spare keycodes")
	// errCannotSave: the clipboard could not be saved whole before a paste.
	errCannotSave = errors.New("x11 type: the clipboard could not be saved before pasting, so it was left alone")
)

// pasteOrType pastes text; when the user's clipboard cannot be saved whole
// (a frozen owner, a target over the size limit), it types the text as keys
// instead, so the clipboard is never clobbered. Caller holds kbdMu.
func (b *Backend) pasteOrType(ctx context.Context, text string, syms []xproto.Keysym) error {
	err := b.paste(ctx, text)
	if !errors.Is(err, errCannotSave) {
		return err
	}
	b.log.Warn("x11 type: typing long text as keys because the clipboard cannot be saved", "err", err)
	if terr := b.typeKeys(ctx, syms); terr != nil {
		return errors.Join(err, terr)
	}
	return nil
}

// typeKeys types syms as key strokes, mapping characters the keymap lacks
// onto spare keycodes for the call (errTooManyMissing when they do not fit).
// Caller holds kbdMu.
func (b *Backend) typeKeys(ctx context.Context, syms []xproto.Keysym) error {
	strokes := make([]stroke, len(syms))
	missing := map[xproto.Keysym]xproto.Keycode{}
	var order []xproto.Keysym
	for i, s := range syms {
		if kc, shift, ok := b.keymap.find(s); ok {
			strokes[i] = stroke{kc, shift}
			continue
		}
		if kc, ok := b.sticky[s]; ok {
			strokes[i] = stroke{kc, false}
			continue
		}
		if _, ok := missing[s]; !ok {
			missing[s] = 0
			order = append(order, s)
		}
	}
	spare := b.spareCodes()
	if len(order) > len(spare) {
		return errTooManyMissing
	}
	assign := make(map[xproto.Keycode]xproto.Keysym, len(order))
	mapped := make([]xproto.Keycode, 0, len(order))
	for i, s := range order {
		missing[s] = spare[i]
		assign[spare[i]] = s
		mapped = append(mapped, spare[i])
	}
	for i, s := range syms {
		if kc, ok := missing[s]; ok {
			strokes[i] = stroke{kc, false}
		}
	}
	var err error
	if len(assign) > 0 {
		if err = b.mapKeycodes(assign); err != nil {
			return errors.Join(err, b.clearKeycodes(mapped))
		}
		sleepCtx(ctx, mapSettle)
	}
	err = b.typeStrokes(ctx, strokes)
	if len(mapped) > 0 {
		time.Sleep(restoreSettle)
		err = errors.Join(err, b.clearKeycodes(mapped))
	}
	return err
}

// typeStrokes presses and releases each stroke, holding Shift where needed.
// Keys and a Shift that KeyDown holds stay held. Caller holds kbdMu.
func (b *Backend) typeStrokes(ctx context.Context, strokes []stroke) (err error) {
	skc, _, haveShift := b.keymap.find(shiftSym)
	shiftDown := false
	defer func() {
		if shiftDown {
			err = errors.Join(err, b.releaseCode(skc))
		}
	}()
	for _, s := range strokes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.shift != shiftDown {
			if !haveShift {
				return errors.New("x11 type: an upper-case or shifted character needs Shift, which is not on the keyboard map: restore the keyboard layout (setxkbmap us)")
			}
			if s.shift {
				err = b.pressCode(skc, false)
			} else {
				err = b.releaseCode(skc)
			}
			if err != nil {
				return err
			}
			shiftDown = s.shift
		}
		if err := b.pressCode(s.kc, true); err != nil {
			return err
		}
		if err := b.releaseCode(s.kc); err != nil {
			return err
		}
	}
	return nil
}

// paste puts text on the clipboard, presses ctrl+v, waits until the focused
// window fetched the text, and restores the previous clipboard content, every
// target byte for byte, if the clipboard still holds ours. A clipboard that
// cannot be saved whole is not clobbered: the text is then typed as keys.
// Caller holds kbdMu.
func (b *Backend) paste(ctx context.Context, text string) (err error) {
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	prev, hadPrev, rerr := b.snapshot(ctx)
	if rerr != nil {
		return fmt.Errorf("%w: %w", errCannotSave, rerr)
	}
	gen, err := b.own(b.textItems(text))
	if err != nil {
		return err
	}
	defer func() {
		time.Sleep(pasteSettle)
		b.sel.mu.Lock()
		still := b.sel.owned && b.sel.gen == gen
		b.sel.mu.Unlock()
		if !still {
			return // someone else owns the clipboard now: leave it alone
		}
		if hadPrev {
			_, e := b.own(prev)
			err = errors.Join(err, e)
		} else {
			err = errors.Join(err, b.disown(gen))
		}
	}()

	if err := b.pressCombo(ctx, 0xffe3, 'v'); err != nil {
		return err
	}
	deadline := time.NewTimer(pasteTimeout)
	defer deadline.Stop()
	for {
		b.sel.mu.Lock()
		served, owned, cur := b.sel.served == gen, b.sel.owned && b.sel.gen == gen, b.sel.gen
		changed := b.sel.change
		b.sel.mu.Unlock()
		if served {
			return nil
		}
		if !owned {
			return fmt.Errorf("x11 type: another client took the clipboard (generation %d) before the text was pasted", cur)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("x11 type: the focused window did not fetch the pasted text within %v: it may not accept ctrl+v; focus a text field or type shorter text", pasteTimeout)
		}
	}
}

// pressCombo presses mod+key and releases both, whatever happens; keys that
// KeyDown holds stay held. Caller holds kbdMu.
func (b *Backend) pressCombo(ctx context.Context, mod, key xproto.Keysym) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mkc, _, ok := b.keymap.find(mod)
	kkc, _, ok2 := b.keymap.find(key)
	if !ok || !ok2 {
		return fmt.Errorf("x11 type: the keyboard map lacks Control or v, so text cannot be pasted")
	}
	if err := b.pressCode(mkc, false); err != nil {
		return err
	}
	err := b.pressCode(kkc, true)
	if err == nil {
		err = b.releaseCode(kkc)
	}
	return errors.Join(err, b.releaseCode(mkc))
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
