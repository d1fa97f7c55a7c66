package operate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/operate"
	"github.com/guiagent/guiagent/internal/safety"
)

func newExec(t *testing.T, o operate.Options) (*operate.Executor, *fake.Backend) {
	t.Helper()
	b := fake.New(fake.Options{})
	ex := operate.New(desktop.NewInput(b), o)
	t.Cleanup(ex.Close)
	return ex, b
}

func policy(t *testing.T, o safety.KeyPolicyOptions) *safety.KeyPolicy {
	t.Helper()
	p, err := safety.NewKeyPolicy(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func keys(t *testing.T, combo string) []desktop.Key {
	t.Helper()
	k, err := desktop.ParseCombo(combo)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestBlockedKeysAreNeverSent: a blocked combination, or a click with a
// blocked modifier set, is refused before anything is sent or located.
func TestBlockedKeysAreNeverSent(t *testing.T) {
	ex, b := newExec(t, operate.Options{Keys: policy(t, safety.KeyPolicyOptions{Platform: "linux", Blocked: []string{"ctrl+shift"}})})
	located := false
	loc := locatorFunc(func(context.Context, operate.Target) (operate.Place, error) {
		located = true
		return operate.Place{}, nil
	})
	for _, op := range []operate.Op{
		{Action: action.Action{Kind: action.KeyPress, Keys: keys(t, "alt+f4")}},
		{Action: action.Action{Kind: action.Click, Target: "OK", Keys: keys(t, "ctrl+shift")}, Locate: loc},
	} {
		res, err := ex.Do(context.Background(), op)
		var pe *operate.PolicyError
		if !errors.As(err, &pe) || res.Executed() || res.Trace.Outcome != action.OutcomeNotExecuted {
			t.Errorf("%s %v: %v (outcome %s), want a policy refusal, not executed", op.Action.Kind, op.Action.Keys, err, res.Trace.Outcome)
		}
	}
	if len(b.Events()) != 0 || located {
		t.Errorf("a refused action sent %v (located: %v)", b.Events(), located)
	}
}

type locatorFunc func(context.Context, operate.Target) (operate.Place, error)

func (f locatorFunc) By() string { return "test" }
func (f locatorFunc) Locate(ctx context.Context, t operate.Target) (operate.Place, error) {
	return f(ctx, t)
}

// TestConfirmationGatesTheKeys: a combination the policy lists as needing a
// yes is sent only after Op.Confirm says yes; a no sends nothing.
func TestConfirmationGatesTheKeys(t *testing.T) {
	ex, b := newExec(t, operate.Options{Keys: policy(t, safety.KeyPolicyOptions{Platform: "linux", Confirm: []string{"ctrl+w"}})})
	var asked []string
	op := func(answer error) operate.Op {
		return operate.Op{Action: action.Action{Kind: action.KeyPress, Keys: keys(t, "ctrl+w")},
			Confirm: func(_ context.Context, k []desktop.Key, combo string) error {
				asked = append(asked, combo)
				return answer
			}}
	}
	if _, err := ex.Do(context.Background(), op(errors.New("the user said no"))); err == nil || !strings.Contains(err.Error(), "said no") || len(b.Events()) != 0 {
		t.Fatalf("refused: %v, events %v", err, b.Events())
	}
	if _, err := ex.Do(context.Background(), op(nil)); err != nil || !strings.Contains(opsOf(b), "key_down(w)") {
		t.Fatalf("confirmed: %v, events %v", err, b.Events())
	}
	if _, err := ex.Do(context.Background(), operate.Op{Action: action.Action{Kind: action.KeyPress, Keys: keys(t, "ctrl+s")},
		Confirm: func(context.Context, []desktop.Key, string) error { return errors.New("asked for ctrl+s") }}); err != nil {
		t.Fatalf("ctrl+s needs no yes: %v", err)
	}
	if len(asked) != 2 || asked[0] != "ctrl+w" {
		t.Errorf("asked %v, want ctrl+w twice", asked)
	}
}

// TestWaitIsCappedAndInterruptible: a wait longer than MaxWait waits
// MaxWait; Stop ends a wait early as interrupted.
func TestWaitIsCappedAndInterruptible(t *testing.T) {
	ex, _ := newExec(t, operate.Options{MaxWait: 50 * time.Millisecond})
	if d, err := ex.Wait(context.Background(), time.Hour, 0, nil); err != nil || d != 50*time.Millisecond {
		t.Fatalf("a 1 h wait with MaxWait 50 ms: waited %v, %v", d, err)
	}
	stopped := errors.New("the run was cancelled")
	_, err := ex.Do(context.Background(), operate.Op{Action: action.Action{Kind: action.Wait, Duration: time.Hour},
		Stop: func() error { return stopped }})
	if !errors.Is(err, operate.ErrInterrupted) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("a stopped wait: %v, want interrupted naming why", err)
	}
}

// TestWhatCannotBePerformedSaysSo: a move without a point, a target with no
// locate step and a kind that is not input are refused, nothing sent.
func TestWhatCannotBePerformedSaysSo(t *testing.T) {
	ex, b := newExec(t, operate.Options{})
	for _, a := range []action.Action{
		{Kind: action.Move},
		{Kind: action.Click, Target: "the OK button"},
		{Kind: action.Zoom},
		{Kind: "teleport"},
	} {
		res, err := ex.Do(context.Background(), operate.Op{Action: a})
		if !errors.Is(err, operate.ErrCannotPerform) || res.Executed() {
			t.Errorf("%s: %v (outcome %s), want ErrCannotPerform, not executed", a.Kind, err, res.Trace.Outcome)
		}
	}
	if len(b.Events()) != 0 {
		t.Errorf("sent %v", b.Events())
	}
}

// TestLocateChainSaysWhoFoundIt: the first step that finds the target
// places it and names itself as located_by; a step that does not find it
// passes to the next, one that fails stops the chain.
func TestLocateChainSaysWhoFoundIt(t *testing.T) {
	ex, b := newExec(t, operate.Options{})
	miss := named{"ocr", func(context.Context, operate.Target) (operate.Place, error) {
		return operate.Place{}, operate.ErrNotFound
	}}
	hit := named{"vision", func(context.Context, operate.Target) (operate.Place, error) {
		return operate.Place{Global: geom.GlobalPoint{X: 30, Y: 40}}, nil
	}}
	res, err := ex.Do(context.Background(), operate.Op{Action: action.Action{Kind: action.Click, Target: "OK"}, Locate: operate.Chain{miss, hit}})
	if err != nil || res.Trace.LocatedBy != "vision" || res.At == nil || *res.Trace.Global != (geom.GlobalPoint{X: 30, Y: 40}) {
		t.Fatalf("chain: %v, located_by %q, at %v", err, res.Trace.LocatedBy, res.Trace.Global)
	}
	if got := opsOf(b); !strings.Contains(got, "(30,40)") {
		t.Errorf("clicked %s, want at (30,40)", got)
	}
	broken := named{"accessibility", func(context.Context, operate.Target) (operate.Place, error) {
		return operate.Place{}, errors.New("the accessibility bus is down")
	}}
	if _, err := ex.Do(context.Background(), operate.Op{Action: action.Action{Kind: action.Click, Target: "OK"}, Locate: operate.Chain{broken, hit}}); err == nil || !strings.Contains(err.Error(), "bus is down") {
		t.Errorf("a failing step: %v, want its error", err)
	}
	twice := named{"ocr", func(context.Context, operate.Target) (operate.Place, error) {
		return operate.Place{}, fmt.Errorf("%w: OK at (1,1) and (9,9)", operate.ErrAmbiguous)
	}}
	if res, err := ex.Do(context.Background(), operate.Op{Action: action.Action{Kind: action.Click, Target: "OK"}, Locate: operate.Chain{twice, hit}}); err != nil || res.Trace.LocatedBy != "vision" {
		t.Errorf("an ambiguous step before vision: %v, located_by %q; want vision to tell the places apart", err, res.Trace.LocatedBy)
	}
	if _, err := ex.Do(context.Background(), operate.Op{Action: action.Action{Kind: action.Click, Target: "OK"}, Locate: operate.Chain{twice}}); err == nil || !strings.Contains(err.Error(), "(9,9)") {
		t.Errorf("an ambiguous last step: %v, want its candidates", err)
	}
}

type named struct {
	by string
	f  locatorFunc
}

func (n named) By() string { return n.by }
func (n named) Locate(ctx context.Context, t operate.Target) (operate.Place, error) {
	return n.f(ctx, t)
}

// TestScopeReleasesWhatItsRunHeld: Scope.Release lets go of the buttons its
// own mouse_downs left held, and nothing another caller holds.
func TestScopeReleasesWhatItsRunHeld(t *testing.T) {
	ex, b := newExec(t, operate.Options{})
	ctx := context.Background()
	if _, err := ex.Do(ctx, operate.Op{Action: action.Action{Kind: action.MouseDown, Button: desktop.Right}}); err != nil {
		t.Fatal(err) // another caller's, on purpose
	}
	run := ex.NewScope()
	if _, err := ex.Do(ctx, operate.Op{Action: action.Action{Kind: action.MouseDown}, Scope: run}); err != nil {
		t.Fatal(err)
	}
	if err := run.Release(); err != nil {
		t.Fatal(err)
	}
	if _, buttons := b.Pressed(); len(buttons) != 1 || buttons[0] != desktop.Right {
		t.Errorf("after the run's release the desktop holds %v, want only the other caller's right button", buttons)
	}
}

// TestFieldKeys: replace never presses ctrl+a (a Tk entry's line start).
func TestFieldKeys(t *testing.T) {
	for _, platform := range []string{"linux", "windows", "darwin"} {
		for _, combo := range operate.FieldKeys(operate.Replace, platform) {
			if desktop.ComboString(combo) == "ctrl+a" {
				t.Errorf("%s: replace presses ctrl+a", platform)
			}
		}
	}
	for _, mode := range []operate.TypeMode{operate.Replace, operate.Append} {
		for _, combo := range operate.FieldKeys(mode, operate.PlatformPhone) {
			if slices.Contains(combo, "Home") {
				t.Errorf("on a phone %s presses %s: Home is the phone's Home button", mode, desktop.ComboString(combo))
			}
		}
	}
	if got := operate.FieldKeys(operate.TypeAtCaret, "linux"); len(got) != 0 {
		t.Errorf("type at the caret presses %v", got)
	}
}

func opsOf(b *fake.Backend) string {
	var out []string
	for _, e := range b.Events() {
		out = append(out, e.String())
	}
	return strings.Join(out, " ")
}
