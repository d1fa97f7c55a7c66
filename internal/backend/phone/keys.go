package phone

import (
	"slices"
	"sync"

	"github.com/guiagent/guiagent/internal/desktop"
)

// Keys is the ledger of the keys a phone backend holds. A phone's tools
// press and release a key in one command, so a backend's KeyDown only
// notes the key (Down) and its KeyUp sends it with the modifiers still
// held (Up). The zero Keys is ready; it is safe for concurrent use.
type Keys struct {
	mu   sync.Mutex
	held []desktop.Key
	used map[desktop.Key]bool // modifiers already sent with another key
}

// Down notes k as held.
func (l *Keys) Down(k desktop.Key) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = append(l.held, k)
}

// Up takes k off the ledger. It returns the modifiers still held, which go
// with k, and whether k is a modifier that already went with another key
// (its release then sends nothing: ctrl+a is not ctrl+a then ctrl).
func (l *Keys) Up(k desktop.Key) (mods []desktop.Key, usedAlready bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.held, k); i >= 0 {
		l.held = slices.Delete(l.held, i, i+1)
	}
	for _, h := range l.held {
		if h.IsModifier() {
			mods = append(mods, h)
		}
	}
	usedAlready = l.used[k]
	delete(l.used, k)
	if !k.IsModifier() && len(mods) > 0 {
		if l.used == nil {
			l.used = map[desktop.Key]bool{}
		}
		for _, m := range mods {
			l.used[m] = true
		}
	}
	return mods, usedAlready
}
