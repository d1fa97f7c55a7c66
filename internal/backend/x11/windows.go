package x11

import (
	"context"
	"fmt"

	"github.com/jezek/xgb/xproto"
)

// ActiveWindowTitle returns the title of the focused window: the window named by
// the root's _NET_ACTIVE_WINDOW (set by EWMH window managers), else the input
// focus window or its nearest named ancestor. It returns "" when no window has a
// name.
func (b *Backend) ActiveWindowTitle(ctx context.Context) (string, error) {
	if err := b.ready(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if rep, err := xproto.GetProperty(b.conn, false, b.root, b.atoms.netActiveWindow, xproto.AtomWindow, 0, 1).Reply(); err == nil &&
		rep.Format == 32 && len(rep.Value) >= 4 {
		if w := xproto.Window(uint32(rep.Value[0]) | uint32(rep.Value[1])<<8 | uint32(rep.Value[2])<<16 | uint32(rep.Value[3])<<24); w != 0 {
			if title, ok := b.windowTitle(w); ok {
				return title, nil
			}
		}
	}
	focus, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil {
		return "", fmt.Errorf("x11 GetInputFocus: %w", err)
	}
	w := focus.Focus
	for depth := 0; depth < 32 && w != xproto.WindowNone && w != xproto.InputFocusPointerRoot && w != b.root; depth++ {
		if title, ok := b.windowTitle(w); ok {
			return title, nil
		}
		tree, err := xproto.QueryTree(b.conn, w).Reply()
		if err != nil {
			break
		}
		w = tree.Parent
	}
	return "", nil
}

// windowTitle reads _NET_WM_NAME (UTF-8) or WM_NAME (Latin-1) of w.
func (b *Backend) windowTitle(w xproto.Window) (string, bool) {
	if rep, err := xproto.GetProperty(b.conn, false, w, b.atoms.netWMName, b.atoms.utf8String, 0, 4096).Reply(); err == nil && rep.Format == 8 && len(rep.Value) > 0 {
		return string(rep.Value), true
	}
	if rep, err := xproto.GetProperty(b.conn, false, w, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 4096).Reply(); err == nil && rep.Format == 8 && len(rep.Value) > 0 {
		if rep.Type == b.atoms.utf8String {
			return string(rep.Value), true
		}
		return fromLatin1(rep.Value), true
	}
	return "", false
}
