package x11

import (
	"context"
	"errors"
	"fmt"

	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/desktop"
)

var _ desktop.Stuck = (*Backend)(nil)

// ReleaseStuck releases, through XTEST, every key the server reports down
// (XQueryKeymap) and every pointer button 1-5 it reports pressed, and names
// what it released. XTEST releases come from the XTEST device, so a key a
// person holds on a real keyboard is not affected. desktop.RecoverInput calls
// it when a killed process left a ledger.
func (b *Backend) ReleaseStuck(ctx context.Context) ([]string, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	var released []string
	var errs []error
	km, err := xproto.QueryKeymap(b.conn).Reply()
	if err != nil {
		return nil, fmt.Errorf("x11 QueryKeymap: %w", err)
	}
	for i, byt := range km.Keys {
		for bit := range 8 {
			if byt&(1<<bit) == 0 {
				continue
			}
			kc := xproto.Keycode(i*8 + bit)
			if err := b.fake(fakeKeyRelease, byte(kc), 0, 0); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(b.down, kc)
			released = append(released, b.keycodeName(kc))
		}
	}
	ptr, err := xproto.QueryPointer(b.conn, b.root).Reply()
	if err != nil {
		return released, errors.Join(append(errs, fmt.Errorf("x11 QueryPointer: %w", err))...)
	}
	masks := []uint16{xproto.ButtonMask1, xproto.ButtonMask2, xproto.ButtonMask3, xproto.ButtonMask4, xproto.ButtonMask5}
	for i, m := range masks {
		if ptr.Mask&m == 0 {
			continue
		}
		if err := b.fake(fakeButtonRelease, byte(i+1), 0, 0); err != nil {
			errs = append(errs, err)
			continue
		}
		released = append(released, fmt.Sprintf("button %d", i+1))
	}
	return released, errors.Join(errs...)
}

// keycodeName names kc by its first keysym: "key shift (keycode 50)".
func (b *Backend) keycodeName(kc xproto.Keycode) string {
	if err := b.refreshKeymap(); err == nil {
		if sym := b.keymap.at(kc, 0); sym != 0 {
			if k, ok := KeysymKey(sym); ok {
				return fmt.Sprintf("key %s (keycode %d)", k, kc)
			}
			return fmt.Sprintf("keycode %d (keysym 0x%x)", kc, uint32(sym))
		}
	}
	return fmt.Sprintf("keycode %d", kc)
}
