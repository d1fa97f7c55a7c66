package harmony

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// uiInput runs `uitest uiInput ARGS` and checks its "No Error".
func (b *Backend) uiInput(ctx context.Context, args ...string) error {
	out, err := b.shell(ctx, "uitest uiInput "+strings.Join(args, " "))
	if err != nil {
		return err
	}
	if !strings.Contains(out, "No Error") {
		return fmt.Errorf("HarmonyOS device %s: uitest uiInput %s: %s", b.target, args[0], firstLine(out))
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// xy is a point as uitest takes it: pixels, at least 1 (it refuses 0).
func xy(p geom.GlobalPoint) string {
	return strconv.Itoa(max(p.X, 1)) + " " + strconv.Itoa(max(p.Y, 1))
}

// finger is the phone.Finger of uitest uiInput.
type finger struct{ b *Backend }

func (f finger) Tap(ctx context.Context, p geom.GlobalPoint) error {
	return f.b.uiInput(ctx, "click", xy(p))
}

// MultiTap implements desktop.MultiTapper: uitest's doubleClick for two
// taps (one gesture), followed by a click for a third.
func (b *Backend) MultiTap(ctx context.Context, p geom.GlobalPoint, count int) error {
	if err := b.uiInput(ctx, "doubleClick", xy(p)); err != nil || count < 3 {
		return err
	}
	return b.uiInput(ctx, "click", xy(p))
}

// Swipe is a swipe at the speed that covers the path in d (uitest takes a
// speed, 200-40000 px/s); in place it is a long click.
func (f finger) Swipe(ctx context.Context, from, to geom.GlobalPoint, d time.Duration) error {
	return f.move(ctx, "swipe", from, to, d)
}

// Drag implements phone.Dragger: uitest's drag presses long enough to
// pick the item up before it moves (Midscene drags with it too).
func (f finger) Drag(ctx context.Context, from, to geom.GlobalPoint, d time.Duration) error {
	return f.move(ctx, "drag", from, to, d)
}

func (f finger) move(ctx context.Context, op string, from, to geom.GlobalPoint, d time.Duration) error {
	if from == to {
		return f.b.uiInput(ctx, "longClick", xy(from))
	}
	dist := math.Hypot(float64(to.X-from.X), float64(to.Y-from.Y))
	v := int(dist / max(d.Seconds(), 0.001))
	v = min(max(v, 200), 40000)
	return f.b.uiInput(ctx, op, xy(from), xy(to), strconv.Itoa(v))
}

// CanTouch is false: uitest sends whole gestures.
func (f finger) CanTouch() bool { return false }

func (f finger) Touch(context.Context, string, geom.GlobalPoint) error {
	return fmt.Errorf("uitest cannot hold a finger down across calls (it sends whole gestures): %w", desktop.ErrUnsupported)
}

func (f finger) Screen(ctx context.Context) (geom.Rect, error) {
	s, err := f.b.screenSize(ctx)
	if err != nil {
		return geom.Rect{}, err
	}
	return geom.Rect{W: s.X, H: s.Y}, nil
}

// keycodes maps key names to OpenHarmony key codes (KeyCode of
// @ohos.multimodalInput.keyCode).
var keycodes = map[desktop.Key]int{
	"Return": 2054, "KP_Enter": 2119, "BackSpace": 2055, "Delete": 2071, "Tab": 2049, "Escape": 2070, "space": 2050,
	"End": 2082, "Page_Up": 2068, "Page_Down": 2069, "Left": 2014, "Right": 2015, "Up": 2012, "Down": 2013,
	"Insert": 2083, "Menu": 2067, "Caps_Lock": 2074, "Num_Lock": 2102, "Scroll_Lock": 2075, "Print": 2079, "Pause": 2080,
	"Control_L": 2072, "Control_R": 2073, "Shift_L": 2047, "Shift_R": 2048, "Alt_L": 2045, "Alt_R": 2046,
	"ISO_Level3_Shift": 2046, "Super_L": 2076, "Super_R": 2077, "Meta_L": 2076,
	"XF86AudioRaiseVolume": 16, "XF86AudioLowerVolume": 17, "XF86AudioMute": 22, "volume_up": 16, "volume_down": 17,
	"XF86Search": 9, "XF86Camera": 19, "XF86TaskPane": 2210, "app_switch": 2210, "recents": 2210,
}

// named are the keys uitest's keyEvent takes by name.
var named = map[desktop.Key]string{
	"XF86Back": "Back", "Back": "Back", "back": "Back",
	"XF86HomePage": "Home", "Home": "Home", "home_screen": "Home", "HomeScreen": "Home",
	"XF86PowerOff": "Power", "power": "Power",
}

var charKeys = map[rune]int{',': 2043, '.': 2044, '`': 2056, '-': 2057, '=': 2058, '[': 2059, ']': 2060, '\\': 2061,
	';': 2062, '\'': 2063, '/': 2064, '@': 2065, '+': 2066, '*': 2010, '#': 2011, ' ': 2050}

// KeyCode returns the OpenHarmony key code of k, or false when there is none.
func KeyCode(k desktop.Key) (int, bool) {
	if c, ok := keycodes[k]; ok {
		return c, true
	}
	if r, ok := k.Rune(); ok {
		switch {
		case r >= 'a' && r <= 'z':
			return 2017 + int(r-'a'), true
		case r >= 'A' && r <= 'Z':
			return 2017 + int(r-'A'), true
		case r >= '0' && r <= '9':
			return 2000 + int(r-'0'), true
		}
		c, ok := charKeys[r]
		return c, ok
	}
	if len(k) >= 2 && k[0] == 'F' {
		if n, err := strconv.Atoi(string(k[1:])); err == nil && n >= 1 && n <= 12 {
			return 2089 + n, true
		}
	}
	return 0, false
}

// KeyDown holds k: nothing is sent until its release (uitest presses and
// releases in one command).
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if _, ok := KeyCode(k); !ok && named[k] == "" {
		if _, isChar := k.Rune(); !isChar {
			return fmt.Errorf("HarmonyOS has no key for %q: use a key name (Return, BackSpace, Tab, Escape, Left, a-z, 0-9, back, home_screen, power...)", k)
		}
	}
	b.held.Down(k)
	return nil
}

// KeyUp releases k: a key alone is one keyEvent; with modifiers held, one
// keyEvent of up to three codes (uitest releases them in the order it
// pressed them); a modifier that went with no other key is sent alone; a
// character with no key code is typed.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	mods, usedAlready := b.held.Up(k)
	if k.IsModifier() && usedAlready {
		return nil
	}
	if n := named[k]; n != "" {
		if len(mods) > 0 {
			return fmt.Errorf("uitest presses %s alone, not with %s: %w", n, desktop.ComboString(mods), desktop.ErrUnsupported)
		}
		return b.uiInput(ctx, "keyEvent", n)
	}
	code, ok := KeyCode(k)
	if !ok {
		if len(mods) > 0 {
			return fmt.Errorf("HarmonyOS cannot press %s with %s: %q has no key code: %w", k, desktop.ComboString(mods), k, desktop.ErrUnsupported)
		}
		return b.typeLine(ctx, string(k))
	}
	if k.IsModifier() {
		mods = nil
	}
	if len(mods) > 2 {
		return fmt.Errorf("uitest's keyEvent takes at most three keys, not %s+%s: %w", desktop.ComboString(mods), k.ShortName(), desktop.ErrUnsupported)
	}
	args := []string{"keyEvent"}
	for _, m := range mods {
		c, _ := KeyCode(m)
		args = append(args, strconv.Itoa(c))
	}
	return b.uiInput(ctx, append(args, strconv.Itoa(code))...)
}

// typeLine types text without newlines or tabs into the focused field:
// `uitest uiInput text`, or on a uitest without it `inputText` at the
// pointer's place (which taps there first).
func (b *Backend) typeLine(ctx context.Context, text string) error {
	b.mu.Lock()
	noText := b.noText
	b.mu.Unlock()
	if !noText {
		out, err := b.shell(ctx, "uitest uiInput text "+quote(text))
		if err != nil {
			return err
		}
		if strings.Contains(out, "No Error") {
			return nil
		}
		if !strings.Contains(out, "Invalid parameters") {
			return fmt.Errorf("HarmonyOS device %s: uitest uiInput text: %s", b.target, firstLine(out))
		}
		b.mu.Lock()
		b.noText = true
		b.mu.Unlock()
	}
	return b.uiInput(ctx, "inputText", xy(b.Gesture.Position()), quote(text))
}

// TypeText types text into the focused field: lines through uitest,
// newlines and tabs as Enter and Tab key events.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	var line strings.Builder
	flush := func() error {
		if line.Len() == 0 {
			return nil
		}
		s := line.String()
		line.Reset()
		return b.typeLine(ctx, s)
	}
	for _, r := range text {
		code := 0
		switch r {
		case '\n':
			code = 2054
		case '\t':
			code = 2049
		default:
			line.WriteRune(r)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := b.uiInput(ctx, "keyEvent", strconv.Itoa(code)); err != nil {
			return err
		}
	}
	return flush()
}
