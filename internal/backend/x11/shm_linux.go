package x11

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/shm"
	"golang.org/x/sys/unix"
)

// shmSupported reports whether this build can create System V shared memory.
const shmSupported = true

// shmSegment is a System V shared memory segment attached by us and by the X server.
type shmSegment struct {
	seg  shm.Seg
	id   int
	data []byte
}

// newShmSegment creates a segment of size bytes and attaches it on both sides.
// The segment is marked for removal at once, so the kernel frees it when both
// detach, even if this process crashes.
func newShmSegment(conn *xgb.Conn, size int) (*shmSegment, error) {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600)
	if err != nil {
		return nil, fmt.Errorf("shmget %d bytes: %w", size, err)
	}
	data, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		return nil, fmt.Errorf("shmat: %w", err)
	}
	seg, err := shm.NewSegId(conn)
	if err == nil {
		err = shm.AttachChecked(conn, seg, uint32(id), false).Check()
	}
	// Both sides are attached (or the server refused): the id is no longer needed.
	_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	if err != nil {
		_ = unix.SysvShmDetach(data)
		return nil, fmt.Errorf("MIT-SHM attach (is the X server on another machine?): %w", err)
	}
	return &shmSegment{seg: seg, id: id, data: data}, nil
}

func (s *shmSegment) release(conn *xgb.Conn) error {
	shm.Detach(conn, s.seg)
	return unix.SysvShmDetach(s.data)
}
