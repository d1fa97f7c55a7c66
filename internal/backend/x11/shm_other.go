//go:build !linux

package x11

import (
	"errors"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/shm"
)

// shmSupported reports whether this build can create System V shared memory.
const shmSupported = false

// shmSegment is unused outside Linux: capture falls back to GetImage.
type shmSegment struct {
	seg  shm.Seg
	data []byte
}

func newShmSegment(conn *xgb.Conn, size int) (*shmSegment, error) {
	return nil, errors.New("MIT-SHM capture is only built on linux")
}

func (s *shmSegment) release(conn *xgb.Conn) error { return nil }
