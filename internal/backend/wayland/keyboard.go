package wayland

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/backend/keysym"
	"github.com/guiagent/guiagent/internal/desktop"
)

// keymapSettle lets the focused client compile a changed keymap before keys
// that need it arrive: a roundtrip only tells the compositor has it.
// Measured on sway 1.7 without the pause: one run in three lost typed
// characters. Paid once per keymap change (a TypeText uploads once for all
// the new characters it needs).
const keymapSettle = 50 * time.Millisecond

// keyboard is the session's one zwp_virtual_keyboard_v1 and its keymap.
type keyboard struct {
	mu    sync.Mutex
	id    uint32
	err   error // why there is no keyboard
	km    *keymap
	dirty bool                  // km changed since the last upload
	down  map[int]int           // keycodes held, with their number of holders
	held  map[desktop.Key][]int // per key name, the keycode of each KeyDown not yet released
	mods  uint32                // depressed modifier mask last sent
}

// startKeyboard creates the virtual keyboard and uploads its first keymap.
func (b *Backend) startKeyboard(ctx context.Context) error {
	k := &b.kbd
	k.mu.Lock()
	defer k.mu.Unlock()
	k.down, k.held, k.km = map[int]int{}, map[desktop.Key][]int{}, newKeymap()
	mgr, _, err := b.bind(ifVirtualKeyboard, nil)
	if err != nil {
		k.err = err
		return err
	}
	b.regMu.Lock()
	seat := b.bound[ifSeat]
	b.regMu.Unlock()
	if err := b.c.send(mgr, 0, seat, newObj{out: &k.id}); err != nil {
		k.err = err
		return err
	}
	k.dirty = true
	return b.uploadKeymap(ctx)
}

// uploadKeymap sends the keymap when it changed and waits until the
// compositor has it and clients had time to take it. Caller holds kbd.mu.
func (b *Backend) uploadKeymap(ctx context.Context) error {
	k := &b.kbd
	if !k.dirty {
		return nil
	}
	text := append([]byte(k.km.text()), 0)
	fd, err := sealedFile("guiagent-keymap", text)
	if err != nil {
		return err
	}
	defer closeFD(fd)
	if err := b.c.send(k.id, 0, uint32(1), fdArg(fd), uint32(len(text))); err != nil { // keymap(xkb_v1, fd, size)
		return err
	}
	// The compositor sends a keyboard's keymap to the focused client when
	// that keyboard becomes the seat's active one, which a key would do with
	// the keymap and the key back to back (and the client losing the key).
	// A modifier change makes it active first: Num Lock (Mod2) locked and
	// unlocked again, with no key event.
	for _, locked := range []uint32{0x10, 0} {
		if err := b.c.send(k.id, 2, k.mods, uint32(0), locked, uint32(0)); err != nil {
			return err
		}
	}
	if err := b.c.roundtrip(ctx); err != nil {
		return err
	}
	k.dirty = false
	time.Sleep(keymapSettle)
	return b.c.roundtrip(ctx)
}

// ready returns the keyboard's error, if it has none. Caller holds kbd.mu.
func (k *keyboard) ready() error {
	if k.err != nil {
		return k.err
	}
	if k.id == 0 {
		return errors.New("wayland: the virtual keyboard is not started (no wl_seat)")
	}
	return nil
}

// codeFor returns sym's keycode, adding it to the keymap (and uploading it)
// when missing. Caller holds kbd.mu.
func (b *Backend) codeFor(ctx context.Context, sym uint32) (int, error) {
	k := &b.kbd
	if kc, ok := k.km.lookup(sym); ok {
		return kc, nil
	}
	kc, ok := k.km.add(sym)
	if !ok {
		k.km.drop(func(kc int) bool { return k.down[kc] > 0 })
		if kc, ok = k.km.add(sym); !ok {
			return 0, fmt.Errorf("wayland: every keycode of the virtual keyboard is held: release keys first")
		}
	}
	k.dirty = true
	return kc, b.uploadKeymap(ctx)
}

// sendKey sends one key event and the modifier state it leaves. Caller holds kbd.mu.
func (b *Backend) sendKey(kc int, pressed bool) error {
	k := &b.kbd
	state := uint32(0)
	if pressed {
		state = 1
	}
	if err := b.c.send(k.id, 1, b.now(), uint32(kc-8), state); err != nil {
		return err
	}
	if mods := k.modMask(); mods != k.mods {
		if err := b.c.send(k.id, 2, mods, uint32(0), uint32(0), uint32(0)); err != nil {
			return err
		}
		k.mods = mods
	}
	return nil
}

// modMask is the depressed-modifier mask of the held keycodes. Caller holds mu.
func (k *keyboard) modMask() uint32 {
	var m uint32
	for kc, n := range k.down {
		if n > 0 {
			if mm, ok := modifierMap[k.km.syms[kc-minCode]]; ok {
				m |= mm.mask
			}
		}
	}
	return m
}

func keySym(k desktop.Key) (uint32, error) {
	if s, ok := keysym.OfKey(k); ok {
		return s, nil
	}
	return 0, fmt.Errorf("wayland: unknown key %q: use a name like Return, ctrl, F5 or a single character", string(k))
}

// KeyDown presses k through the virtual keyboard. A key already held is
// pressed again (a repeat) and counted, so each KeyDown has its KeyUp.
func (b *Backend) KeyDown(ctx context.Context, key desktop.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sym, err := keySym(key)
	if err != nil {
		return err
	}
	k := &b.kbd
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.ready(); err != nil {
		return err
	}
	kc, err := b.codeFor(ctx, sym)
	if err != nil {
		return err
	}
	k.down[kc]++
	k.held[key] = append(k.held[key], kc)
	if err := b.sendKey(kc, true); err != nil {
		return err // still counted: the ledger's release retries it
	}
	return b.c.roundtrip(context.WithoutCancel(ctx))
}

// KeyUp releases k: the keycode its latest KeyDown pressed. It ignores ctx
// cancellation so that a release always happens.
func (b *Backend) KeyUp(ctx context.Context, key desktop.Key) error {
	k := &b.kbd
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.ready(); err != nil {
		return err
	}
	presses := k.held[key]
	if len(presses) == 0 {
		sym, err := keySym(key)
		if err != nil {
			return err
		}
		kc, ok := k.km.lookup(sym)
		if !ok || k.down[kc] > 0 {
			return nil // never pressed, or held under another name whose KeyUp releases it
		}
		return b.sendKey(kc, false)
	}
	kc := presses[len(presses)-1]
	if err := b.releaseCode(kc); err != nil {
		return err
	}
	if len(presses) == 1 {
		delete(k.held, key)
	} else {
		k.held[key] = presses[:len(presses)-1]
	}
	return b.c.roundtrip(context.WithoutCancel(ctx))
}

// releaseCode drops one holder of kc, releasing it with the last. Caller holds kbd.mu.
func (b *Backend) releaseCode(kc int) error {
	k := &b.kbd
	if k.down[kc] > 1 {
		k.down[kc]--
		return nil
	}
	delete(k.down, kc)
	if err := b.sendKey(kc, false); err != nil {
		k.down[kc] = 1
		return err
	}
	return nil
}

// TypeText types text exactly as key presses: each character gets a keycode
// of the session's keymap (added, uploaded and synced before the keys that
// need it), pressed and released. The clipboard is not touched. Nothing stays
// pressed, even on error or cancel.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	runes := []rune(text)
	syms := make([]uint32, len(runes))
	for i, r := range runes {
		s, ok := keysym.OfRune(r)
		if !ok {
			return fmt.Errorf("wayland type: character %U at position %d cannot be typed (control character): remove it or press the key by name", r, i)
		}
		syms[i] = s
	}
	k := &b.kbd
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.ready(); err != nil {
		return err
	}
	for len(syms) > 0 {
		n, err := b.prepare(ctx, syms)
		if err != nil {
			return err
		}
		for _, s := range syms[:n] {
			if err := ctx.Err(); err != nil {
				return err
			}
			kc, _ := k.km.lookup(s)
			if err := b.tap(kc); err != nil {
				return err
			}
		}
		syms = syms[n:]
		if err := b.c.roundtrip(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	return nil
}

// prepare puts on the keymap the keysyms of the longest prefix of syms it
// can hold, uploads it, and returns the prefix's length. Caller holds kbd.mu.
func (b *Backend) prepare(ctx context.Context, syms []uint32) (int, error) {
	k := &b.kbd
	n := 0
	for n < len(syms) {
		if _, ok := k.km.lookup(syms[n]); ok {
			n++
			continue
		}
		if _, ok := k.km.add(syms[n]); !ok {
			if n > 0 {
				break
			}
			k.km.drop(func(kc int) bool { return k.down[kc] > 0 })
			if _, ok := k.km.add(syms[n]); !ok {
				return 0, fmt.Errorf("wayland: every keycode of the virtual keyboard is held: release keys first")
			}
		}
		k.dirty = true
		n++
	}
	return n, b.uploadKeymap(ctx)
}

// tap presses and releases kc, the release sent even when the press fails
// half-way. Caller holds kbd.mu.
func (b *Backend) tap(kc int) error {
	k := &b.kbd
	k.down[kc]++
	err := b.sendKey(kc, true)
	return errors.Join(err, b.releaseCode(kc))
}

// releaseKeys releases every held keycode and clears the modifiers.
func (b *Backend) releaseKeys() error {
	k := &b.kbd
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.id == 0 {
		return nil
	}
	var errs []error
	for kc := range k.down {
		delete(k.down, kc)
		if err := b.sendKey(kc, false); err != nil {
			errs = append(errs, err)
		}
	}
	clear(k.held)
	return errors.Join(errs...)
}
