package ios

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// Action is one W3C action item of a touch pointer.
type Action struct {
	Type     string `json:"type"`
	Duration *int64 `json:"duration,omitempty"`
	X        *int   `json:"x,omitempty"`
	Y        *int   `json:"y,omitempty"`
	Button   *int   `json:"button,omitempty"`
}

func ms(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
func ip(v int) *int             { return &v }

func move(p geom.GlobalPoint, d time.Duration) Action {
	return Action{Type: "pointerMove", Duration: ms(d), X: ip(p.X), Y: ip(p.Y)}
}

var (
	down = Action{Type: "pointerDown", Button: ip(0)}
	up   = Action{Type: "pointerUp", Button: ip(0)}
)

func pause(d time.Duration) Action { return Action{Type: "pause", Duration: ms(d)} }

// perform sends one touch pointer's actions.
func (b *Backend) perform(ctx context.Context, acts ...Action) error {
	body := map[string]any{"actions": []any{map[string]any{
		"type": "pointer", "id": "finger1", "parameters": map[string]string{"pointerType": "touch"}, "actions": acts}}}
	return b.c.inSession(ctx, http.MethodPost, "/actions", body, nil)
}

// finger is the phone.Finger of W3C actions (points are WDA's points).
type finger struct{ b *Backend }

func (f finger) Tap(ctx context.Context, p geom.GlobalPoint) error {
	return f.b.perform(ctx, move(p, 0), down, pause(50*time.Millisecond), up)
}

// MultiTap implements desktop.MultiTapper: count taps in one W3C action
// sequence, which the device sees as one double (or triple) tap.
func (b *Backend) MultiTap(ctx context.Context, p geom.GlobalPoint, count int) error {
	acts := []Action{move(p, 0)}
	for i := range count {
		if i > 0 {
			acts = append(acts, pause(60*time.Millisecond))
		}
		acts = append(acts, down, pause(40*time.Millisecond), up)
	}
	return b.perform(ctx, acts...)
}

func (f finger) Swipe(ctx context.Context, from, to geom.GlobalPoint, d time.Duration) error {
	if from == to {
		return f.b.perform(ctx, move(from, 0), down, pause(d), up)
	}
	return f.b.perform(ctx, move(from, 0), down, pause(50*time.Millisecond), move(to, d), up)
}

// CanTouch is false: a W3C action sequence ends with its finger up, so a
// press cannot stay down across calls.
func (f finger) CanTouch() bool { return false }

func (f finger) Touch(context.Context, string, geom.GlobalPoint) error {
	return fmt.Errorf("WebDriverAgent cannot hold a finger down across calls (its W3C actions end with the finger up): %w", desktop.ErrUnsupported)
}

func (f finger) Screen(ctx context.Context) (geom.Rect, error) {
	s, err := f.b.screenNow(ctx)
	if err != nil {
		return geom.Rect{}, err
	}
	return s.bounds(), nil
}

// typed maps key names to what /wda/keys types for them.
var typed = map[desktop.Key]string{
	"Return": "\n", "KP_Enter": "\n", "BackSpace": "\b", "Tab": "\t", "space": " ",
}

// buttons maps key names to the hardware buttons of /wda/pressButton.
var buttons = map[desktop.Key]string{
	"XF86AudioRaiseVolume": "volumeUp", "volume_up": "volumeUp",
	"XF86AudioLowerVolume": "volumeDown", "volume_down": "volumeDown",
}

// home names the home button, pressed through /wda/homescreen.
var home = map[desktop.Key]bool{"XF86HomePage": true, "Home": true, "home_screen": true, "HomeScreen": true}

// keyText is what /wda/keys types for k, if anything.
func keyText(k desktop.Key) (string, bool) {
	if s, ok := typed[k]; ok {
		return s, true
	}
	if r, ok := k.Rune(); ok {
		return string(r), true
	}
	return "", false
}

// KeyDown holds k: nothing is sent until its release.
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	_, isText := keyText(k)
	if !isText && !home[k] && buttons[k] == "" && !k.IsModifier() {
		return fmt.Errorf("iOS has no key %q through WebDriverAgent: it types characters, Return, BackSpace and Tab, and presses home_screen, volume_up and volume_down: %w", k, desktop.ErrUnsupported)
	}
	b.held.Down(k)
	return nil
}

// KeyUp releases k: a character or Return, BackSpace, Tab is typed
// through /wda/keys, the home and volume buttons pressed; a key held with
// a modifier is refused (WDA has no modifier keys), and a modifier alone
// sends nothing.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	mods, _ := b.held.Up(k)
	if k.IsModifier() {
		return nil
	}
	if len(mods) > 0 {
		return fmt.Errorf("iOS cannot press %s with %s through WebDriverAgent, which has no modifier keys: %w", k, desktop.ComboString(mods), desktop.ErrUnsupported)
	}
	switch {
	case home[k]:
		return b.c.do(ctx, http.MethodPost, "/wda/homescreen", map[string]any{}, nil)
	case buttons[k] != "":
		return b.c.inSession(ctx, http.MethodPost, "/wda/pressButton", map[string]any{"name": buttons[k]}, nil)
	}
	s, _ := keyText(k)
	return b.keys(ctx, s)
}

// keys types s into the focused field (/wda/keys: any Unicode).
func (b *Backend) keys(ctx context.Context, s string) error {
	return b.c.inSession(ctx, http.MethodPost, "/wda/keys", map[string]any{"value": []string{s}}, nil)
}

// TypeText types text into the focused field through /wda/keys, which
// types any Unicode.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	return b.keys(ctx, text)
}
