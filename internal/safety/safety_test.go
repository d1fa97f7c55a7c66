package safety

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/secret"
)

func TestKeyPolicyDefaults(t *testing.T) {
	cases := []struct {
		platform string
		keys     []string
		blocked  bool
	}{
		{"linux", []string{"alt", "f4"}, true},
		{"linux", []string{"F4", "Alt_L"}, true}, // order and spelling do not matter
		{"linux", []string{"alt+F4"}, true},
		{"linux", []string{"Alt_R", "f4"}, true},
		{"linux", []string{"ctrl", "alt", "delete"}, true},
		{"linux", []string{"control", "alt", "del"}, true},
		{"linux", []string{"ctrl", "alt", "backspace"}, true},
		{"linux", []string{"win", "l"}, true},
		{"linux", []string{"super", "L"}, true},
		{"linux", []string{"ctrl", "alt", "f1"}, true},
		{"linux", []string{"ctrl", "alt", "F12"}, true},
		{"linux", []string{"ctrl", "shift", "alt", "f4"}, true}, // superset of alt+f4
		{"linux", []string{"ctrl", "alt", "f13"}, false},
		{"linux", []string{"ctrl", "c"}, false},
		{"linux", []string{"alt", "tab"}, false},
		{"linux", []string{"f4"}, false},
		{"linux", []string{"super"}, false},
		{"linux", []string{"ctrl", "shift", "t"}, false},
		{"windows", []string{"alt", "f4"}, true},
		{"windows", []string{"ctrl", "alt", "del"}, true},
		{"windows", []string{"win", "l"}, true},
		{"windows", []string{"ctrl", "alt", "f1"}, false},
		{"darwin", []string{"cmd", "q"}, true},
		{"darwin", []string{"command", "Q"}, true},
		{"darwin", []string{"ctrl", "cmd", "q"}, true},
		{"darwin", []string{"cmd", "option", "esc"}, true},
		{"darwin", []string{"cmd", "c"}, false},
		{"darwin", []string{"alt", "f4"}, false},
	}
	for _, c := range cases {
		p := MustKeyPolicy(KeyPolicyOptions{Platform: c.platform})
		keys, err := desktop.ParseKeys(c.keys)
		if err != nil {
			t.Fatalf("%v: %v", c.keys, err)
		}
		err = p.Check(keys)
		if got := err != nil; got != c.blocked {
			t.Errorf("%s %v: blocked=%v, want %v (err %v)", c.platform, c.keys, got, c.blocked, err)
		}
		if err != nil && !errors.Is(err, ErrBlockedHotkey) {
			t.Errorf("%s %v: error %v does not wrap ErrBlockedHotkey", c.platform, c.keys, err)
		}
	}
}

func TestKeyPolicyErrorNamesComboAndKnob(t *testing.T) {
	p := MustKeyPolicy(KeyPolicyOptions{Platform: "linux"})
	err := p.CheckNames([]string{"delete", "Control_R", "alt"})
	if err == nil {
		t.Fatal("ctrl+alt+delete was allowed")
	}
	msg := err.Error()
	for _, want := range []string{"ctrl+alt+delete", "GUI_AGENT_ALLOWED_HOTKEYS", "linux"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func TestKeyPolicyConfigurable(t *testing.T) {
	p, err := NewKeyPolicy(KeyPolicyOptions{
		Platform: "linux",
		Blocked:  []string{"ctrl+shift+q", "ctrl+w"},
		Allowed:  []string{"F4+alt"}, // allowed in any spelling
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(combo string) error {
		keys, err := desktop.ParseCombo(combo)
		if err != nil {
			t.Fatal(err)
		}
		return p.Check(keys)
	}
	if err := check("alt+f4"); err != nil {
		t.Errorf("alt+f4 allowed by configuration but blocked: %v", err)
	}
	if err := check("shift+ctrl+Q"); err == nil {
		t.Error("extra blocked ctrl+shift+q was allowed")
	}
	if err := check("ctrl+w"); err == nil {
		t.Error("extra blocked ctrl+w was allowed")
	}
	if err := check("ctrl+alt+delete"); err == nil {
		t.Error("default ctrl+alt+delete no longer blocked")
	}
	for _, b := range p.Blocked() {
		if b == "alt+f4" {
			t.Errorf("Blocked() still lists alt+f4: %v", p.Blocked())
		}
	}
	if _, err := NewKeyPolicy(KeyPolicyOptions{Blocked: []string{"ctrl+nosuchkey"}}); err == nil ||
		!strings.Contains(err.Error(), "GUI_AGENT_BLOCKED_HOTKEYS") {
		t.Errorf("bad blocked combo: err = %v, want one naming GUI_AGENT_BLOCKED_HOTKEYS", err)
	}
	if _, err := NewKeyPolicy(KeyPolicyOptions{Allowed: []string{"ctrl+"}}); err == nil ||
		!strings.Contains(err.Error(), "GUI_AGENT_ALLOWED_HOTKEYS") {
		t.Errorf("bad allowed combo: err = %v, want one naming GUI_AGENT_ALLOWED_HOTKEYS", err)
	}
}

// TestKeyPolicyConfirm: combos of GUI_AGENT_CONFIRM_HOTKEYS need a person's
// yes in any spelling, order or superset, like blocked combos; the blocklist
// stays absolute, and a bad combo names the variable.
func TestKeyPolicyConfirm(t *testing.T) {
	p, err := NewKeyPolicy(KeyPolicyOptions{
		Platform: "linux",
		Blocked:  []string{"ctrl+q"},
		Allowed:  []string{"alt+f4"},
		Confirm:  []string{"ctrl+w", "Delete+shift+Control", "ctrl+q", "alt+f4", "ctrl+alt+delete", "w+ctrl"},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		keys    []desktop.Key
		confirm string // "" = sent without asking (or refused by Check)
	}{
		{[]desktop.Key{desktop.Ctrl, "w"}, "ctrl+w"},
		{[]desktop.Key{"W", "Control_R"}, "ctrl+w"},                            // case, side and order do not matter
		{[]desktop.Key{desktop.Ctrl, desktop.Shift, "w"}, "ctrl+w"},            // a superset needs the same yes
		{[]desktop.Key{"Delete", "Shift_R", "Control_L"}, "ctrl+shift+delete"}, // configured in any order, named modifiers first
		{[]desktop.Key{desktop.Alt, "F4"}, "alt+f4"},                           // allowed out of the defaults, confirmed instead
		{[]desktop.Key{"ISO_Level3_Shift", "F4"}, "alt+f4"},                    // AltGr acts as alt, as for blocked combos
		{[]desktop.Key{desktop.Ctrl, "s"}, ""},
		{[]desktop.Key{"w"}, ""},
		{[]desktop.Key{desktop.Ctrl, "q"}, ""},                   // blocked and confirm: blocked
		{[]desktop.Key{desktop.Ctrl, desktop.Alt, "Delete"}, ""}, // default-blocked and confirm: blocked
		{[]desktop.Key{desktop.Ctrl, "\b"}, ""},                  // invalid key: Check refuses it
	}
	for _, c := range cases {
		got, ok := p.NeedsConfirm(c.keys)
		if ok != (c.confirm != "") || got != c.confirm {
			t.Errorf("NeedsConfirm(%q) = %q, %v; want %q", c.keys, got, ok, c.confirm)
		}
	}
	for _, blocked := range [][]desktop.Key{{desktop.Ctrl, "q"}, {desktop.Ctrl, desktop.Alt, "Delete"}} {
		if err := p.Check(blocked); !errors.Is(err, ErrBlockedHotkey) {
			t.Errorf("Check(%q) = %v: a blocked combo listed for confirmation must stay blocked", blocked, err)
		}
	}
	if err := p.Check([]desktop.Key{desktop.Ctrl, "w"}); err != nil {
		t.Errorf("Check(ctrl+w) = %v: a confirm combo is not blocked", err)
	}
	if got := strings.Join(p.Confirm(), ","); got != "ctrl+w,ctrl+shift+delete,ctrl+q,alt+f4,ctrl+alt+delete" {
		t.Errorf("Confirm() = %s: want each configured combo once, normalized", got)
	}
	if _, err := NewKeyPolicy(KeyPolicyOptions{Confirm: []string{"ctrl+nosuchkey"}}); err == nil ||
		!strings.Contains(err.Error(), "GUI_AGENT_CONFIRM_HOTKEYS") || !strings.Contains(err.Error(), "nosuchkey") {
		t.Errorf("bad confirm combo: err = %v, want one naming GUI_AGENT_CONFIRM_HOTKEYS and the combo", err)
	}
	if combo, ok := MustKeyPolicy(KeyPolicyOptions{Platform: "linux"}).NeedsConfirm([]desktop.Key{desktop.Ctrl, "w"}); ok {
		t.Errorf("a policy without confirm combos asks for %q", combo)
	}
	var nilPolicy *KeyPolicy
	if _, ok := nilPolicy.NeedsConfirm([]desktop.Key{desktop.Ctrl, "w"}); ok {
		t.Error("a nil policy asks for confirmation")
	}
}

func TestNilKeyPolicyAllowsAll(t *testing.T) {
	var p *KeyPolicy
	if err := p.Check([]desktop.Key{desktop.Alt, "F4"}); err != nil {
		t.Fatal(err)
	}
}

func TestAuditRingKeepsLastNInOrder(t *testing.T) {
	a := NewAudit(5, nil)
	for i := range 12 {
		a.Record(AuditEntry{Tool: fmt.Sprintf("t%d", i), Millis: int64(i)}, nil)
	}
	got := a.Snapshot()
	if len(got) != 5 || a.Len() != 5 {
		t.Fatalf("len = %d (Len %d), want 5", len(got), a.Len())
	}
	for i, e := range got {
		if want := fmt.Sprintf("t%d", 7+i); e.Tool != want {
			t.Errorf("entry %d = %s, want %s", i, e.Tool, want)
		}
		if e.Seq != uint64(8+i) {
			t.Errorf("entry %d seq = %d, want %d", i, e.Seq, 8+i)
		}
		if e.Time.IsZero() {
			t.Errorf("entry %d has no time", i)
		}
	}
	// A snapshot is a copy: later records do not change it.
	a.Record(AuditEntry{Tool: "late"}, nil)
	if got[0].Tool != "t7" {
		t.Errorf("snapshot changed after Record: %v", got[0].Tool)
	}
	if NewAudit(0, nil).entries == nil || len(NewAudit(0, nil).entries) != DefaultAuditSize {
		t.Error("NewAudit(0, nil) does not keep DefaultAuditSize entries")
	}
}

func TestAuditRedactsText(t *testing.T) {
	type args struct {
		Text    string   `json:"text"`
		Keys    []string `json:"keys"`
		Button  string   `json:"button"`
		X       float64  `json:"x"`
		Long    string   `json:"note"`
		Secrets []string `json:"template"`
	}
	a := NewAudit(10, nil)
	a.Record(AuditEntry{Tool: "gui_type", Result: "typed"}, args{
		Text: "Grüße 世界 ✓ 42", Keys: []string{"ctrl", "s"}, Button: "left", X: 12.5,
		Long: strings.Repeat("x", 80), Secrets: []string{"abc"},
	})
	e := a.Snapshot()[0]
	var m map[string]any
	if err := json.Unmarshal(e.Args, &m); err != nil {
		t.Fatal(err)
	}
	if m["text"] != "<redacted 13 chars>" {
		t.Errorf("text = %v, want <redacted 13 chars>", m["text"])
	}
	if m["note"] != "<redacted 80 chars>" {
		t.Errorf("long string = %v, want redacted", m["note"])
	}
	if s := m["template"].([]any)[0]; s != "<redacted 3 chars>" {
		t.Errorf("template = %v, want redacted", s)
	}
	if m["button"] != "left" || m["x"] != 12.5 || m["keys"].([]any)[1] != "s" {
		t.Errorf("non-text arguments changed: %v", m)
	}
	if strings.Contains(string(e.Args), "Grüße") {
		t.Errorf("typed text leaked into the audit: %s", e.Args)
	}
}

func TestAuditConcurrent(t *testing.T) {
	a := NewAudit(100, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				a.Record(AuditEntry{Tool: fmt.Sprintf("g%d", g), Millis: int64(i)}, map[string]any{"text": "hello"})
				if i%50 == 0 {
					_ = a.Snapshot()
				}
			}
		}()
	}
	wg.Wait()
	got := a.Snapshot()
	if len(got) != 100 {
		t.Fatalf("len = %d, want 100", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[i-1].Seq+1 {
			t.Fatalf("entries out of order at %d: %d after %d", i, got[i].Seq, got[i-1].Seq)
		}
	}
	if got[len(got)-1].Seq != 4000 {
		t.Errorf("last seq = %d, want 4000", got[len(got)-1].Seq)
	}
}

func TestKillSwitchFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "STOP")
	k := NewKillSwitch(path)
	now := time.Unix(1000, 0)
	k.now = func() time.Time { return now }
	ctx := context.Background()
	if k.Engaged() || k.Gate(ctx) != nil {
		t.Fatal("engaged without the file")
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Within the cache interval the old answer stands.
	now = now.Add(50 * time.Millisecond)
	if k.Engaged() {
		t.Fatal("stat not cached: engaged within 50 ms of the last check")
	}
	now = now.Add(60 * time.Millisecond)
	if !k.Engaged() {
		t.Fatal("not engaged 110 ms after the file appeared")
	}
	err := k.Gate(ctx)
	if !errors.Is(err, ErrKillSwitch) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete") {
		t.Fatalf("Gate error %v: want ErrKillSwitch naming the file and how to resume", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultKillSwitchInterval)
	if k.Engaged() {
		t.Fatal("still engaged after the file was deleted")
	}
	// A clock that goes backwards does not freeze the cached answer.
	now = now.Add(-time.Hour)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !k.Engaged() {
		t.Fatal("cached answer kept although the clock went backwards")
	}
}

func TestKillSwitchRealClockAndCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stop-now")
	k := NewKillSwitch(path)
	_ = k.Engaged()
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !k.Engaged() {
		if time.Now().After(deadline) {
			t.Fatal("kill switch not engaged 2 s after the file appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewKillSwitch("").Gate(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Gate on a cancelled context = %v, want context.Canceled", err)
	}
	var nilKS *KillSwitch
	if nilKS.Engaged() || NewKillSwitch("").Engaged() {
		t.Fatal("a disabled kill switch is engaged")
	}
}

func TestKillSwitchStopsInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "STOP")
	k := NewKillSwitch(path)
	k.interval = 0 // look at the file every time
	rec := &recordingKeyboard{}
	in := desktop.NewInput(rec)
	in.Gate = k.Gate
	ctx := context.Background()
	if err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, "c"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(rec.events)
	err := in.Hotkey(ctx, []desktop.Key{desktop.Ctrl, "v"})
	if !errors.Is(err, ErrKillSwitch) {
		t.Fatalf("Hotkey with the switch engaged = %v, want ErrKillSwitch", err)
	}
	if len(rec.events) != before {
		t.Fatalf("input reached the desktop while engaged: %v", rec.events[before:])
	}
	if keys, _ := in.Held(); len(keys) != 0 {
		t.Fatalf("keys left held: %v", keys)
	}
}

// recordingKeyboard is a minimal desktop.Screen + Keyboard for the gate test.
type recordingKeyboard struct {
	mu     sync.Mutex
	events []string
}

func (r *recordingKeyboard) Name() string { return "rec" }

func (r *recordingKeyboard) DisplayName() string { return "" }

func (r *recordingKeyboard) Displays(context.Context) ([]geom.Display, error) {
	return []geom.Display{{ID: "0", Bounds: geom.Rect{W: 100, H: 100}, Primary: true}}, nil
}

func (r *recordingKeyboard) Capture(context.Context, geom.Rect, *image.RGBA) (*image.RGBA, error) {
	return image.NewRGBA(image.Rect(0, 0, 100, 100)), nil
}

func (r *recordingKeyboard) Close() error { return nil }

func (r *recordingKeyboard) KeyDown(_ context.Context, k desktop.Key) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "down "+string(k))
	return nil
}

func (r *recordingKeyboard) KeyUp(_ context.Context, k desktop.Key) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "up "+string(k))
	return nil
}

func (r *recordingKeyboard) TypeText(_ context.Context, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "type "+text)
	return nil
}

// TestAuditScrubsSecrets: a key that reaches an entry (an argument kept
// verbatim, an error echoing it, a result) is stored as secret.Marker, also
// when the shared scrubber learned it after the audit was made (a key set
// through the settings API).
func TestAuditScrubsSecrets(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	scrub := secret.NewScrubber("")
	a := NewAudit(10, scrub)
	scrub.Add(key)
	a.Record(AuditEntry{Tool: "gui_press_key", Error: "unknown key " + key + ": see gui://keys", Result: "was " + key},
		map[string]any{"key": key})
	e := a.Snapshot()[0]
	for what, got := range map[string]string{"args": string(e.Args), "error": e.Error, "result": e.Result} {
		if strings.Contains(got, key) || !strings.Contains(got, secret.Marker) {
			t.Errorf("audit %s = %q, want the key shown as %s", what, got, secret.Marker)
		}
	}
}
