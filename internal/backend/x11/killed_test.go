package x11_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// holderEnv makes the test binary, re-executed, run holdInput instead of the tests.
const holderEnv = "GUIAGENT_TEST_HOLD_INPUT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderEnv); dir != "" {
		holdInput(dir)
		os.Exit(3) // holdInput runs until it is killed
	}
	os.Exit(m.Run())
}

// holdInput is the process the SIGKILL test kills: it drives the display of
// $DISPLAY through a ledgered Input, forever, holding a key and a button
// most of the time and typing in between.
func holdInput(stateDir string) {
	ctx := context.Background()
	display := os.Getenv("DISPLAY")
	b := x11.New(x11.Options{Display: display})
	if err := b.Start(ctx); err != nil {
		fmt.Println("start:", err)
		return
	}
	in := desktop.NewInput(b)
	led, err := desktop.NewLedger(stateDir, display)
	if err != nil {
		fmt.Println("ledger:", err)
		return
	}
	in.Ledger = led
	p := geom.GlobalPoint{X: 100, Y: 100}
	fmt.Println("ready")
	for {
		steps := []error{
			in.KeyDown(ctx, desktop.Shift),
			in.MouseDown(ctx, &p, desktop.Left),
			in.KeyDown(ctx, "a"),
			in.Type(ctx, "Held keys must not outlive a kill!"),
			in.PressKey(ctx, "x", 2, []desktop.Key{desktop.Ctrl, desktop.Alt}),
			in.KeyUp(ctx, "a"),
			in.MouseUp(ctx, nil, desktop.Left),
			in.KeyUp(ctx, desktop.Shift),
		}
		for _, err := range steps {
			if err != nil {
				fmt.Println("input:", err)
				return
			}
		}
	}
}

// pressed lists the keycodes and pointer buttons the server reports down.
func pressed(t testing.TB, c *xgb.Conn) []string {
	t.Helper()
	km, err := xproto.QueryKeymap(c).Reply()
	if err != nil {
		t.Fatalf("QueryKeymap: %v", err)
	}
	var out []string
	for i, byt := range km.Keys {
		for bit := range 8 {
			if byt&(1<<bit) != 0 {
				out = append(out, fmt.Sprintf("keycode %d", i*8+bit))
			}
		}
	}
	ptr, err := xproto.QueryPointer(c, xproto.Setup(c).DefaultScreen(c).Root).Reply()
	if err != nil {
		t.Fatalf("QueryPointer: %v", err)
	}
	for i, m := range []uint16{xproto.ButtonMask1, xproto.ButtonMask2, xproto.ButtonMask3} {
		if ptr.Mask&m != 0 {
			out = append(out, fmt.Sprintf("button %d", i+1))
		}
	}
	return out
}

// killTrial starts a holder, SIGKILLs it after delay and reports what the
// display had pressed right after the kill.
func killTrial(t testing.TB, c *xgb.Conn, display, stateDir string, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+stateDir, "DISPLAY="+display)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(out)
	line, _ := rd.ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("holder did not start: %q", line)
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(rd)
	_ = cmd.Wait() // reaped: its pid is gone
	if len(rest) > 0 {
		t.Fatalf("the holder stopped before it was killed: %s", rest)
	}
	return pressed(t, c)
}

// recoverStart is "the next start": a new backend replays the dead ledgers.
func recoverStart(t testing.TB, display, stateDir string) []desktop.Recovered {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := x11.New(x11.Options{Display: display})
	defer b.Close()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := desktop.RecoverInput(ctx, b, stateDir, display)
	if err != nil {
		t.Fatalf("RecoverInput: %v", err)
	}
	return rec
}

// TestSIGKILLedHolderIsReleasedAtNextStart kills a process that holds keys
// and a mouse button at 50 random moments; each time, the next start must
// leave nothing pressed on the display and remove the dead ledger.
func TestSIGKILLedHolderIsReleasedAtNextStart(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	c, err := xgb.NewConnDisplay(vd.Display)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stateDir := t.TempDir()
	trials, heldAfterKill, heldAfterStart := 50, 0, 0
	if testing.Short() {
		trials = 10
	}
	for i := range trials {
		delay := time.Duration(rand.IntN(60)) * time.Millisecond
		held := killTrial(t, c, vd.Display, stateDir, delay)
		if len(held) > 0 {
			heldAfterKill++
		}
		rec := recoverStart(t, vd.Display, stateDir)
		if len(held) > 0 && len(rec) == 0 {
			t.Errorf("trial %d: %v held after the kill, but the next start found no ledger to replay", i, held)
		}
		if left := pressed(t, c); len(left) > 0 {
			heldAfterStart++
			t.Errorf("trial %d (kill after %v): %v still pressed after the next start (held after kill: %v; recovered: %v)", i, delay, left, held, rec)
		}
		if files, _ := filepath.Glob(filepath.Join(stateDir, "held-input", "*")); len(files) > 0 {
			t.Errorf("trial %d: ledger files left after recovery: %v", i, files)
		}
	}
	t.Logf("%d trials: %d left input held after SIGKILL, %d still held after the next start", trials, heldAfterKill, heldAfterStart)
	if heldAfterKill < trials/2 {
		t.Errorf("only %d of %d kills left anything held: the test no longer exercises the hole", heldAfterKill, trials)
	}
}
