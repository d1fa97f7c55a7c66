//go:build linux

// Package swaytest starts a headless sway for the wayland backend's tests:
// two outputs (HEADLESS-1 1280x800 at 0,0 scale 1; HEADLESS-2 1920x1080 at
// 1280,0 scale 2, so 960x540 logical), its own XDG_RUNTIME_DIR, and a GTK 3
// application (App) that reports what it receives.
//
// sway refuses to run as root, so as root (tests here and in CI) it runs as
// the unprivileged user User, created when missing (testenv.Unprivileged:
// the one place tests create it); as anyone else it runs as
// that user. The test process connects to the compositor's socket either way.
package swaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/wayland"
	"github.com/guiagent/guiagent/internal/testenv"
)

// User is the unprivileged user sway runs as when the tests run as root.
const User = testenv.TestUser

// Outputs the compositor has, in its layout.
const (
	Output1 = "HEADLESS-1" // 1280x800 at 0,0, scale 1
	Output2 = "HEADLESS-2" // 1920x1080 device pixels at 1280,0, scale 2
)

const config = `output HEADLESS-1 mode 1280x800 position 0 0 scale 1
output HEADLESS-2 mode 1920x1080 position 1280 0 scale 2
default_border none
default_floating_border none
focus_follows_mouse no
mouse_warping none
xwayland disable
for_window [title="^guiagent-fixture HEADLESS-1$"] move container to output HEADLESS-1, fullscreen enable
for_window [title="^guiagent-fixture HEADLESS-2$"] move container to output HEADLESS-2, fullscreen enable
`

// Sway is one running headless sway.
type Sway struct {
	// Dir is its XDG_RUNTIME_DIR (mode 0700, owned by the user it runs as).
	Dir string
	// Display is its socket's name in Dir (WAYLAND_DISPLAY).
	Display string
	ipc     string
	cred    *syscall.Credential
	cmd     *exec.Cmd
	log     string
}

// Start starts sway with the two outputs and stops it at the end of the test.
func Start(t testing.TB) *Sway {
	t.Helper()
	testenv.NeedSway(t)
	for _, p := range []string{"sway", "swaymsg"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed: apt-get install sway (scripts/debian-packages.sh install ci)", p)
		}
	}
	cred, uid, gid := testenv.Unprivileged(t)
	dir, err := os.MkdirTemp("", "guiagent-sway-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Sway{Dir: dir, cred: cred, log: filepath.Join(dir, "sway.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	s.cmd = exec.Command("sway", "-c", cfg)
	s.cmd.Env = append(s.baseEnv(), "WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sway: %v", err)
	}
	t.Cleanup(s.stop)
	s.waitSockets(t)
	s.Msg(t, "create_output")
	s.waitOutputs(t, 2)
	return s
}

// baseEnv is the environment of everything started on this compositor.
func (s *Sway) baseEnv() []string {
	env := []string{"HOME=" + s.Dir, "XDG_RUNTIME_DIR=" + s.Dir, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	if s.Display != "" {
		env = append(env, "WAYLAND_DISPLAY="+s.Display, "SWAYSOCK="+s.ipc)
	}
	return env
}

func (s *Sway) stop() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// logTail is the end of sway's log, for failure messages.
func (s *Sway) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (s *Sway) waitSockets(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		ws, _ := filepath.Glob(filepath.Join(s.Dir, "wayland-[0-9]*"))
		ipc, _ := filepath.Glob(filepath.Join(s.Dir, "sway-ipc.*.sock"))
		for _, w := range ws {
			if !strings.HasSuffix(w, ".lock") && len(ipc) > 0 {
				s.Display, s.ipc = filepath.Base(w), ipc[0]
				return
			}
		}
		if s.cmd.ProcessState != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("sway made no Wayland and IPC sockets in %s within 15s; its log:\n%s", s.Dir, s.logTail())
}

// Msg runs swaymsg with args and returns its output.
func (s *Sway) Msg(t testing.TB, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("swaymsg", append([]string{"-s", s.ipc}, args...)...)
	cmd.Env = s.baseEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("swaymsg %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// Output is one output as sway reports it.
type Output struct {
	Name  string  `json:"name"`
	Scale float64 `json:"scale"`
	Rect  struct {
		X, Y, Width, Height int
	} `json:"rect"`
}

// Outputs returns sway's outputs (swaymsg -t get_outputs).
func (s *Sway) Outputs(t testing.TB) []Output {
	t.Helper()
	var outs []Output
	if err := json.Unmarshal(s.Msg(t, "-t", "get_outputs", "-r"), &outs); err != nil {
		t.Fatal(err)
	}
	return outs
}

func (s *Sway) waitOutputs(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		outs := s.Outputs(t)
		ok := 0
		for _, o := range outs {
			if (o.Name == Output1 && o.Rect.Width == 1280) || (o.Name == Output2 && o.Rect.Width == 960 && o.Rect.X == 1280) {
				ok++
			}
		}
		if ok == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sway's outputs did not reach the layout within 10s: %+v", outs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Options are the backend options for this compositor.
func (s *Sway) Options() wayland.Options {
	return wayland.Options{Display: s.Display, RuntimeDir: s.Dir}
}

// Open opens a backend on this compositor, closed at the end of the test.
func (s *Sway) Open(t testing.TB) *wayland.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := wayland.Open(ctx, s.Options())
	if err != nil {
		t.Fatalf("wayland.Open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Command returns a command run as the compositor's user with its
// environment (WAYLAND_DISPLAY, XDG_RUNTIME_DIR) and extra env.
func (s *Sway) Command(name string, args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(s.baseEnv(), env...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Run runs a client of the compositor (grim, wl-paste, ...) with stdin and
// returns its standard output; a failure fails the test with its stderr.
func (s *Sway) Run(t testing.TB, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := s.Command(name, args)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// Focus focuses the fixture window on output.
func (s *Sway) Focus(t testing.TB, output string) {
	t.Helper()
	s.Msg(t, fmt.Sprintf(`[title="^guiagent-fixture %s$"] focus`, output))
}

// RunDetached runs a client that may leave a process behind it (wl-copy
// serves the clipboard from a child), its output discarded; a failure fails the test.
func (s *Sway) RunDetached(t testing.TB, stdin []byte, name string, args ...string) {
	t.Helper()
	cmd := s.Command(name, args)
	cmd.Stdin = bytes.NewReader(stdin)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
}
