package x11

import (
	"context"
	"fmt"

	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Test hooks for the external test package (x11_test), which cannot be the
// internal one because xvfbtest imports platform, which imports this package.

// SpareKeycodes returns how many keycodes the backend's keymap copy has free.
func (b *Backend) SpareKeycodes() int {
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	return len(b.keymap.spare())
}

// HasShm reports whether captures use MIT-SHM.
func (b *Backend) HasShm() bool {
	b.capMu.Lock()
	defer b.capMu.Unlock()
	return b.hasShm
}

// DisableShm forces the chunked GetImage capture path.
func (b *Backend) DisableShm() {
	b.capMu.Lock()
	defer b.capMu.Unlock()
	b.hasShm = false
}

// DropClipboard gives up the clipboard if the backend owns it.
func (b *Backend) DropClipboard() error {
	b.sel.mu.Lock()
	gen := b.sel.gen
	b.sel.mu.Unlock()
	return b.disown(gen)
}

// KeycodeOf returns the keycode a KeyDown of k would press now, and whether it
// adds Shift, after reading any keyboard mapping change the backend was told of.
func (b *Backend) KeycodeOf(k desktop.Key) (xproto.Keycode, bool, error) {
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	return b.resolveKey(k)
}

// ReadTarget reads one target of the CLIPBOARD as its owner answers it
// (following INCR), as an application pasting that format would.
func (b *Backend) ReadTarget(ctx context.Context, target string) (data []byte, typ string, err error) {
	a, err := internAtom(b.conn, target)
	if err != nil {
		return nil, "", err
	}
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	it, ok, err := b.convert(ctx, b.atoms.clipboard, a)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", fmt.Errorf("the clipboard owner refused %s", target)
	}
	return it.data, b.atomName(it.typ), nil
}

// TypeAsKeys types text as key strokes whatever its length (no paste).
func (b *Backend) TypeAsKeys(ctx context.Context, text string) error {
	syms := make([]xproto.Keysym, 0, len(text))
	for _, r := range text {
		s, ok := runeKeysym(r)
		if !ok {
			return fmt.Errorf("cannot type %U", r)
		}
		syms = append(syms, s)
	}
	b.kbdMu.Lock()
	defer b.kbdMu.Unlock()
	return b.typeKeys(ctx, syms)
}
