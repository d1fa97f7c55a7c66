// Package safety holds guiagent's guard rails for input: the blocked-hotkey
// policy, the kill-switch file that stops all input at once, the human-override
// watcher that notices someone else moving the pointer during a task (the
// agent loop arms it), and the audit ring buffer of recent tool calls.
package safety

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/desktop"
)

// ErrBlockedHotkey is wrapped by the error KeyPolicy.Check returns for a blocked combination.
var ErrBlockedHotkey = errors.New("blocked hotkey")

// DefaultBlocked returns the combinations blocked by default on a platform
// ("linux", "windows", "darwin"; anything else gets the linux list). They close
// windows or applications, lock the session, or leave the graphical session.
func DefaultBlocked(platform string) []string {
	switch platform {
	case "windows":
		return []string{"alt+f4", "ctrl+alt+delete", "super+l"}
	case "darwin":
		return []string{"super+q", "ctrl+super+q", "super+alt+escape"}
	}
	b := []string{"alt+f4", "ctrl+alt+delete", "ctrl+alt+backspace", "super+l"}
	for i := 1; i <= 12; i++ {
		b = append(b, fmt.Sprintf("ctrl+alt+f%d", i))
	}
	return b
}

// KeyPolicyOptions configures a KeyPolicy. The zero value blocks the defaults of
// the running platform.
type KeyPolicyOptions struct {
	// Platform selects the default list ("linux", "windows", "darwin"); "" means runtime.GOOS.
	Platform string
	// Blocked adds combinations ("ctrl+shift+q"; any key names desktop.ParseCombo
	// accepts), from GUI_AGENT_BLOCKED_HOTKEYS.
	Blocked []string
	// Allowed removes combinations from the blocked list (matched as sets of
	// keys), from GUI_AGENT_ALLOWED_HOTKEYS.
	Allowed []string
	// Confirm lists combinations sent only after a person says yes (see
	// NeedsConfirm), from GUI_AGENT_CONFIRM_HOTKEYS. The blocklist stays
	// absolute: a combination both blocked and here is blocked, and Check
	// refuses it whatever the person answers. To have a default-blocked
	// combination (alt+f4) confirmed instead, list it in Allowed too.
	Confirm []string
}

// combo is a blocked combination as a sorted set of short key names.
type combo struct {
	keys []string // sorted, unique short names
	name string   // "ctrl+alt+delete" as configured, normalized
}

// KeyPolicy decides whether a key combination may be pressed. A combination is
// blocked when the set of keys pressed together contains every key of a blocked
// combination, whatever their order or aliases (ctrl = control = Control_R,
// super = cmd = win, alt = option). It is immutable and safe for concurrent use.
type KeyPolicy struct {
	platform string
	blocked  []combo
	confirm  []combo
}

// NewKeyPolicy builds a policy from the platform defaults plus o.Blocked minus
// o.Allowed, and o.Confirm. An unparsable combination is an error naming it
// and its variable.
func NewKeyPolicy(o KeyPolicyOptions) (*KeyPolicy, error) {
	p := &KeyPolicy{platform: o.Platform}
	if p.platform == "" {
		p.platform = runtime.GOOS
	}
	for _, s := range o.Confirm {
		c, err := parseCombo(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.Var("ConfirmHotkeys"), err)
		}
		if !slices.ContainsFunc(p.confirm, func(d combo) bool { return slices.Equal(d.keys, c.keys) }) {
			p.confirm = append(p.confirm, c)
		}
	}
	var allowed []combo
	for _, s := range o.Allowed {
		c, err := parseCombo(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.Var("AllowedHotkeys"), err)
		}
		allowed = append(allowed, c)
	}
	add := func(s, knob string) error {
		c, err := parseCombo(s)
		if err != nil {
			if knob == "" {
				return err
			}
			return fmt.Errorf("%s: %w", knob, err)
		}
		for _, a := range allowed {
			if slices.Equal(a.keys, c.keys) {
				return nil
			}
		}
		for _, b := range p.blocked {
			if slices.Equal(b.keys, c.keys) {
				return nil
			}
		}
		p.blocked = append(p.blocked, c)
		return nil
	}
	for _, s := range DefaultBlocked(p.platform) {
		if err := add(s, ""); err != nil {
			return nil, err
		}
	}
	for _, s := range o.Blocked {
		if err := add(s, config.Var("BlockedHotkeys")); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// MustKeyPolicy is NewKeyPolicy for options known to be valid (tests, defaults); it panics on error.
func MustKeyPolicy(o KeyPolicyOptions) *KeyPolicy {
	p, err := NewKeyPolicy(o)
	if err != nil {
		panic(err)
	}
	return p
}

func parseCombo(s string) (combo, error) {
	keys, err := desktop.ParseCombo(s)
	if err != nil {
		return combo{}, fmt.Errorf("hotkey %q: %w", s, err)
	}
	set := shortSet(keys)
	return combo{keys: set, name: strings.Join(orderModsFirst(set), "+")}, nil
}

// shortSet returns the sorted unique short names of keys.
func shortSet(keys []desktop.Key) []string {
	s := make([]string, 0, len(keys))
	for _, k := range keys {
		s = append(s, k.ShortName())
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// actsAs lists, for keys that some backend presses as another key or that
// some systems treat as another modifier, the short names they may act as.
// The policy counts a pressed key as each of them, so a chord is judged as
// it will be sent on any backend.
var actsAs = map[desktop.Key][]string{
	"ISO_Level3_Shift": {"alt"},          // Windows and macOS press AltGr as right Alt
	"Meta_L":           {"super", "alt"}, // Win/Command on Windows and macOS; X keymaps often put Meta on Mod1 with Alt
	"KP_Enter":         {"return"},       // Windows presses it as VK_RETURN
	" ":                {"space"},        // the space character is the space key
}

// pressedSet returns the sorted unique short names keys act as when pressed.
func pressedSet(keys []desktop.Key) []string {
	s := shortSet(keys)
	for _, k := range keys {
		s = append(s, actsAs[k]...)
	}
	slices.Sort(s)
	return slices.Compact(s)
}

var modOrder = map[string]int{"ctrl": 0, "super": 1, "alt": 2, "shift": 3}

// orderModsFirst renders a set the way people write combinations: modifiers
// first (ctrl, super, alt, shift), then the other keys.
func orderModsFirst(set []string) []string {
	out := slices.Clone(set)
	slices.SortStableFunc(out, func(a, b string) int {
		ra, oka := modOrder[a]
		rb, okb := modOrder[b]
		switch {
		case oka && okb:
			return ra - rb
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	return out
}

// Platform returns the platform whose defaults the policy uses.
func (p *KeyPolicy) Platform() string { return p.platform }

// Blocked lists the blocked combinations ("ctrl+alt+delete"), for status output.
func (p *KeyPolicy) Blocked() []string {
	out := make([]string, len(p.blocked))
	for i, c := range p.blocked {
		out[i] = c.name
	}
	return out
}

// Confirm lists the combinations that need a person's yes ("ctrl+w"), for
// status output.
func (p *KeyPolicy) Confirm() []string {
	out := make([]string, len(p.confirm))
	for i, c := range p.confirm {
		out[i] = c.name
	}
	return out
}

// NeedsConfirm reports whether keys, pressed together, need a person's yes
// before they are sent, and the confirm combination they match ("ctrl+w"). It
// matches as Check matches blocked combinations: the pressed set contains
// every key of the combination, whatever their order, case or aliases (so
// ctrl+shift+w needs the yes that ctrl+w needs). The blocklist stays
// absolute: a chord that Check refuses (blocked, even if it is also a confirm
// combination, or an invalid key name) never needs confirmation, because no
// answer can let it through; the caller still runs Check before sending. A
// nil policy confirms nothing.
func (p *KeyPolicy) NeedsConfirm(keys []desktop.Key) (combo string, ok bool) {
	if p == nil || len(keys) == 0 || len(p.confirm) == 0 || p.Check(keys) != nil {
		return "", false
	}
	pressed := pressedSet(keys)
	for _, c := range p.confirm {
		if containsAll(pressed, c.keys) {
			return c.name, true
		}
	}
	return "", false
}

// Check returns nil when keys, pressed together, are allowed, and otherwise an
// error wrapping ErrBlockedHotkey that names the blocked combination and how to
// allow it. It judges the chord as backends send it: letters in any case,
// right-hand and left-hand modifiers, and keys that act as a modifier on some
// system (see actsAs) count as the same keys. A key that is not a valid name
// (a control character, such as U+0008 that backends press as BackSpace) is
// an error. A nil policy allows everything.
func (p *KeyPolicy) Check(keys []desktop.Key) error {
	if p == nil || len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		if err := k.Validate(); err != nil {
			return err
		}
	}
	pressed := pressedSet(keys)
	for _, c := range p.blocked {
		if containsAll(pressed, c.keys) {
			return fmt.Errorf("%w: %s is blocked by the key policy on %s (it matches %q); to allow it, add %q to %s",
				ErrBlockedHotkey, strings.Join(orderModsFirst(pressed), "+"), p.platform, c.name, c.name, config.Var("AllowedHotkeys"))
		}
	}
	return nil
}

// CheckNames parses key names (as gui_hotkey receives them) and checks them.
func (p *KeyPolicy) CheckNames(names []string) error {
	keys, err := desktop.ParseKeys(names)
	if err != nil {
		return err
	}
	return p.Check(keys)
}

// containsAll reports whether sorted set a contains every element of sorted set b.
func containsAll(a, b []string) bool {
	i := 0
	for _, x := range b {
		for i < len(a) && a[i] < x {
			i++
		}
		if i == len(a) || a[i] != x {
			return false
		}
	}
	return true
}
