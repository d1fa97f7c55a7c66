package wayland

import (
	"fmt"
	"net"
	"syscall"
)

type unixSock struct{ c *net.UnixConn }

// dial connects to the compositor's socket at path.
func dial(path string) (sock, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	return &unixSock{c}, nil
}

func (s *unixSock) write(b []byte, fds []int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	n, oobn, err := s.c.WriteMsgUnix(b, oob, nil)
	if err != nil {
		return err
	}
	if n != len(b) || oobn != len(oob) {
		return fmt.Errorf("short write (%d of %d bytes)", n, len(b))
	}
	return nil
}

func (s *unixSock) read(b []byte) (int, []int, error) {
	oob := make([]byte, syscall.CmsgSpace(28*4))
	n, oobn, _, _, err := s.c.ReadMsgUnix(b, oob)
	var fds []int
	if oobn > 0 {
		msgs, perr := syscall.ParseSocketControlMessage(oob[:oobn])
		if perr == nil {
			for _, m := range msgs {
				if f, err := syscall.ParseUnixRights(&m); err == nil {
					fds = append(fds, f...)
				}
			}
		}
	}
	if err == nil && n == 0 {
		err = fmt.Errorf("end of stream")
	}
	return n, fds, err
}

func (s *unixSock) close() error { return s.c.Close() }
