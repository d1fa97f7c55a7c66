package desktop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
)

// readLedger returns the keys and buttons the ledger file records, or nil when there is none.
func readLedger(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("ledger %s is not JSON: %v: %s", path, err, data)
	}
	return m
}

func TestLedgerIsWrittenBeforeEachPressAndRemovedWhenNothingIsHeld(t *testing.T) {
	ctx := context.Background()
	b := fake.New(fake.Options{})
	in := desktop.NewInput(b)
	led, err := desktop.NewLedger(t.TempDir(), ":7")
	if err != nil {
		t.Fatal(err)
	}
	in.Ledger = led
	var seen []string
	b.OnEvent(func(e fake.Event) {
		if e.Op != fake.OpKeyDown && e.Op != fake.OpButtonDown {
			return
		}
		m := readLedger(t, led.Path())
		seen = append(seen, fmt.Sprintf("%s: %v %v", e, m["keys"], m["buttons"]))
		want := string(e.Key)
		if e.Op == fake.OpButtonDown {
			want = fmt.Sprint(int(e.Button))
		}
		if m == nil || !strings.Contains(fmt.Sprint(m["keys"], m["buttons"]), want) {
			t.Errorf("%s was pressed before the ledger recorded it: %v", e, m)
		}
	})
	if err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, desktop.Shift, "t"}); err != nil {
		t.Fatal(err)
	}
	if err := in.MouseDown(ctx, pt(5, 5), desktop.Right); err != nil {
		t.Fatal(err)
	}
	if m := readLedger(t, led.Path()); m == nil || fmt.Sprint(m["buttons"]) != "[3]" || m["keys"] != nil {
		t.Errorf("while the right button is held the ledger says %v, want buttons [3] and no keys", m)
	}
	if err := in.ReleaseAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(led.Path()); !os.IsNotExist(err) {
		t.Errorf("ledger %s still exists with nothing held (stat: %v)", led.Path(), err)
	}
	if len(seen) != 4 {
		t.Errorf("saw %d presses, want 4: %v", len(seen), seen)
	}
	assertNothingPressed(t, b, in)
}

func TestUnwritableLedgerRefusesThePress(t *testing.T) {
	dir := t.TempDir()
	b := fake.New(fake.Options{})
	in := desktop.NewInput(b)
	led, err := desktop.NewLedger(dir, ":7")
	if err != nil {
		t.Fatal(err)
	}
	led.StateVar = "GUI_AGENT_STATE_DIR"
	in.Ledger = led
	// A directory where the ledger's temporary file must go makes the write fail, also as root.
	if err := os.Mkdir(led.Path()+".tmp", 0o700); err != nil {
		t.Fatal(err)
	}
	err = in.KeyDown(context.Background(), desktop.Shift)
	if err == nil || !strings.Contains(err.Error(), "GUI_AGENT_STATE_DIR") {
		t.Fatalf("KeyDown with an unwritable ledger: %v, want an error naming GUI_AGENT_STATE_DIR", err)
	}
	assertNothingPressed(t, b, in)
}

// deadPID returns the id of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func writeLedger(t *testing.T, dir, name string, body map[string]any) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "held-input"), 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(body)
	p := filepath.Join(dir, "held-input", name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecoverInputReleasesWhatADeadProcessHeldAndLeavesLiveOnes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := fake.New(fake.Options{})
	// What the killed process left pressed on the display.
	if err := b.KeyDown(ctx, desktop.Ctrl); err != nil {
		t.Fatal(err)
	}
	if err := b.ButtonDown(ctx, desktop.Left); err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	deadFile := writeLedger(t, dir, fmt.Sprintf("d-~3a7.%d.json", dead), map[string]any{
		"pid": dead, "display": ":7", "keys": []string{"Control_L"}, "buttons": []int{1}})
	live := os.Getppid()
	liveFile := writeLedger(t, dir, fmt.Sprintf("d-~3a7.%d.json", live), map[string]any{
		"pid": live, "display": ":7", "keys": []string{"Alt_L"}})
	other := writeLedger(t, dir, fmt.Sprintf("d-~3a8.%d.json", dead), map[string]any{"pid": dead, "display": ":8", "keys": []string{"a"}})

	rec, err := desktop.RecoverInput(ctx, b, dir, ":7")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 1 || rec[0].PID != dead {
		t.Fatalf("recovered %+v, want the one ledger of process %d", rec, dead)
	}
	if !slices.Contains(rec[0].Released, "key Control_L") || !slices.Contains(rec[0].Released, "button left") {
		t.Errorf("report %q does not name the released key and button", rec[0])
	}
	if keys, btns := b.Pressed(); len(keys)+len(btns) > 0 {
		t.Errorf("after recovery keys %v and buttons %v are still pressed", keys, btns)
	}
	for _, c := range []struct {
		path string
		want bool
	}{{deadFile, false}, {liveFile, true}, {other, true}} {
		_, err := os.Stat(c.path)
		if exists := err == nil; exists != c.want {
			t.Errorf("%s exists=%v after recovery, want %v", filepath.Base(c.path), exists, c.want)
		}
	}
}

// BenchmarkKeyTap measures what the durable ledger adds to a key tap (one
// press and one release, each writing or removing the ledger file).
func BenchmarkKeyTap(b *testing.B) {
	for _, ledgered := range []bool{false, true} {
		b.Run(fmt.Sprintf("ledger=%v", ledgered), func(b *testing.B) {
			in := desktop.NewInput(fake.New(fake.Options{}))
			if ledgered {
				led, err := desktop.NewLedger(b.TempDir(), ":1")
				if err != nil {
					b.Fatal(err)
				}
				in.Ledger = led
			}
			ctx := context.Background()
			for b.Loop() {
				if err := in.KeyDown(ctx, "a"); err != nil {
					b.Fatal(err)
				}
				if err := in.KeyUp(ctx, "a"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
