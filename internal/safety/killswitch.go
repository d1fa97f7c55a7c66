package safety

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// ErrKillSwitch is wrapped by the error KillSwitch.Gate returns while the kill switch is engaged.
var ErrKillSwitch = errors.New("kill switch engaged")

// DefaultKillSwitchInterval is how long a KillSwitch trusts its last stat of the file.
const DefaultKillSwitchInterval = 100 * time.Millisecond

// KillSwitch stops all input while a file exists: a human (or a script) creates
// the file to halt guiagent at once and deletes it to resume. Engaged looks at
// the file at most once per interval, so it is cheap enough to call before
// every input primitive. It is safe for concurrent use; a nil or pathless
// KillSwitch is never engaged.
type KillSwitch struct {
	path     string
	interval time.Duration
	now      func() time.Time
	stat     func(string) (os.FileInfo, error)

	mu      sync.Mutex
	checked time.Time
	engaged bool
}

// NewKillSwitch watches path (GUI_AGENT_KILL_SWITCH_FILE); "" disables it.
func NewKillSwitch(path string) *KillSwitch {
	return &KillSwitch{path: path, interval: DefaultKillSwitchInterval, now: time.Now, stat: os.Stat}
}

// Path returns the watched file ("" when disabled).
func (k *KillSwitch) Path() string {
	if k == nil {
		return ""
	}
	return k.path
}

// Engaged reports whether the kill-switch file exists, from a stat at most
// DefaultKillSwitchInterval old.
func (k *KillSwitch) Engaged() bool {
	if k == nil || k.path == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	if age := now.Sub(k.checked); !k.checked.IsZero() && age >= 0 && age < k.interval {
		return k.engaged
	}
	_, err := k.stat(k.path)
	// Any answer but "does not exist" (permission denied, I/O error) counts as
	// engaged: when in doubt, stop.
	k.engaged = err == nil || !errors.Is(err, os.ErrNotExist)
	k.checked = now
	return k.engaged
}

// Gate returns an error wrapping ErrKillSwitch while the switch is engaged, and
// the context's error when ctx is done. It suits desktop.Input.Gate.
func (k *KillSwitch) Gate(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if k.Engaged() {
		return fmt.Errorf("%w: %s exists, so all input is stopped; delete that file to resume", ErrKillSwitch, k.path)
	}
	return nil
}
