//go:build !linux

package wayland

import (
	"errors"
	"os"
)

// errNotLinux: the backend's transport (SCM_RIGHTS, memfd) is Linux's.
var errNotLinux = errors.New("wayland: the Wayland backend runs on Linux only")

func dial(string) (sock, error) { return nil, errNotLinux }

type shmFile struct {
	fd   int
	data []byte
}

func newShm(string, int) (*shmFile, error) { return nil, errNotLinux }

func (s *shmFile) close() {}

func sealedFile(string, []byte) (int, error) { return -1, errNotLinux }

func closeFD(int) {}

func pipe() (r, w *os.File, err error) { return os.Pipe() }

func peerCommand(sock) string { return "" }
