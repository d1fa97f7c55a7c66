//go:build linux

package platform

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

// TestStaleDisplayLocksAreRemoved: the lock file and socket of a display
// whose server is gone (a killed guiagent's private X server) are removed, so
// its number is free again; a lock naming a live process stays.
func TestStaleDisplayLocksAreRemoved(t *testing.T) {
	if err := os.MkdirAll("/tmp/.X11-unix", 0o1777); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	var free []int // never touch another server's files: two unused numbers from the top
	for n := firstDisplay + displaySpan - 1; len(free) < 2; n-- {
		if !exists(fmt.Sprintf("/tmp/.X%d-lock", n)) && !exists(fmt.Sprintf("/tmp/.X11-unix/X%d", n)) {
			free = append(free, n)
		}
	}
	dead, live := free[0], free[1]
	write := func(n, pid int) {
		lock := fmt.Sprintf("/tmp/.X%d-lock", n)
		if err := os.WriteFile(lock, []byte(fmt.Sprintf("%10d\n", pid)), 0o444); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", "/tmp/.X11-unix/X"+strconv.Itoa(n))
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		t.Cleanup(func() { os.Remove(lock); os.Remove("/tmp/.X11-unix/X" + strconv.Itoa(n)) })
	}
	write(dead, gone.Process.Pid)
	write(live, os.Getpid())

	freed := removeStaleDisplays(slog.New(slog.DiscardHandler))
	if !slices.Contains(freed, dead) || slices.Contains(freed, live) {
		t.Errorf("freed %v, want %d (its server is gone) and not %d (its process runs)", freed, dead, live)
	}
	if exists(fmt.Sprintf("/tmp/.X%d-lock", dead)) || exists(fmt.Sprintf("/tmp/.X11-unix/X%d", dead)) {
		t.Errorf("display %d's lock or socket is still there", dead)
	}
	if !exists(fmt.Sprintf("/tmp/.X%d-lock", live)) || !exists(fmt.Sprintf("/tmp/.X11-unix/X%d", live)) {
		t.Errorf("display %d's lock or socket was removed though its process runs", live)
	}
	if n := nextFreeDisplay(dead); n != dead {
		t.Errorf("the next free display from %d is %d: the freed number is not reused", dead, n)
	}
}
