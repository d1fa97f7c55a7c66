package desktop

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key is a canonical key name: an X keysym-style name for named keys
// ("Control_L", "Return", "F5", "Page_Up") or a single character for printable
// keys ("a", "7", "-"). Letters are lower case. Backends map Keys to their own codes.
type Key string

// Canonical modifier keys.
const (
	Ctrl  Key = "Control_L"
	Shift Key = "Shift_L"
	Alt   Key = "Alt_L"
	Super Key = "Super_L"
)

// IsModifier reports whether k is a modifier key.
func (k Key) IsModifier() bool {
	switch k {
	case Ctrl, Shift, Alt, Super, "Control_R", "Shift_R", "Alt_R", "Super_R", "Meta_L", "ISO_Level3_Shift":
		return true
	}
	return false
}

// Rune returns the character of a single-character key.
func (k Key) Rune() (rune, bool) {
	r, n := utf8.DecodeRuneInString(string(k))
	if n == len(k) && n > 0 && r != utf8.RuneError {
		return r, true
	}
	return 0, false
}

// ShortName returns the short lower-case name used in policies and messages
// ("ctrl", "alt", "super", "shift", "return", "f4", "t").
func (k Key) ShortName() string {
	switch k {
	case Ctrl, "Control_R":
		return "ctrl"
	case Shift, "Shift_R":
		return "shift"
	case Alt, "Alt_R":
		return "alt"
	case Super, "Super_R", "Meta_L":
		return "super"
	}
	return strings.ToLower(string(k))
}

// named maps lower-case aliases to canonical names.
var named = map[string]Key{
	"ctrl": Ctrl, "control": Ctrl, "ctl": Ctrl, "control_l": Ctrl, "lctrl": Ctrl, "control_r": "Control_R", "rctrl": "Control_R",
	"shift": Shift, "shift_l": Shift, "lshift": Shift, "shift_r": "Shift_R", "rshift": "Shift_R",
	"alt": Alt, "alt_l": Alt, "option": Alt, "opt": Alt, "lalt": Alt, "alt_r": "Alt_R", "ralt": "Alt_R", "altgr": "ISO_Level3_Shift",
	"super": Super, "super_l": Super, "win": Super, "windows": Super, "cmd": Super, "command": Super, "meta": Super, "super_r": "Super_R",
	"return": "Return", "enter": "Return", "kp_enter": "KP_Enter",
	"tab": "Tab", "escape": "Escape", "esc": "Escape", "space": "space", "spacebar": "space",
	"backspace": "BackSpace", "back_space": "BackSpace", "delete": "Delete", "del": "Delete",
	"insert": "Insert", "ins": "Insert", "home": "Home", "end": "End",
	"page_up": "Page_Up", "pageup": "Page_Up", "pgup": "Page_Up", "prior": "Page_Up",
	"page_down": "Page_Down", "pagedown": "Page_Down", "pgdn": "Page_Down", "next": "Page_Down",
	"left": "Left", "right": "Right", "up": "Up", "down": "Down",
	"arrowleft": "Left", "arrowright": "Right", "arrowup": "Up", "arrowdown": "Down",
	"caps_lock": "Caps_Lock", "capslock": "Caps_Lock", "num_lock": "Num_Lock", "numlock": "Num_Lock",
	"print": "Print", "printscreen": "Print", "print_screen": "Print", "menu": "Menu", "pause": "Pause",
	"scroll_lock": "Scroll_Lock", "scrolllock": "Scroll_Lock",
	"plus": "+", "minus": "-", "equal": "=", "comma": ",", "period": ".", "slash": "/", "backslash": "\\",
	"semicolon": ";", "apostrophe": "'", "quote": "'", "grave": "`", "bracketleft": "[", "bracketright": "]",
	"asterisk": "*", "underscore": "_", "question": "?", "exclam": "!", "at": "@", "numbersign": "#",
	"dollar": "$", "percent": "%", "ampersand": "&", "parenleft": "(", "parenright": ")", "colon": ":", "less": "<", "greater": ">",
	"volumeup": "XF86AudioRaiseVolume", "volumedown": "XF86AudioLowerVolume", "volumemute": "XF86AudioMute",
	// A phone's keys (and the keyboards that have them).
	"volume_up": "XF86AudioRaiseVolume", "volume_down": "XF86AudioLowerVolume", "volume_mute": "XF86AudioMute",
	"back": "XF86Back", "home_screen": "XF86HomePage", "app_switch": "XF86TaskPane", "recents": "XF86TaskPane",
	"power": "XF86PowerOff", "search": "XF86Search", "camera": "XF86Camera",
}

// ParseKey turns one key name into its canonical Key. Names are xdotool-style and
// case-insensitive: "ctrl", "Return", "super", "F5", "page_down", "a", "+".
// A name holding a control character (U+0000-U+001F, U+007F-U+009F) is
// refused: backends would press such a character as a named key (U+0008 as
// BackSpace), a spelling the hotkey policy must never have to guess.
func ParseKey(name string) (Key, error) {
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("key name %q is not valid UTF-8", name)
	}
	if err := checkNoControl(name); err != nil {
		return "", err
	}
	s := strings.TrimSpace(name)
	if s == "" {
		return "", fmt.Errorf("empty key name: give a key such as Return, ctrl, a or F5")
	}
	if k, ok := named[strings.ToLower(s)]; ok {
		return k, nil
	}
	if utf8.RuneCountInString(s) == 1 {
		return Key(strings.ToLower(s)), nil
	}
	if l := strings.ToLower(s); l[0] == 'f' {
		if n, err := strconv.Atoi(l[1:]); err == nil && n >= 1 && n <= 24 {
			return Key("F" + strconv.Itoa(n)), nil
		}
	}
	for _, k := range named { // canonical names spelled exactly (e.g. "KP_Enter")
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown key %q: use names like Return, Tab, Escape, BackSpace, Delete, Home, End, Page_Up, Left, F1-F24, ctrl, shift, alt, super, or a single character", name)
}

// checkNoControl returns an error naming the first control character in name.
func checkNoControl(name string) error {
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("key name %q holds the control character U+%04X: name the key instead (BackSpace, Return, Tab, Escape, Delete)", name, r)
		}
	}
	return nil
}

// Validate returns an error when k cannot be pressed as named: it is empty,
// is not valid UTF-8, or holds a control character. Keys from ParseKey are valid.
func (k Key) Validate() error {
	if k == "" {
		return fmt.Errorf("empty key name: give a key such as Return, ctrl, a or F5")
	}
	if !utf8.ValidString(string(k)) {
		return fmt.Errorf("key name %q is not valid UTF-8", string(k))
	}
	return checkNoControl(string(k))
}

// ParseCombo parses "ctrl+shift+t" (or a single key) into keys in press order.
// "ctrl++" names the plus key.
func ParseCombo(combo string) ([]Key, error) {
	s := strings.TrimSpace(combo)
	if s == "" {
		return nil, fmt.Errorf("empty key combination: give keys like ctrl+c")
	}
	var parts []string
	if s == "+" {
		parts = []string{"+"}
	} else {
		parts = strings.Split(s, "+")
		if strings.HasSuffix(s, "++") {
			parts = append(parts[:len(parts)-2], "+")
		}
	}
	return ParseKeys(parts)
}

// ParseKeys parses a list of key names, as gui_hotkey receives them. An element
// may itself be a combination ("ctrl+c").
func ParseKeys(names []string) ([]Key, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no keys given: pass a list such as [\"ctrl\",\"c\"]")
	}
	var keys []Key
	for _, n := range names {
		if strings.Contains(n, "+") && strings.TrimSpace(n) != "+" {
			ks, err := ParseCombo(n)
			if err != nil {
				return nil, err
			}
			keys = append(keys, ks...)
			continue
		}
		k, err := ParseKey(n)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// ComboString renders keys as "ctrl+shift+t".
func ComboString(keys []Key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.ShortName()
	}
	return strings.Join(parts, "+")
}

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
func quote(s string) string { return strconv.Quote(s) }
