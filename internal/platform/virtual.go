package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb"

	"github.com/guiagent/guiagent/internal/geom"
)

// XvfbOptions configures a private Xvfb server. The zero value gives a
// 1280x800 screen at depth 24 without a window manager.
type XvfbOptions struct {
	// Width and Height are the screen size in pixels; zero means 1280x800.
	Width, Height int
	// Depth is the colour depth in bits; zero means 24.
	Depth int
	// WindowManager starts a window manager on the display when one is
	// installed (openbox, fluxbox, ...); when none is found the display runs
	// without one and VirtualDisplay.WindowManager stays empty.
	WindowManager bool
}

// VirtualDisplay is a private X server started by this process.
type VirtualDisplay struct {
	// Display is the X display name to connect to, such as ":42".
	Display string
	// Size is the size of the X screen (the root window) in pixels.
	Size geom.Size
	// Monitors lists the monitor layout requested for an Xorg dummy server, in
	// global pixels; it is nil for Xvfb (one monitor covering Size).
	Monitors []geom.Rect
	// WindowManager is the name of the window manager started, or "".
	WindowManager string

	server    *exec.Cmd
	wm        *exec.Cmd
	serverOut *limitedBuffer
	tmpDir    string
	exited    chan struct{} // closed when the server process has been reaped
	closeOnce sync.Once
	closeErr  error
}

// ErrXvfbMissing is returned when the Xvfb binary is not installed.
var ErrXvfbMissing = errors.New("the Xvfb binary is not installed: install xvfb: apt-get install xvfb")

// ErrXorgMissing is returned when Xorg or its dummy video driver is not installed.
var ErrXorgMissing = errors.New("the Xorg server with the dummy driver is not installed: apt-get install xserver-xorg-core xserver-xorg-video-dummy x11-xserver-utils")

const (
	// startTimeout bounds how long a server may take to accept connections.
	startTimeout = 15 * time.Second
	// startAttempts is how many display numbers are tried when servers collide.
	startAttempts = 8
	// firstDisplay and displaySpan delimit the display numbers this package picks.
	firstDisplay = 100
	displaySpan  = 800
)

// StartXvfb starts a private Xvfb on a free display number and waits until it
// accepts X connections. Several processes may call it at once: a display
// number already taken (lock file or socket present, or the server refusing
// to start because of a collision) is skipped and another one tried. The
// caller must Close the returned display.
func StartXvfb(ctx context.Context, o XvfbOptions) (*VirtualDisplay, error) {
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 800
	}
	if o.Depth <= 0 {
		o.Depth = 24
	}
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		return nil, ErrXvfbMissing
	}
	args := func(n int) []string {
		return []string{":" + strconv.Itoa(n),
			"-screen", "0", fmt.Sprintf("%dx%dx%d", o.Width, o.Height, o.Depth),
			"-nolisten", "tcp", "-noreset", "-dpi", "96",
			"+extension", "RANDR", "+extension", "MIT-SHM", "+extension", "XTEST", "+extension", "XFIXES",
		}
	}
	vd, err := startServer(ctx, "Xvfb", bin, args, "")
	if err != nil {
		return nil, err
	}
	vd.Size = geom.Size{W: o.Width, H: o.Height}
	if o.WindowManager {
		vd.startWindowManager()
	}
	return vd, nil
}

// windowManagers are tried in order when XvfbOptions.WindowManager is set.
var windowManagers = []string{"openbox", "fluxbox", "xfwm4", "metacity", "icewm", "matchbox-window-manager", "twm"}

func (vd *VirtualDisplay) startWindowManager() {
	for _, name := range windowManagers {
		bin, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		cmd := exec.Command(bin)
		cmd.Env = append(cmd.Environ(), "DISPLAY="+vd.Display) // the inherited environment, DISPLAY replaced
		setProcAttr(cmd)
		if err := cmd.Start(); err != nil {
			continue
		}
		vd.wm, vd.WindowManager = cmd, name
		return
	}
}

// startServer starts an X server on a free display number, retrying with
// another number on collision, and waits until it accepts connections.
func startServer(ctx context.Context, what, bin string, args func(display int) []string, tmpDir string) (*VirtualDisplay, error) {
	cleanStale.Do(func() { removeStaleDisplays(slog.Default()) })
	var lastErr error
	n := firstDisplay + rand.IntN(displaySpan)
	for attempt := 0; attempt < startAttempts; attempt++ {
		n = nextFreeDisplay(n)
		vd, err := tryServer(ctx, what, bin, args(n), n, tmpDir)
		if err == nil {
			return vd, nil
		}
		lastErr = err
		if ctx.Err() != nil || !errors.Is(err, errCollision) {
			return nil, err
		}
		n += 1 + rand.IntN(16)
	}
	return nil, fmt.Errorf("start %s: no free display number after %d attempts: %w", what, startAttempts, lastErr)
}

// errCollision marks a server that exited because another one took its display.
var errCollision = errors.New("display number already in use")

// nextFreeDisplay returns the first display number from n whose lock file and
// socket do not exist.
func nextFreeDisplay(n int) int {
	for range displaySpan {
		if n >= firstDisplay+displaySpan {
			n = firstDisplay
		}
		if exists(fmt.Sprintf("/tmp/.X%d-lock", n)) || exists(fmt.Sprintf("/tmp/.X11-unix/X%d", n)) {
			n++
			continue
		}
		return n
	}
	return n // all taken: let the server report the collision
}

// lockPID returns the process id written in display n's lock file, or 0.
func lockPID(n int) int {
	b, err := os.ReadFile(fmt.Sprintf("/tmp/.X%d-lock", n))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func tryServer(ctx context.Context, what, bin string, args []string, n int, tmpDir string) (*VirtualDisplay, error) {
	out := &limitedBuffer{max: 16 << 10}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = os.TempDir()
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	vd := &VirtualDisplay{Display: ":" + strconv.Itoa(n), server: cmd, serverOut: out, tmpDir: tmpDir, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(vd.exited) }()

	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	socket := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
	for {
		select {
		case <-vd.exited:
			msg := out.String()
			if strings.Contains(msg, "already active") || strings.Contains(msg, "server already running") ||
				strings.Contains(msg, "Cannot establish any listening sockets") || strings.Contains(msg, "lock file") {
				return nil, fmt.Errorf("%s on %s: %w", what, vd.Display, errCollision)
			}
			return nil, fmt.Errorf("%s on %s exited during start-up: %s", what, vd.Display, lastLines(msg, 12))
		case <-ctx.Done():
			vd.kill()
			return nil, fmt.Errorf("start %s on %s: %w", what, vd.Display, ctx.Err())
		case <-deadline.C:
			vd.kill()
			return nil, fmt.Errorf("%s on %s did not accept connections within %v: %s", what, vd.Display, startTimeout, lastLines(out.String(), 12))
		case <-tick.C:
			// The socket and the server answering on it may be another
			// server's until ours notices the collision and exits: only the
			// lock file naming our process proves the display is ours.
			if !exists(socket) || lockPID(n) != cmd.Process.Pid {
				continue
			}
			if pingX(vd.Display) == nil {
				return vd, nil
			}
		}
	}
}

// pingX opens and closes an X connection to display.
func pingX(display string) error {
	c, err := net.DialTimeout("unix", "/tmp/.X11-unix/X"+strings.TrimPrefix(display, ":"), time.Second)
	if err != nil {
		return err
	}
	_ = c.Close()
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return err
	}
	conn.Close()
	return nil
}

// xgb logs to stderr on every connection; silence it before any connection
// exists (writing it later would race with xgb's readers).
func init() { xgb.Logger = log.New(io.Discard, "", 0) }

// kill terminates the server and window manager and waits for the server to exit.
func (vd *VirtualDisplay) kill() {
	if vd.wm != nil && vd.wm.Process != nil {
		_ = vd.wm.Process.Kill()
		_ = vd.wm.Wait()
	}
	if vd.server == nil || vd.server.Process == nil {
		return
	}
	_ = vd.server.Process.Signal(terminateSignal)
	select {
	case <-vd.exited:
	case <-time.After(3 * time.Second):
		_ = vd.server.Process.Kill()
		<-vd.exited
	}
}

// Close stops the server, reaps its process and removes its temporary files.
// It is safe to call more than once.
func (vd *VirtualDisplay) Close() error {
	if vd == nil {
		return nil
	}
	vd.closeOnce.Do(func() {
		vd.kill()
		if vd.tmpDir != "" {
			vd.closeErr = os.RemoveAll(vd.tmpDir)
		}
	})
	return vd.closeErr
}

// Log returns the last output of the server process, for diagnostics.
func (vd *VirtualDisplay) Log() string { return vd.serverOut.String() }

// StartXorgDummy starts a private Xorg server with the dummy video driver whose
// RandR monitors are the given rectangles (global pixels, non-negative, the first
// one at the origin is the primary monitor). Its configuration is written to a
// temporary directory. Xorg needs root (as in CI) or a setuid wrapper.
func StartXorgDummy(ctx context.Context, monitors []geom.Rect) (*VirtualDisplay, error) {
	if len(monitors) == 0 {
		return nil, errors.New("StartXorgDummy: give at least one monitor rectangle")
	}
	fb := geom.Rect{}
	for i, m := range monitors {
		if m.Empty() || m.X < 0 || m.Y < 0 {
			return nil, fmt.Errorf("StartXorgDummy: monitor %d is %v: monitors need a positive size and a non-negative origin", i, m)
		}
		fb.W, fb.H = max(fb.W, m.X+m.W), max(fb.H, m.Y+m.H)
	}
	bin, err := exec.LookPath("Xorg")
	if err != nil {
		return nil, ErrXorgMissing
	}
	xrandr, err := exec.LookPath("xrandr")
	if err != nil {
		return nil, fmt.Errorf("xrandr is not installed: apt-get install x11-xserver-utils")
	}
	if !driverInstalled() {
		return nil, ErrXorgMissing
	}
	dir, err := os.MkdirTemp("", "guiagent-xorg-")
	if err != nil {
		return nil, fmt.Errorf("StartXorgDummy: %w", err)
	}
	confDir := filepath.Join(dir, "conf.d")
	conf := filepath.Join(dir, "xorg.conf")
	err = os.Mkdir(confDir, 0o700)
	if err == nil {
		err = os.WriteFile(conf, []byte(xorgDummyConf(fb.Size(), monitors)), 0o600)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("StartXorgDummy: write config: %w", err)
	}
	args := func(n int) []string {
		return []string{":" + strconv.Itoa(n), "-config", conf, "-configdir", confDir,
			"-noreset", "-nolisten", "tcp", "-logfile", filepath.Join(dir, "xorg.log"),
			"-novtswitch", "-sharevts", "+extension", "RANDR", "+extension", "XTEST"}
	}
	vd, err := startServer(ctx, "Xorg", bin, args, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	vd.Size = fb.Size()
	vd.Monitors = append([]geom.Rect(nil), monitors...)
	if err := vd.layoutMonitors(ctx, xrandr, fb.Size(), monitors); err != nil {
		_ = vd.Close()
		return nil, err
	}
	return vd, nil
}

// layoutMonitors sets the framebuffer size and puts monitor i on output DUMMYi
// at its position; the first one is primary.
func (vd *VirtualDisplay) layoutMonitors(ctx context.Context, xrandr string, fb geom.Size, monitors []geom.Rect) error {
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, xrandr, args...)
		cmd.Env = append(cmd.Environ(), "DISPLAY="+vd.Display) // the inherited environment, DISPLAY replaced
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("xrandr %s on %s: %v: %s", strings.Join(args, " "), vd.Display, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if len(monitors) > 16 {
		return fmt.Errorf("xrandr on %s: %d monitors requested, the dummy driver has 16 outputs", vd.Display, len(monitors))
	}
	if err := run("--fb", fmt.Sprintf("%dx%d", fb.W, fb.H)); err != nil {
		return err
	}
	// Each monitor gets a real output (DUMMY0..): a monitor declared only with
	// --setmonitor has no CRTC, and the server keeps the pointer out of it.
	for i, m := range monitors {
		out := fmt.Sprintf("DUMMY%d", i)
		_ = run("--addmode", out, modeName(m.Size())) // fails harmlessly when the output already has the mode
		args := []string{"--output", out, "--mode", modeName(m.Size()), "--pos", fmt.Sprintf("%dx%d", m.X, m.Y)}
		if i == 0 {
			args = append(args, "--primary")
		}
		if err := run(args...); err != nil {
			return err
		}
	}
	return nil
}

func modeName(s geom.Size) string { return fmt.Sprintf("%dx%d", s.W, s.H) }

// driverInstalled reports whether the dummy video driver module exists.
func driverInstalled() bool {
	for _, dir := range []string{"/usr/lib/xorg/modules/drivers", "/usr/lib64/xorg/modules/drivers", "/usr/local/lib/xorg/modules/drivers"} {
		if exists(filepath.Join(dir, "dummy_drv.so")) {
			return true
		}
	}
	return false
}

// xorgDummyConf returns an xorg.conf for the dummy driver with a virtual screen
// of fb and a 60 Hz modeline for every monitor size.
func xorgDummyConf(fb geom.Size, monitors []geom.Rect) string {
	var modelines, modes strings.Builder
	seen := map[geom.Size]bool{}
	for _, m := range monitors {
		s := m.Size()
		if seen[s] {
			continue
		}
		seen[s] = true
		// CVT-like blanking (the dummy driver rejects reduced blanking), at up to
		// 60 Hz and under the driver's 300 MHz pixel clock limit.
		hs, he, ht := s.W+s.W/15, s.W+s.W/15+s.W/10, s.W*134/100
		vs, ve, vt := s.H+3, s.H+8, s.H+s.H*37/1000+8
		refresh := min(60.0, 290e6/float64(ht*vt))
		clock := float64(ht*vt) * refresh / 1e6
		fmt.Fprintf(&modelines, "  Modeline %q %.2f %d %d %d %d %d %d %d %d -hsync +vsync\n",
			modeName(s), clock, s.W, hs, he, ht, s.H, vs, ve, vt)
		fmt.Fprintf(&modes, " %q", modeName(s))
	}
	// VideoRam in KiB: enough for the framebuffer at 4 bytes per pixel, plus slack.
	videoRAM := max(fb.W*fb.H*4/1024+4096, 65536)
	return fmt.Sprintf(`Section "ServerFlags"
  Option "AutoAddDevices" "false"
  Option "AutoEnableDevices" "false"
  Option "DontVTSwitch" "true"
  Option "AllowMouseOpenFail" "true"
EndSection
Section "Device"
  Identifier "dummy"
  Driver "dummy"
  VideoRam %d
EndSection
Section "Monitor"
  Identifier "mon"
  HorizSync 5.0-1000.0
  VertRefresh 5.0-200.0
%sEndSection
Section "Screen"
  Identifier "screen"
  Device "dummy"
  Monitor "mon"
  DefaultDepth 24
  SubSection "Display"
    Depth 24
    Modes%s
    Virtual %d %d
  EndSubSection
EndSection
`, videoRAM, modelines.String(), modes.String(), fb.W, fb.H)
}

// limitedBuffer keeps the last max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if extra := b.buf.Len() - b.max; extra > 0 {
		b.buf.Next(extra)
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
