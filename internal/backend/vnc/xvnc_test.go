//go:build linux

package vnc_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/vnc"
	"github.com/guiagent/guiagent/internal/testenv"
)

// xvnc is a private TigerVNC Xvnc server: an X server whose screen is served
// over RFB on a loopback port.
type xvnc struct {
	Display string // X display, ":N"
	Addr    string // RFB address, 127.0.0.1:port
	cmd     *exec.Cmd
	out     *syncBuffer
	exited  chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startXvnc starts Xvnc at w x h (depth 24) on a free display and port and
// stops it when the test ends. With a password, the server requires VNC
// Authentication (the password file is written in vncpasswd's format);
// otherwise it offers security type None. A missing Xvnc fails the test: CI
// installs tigervnc-standalone-server.
func startXvnc(t testing.TB, w, h int, password string) *xvnc {
	t.Helper()
	testenv.NeedX(t)
	bin, err := exec.LookPath("Xvnc")
	if err != nil {
		t.Fatal("Xvnc is not installed: apt-get install tigervnc-standalone-server")
	}
	var sec []string
	if password != "" {
		pf := filepath.Join(t.TempDir(), "passwd")
		if err := os.WriteFile(pf, vnc.ObfuscatedPassword(password), 0o600); err != nil {
			t.Fatal(err)
		}
		sec = []string{"-SecurityTypes", "VncAuth", "-PasswordFile", pf}
	} else {
		sec = []string{"-SecurityTypes", "None"}
	}
	var lastErr error
	for attempt := 0; attempt < 8; attempt++ {
		n := freeDisplay()
		port := freePort(t)
		args := append([]string{":" + strconv.Itoa(n), "-geometry", fmt.Sprintf("%dx%d", w, h), "-depth", "24",
			"-rfbport", strconv.Itoa(port), "-localhost", "-nolisten", "tcp", "-AlwaysShared", "-noreset"}, sec...)
		x := &xvnc{Display: ":" + strconv.Itoa(n), Addr: "127.0.0.1:" + strconv.Itoa(port), out: &syncBuffer{}, exited: make(chan struct{})}
		x.cmd = exec.Command(bin, args...)
		x.cmd.Stdout, x.cmd.Stderr = x.out, x.out
		x.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		testenv.DieWithTest(x.cmd)
		if err := x.cmd.Start(); err != nil {
			t.Fatalf("start Xvnc: %v", err)
		}
		go func() { _ = x.cmd.Wait(); close(x.exited) }()
		if lastErr = x.waitReady(n); lastErr == nil {
			t.Cleanup(x.stop)
			return x
		}
		x.stop()
	}
	t.Fatalf("Xvnc did not start: %v", lastErr)
	return nil
}

func (x *xvnc) waitReady(n int) error {
	deadline := time.Now().Add(15 * time.Second)
	socket := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
	for time.Now().Before(deadline) {
		select {
		case <-x.exited:
			return fmt.Errorf("Xvnc on %s exited: %s", x.Display, lastLines(x.out.String(), 10))
		default:
		}
		if _, err := os.Stat(socket); err == nil {
			if c, err := net.DialTimeout("tcp", x.Addr, time.Second); err == nil {
				_ = c.Close()
				return nil
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("Xvnc on %s did not listen on %s within 15s: %s", x.Display, x.Addr, lastLines(x.out.String(), 10))
}

func (x *xvnc) stop() {
	if x.cmd.Process == nil {
		return
	}
	_ = x.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-x.exited:
	case <-time.After(3 * time.Second):
		_ = x.cmd.Process.Kill()
		<-x.exited
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func freeDisplay() int {
	n := 200 + rand.IntN(600)
	for range 600 {
		if _, err := os.Lstat(fmt.Sprintf("/tmp/.X%d-lock", n)); err != nil {
			if _, err := os.Lstat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err != nil {
				return n
			}
		}
		n = 200 + (n-200+1)%600
	}
	return n
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
