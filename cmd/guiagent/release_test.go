package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/guiagent/guiagent/internal/app"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// holdEnv makes the re-executed test binary hold input until it is killed.
const holdEnv = "GUIAGENT_TEST_HOLD"

func TestMain(m *testing.M) {
	if v := os.Getenv(holdEnv); v != "" {
		stateDir, display, _ := strings.Cut(v, "|")
		holdUntilKilled(stateDir, display)
		os.Exit(3)
	}
	if v := os.Getenv(stuckEnv); v != "" {
		stateDir, display, _ := strings.Cut(v, "|")
		stuckServer(stateDir, display)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// holdUntilKilled holds Shift and the left button through a ledgered Input,
// as serve would for hold_key and mouse_down, and waits.
func holdUntilKilled(stateDir, display string) {
	holdAndBlock(context.Background(), stateDir, display, nil)
}

// holdAndBlock holds Shift and the left button through a ledgered Input on
// display, prints "held" and blocks forever. beforeHold, when set, runs on
// the Input first; what it returns runs if holding fails.
func holdAndBlock(ctx context.Context, stateDir, display string, beforeHold func(*desktop.Input) (undo func())) {
	b := x11.New(x11.Options{Display: display})
	if err := b.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	in := desktop.NewInput(b)
	led, err := desktop.NewLedger(stateDir, app.LedgerDisplay(config.Config{}, b))
	if err != nil {
		fmt.Println(err)
		return
	}
	in.Ledger = led
	if beforeHold != nil {
		defer beforeHold(in)()
	}
	if err := in.KeyDown(ctx, desktop.Shift); err != nil {
		fmt.Println(err)
		return
	}
	if err := in.MouseDown(ctx, &geom.GlobalPoint{X: 10, Y: 10}, desktop.Left); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held")
	select {}
}

// killHolder starts a holder, waits until it holds, and SIGKILLs it.
func killHolder(t *testing.T, stateDir, display string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+stateDir+"|"+display)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("the holder did not hold: %q", line)
	}
	return cmd.Process.Pid
}

// held reports whether the display has any key or pointer button pressed.
func held(t *testing.T, c *xgb.Conn) bool {
	t.Helper()
	km, err := xproto.QueryKeymap(c).Reply()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range km.Keys {
		if b != 0 {
			return true
		}
	}
	ptr, err := xproto.QueryPointer(c, xproto.Setup(c).DefaultScreen(c).Root).Reply()
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Mask&(xproto.ButtonMask1|xproto.ButtonMask2|xproto.ButtonMask3) != 0
}

func TestReleaseServeAndDoctorReleaseWhatAKilledGuiagentHeld(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	c, err := xgb.NewConnDisplay(vd.Display)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env := baseEnv(t)
	env["GUI_AGENT_STATE_DIR"] = t.TempDir()
	for _, args := range [][]string{{"release"}, {"serve"}, {"doctor"}} {
		pid := killHolder(t, env["GUI_AGENT_STATE_DIR"], vd.Display)
		if !held(t, c) {
			t.Fatalf("%s: the killed holder left nothing held; the test exercises nothing", args[0])
		}
		code, stdout, stderr := runCmd(t, env, append(args, "--display", vd.Display)...)
		if args[0] != "doctor" && code != 0 {
			t.Fatalf("guiagent %s: exit %d\n%s%s", args[0], code, stdout, stderr)
		}
		t.Logf("guiagent %s:\n%s%s", args[0], stdout, stderr)
		if held(t, c) {
			t.Errorf("after guiagent %s, a key or button is still held", args[0])
		}
		if report := stdout + stderr; !strings.Contains(report, fmt.Sprintf("%d", pid)) || !strings.Contains(report, "button 1") {
			t.Errorf("guiagent %s does not report what process %d left held:\n%s", args[0], pid, report)
		}
	}
	code, stdout, _ := runCmd(t, env, "release", "--display", vd.Display)
	if code != 0 || stdout != "" {
		t.Errorf("a second release: exit %d, output %q; want nothing to release", code, stdout)
	}
}
