package android

import (
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// finger is the phone.Finger of the input tool.
type finger struct{ b *Backend }

// tapCommand is the shell command that taps p (device pixels).
func tapCommand(p image.Point) string { return fmt.Sprintf("input tap %d %d", p.X, p.Y) }

func (f finger) Tap(ctx context.Context, p geom.GlobalPoint) error {
	_, err := f.b.dev.Run(ctx, tapCommand(f.b.toDevice(p)))
	return err
}

// MultiTap implements desktop.MultiTapper: count taps in one shell
// command, so they come as close together as the device takes them.
func (b *Backend) MultiTap(ctx context.Context, p geom.GlobalPoint, count int) error {
	tap := tapCommand(b.toDevice(p))
	cmd := tap
	for range count - 1 {
		cmd += "; " + tap
	}
	_, err := b.dev.Run(ctx, cmd)
	return err
}

func (f finger) Swipe(ctx context.Context, from, to geom.GlobalPoint, dur time.Duration) error {
	a, z := f.b.toDevice(from), f.b.toDevice(to)
	_, err := f.b.dev.Run(ctx, fmt.Sprintf("input swipe %d %d %d %d %d", a.X, a.Y, z.X, z.Y, dur.Milliseconds()))
	return err
}

// CanTouch: `input motionevent` came with Android 11 (API 30).
func (f finger) CanTouch() bool { return f.b.sdk >= 30 }

func (f finger) Touch(ctx context.Context, action string, p geom.GlobalPoint) error {
	if !f.CanTouch() {
		return fmt.Errorf("android device %s runs Android %s (API %d): holding a finger down across calls (mouse down, then mouse up) needs `input motionevent`, which came with Android 11: %w", f.b.dev.Serial(), f.b.release, f.b.sdk, desktop.ErrUnsupported)
	}
	d := f.b.toDevice(p)
	_, err := f.b.dev.Run(ctx, fmt.Sprintf("input motionevent %s %d %d", strings.ToUpper(action), d.X, d.Y))
	return err
}

func (f finger) Screen(ctx context.Context) (geom.Rect, error) {
	s, err := f.b.screenSize(ctx)
	if err != nil {
		return geom.Rect{}, err
	}
	return f.b.logical(s), nil
}

// keycodes maps named keys to Android KEYCODE_ names.
var keycodes = map[desktop.Key]string{
	"Return": "ENTER", "KP_Enter": "ENTER", "BackSpace": "DEL", "Delete": "FORWARD_DEL", "Tab": "TAB",
	"Escape": "ESCAPE", "space": "SPACE", "End": "MOVE_END", "Page_Up": "PAGE_UP",
	"Page_Down": "PAGE_DOWN", "Left": "DPAD_LEFT", "Right": "DPAD_RIGHT", "Up": "DPAD_UP", "Down": "DPAD_DOWN",
	"Insert": "INSERT", "Menu": "MENU", "Caps_Lock": "CAPS_LOCK", "Num_Lock": "NUM_LOCK", "Scroll_Lock": "SCROLL_LOCK",
	"Print": "SYSRQ", "Pause": "BREAK",
	"XF86AudioRaiseVolume": "VOLUME_UP", "XF86AudioLowerVolume": "VOLUME_DOWN", "XF86AudioMute": "VOLUME_MUTE",
	"Control_L": "CTRL_LEFT", "Control_R": "CTRL_RIGHT", "Shift_L": "SHIFT_LEFT", "Shift_R": "SHIFT_RIGHT",
	"Alt_L": "ALT_LEFT", "Alt_R": "ALT_RIGHT", "ISO_Level3_Shift": "ALT_RIGHT", "Super_L": "META_LEFT", "Super_R": "META_RIGHT", "Meta_L": "META_LEFT",
	// The phone's own keys, by keysym and by plain name.
	"XF86Back": "BACK", "Back": "BACK", "back": "BACK",
	// Home is the phone's Home, as Midscene and adb users name it (End
	// stays a text field's, MOVE_END, as in Midscene).
	"XF86HomePage": "HOME", "Home": "HOME", "home_screen": "HOME", "HomeScreen": "HOME",
	"XF86TaskPane": "APP_SWITCH", "app_switch": "APP_SWITCH", "AppSwitch": "APP_SWITCH", "recents": "APP_SWITCH",
	"XF86PowerOff": "POWER", "power": "POWER", "volume_up": "VOLUME_UP", "volume_down": "VOLUME_DOWN",
	"XF86Search": "SEARCH", "XF86Camera": "CAMERA",
}

var charKeys = map[rune]string{
	' ': "SPACE", ',': "COMMA", '.': "PERIOD", '-': "MINUS", '=': "EQUALS", '[': "LEFT_BRACKET", ']': "RIGHT_BRACKET",
	'\\': "BACKSLASH", ';': "SEMICOLON", '\'': "APOSTROPHE", '/': "SLASH", '`': "GRAVE", '@': "AT", '+': "PLUS",
	'*': "STAR", '#': "POUND",
}

// KeyCode returns the KEYCODE_ name of k, or "" with ok false when
// Android has no key for it (a printable character is then typed).
func KeyCode(k desktop.Key) (string, bool) {
	if c, ok := keycodes[k]; ok {
		return "KEYCODE_" + c, true
	}
	if s := string(k); strings.HasPrefix(s, "KEYCODE_") && strings.Trim(s[8:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" && len(s) > 8 {
		return s, true
	}
	if r, ok := k.Rune(); ok {
		switch {
		case r >= 'a' && r <= 'z':
			return "KEYCODE_" + strings.ToUpper(string(r)), true
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return "KEYCODE_" + string(r), true
		}
		if c, ok := charKeys[r]; ok {
			return "KEYCODE_" + c, true
		}
		return "", false
	}
	if len(k) >= 2 && k[0] == 'F' {
		var n int
		if _, err := fmt.Sscanf(string(k[1:]), "%d", &n); err == nil && n >= 1 && n <= 12 {
			return fmt.Sprintf("KEYCODE_F%d", n), true
		}
	}
	return "", false
}

// KeyDown holds k: nothing is sent until its release (the input tool
// presses a key and releases it in one command).
func (b *Backend) KeyDown(ctx context.Context, k desktop.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if _, ok := KeyCode(k); !ok {
		if r, isChar := k.Rune(); !isChar || r < 0x20 || r > 0x7e {
			return fmt.Errorf("android has no key for %q: use a key name (Return, BackSpace, Tab, Escape, Left, a-z, 0-9, XF86Back...)", k)
		}
	}
	b.held.Down(k)
	return nil
}

// KeyUp releases k: a key held alone is sent as `input keyevent`; one
// held with modifiers as `input keycombination` (Android 13+); a modifier
// that went with no other key is sent alone.
func (b *Backend) KeyUp(ctx context.Context, k desktop.Key) error {
	mods, usedAlready := b.held.Up(k)
	if k.IsModifier() && usedAlready {
		return nil
	}
	code, ok := KeyCode(k)
	if !ok { // a printable character Android has no key code for
		if len(mods) > 0 {
			return fmt.Errorf("android cannot press %s with %s: %q has no key code: %w", k, desktop.ComboString(mods), k, desktop.ErrUnsupported)
		}
		_, err := b.dev.Run(ctx, "input text "+shellQuote(inputTextEscape(string(k))))
		return err
	}
	if len(mods) == 0 || k.IsModifier() {
		_, err := b.dev.Run(ctx, "input keyevent "+code)
		return err
	}
	if b.sdk < 33 {
		return fmt.Errorf("android device %s runs Android %s (API %d): key combinations (%s+%s) need `input keycombination` (Android 13): %w",
			b.dev.Serial(), b.release, b.sdk, desktop.ComboString(mods), k.ShortName(), desktop.ErrUnsupported)
	}
	args := []string{"input keycombination"}
	for _, m := range mods {
		c, _ := KeyCode(m)
		args = append(args, c)
	}
	_, err := b.dev.Run(ctx, strings.Join(append(args, code), " "))
	return err
}

// shellQuote quotes s for the device's shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// inputTextEscape writes s for `input text`, which reads %s as a space:
// spaces become %s. (A "%s" of s itself must be split first: see
// textCommands.)
func inputTextEscape(s string) string { return strings.ReplaceAll(s, " ", "%s") }

// isTypable reports whether `input text` can type r (ASCII printable).
func isTypable(r rune) bool { return r >= 0x20 && r <= 0x7e }

// textCommands is the shell line that types ASCII text with the input
// tool: a command per piece, a piece never holding "%s" (split between the
// % and the s), newlines and tabs as key events.
func textCommands(text string) string {
	var cmds []string
	var piece strings.Builder
	flush := func() {
		if piece.Len() > 0 {
			cmds = append(cmds, "input text "+shellQuote(inputTextEscape(piece.String())))
			piece.Reset()
		}
	}
	prev := rune(0)
	for _, r := range text {
		switch {
		case r == '\n':
			flush()
			cmds = append(cmds, "input keyevent KEYCODE_ENTER")
		case r == '\t':
			flush()
			cmds = append(cmds, "input keyevent KEYCODE_TAB")
		case r == 's' && prev == '%':
			flush()
			piece.WriteRune(r)
		default:
			piece.WriteRune(r)
		}
		prev = r
	}
	flush()
	return strings.Join(cmds, " && ")
}

// ErrNoUnicodeKeyboard is wrapped by the refusal to type text the input
// tool cannot type on a phone without ADBKeyboard.
var ErrNoUnicodeKeyboard = fmt.Errorf("no Unicode keyboard: %w", desktop.ErrUnsupported)

// TypeText types text into the focused field: ASCII with `input text`;
// anything else through ADBKeyboard (switched to for the text, the user's
// input method restored after). Without ADBKeyboard, text outside ASCII
// is refused before anything is typed.
func (b *Backend) TypeText(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	ascii := true
	for _, r := range text {
		if !isTypable(r) && r != '\n' && r != '\t' {
			ascii = false
			break
		}
	}
	if ascii {
		_, err := b.dev.Run(ctx, textCommands(text))
		return err
	}
	if err := b.checkUnicode(ctx, text); err != nil {
		return err
	}
	return b.typeIME(ctx, text)
}

// checkUnicode returns the refusal when the phone has no ADBKeyboard
// (asked again, as it may have been installed since).
func (b *Backend) checkUnicode(ctx context.Context, text string) error {
	if b.hasUnicode() {
		return nil
	}
	out, err := b.dev.Run(ctx, "ime list -a -s")
	if err != nil {
		return err
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == AdbIME {
			b.mu.Lock()
			b.unicode = true
			b.mu.Unlock()
			return nil
		}
	}
	var bad rune
	for _, r := range text {
		if !isTypable(r) && r != '\n' && r != '\t' {
			bad = r
			break
		}
	}
	return fmt.Errorf("android device %s cannot type %q (U+%04X): Android's input tool types ASCII only; install ADBKeyboard (https://github.com/senzhk/ADBKeyBoard: `adb install ADBKeyboard.apk`) and guiagent types any text through it; nothing was typed: %w",
		b.dev.Serial(), string(bad), bad, ErrNoUnicodeKeyboard)
}

// typeIME types text through ADBKeyboard's ADB_INPUT_B64 broadcast.
func (b *Backend) typeIME(ctx context.Context, text string) error {
	out, err := b.dev.Run(ctx, "settings get secure default_input_method")
	if err != nil {
		return err
	}
	user := strings.TrimSpace(out)
	if user != AdbIME {
		if _, err := b.dev.Run(ctx, "ime enable "+AdbIME+" >/dev/null; ime set "+AdbIME); err != nil {
			return fmt.Errorf("switching to ADBKeyboard: %w", err)
		}
		defer func() {
			if user == "" || user == "null" {
				return
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, err := b.dev.Run(rctx, "ime set "+shellQuote(user)); err != nil {
				b.log.Warn("android: restoring the input method failed", "ime", user, "err", err)
			}
		}()
		settle := b.opts.IMESettle
		if settle == 0 {
			settle = 500 * time.Millisecond
		}
		if settle > 0 {
			t := time.NewTimer(settle)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	out, err = b.dev.Run(ctx, "am broadcast -a ADB_INPUT_B64 --es msg "+base64.StdEncoding.EncodeToString([]byte(text)))
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Broadcast completed") {
		return fmt.Errorf("android device %s: ADBKeyboard's broadcast did not complete: %q", b.dev.Serial(), strings.TrimSpace(out))
	}
	return nil
}
