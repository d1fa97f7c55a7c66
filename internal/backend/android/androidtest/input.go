package androidtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// keycodes maps KEYCODE_ names (without the prefix) to their numbers, for
// the keys the fake knows (android.view.KeyEvent).
var keycodes = map[string]int{
	"HOME": 3, "BACK": 4, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22,
	"VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "COMMA": 55, "PERIOD": 56,
	"ALT_LEFT": 57, "ALT_RIGHT": 58, "SHIFT_LEFT": 59, "SHIFT_RIGHT": 60, "TAB": 61, "SPACE": 62,
	"ENTER": 66, "DEL": 67, "GRAVE": 68, "MINUS": 69, "EQUALS": 70, "LEFT_BRACKET": 71, "RIGHT_BRACKET": 72,
	"BACKSLASH": 73, "SEMICOLON": 74, "APOSTROPHE": 75, "SLASH": 76, "AT": 77, "PLUS": 81, "MENU": 82,
	"PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111, "FORWARD_DEL": 112, "CTRL_LEFT": 113, "CTRL_RIGHT": 114,
	"META_LEFT": 117, "META_RIGHT": 118, "MOVE_HOME": 122, "MOVE_END": 123, "INSERT": 124,
	"VOLUME_MUTE": 164, "APP_SWITCH": 187, "STAR": 17, "POUND": 18,
}

func init() {
	for i := 0; i < 10; i++ {
		keycodes[strconv.Itoa(i)] = 7 + i
	}
	for c := 'A'; c <= 'Z'; c++ {
		keycodes[string(c)] = 29 + int(c-'A')
	}
	for i := 1; i <= 12; i++ {
		keycodes["F"+strconv.Itoa(i)] = 130 + i
	}
}

// keyName turns an argument of input keyevent (a number, KEYCODE_X or X)
// into the KEYCODE_ name, as KeyEvent.keyCodeFromString does.
func keyName(a string) (string, bool) {
	s := strings.TrimPrefix(strings.ToUpper(a), "KEYCODE_")
	if n, err := strconv.Atoi(a); err == nil {
		for k, v := range keycodes {
			if v == n {
				return "KEYCODE_" + k, true
			}
		}
		return "KEYCODE_UNKNOWN", false
	}
	if _, ok := keycodes[s]; ok {
		return "KEYCODE_" + s, true
	}
	return "KEYCODE_UNKNOWN", false
}

// exception prints what the input tool prints for an exception.
func exception(errw writer, cmd string, e string) int {
	fmt.Fprintf(errw, "Exception occurred while executing '%s':\n%s\n\tat com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:329)\n", cmd, e)
	return 255
}

// input is the device's input tool: tap, swipe, draganddrop, motionevent,
// text, keyevent and keycombination, with what the tool prints on errors.
func (p *Phone) input(args []string, out, errw writer) int {
	args = skipInputTarget(args)
	if len(args) == 0 {
		fmt.Fprintln(errw, "Error: Unknown command: ")
		return 1
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "tap":
		return p.inputTap(rest, errw)
	case "swipe", "draganddrop":
		return p.inputSwipe(cmd, rest, errw)
	case "motionevent":
		return p.inputMotionEvent(rest, errw)
	case "text":
		if len(rest) < 1 {
			return exception(errw, cmd, "java.lang.IllegalArgumentException: Argument expected after \"text\"")
		}
		return p.text(rest[0], errw)
	case "keyevent":
		return p.inputKeyEvent(rest, errw)
	case "keycombination":
		return p.inputKeyCombination(rest, errw)
	}
	fmt.Fprintf(errw, "Error: Unknown command: %s\n", cmd)
	return 1
}

// skipInputTarget drops input's optional leading [<source>] [-d DISPLAY_ID]
// arguments, which the fake ignores, leaving <command> ...
func skipInputTarget(args []string) []string {
	if len(args) > 0 {
		switch args[0] {
		case "touchscreen", "keyboard", "mouse", "touchpad", "stylus", "dpad", "gamepad", "trackball", "joystick", "touchnavigation", "rotaryencoder", "keyboard_touchpad":
			args = args[1:]
		}
	}
	if len(args) > 1 && args[0] == "-d" {
		args = args[2:]
	}
	return args
}

// inputNums parses every argument of rest as a number (truncated to an
// int), failing when there are fewer than n arguments or one is not a
// number.
func inputNums(rest []string, n int) ([]int, bool) {
	if len(rest) < n {
		return nil, false
	}
	v := make([]int, len(rest))
	for i, a := range rest {
		f, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return nil, false
		}
		v[i] = int(f)
	}
	return v, true
}

// inputTap is `input tap X Y`: a touch down and up at X,Y.
func (p *Phone) inputTap(rest []string, errw writer) int {
	v, ok := inputNums(rest, 2)
	if !ok {
		return exception(errw, "tap", "java.lang.IllegalArgumentException: Error: Invalid arguments for command: tap")
	}
	p.touch("down", v[0], v[1])
	p.touch("up", v[0], v[1])
	return 0
}

// inputSwipe is `input swipe|draganddrop X1 Y1 X2 Y2 [DURATION_MS]`
// (300 ms when no or a negative duration is given).
func (p *Phone) inputSwipe(cmd string, rest []string, errw writer) int {
	v, ok := inputNums(rest, 4)
	if !ok {
		return exception(errw, cmd, "java.lang.IllegalArgumentException: Error: Invalid arguments for command: "+cmd)
	}
	dur := 300
	if len(v) > 4 && v[4] >= 0 {
		dur = v[4]
	}
	p.swipe(v[0], v[1], v[2], v[3], time.Duration(dur)*time.Millisecond)
	return 0
}

// inputMotionEvent is `input motionevent DOWN|MOVE|UP X Y`, unknown to
// the tool on phones configured without it (noMotion).
func (p *Phone) inputMotionEvent(rest []string, errw writer) int {
	const cmd = "motionevent"
	p.mu.Lock()
	no := p.noMotion
	p.mu.Unlock()
	if no {
		fmt.Fprintf(errw, "Error: Unknown command: %s\n", cmd)
		return 1
	}
	if len(rest) < 1 {
		return exception(errw, cmd, "java.lang.IllegalArgumentException: Argument expected after \"motionevent\"")
	}
	action := strings.ToUpper(rest[0])
	v, ok := inputNums(rest[1:], 2)
	if !ok {
		return exception(errw, cmd, "java.lang.IllegalArgumentException: Error: Invalid arguments for command: motionevent")
	}
	switch action {
	case "DOWN":
		p.touch("down", v[0], v[1])
	case "MOVE":
		p.touch("move", v[0], v[1])
	case "UP":
		p.touch("up", v[0], v[1])
	default:
		return exception(errw, cmd, "java.lang.IllegalArgumentException: Unknown action: "+action)
	}
	return 0
}

// inputKeyEvent is `input keyevent [--FLAG...] KEY...`: each key pressed
// and released in turn (flags ignored; unknown keys are sent as
// KEYCODE_UNKNOWN).
func (p *Phone) inputKeyEvent(rest []string, errw writer) int {
	var keys []string
	for _, a := range rest {
		if strings.HasPrefix(a, "--") {
			continue
		}
		k, _ := keyName(a)
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return exception(errw, "keyevent", "java.lang.IllegalArgumentException: Argument expected after \"keyevent\"")
	}
	for _, k := range keys {
		p.key(k, true)
		p.key(k, false)
	}
	return 0
}

// inputKeyCombination is `input keycombination [-t DURATION] KEY KEY...`,
// which the tool knows from SDK 33 on.
func (p *Phone) inputKeyCombination(rest []string, errw writer) int {
	const cmd = "keycombination"
	p.mu.Lock()
	sdk := p.c.SDK
	p.mu.Unlock()
	if sdk < 33 {
		fmt.Fprintf(errw, "Error: Unknown command: %s\n", cmd)
		return 1
	}
	if len(rest) > 1 && rest[0] == "-t" {
		rest = rest[2:]
	}
	var keys []string
	for _, a := range rest {
		k, ok := keyName(a)
		if !ok {
			return exception(errw, cmd, "java.lang.IllegalArgumentException: Unknown keycode: "+a)
		}
		keys = append(keys, k)
	}
	if len(keys) < 2 {
		return exception(errw, cmd, "java.lang.IllegalArgumentException: keycombination requires at least 2 keycodes")
	}
	// InputShellCommand.sendKeyCombination: every key down in order,
	// then every key up in the same order.
	for _, k := range keys {
		p.key(k, true)
	}
	for _, k := range keys {
		p.key(k, false)
	}
	return 0
}

// text is `input text`: %s is a space; the virtual keyboard's key
// character map has no keys for characters outside ASCII, and the tool
// then fails before injecting anything.
func (p *Phone) text(s string, errw writer) int {
	b := []byte(s)
	var buf []byte
	esc := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if esc {
			esc = false
			if c == 's' {
				buf[len(buf)-1] = ' '
				continue
			}
		}
		buf = append(buf, c)
		if c == '%' {
			esc = true
		}
	}
	for _, r := range string(buf) {
		if r > 0x7e || (r < 0x20 && r != '\n' && r != '\t') {
			return exception(errw, "text", "java.lang.NullPointerException: Attempt to get length of null array")
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, Event{Kind: "text", Text: string(buf)})
	p.insert(string(buf))
	return 0
}

// commit is an input method committing text (ADBKeyboard). Caller holds mu.
func (p *Phone) commit(s string) {
	p.events = append(p.events, Event{Kind: "text", Text: s})
	p.insert(s)
}

// insert puts s at the focused field's cursor, replacing the selection. Caller holds mu.
func (p *Phone) insert(s string) {
	f := p.fields[p.focus]
	if f == nil {
		return
	}
	f.deleteSelection()
	r := []rune(s)
	f.text = append(f.text[:f.cursor], append(r, f.text[f.cursor:]...)...)
	f.cursor += len(r)
}

func (f *field) deleteSelection() bool {
	if f.anchor < 0 || f.anchor == f.cursor {
		f.anchor = -1
		return false
	}
	a, b := min(f.anchor, f.cursor), max(f.anchor, f.cursor)
	f.text = append(f.text[:a], f.text[b:]...)
	f.cursor, f.anchor = a, -1
	return true
}

// key delivers a key event. Caller must not hold mu.
func (p *Phone) key(k string, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kind := "key_up"
	if down {
		kind = "key_down"
	}
	p.events = append(p.events, Event{Kind: kind, Key: k})
	name := strings.TrimPrefix(k, "KEYCODE_")
	mod := name == "CTRL_LEFT" || name == "CTRL_RIGHT" || name == "SHIFT_LEFT" || name == "SHIFT_RIGHT" || name == "ALT_LEFT" || name == "ALT_RIGHT" || name == "META_LEFT" || name == "META_RIGHT"
	if mod {
		if down {
			p.keysHeld = append(p.keysHeld, name)
		} else {
			for i, h := range p.keysHeld {
				if h == name {
					p.keysHeld = append(p.keysHeld[:i], p.keysHeld[i+1:]...)
					break
				}
			}
		}
		return
	}
	if !down {
		return
	}
	held := func(prefix string) bool {
		for _, h := range p.keysHeld {
			if strings.HasPrefix(h, prefix) {
				return true
			}
		}
		return false
	}
	switch name {
	case "HOME":
		p.fg, p.focus = LauncherApp, ""
		return
	case "BACK", "ESCAPE":
		if p.focus != "" {
			p.focus = ""
		} else if p.fg != LauncherApp {
			p.fg = LauncherApp
		}
		return
	}
	f := p.fields[p.focus]
	if f == nil {
		return
	}
	shift := held("SHIFT")
	move := func(to int) {
		if shift {
			if f.anchor < 0 {
				f.anchor = f.cursor
			}
		} else {
			f.anchor = -1
		}
		f.cursor = max(0, min(to, len(f.text)))
	}
	switch {
	case name == "A" && held("CTRL"):
		f.anchor, f.cursor = 0, len(f.text)
	case name == "DEL":
		if !f.deleteSelection() && f.cursor > 0 {
			f.text = append(f.text[:f.cursor-1], f.text[f.cursor:]...)
			f.cursor--
		}
	case name == "FORWARD_DEL":
		if !f.deleteSelection() && f.cursor < len(f.text) {
			f.text = append(f.text[:f.cursor], f.text[f.cursor+1:]...)
		}
	case name == "MOVE_HOME", name == "DPAD_UP", name == "PAGE_UP":
		move(0)
	case name == "MOVE_END", name == "DPAD_DOWN", name == "PAGE_DOWN":
		move(len(f.text))
	case name == "DPAD_LEFT":
		move(f.cursor - 1)
	case name == "DPAD_RIGHT":
		move(f.cursor + 1)
	case held("CTRL") || held("ALT") || held("META"):
		// shortcuts the field does not know
	case name == "SPACE":
		p.insert(" ")
	case len(name) == 1:
		c := name
		if !shift {
			c = strings.ToLower(c)
		}
		p.insert(c)
	}
}

// touch is one touch event at display pixel (x, y).
func (p *Phone) touch(kind string, x, y int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := Event{Kind: kind, X: x, Y: y}
	now := time.Now()
	switch kind {
	case "down":
		p.down, p.downAt = &ev, now
	case "up":
		if p.down != nil {
			ev.Held = now.Sub(p.downAt)
			if ev.Held < 500*time.Millisecond && abs(x-p.down.X) < 20 && abs(y-p.down.Y) < 20 {
				p.click(x, y)
			}
		}
		p.down = nil
	}
	p.events = append(p.events, ev)
}

// swipe is `input swipe`: down, moves along the line for the duration, up.
func (p *Phone) swipe(x1, y1, x2, y2 int, d time.Duration) {
	p.touch("down", x1, y1)
	start := time.Now()
	end := start.Add(d)
	for {
		now := time.Now()
		if !now.Before(end) {
			break
		}
		a := float64(now.Sub(start)) / float64(d)
		p.touch("move", x1+int(float64(x2-x1)*a), y1+int(float64(y2-y1)*a))
		time.Sleep(min(16*time.Millisecond, end.Sub(now)))
	}
	p.touch("up", x2, y2)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
