package wayland

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// shmFile is a memfd mapped into our address space, shared with the compositor.
type shmFile struct {
	fd   int
	data []byte
}

// newShm creates a memfd of size bytes and maps it read-write.
func newShm(name string, size int) (*shmFile, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("wayland: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("wayland: size the shared memory to %d bytes: %w", size, err)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("wayland: map %d bytes of shared memory: %w", size, err)
	}
	return &shmFile{fd: fd, data: data}, nil
}

func (s *shmFile) close() {
	if s == nil {
		return
	}
	if s.data != nil {
		_ = unix.Munmap(s.data)
		s.data = nil
	}
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
		s.fd = -1
	}
}

// sealedFile returns a read-only sealed memfd holding data (an XKB keymap).
func sealedFile(name string, data []byte) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("wayland: memfd_create: %w", err)
	}
	for off := 0; off < len(data); {
		n, err := unix.Write(fd, data[off:])
		if err != nil {
			_ = unix.Close(fd)
			return -1, fmt.Errorf("wayland: write %s: %w", name, err)
		}
		off += n
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	return fd, nil
}

func closeFD(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// pipe returns a pipe's read and write ends (close-on-exec).
func pipe() (r, w *os.File, err error) { return os.Pipe() }

// peerCommand names the process at the other end of s (the compositor), from
// its credentials and /proc; "" when unknown.
func peerCommand(s sock) string {
	us, ok := s.(*unixSock)
	if !ok {
		return ""
	}
	raw, err := us.c.SyscallConn()
	if err != nil {
		return ""
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if cred == nil || cred.Pid <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(int(cred.Pid)) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
