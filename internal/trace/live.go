package trace

import (
	"os"
	"path/filepath"
	"time"
)

// liveFile is the file of a run directory that the process recording the
// run holds locked until the record is closed, so that other processes (a
// `guiagent runs` beside a server) tell a run being recorded from one whose
// recorder died. The lock goes with the process, however it ends.
const liveFile = ".recording"

// holdLive locks dir's liveFile for this process; the returned file is
// closed to release it. nil when the platform has no such lock or it failed:
// other processes then list the run as incomplete until it is closed.
func holdLive(dir string) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, liveFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil
	}
	if !lockFile(f) {
		f.Close()
		return nil
	}
	return f
}

// recordedElsewhere reports whether another process holds dir's liveFile.
func recordedElsewhere(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, liveFile), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return lockedByOther(f)
}

// liveFromDisk reads what a run recorded by another process shows so far:
// the step under way (task runs) or the tool calls (session runs), and when
// it last recorded an event.
func liveFromDisk(dir, kind string) (steps int, last time.Time) {
	lines, _, err := ReadLines(dir)
	if err != nil {
		return 0, time.Time{}
	}
	for _, ln := range lines {
		if ln.Step > steps && (kind == KindTask || ln.Kind == KindTool) {
			steps = ln.Step
		}
		if ln.Time.After(last) {
			last = ln.Time
		}
	}
	return steps, last
}
