package wayland

import (
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"time"

	"github.com/guiagent/guiagent/internal/backend/keeper"
)

// A Wayland selection dies with the client that offers it, so a clipboard
// the backend holds when it closes (gui_clipboard set it) is handed to a
// keeper: a copy of this executable, detached into its own session, that
// offers the same types through data control and exits as soon as another
// client takes the clipboard or the compositor goes away, as wl-copy does.

const (
	// keeperArg, as the first argument, makes a process that imports this
	// package keep the clipboard of the compositor at the socket named by
	// the second argument.
	keeperArg = "__guiagent_wayland_clipboard_keeper"
)

func init() { keeper.RunIfAsked(keeperArg, runKeeper) }

// handOff starts a keeper when the clipboard is still ours. Called by Close
// while the connection still serves.
func (b *Backend) handOff() error {
	b.clip.mu.Lock()
	owned, content := b.clip.owned, b.clip.content
	b.clip.mu.Unlock()
	if owned == 0 || len(content) == 0 {
		return nil
	}
	if err := b.startKeeper(content); err != nil {
		return fmt.Errorf("wayland clipboard: the clipboard will be empty after exit: %w", err)
	}
	return nil
}

// startKeeper runs the keeper with content and returns once it holds the clipboard.
func (b *Backend) startKeeper(content []mimeData) error {
	return keeper.Start([]string{keeperArg, b.socket}, nil, content) // the socket path is all it needs
}

// runKeeper is the keeper process: it reads the content from r, offers it
// as the selection of the compositor at socket, says "owned" on w, and
// serves until another client takes the clipboard or the compositor goes
// away. It returns the exit code.
func runKeeper(socket string, r io.Reader, w io.Writer) int {
	var content []mimeData
	if err := gob.NewDecoder(r).Decode(&content); err != nil {
		fmt.Fprintln(w, "read the clipboard content:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), keeper.StartTimeout)
	defer cancel()
	b, err := connect(ctx, Options{Display: socket})
	if err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	defer b.c.close()
	if _, _, err := b.bind(ifSeat, nil); err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	if err := b.startClipboard(); err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	if err := b.writeContent(ctx, content); err != nil {
		fmt.Fprintln(w, err)
		return 1
	}
	fmt.Fprintln(w, keeper.Owned)
	if c, ok := w.(io.Closer); ok {
		c.Close()
	}
	for {
		b.clip.mu.Lock()
		lost := b.clip.owned == 0
		b.clip.mu.Unlock()
		if lost {
			time.Sleep(clipServeGrace) // let a paste that just started finish
			return 0
		}
		select {
		case <-b.c.dead:
			return 0
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// clipServeGrace is how long a keeper that lost the clipboard stays to
// finish writing what a reader asked for just before.
const clipServeGrace = 200 * time.Millisecond
