package x11

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/keeper"
)

// X selections die with their owner, so a clipboard the backend owns when it
// closes (the user's content it restored after a paste, or gui_clipboard set)
// is handed on first:
//
//  1. to the clipboard manager, when one owns CLIPBOARD_MANAGER, through the
//     ICCCM SAVE_TARGETS protocol (freedesktop ClipboardManager spec): the
//     manager fetches every target from us and serves them from then on;
//  2. otherwise to a keeper: a copy of this executable, detached into its own
//     session, that owns the CLIPBOARD with the same targets (INCR included)
//     and exits as soon as another client takes the clipboard or the X server
//     goes away, as xclip and xsel do.
//
// The alternative, typing long text as keys instead of pasting, was measured
// and rejected (see BenchmarkTypeKeysVsPaste): it is far slower for long text,
// breaks on characters the keymap lacks, and cannot keep a clipboard that
// gui_clipboard set.

const (
	// keeperArg, as the first argument, makes a process that imports this
	// package run as a keeper of the display named by the second argument.
	keeperArg = "__guiagent_x11_clipboard_keeper"
	// saveTimeout bounds the clipboard manager's SAVE_TARGETS.
	saveTimeout = 5 * time.Second
)

// keptItem is a clipboard target in the keeper's input, named by atom name.
type keptItem struct {
	Target, Type string
	Format       byte
	Data         []byte
}

func init() { keeper.RunIfAsked(keeperArg, runKeeper) }

// handOff gives a clipboard the backend owns to the clipboard manager or a
// keeper, so that it outlives the backend. Called by Close while the event
// loop still serves.
func (b *Backend) handOff() error {
	b.sel.mu.Lock()
	owned, items := b.sel.owned, b.sel.items
	b.sel.mu.Unlock()
	if !owned || len(items) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	saved, merr := b.saveToManager(ctx, items)
	if saved {
		return nil
	}
	if merr != nil {
		b.log.Warn("x11 clipboard: the clipboard manager did not save the clipboard; starting a keeper", "err", merr)
	}
	if err := b.startKeeper(items); err != nil {
		return fmt.Errorf("x11 clipboard: the clipboard will be empty after exit: %w", errors.Join(merr, err))
	}
	return nil
}

// saveToManager asks the CLIPBOARD_MANAGER owner to save our targets; saved
// is false (with a nil error) when no manager runs.
func (b *Backend) saveToManager(ctx context.Context, items []clipItem) (saved bool, err error) {
	rep, err := xproto.GetSelectionOwner(b.conn, b.atoms.clipboardManager).Reply()
	if err != nil || rep.Owner == xproto.WindowNone {
		return false, err
	}
	b.sel.opMu.Lock()
	defer b.sel.opMu.Unlock()
	buf := make([]byte, 4*len(items))
	for i, it := range items {
		xgb.Put32(buf[4*i:], uint32(it.target))
	}
	xproto.ChangeProperty(b.conn, xproto.PropModeReplace, b.hidden, b.atoms.property, xproto.AtomAtom, 32, uint32(len(items)), buf)
	if err := xproto.ConvertSelectionChecked(b.conn, b.hidden, b.atoms.clipboardManager, b.atoms.saveTargets, b.atoms.property, xproto.TimeCurrentTime).Check(); err != nil {
		return false, fmt.Errorf("SAVE_TARGETS: %w", err)
	}
	e, err := b.waitNotify(ctx, b.atoms.clipboardManager, b.atoms.saveTargets, saveTimeout)
	if err != nil {
		return false, err
	}
	if e.Property == xproto.AtomNone {
		return false, errors.New("the clipboard manager refused SAVE_TARGETS")
	}
	return true, nil
}

// startKeeper runs a detached copy of this executable that owns the
// clipboard with items, and returns once it does.
func (b *Backend) startKeeper(items []clipItem) error {
	kept := make([]keptItem, len(items))
	for i, it := range items {
		kept[i] = keptItem{Target: b.atomName(it.target), Type: b.atomName(it.typ), Format: it.format, Data: it.data}
	}
	var env []string // only what connecting to the display needs
	if b.opts.XAuthority != "" {
		env = append(env, "XAUTHORITY="+b.opts.XAuthority)
	}
	return keeper.Start([]string{keeperArg, b.DisplayName()}, env, kept)
}

// runKeeper is the keeper process: it reads the targets from r, owns the
// CLIPBOARD on display, says "owned" on w, and serves until another client
// takes the clipboard or the display goes away. It returns the exit code.
func runKeeper(display string, r io.Reader, w io.Writer) int {
	var kept []keptItem
	if err := gob.NewDecoder(r).Decode(&kept); err != nil {
		fmt.Fprintln(w, "read the clipboard content:", err)
		return 1
	}
	b := New(Options{Display: display})
	if err := b.startSelectionOnly(); err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	defer b.closeSelectionOnly()
	items := make([]clipItem, 0, len(kept))
	for _, k := range kept {
		t, err1 := internAtom(b.conn, k.Target)
		ty, err2 := internAtom(b.conn, k.Type)
		if err := errors.Join(err1, err2); err != nil {
			fmt.Fprintln(w, err)
			return 1
		}
		items = append(items, clipItem{target: t, typ: ty, format: k.Format, data: k.Data})
	}
	gen, err := b.own(items)
	if err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	fmt.Fprintln(w, keeper.Owned)
	if c, ok := w.(io.Closer); ok {
		c.Close()
	}
	for {
		b.sel.mu.Lock()
		lost, change := !b.sel.owned || b.sel.gen != gen, b.sel.change
		b.sel.mu.Unlock()
		if lost {
			b.finishIncr()
			return 0
		}
		select {
		case <-change:
		case <-b.loopDone:
			return 0
		}
	}
}

// finishIncr waits (up to incrIdle) until INCR serves in progress ended.
func (b *Backend) finishIncr() {
	for deadline := time.Now().Add(incrIdle); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b.sel.mu.Lock()
		n := len(b.sel.out)
		b.sel.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

func internAtom(c *xgb.Conn, name string) (xproto.Atom, error) {
	rep, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern %s: %w", name, err)
	}
	return rep.Atom, nil
}

// startSelectionOnly connects with only what serving a selection needs.
func (b *Backend) startSelectionOnly() error {
	conn, err := xgb.NewConnDisplay(b.DisplayName())
	if err != nil {
		return fmt.Errorf("connect to X display %s: %w", b.DisplayName(), err)
	}
	b.conn, b.started = conn, true
	b.setup = xproto.Setup(conn)
	b.screen = b.setup.DefaultScreen(conn)
	b.root = b.screen.Root
	if err := b.atoms.intern(conn); err != nil {
		conn.Close()
		return err
	}
	if err := b.createHiddenWindow(); err != nil {
		conn.Close()
		return err
	}
	b.sel.init()
	b.loopDone = make(chan struct{})
	go b.eventLoop()
	return nil
}

func (b *Backend) closeSelectionOnly() {
	b.conn.Close()
	<-b.loopDone
}
