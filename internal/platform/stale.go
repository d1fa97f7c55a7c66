package platform

import (
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/guiagent/guiagent/internal/desktop"
)

// cleanStale runs removeStaleDisplays once per process, before the first
// private X server starts.
var cleanStale sync.Once

// removeStaleDisplays removes the lock file and socket of every display in
// the range this package picks (firstDisplay to firstDisplay+displaySpan)
// whose lock names a process that is gone: what a guiagent killed with its
// private X servers (a fleet's desktops) leaves in /tmp. A lock naming a live
// process, or one that cannot be read, is left alone. It returns the display
// numbers it freed.
func removeStaleDisplays(log *slog.Logger) []int {
	var freed []int
	for n := firstDisplay; n < firstDisplay+displaySpan; n++ {
		lock := fmt.Sprintf("/tmp/.X%d-lock", n)
		if !exists(lock) {
			continue
		}
		pid := lockPID(n)
		if pid <= 0 || desktop.ProcessAlive(pid) {
			continue
		}
		socket := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
		if err := os.Remove(socket); err != nil && !os.IsNotExist(err) {
			log.Warn("a stale X socket could not be removed", "display", n, "path", socket, "err", err)
			continue
		}
		if err := os.Remove(lock); err != nil && !os.IsNotExist(err) {
			log.Warn("a stale X lock could not be removed", "display", n, "path", lock, "err", err)
			continue
		}
		freed = append(freed, n)
	}
	if len(freed) > 0 {
		log.Info("removed the locks and sockets of X displays whose servers are gone (a killed guiagent's)", "displays", freed)
	}
	return freed
}
