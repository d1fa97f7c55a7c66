// Package atspitest starts what AT-SPI tests need: a private D-Bus session
// bus (on which the accessibility bus launcher of at-spi2-core starts on
// demand) and applications on a given X display and bus. Missing programs
// fail the test (they never skip it): CI installs them.
package atspitest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/testenv"
)

// Python is the system Python that has the gi and pyatspi modules
// (python3-gi, python3-pyatspi), not one from a version manager.
const Python = "/usr/bin/python3"

// Bus starts a private D-Bus session bus for the test, for applications on
// the X display, and returns its address; it stops when the test ends. The
// services it starts (the accessibility bus launcher and registry) inherit
// its environment, so it gets the display.
func Bus(t testing.TB, display string) string {
	t.Helper()
	return testenv.DBusDaemon(t, Env(display, ""), "--session")
}

// Env is the environment of an application on display and bus, with
// accessibility on (GTK loads its AT-SPI bridge).
func Env(display, bus string) []string {
	var env []string
	for _, kv := range os.Environ() {
		for _, drop := range []string{"DISPLAY=", "DBUS_SESSION_BUS_ADDRESS=", "AT_SPI_BUS_ADDRESS=", "NO_AT_BRIDGE=", "WAYLAND_DISPLAY=", "GTK_MODULES="} {
			if strings.HasPrefix(kv, drop) {
				kv = ""
				break
			}
		}
		if kv != "" {
			env = append(env, kv)
		}
	}
	return append(env, "DISPLAY="+display, "DBUS_SESSION_BUS_ADDRESS="+bus, "GDK_BACKEND=x11", "NO_AT_BRIDGE=0", "GTK_USE_PORTAL=0")
}

// App is an application the test started.
type App struct {
	Cmd *exec.Cmd
	out *bufio.Reader
}

// Start runs argv on display and bus and stops it when the test ends. With
// ready set it waits (up to 30 s) until the program prints a line
// containing ready.
func Start(t testing.TB, display, bus, ready string, argv ...string) *App {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = Env(display, bus)
	cmd.Stderr = io.Discard
	testenv.DieWithTest(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", argv[0], err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	a := &App{Cmd: cmd, out: bufio.NewReader(out)}
	if ready == "" {
		go func() { _, _ = io.Copy(io.Discard, a.out) }()
		return a
	}
	got := make(chan bool, 1)
	go func() {
		for {
			line, err := a.out.ReadString('\n')
			if strings.Contains(line, ready) {
				got <- true
				_, _ = io.Copy(io.Discard, a.out)
				return
			}
			if err != nil {
				got <- false
				return
			}
		}
	}()
	select {
	case ok := <-got:
		if !ok {
			t.Fatalf("%s ended before it printed %q", strings.Join(argv, " "), ready)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not print %q within 30 s", strings.Join(argv, " "), ready)
	}
	return a
}

// FormApp returns the argv of the project's GTK 3 test application
// (testdata/form.py) with args.
func FormApp(args ...string) []string {
	_, file, _, _ := runtime.Caller(0)
	return append([]string{Python, filepath.Join(filepath.Dir(file), "..", "testdata", "form.py")}, args...)
}

// Wait polls cond every 100 ms until it holds or timeout passes.
func Wait(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DoAction runs the first action (press, click) of the element with the
// given desktop.Element.Handle ("busname/object/path") through AT-SPI.
func DoAction(sessionBus, handle string) error {
	i := strings.Index(handle, "/")
	if i < 0 {
		return fmt.Errorf("handle %q has no object path", handle)
	}
	sess, err := dbus.Connect(sessionBus)
	if err != nil {
		return err
	}
	defer sess.Close()
	var addr string
	if err := sess.Object("org.a11y.Bus", "/org/a11y/bus").Call("org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil {
		return err
	}
	bus, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	defer bus.Close()
	var ok bool
	return bus.Object(handle[:i], dbus.ObjectPath(handle[i:])).Call("org.a11y.atspi.Action.DoAction", 0, int32(0)).Store(&ok)
}
