package harmonytest

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Main is the fake hdc program: it answers args (hdc's command line) from
// the phone whose state is beside the program, and returns the exit code.
func Main(args []string, out io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(out, "[Fail]", err)
		return 1
	}
	dir := filepath.Dir(exe)
	code := 0
	err = WithState(dir, func(s *State) error {
		code = hdc(dir, s, args, out)
		return nil
	})
	if err != nil {
		fmt.Fprintln(out, "[Fail]", err)
		return 1
	}
	return code
}

func hdc(dir string, s *State, args []string, out io.Writer) int {
	if len(args) >= 2 && args[0] == "list" && args[1] == "targets" {
		if len(s.Keys) == 0 {
			fmt.Fprintln(out, "[Empty]")
		}
		for _, k := range s.Keys {
			fmt.Fprintln(out, k)
		}
		return 0
	}
	key := ""
	if len(args) >= 2 && args[0] == "-t" {
		key, args = args[1], args[2:]
	}
	known := false
	for _, k := range s.Keys {
		known = known || k == key || (key == "" && len(s.Keys) == 1)
	}
	if !known {
		fmt.Fprintln(out, "[Fail]Device not found or connected")
		return 0
	}
	switch {
	case len(args) >= 2 && args[0] == "shell":
		line := strings.Join(args[1:], " ")
		s.Commands = append(s.Commands, line)
		for _, cmd := range splitCommands(line) {
			device(dir, s, words(cmd), out)
		}
	case len(args) == 4 && args[0] == "file" && args[1] == "recv":
		data, err := os.ReadFile(devicePath(dir, args[2]))
		if err != nil {
			fmt.Fprintf(out, "[Fail]Error opening file: no such file or directory, path:%s\n", args[2])
			return 0
		}
		if err := os.WriteFile(args[3], data, 0o644); err != nil {
			fmt.Fprintf(out, "[Fail]%v\n", err)
			return 0
		}
		fmt.Fprintf(out, "FileTransfer finish, Size:%d, File count = 1, time:3ms rate:%.2fkB/s\n", len(data), float64(len(data))/3)
	default:
		fmt.Fprintf(out, "[Fail]Unknown command: %s\n", strings.Join(args, " "))
	}
	return 0
}

func devicePath(dir, p string) string {
	return filepath.Join(dir, "device", strings.ReplaceAll(strings.TrimPrefix(p, "/"), "/", "_"))
}

// splitCommands splits a shell line at ; and && outside quotes.
func splitCommands(line string) []string {
	var out []string
	var cur strings.Builder
	var q rune
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
			cur.WriteRune(r)
		case r == '\\' && i+1 < len(rs):
			cur.WriteRune(r)
			i++
			cur.WriteRune(rs[i])
		case r == '\'' || r == '"':
			q = r
			cur.WriteRune(r)
		case r == ';':
			out, cur = append(out, cur.String()), strings.Builder{}
		case r == '&' && i+1 < len(rs) && rs[i+1] == '&':
			out, cur = append(out, cur.String()), strings.Builder{}
			i++
		default:
			cur.WriteRune(r)
		}
	}
	return append(out, cur.String())
}

// words splits a command into words as sh does: single quotes literal,
// double quotes with backslash escapes, backslash outside quotes.
func words(cmd string) []string {
	var out []string
	var cur strings.Builder
	in := false
	rs := []rune(cmd)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			in = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				cur.WriteRune(rs[i])
			}
		case r == '"':
			in = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					i++
				}
				cur.WriteRune(rs[i])
			}
		case r == '\\' && i+1 < len(rs):
			i++
			in = true
			cur.WriteRune(rs[i])
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out, cur, in = append(out, cur.String()), strings.Builder{}, false
			}
		default:
			in = true
			cur.WriteRune(r)
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

func (s *State) size() (int, int) {
	if s.Rotation%2 == 1 {
		return s.H, s.W
	}
	return s.W, s.H
}

var gray = color.RGBA{R: 128, G: 128, B: 128, A: 255}

// Screen renders the screen as it is now (gray, the fills on top).
func (s *State) Screen() *image.RGBA {
	w, h := s.size()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Rect, &image.Uniform{gray}, image.Point{}, draw.Src)
	for _, f := range s.Fills {
		draw.Draw(img, f.R, &image.Uniform{f.C}, image.Point{}, draw.Src)
	}
	return img
}

const uiInputUsage = "USAGE : \n" +
	"help                                                                                  print uiInput usage\n"

// device runs one command on the phone.
func device(dir string, s *State, w []string, out io.Writer) {
	if len(w) == 0 {
		return
	}
	switch w[0] {
	case "param":
		if len(w) == 3 && w[1] == "get" {
			fmt.Fprintln(out, map[string]string{"const.product.model": "ALN-AL00", "const.product.software.version": "ALN-AL00 5.0.0.102(SP8C00E73R4P5)",
				"const.ohos.apiversion": "12"}[w[2]])
		}
	case "snapshot_display":
		snapshot(dir, s, w[1:], out)
	case "uitest":
		uitest(dir, s, w[1:], out)
	case "cat":
		for _, p := range w[1:] {
			data, err := os.ReadFile(devicePath(dir, p))
			if err != nil {
				fmt.Fprintf(out, "cat: %s: No such file or directory\n", p)
				continue
			}
			out.Write(data)
		}
	case "bm":
		bm(s, w[1:], out)
	case "aa":
		aa(s, w[1:], out)
	default:
		fmt.Fprintf(out, "/bin/sh: %s: inaccessible or not found\n", w[0])
	}
}

func snapshot(dir string, s *State, args []string, out io.Writer) {
	file := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-f" {
			file = args[i+1]
		}
	}
	if !s.DeveloperMode {
		fmt.Fprintln(out, "current mode is not developer mode, just return.")
		return
	}
	if !strings.HasSuffix(file, ".jpeg") {
		fmt.Fprintf(out, "error: fileName %s invalid, suffix must be .jpeg\nerror: filename %s invalid!\n", file, file)
		return
	}
	if !strings.HasPrefix(file, "/data/local/tmp/") {
		fmt.Fprintf(out, "error: fileName %s invalid, realpath %s must dump at dir: /data/local/tmp\nerror: filename %s invalid!\n", file, filepath.Dir(file), file)
		return
	}
	img := s.Screen()
	w, h := s.size()
	fmt.Fprintf(out, "process: display 0: width %d, height %d\n", w, h)
	_ = os.MkdirAll(filepath.Join(dir, "device"), 0o755)
	f, err := os.Create(devicePath(dir, file))
	if err == nil {
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 75})
		f.Close()
	}
	if err != nil {
		fmt.Fprintf(out, "\nerror: snapshot display 0, write to %s as jpeg failed!\n", file)
		return
	}
	fmt.Fprintf(out, "snapshot: pixel format is: 3\nsnapshot: convert rgba8888 to rgb888 successfully.\n\nsuccess: snapshot display 0 , write to %s as jpeg, width %d, height %d\n", file, w, h)
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func uitest(dir string, s *State, args []string, out io.Writer) {
	if len(args) == 0 {
		return
	}
	switch args[0] {
	case "dumpLayout":
		path := "/data/local/tmp/layout_1717401234567890.json"
		for i := 1; i+1 < len(args); i++ {
			if args[i] == "-p" {
				path = args[i+1]
			}
		}
		_ = os.MkdirAll(filepath.Join(dir, "device"), 0o755)
		data, _ := json.Marshal(s.layout())
		if err := os.WriteFile(devicePath(dir, path), data, 0o666); err != nil {
			fmt.Fprintf(out, "DumpLayout failed:Error path:%s%v\n", path, err)
			return
		}
		fmt.Fprintln(out, "DumpLayout saved to:"+path)
	case "uiInput":
		uiInput(s, args[1:], out)
	default:
		fmt.Fprintln(out, "Illegal argument: "+args[0])
	}
}

// point parses uiInput's coordinates as ui_input.cpp GetPoint does.
func point(a []string, out io.Writer) (int, int, bool) {
	x, y := atoi(a[0]), atoi(a[1])
	if x <= 0 || y <= 0 {
		fmt.Fprint(out, "Please confirm that the coordinate values are correct. \n\n")
		fmt.Fprint(out, uiInputUsage+"\n")
		return 0, 0, false
	}
	return x, y, true
}

// uiInput is `uitest uiInput OP ...`: it records the operation's events,
// acts on the state, and prints what ui_input.cpp prints ("No Error" once
// the operation is done).
func uiInput(s *State, a []string, out io.Writer) {
	if len(a) < 1 {
		fmt.Fprint(out, "Missing parameter. \n\n")
		return
	}
	var ok bool
	switch a[0] {
	case "click", "doubleClick", "longClick":
		ok = uiClick(s, a, out)
	case "swipe", "drag":
		ok = uiSwipe(s, a, out)
	case "keyEvent":
		ok = uiKeyEvent(s, a, out)
	case "text":
		ok = uiText(s, a, out)
	case "inputText":
		ok = uiInputText(s, a, out)
	default:
		fmt.Fprint(out, "Invalid parameters. \n\n")
		fmt.Fprint(out, uiInputUsage+"\n")
		return
	}
	if ok {
		fmt.Fprintln(out, "No Error")
	}
}

// uiClick is `uiInput click|doubleClick|longClick X Y`: a click taps once,
// a double click twice, a long click not at all. It reports whether the
// arguments were valid.
func uiClick(s *State, a []string, out io.Writer) bool {
	op := a[0]
	if len(a) != 3 && len(a) != 4 {
		fmt.Fprint(out, "The number of parameters is incorrect. \n\n")
		return false
	}
	x, y, ok := point(a[1:], out)
	if !ok {
		return false
	}
	s.Events = append(s.Events, Event{Kind: op, X: x, Y: y})
	switch op {
	case "click":
		s.tap(x, y)
	case "doubleClick":
		s.tap(x, y)
		s.tap(x, y)
	}
	return true
}

// uiSwipe is `uiInput swipe|drag X1 Y1 X2 Y2 [VELOCITY]`: VELOCITY out of
// 200..40000 (or none) is 600. It reports whether the arguments were valid.
func uiSwipe(s *State, a []string, out io.Writer) bool {
	if len(a) < 5 {
		fmt.Fprint(out, "Missing parameter. \n\n")
		return false
	}
	x, y, ok := point(a[1:], out)
	if !ok {
		return false
	}
	x2, y2, ok := point(a[3:], out)
	if !ok {
		return false
	}
	v := 600
	if len(a) >= 6 {
		v = atoi(a[5])
	}
	if v < 200 || v > 40000 {
		fmt.Fprint(out, "The swipe velocity out of range, the default value will be used. \n\n")
		v = 600
	}
	s.Events = append(s.Events, Event{Kind: a[0], X: x, Y: y, X2: x2, Y2: y2, Velocity: v})
	return true
}

// uiKeyEvent is `uiInput keyEvent Back|Home|Power` or `uiInput keyEvent
// CODE [CODE [CODE]]` (a combination: all down in order, then all up). It
// reports whether the arguments were valid.
func uiKeyEvent(s *State, a []string, out io.Writer) bool {
	if len(a) < 2 {
		fmt.Fprint(out, "Missing parameter. \n\n")
		return false
	}
	switch a[1] {
	case "Back", "Home", "Power":
		s.Events = append(s.Events, Event{Kind: "key_down", KeyByName: a[1]}, Event{Kind: "key_up", KeyByName: a[1]})
		if a[1] == "Home" {
			s.Front = "com.ohos.sceneboard"
		}
		return true
	}
	codes := []int{}
	for _, c := range a[1:min(len(a), 4)] {
		codes = append(codes, atoi(c))
	}
	if codes[0] == 0 {
		fmt.Fprint(out, "Invalid parameters. \n\n")
		return false
	}
	// CombinedKeys: all down in order, then all up in the same order.
	for _, c := range codes {
		s.Events = append(s.Events, Event{Kind: "key_down", Key: c})
	}
	for _, c := range codes {
		s.Events = append(s.Events, Event{Kind: "key_up", Key: c})
	}
	if len(codes) == 1 {
		s.key(codes[0])
	}
	return true
}

// uiText is `uiInput text TEXT`: TEXT typed into the focused field (an
// unknown operation on devices configured without it, NoText). It reports
// whether the arguments were valid.
func uiText(s *State, a []string, out io.Writer) bool {
	if s.NoText {
		fmt.Fprint(out, "Invalid parameters. \n\n")
		fmt.Fprint(out, uiInputUsage+"\n")
		return false
	}
	if len(a) != 2 && len(a) != 3 {
		fmt.Fprint(out, "The number of parameters is incorrect. \n\n")
		return false
	}
	s.typeText(a[1])
	return true
}

// uiInputText is `uiInput inputText X Y TEXT`: a click at X,Y, then TEXT
// typed. It reports whether the arguments were valid.
func uiInputText(s *State, a []string, out io.Writer) bool {
	if len(a) != 4 && len(a) != 5 {
		fmt.Fprint(out, "The number of parameters is incorrect. \n\n")
		return false
	}
	x, y, ok := point(a[1:], out)
	if !ok {
		return false
	}
	s.Events = append(s.Events, Event{Kind: "click", X: x, Y: y})
	s.tap(x, y)
	s.typeText(a[3])
	return true
}

func (s *State) typeText(t string) {
	if s.Focused {
		s.Field += t
	}
}

func (s *State) key(code int) {
	if !s.Focused {
		return
	}
	switch {
	case code == 2055: // KEYCODE_DEL
		if s.Field != "" {
			_, n := utf8.DecodeLastRuneInString(s.Field)
			s.Field = s.Field[:len(s.Field)-n]
		}
	case code >= 2017 && code <= 2042:
		s.Field += string(rune('a' + code - 2017))
	case code >= 2000 && code <= 2009:
		s.Field += string(rune('0' + code - 2000))
	case code == 2050:
		s.Field += " "
	}
}

func (s *State) tap(x, y int) {
	if s.Rotation%2 == 1 || s.Front != Bundle {
		return
	}
	p := image.Pt(x, y)
	switch {
	case p.In(ButtonRect):
		s.Counter++
	case p.In(FieldRect):
		s.Focused = true
	case p.In(ToggleRect):
		s.Toggle = !s.Toggle
	default:
		s.Focused = false
	}
}

// attrNames are core/ui_model.h's ATTR_NAMES up to hierarchy, which
// WrapperWidgetToJson writes for every widget.
var attrNames = []string{"accessibilityId", "id", "text", "key", "description", "type", "bounds", "enabled", "focused",
	"selected", "clickable", "longClickable", "scrollable", "checkable", "checked", "hostWindowId", "displayId",
	"origBounds", "zIndex", "opacity", "backgroundColor", "backgroundImage", "blur", "hitTestBehavior", "clip",
	"originalText", "hierarchy"}

type lnode struct {
	Attributes map[string]string `json:"attributes"`
	Children   []*lnode          `json:"children"`
}

func bounds(r image.Rectangle) string {
	return fmt.Sprintf("[%d,%d][%d,%d]", r.Min.X, r.Min.Y, r.Max.X, r.Max.Y)
}

func tf(b bool) string { return strconv.FormatBool(b) }

var nextID = 0

func widget(typ string, r image.Rectangle, hier, win string, a map[string]string, kids ...*lnode) *lnode {
	nextID++
	at := map[string]string{}
	for _, n := range attrNames {
		at[n] = ""
	}
	for k, v := range map[string]string{"accessibilityId": strconv.Itoa(nextID), "type": typ, "bounds": bounds(r), "origBounds": bounds(r),
		"enabled": "true", "focused": "false", "selected": "false", "clickable": "false", "longClickable": "false",
		"scrollable": "false", "checkable": "false", "checked": "false", "hostWindowId": win, "displayId": "0",
		"zIndex": "0", "opacity": "1.000000", "hitTestBehavior": "Default", "clip": "false", "hierarchy": hier,
		"visible": "true", "hashcode": fmt.Sprintf("%x", 0x4a1f00+nextID), "hint": ""} {
		at[k] = v
	}
	for k, v := range a {
		at[k] = v
	}
	if at["originalText"] == "" {
		at["originalText"] = at["text"]
	}
	if kids == nil {
		kids = []*lnode{}
	}
	return &lnode{Attributes: at, Children: kids}
}

// layout is the dump of the screen now: the status bar's window and the
// app's, under a merged root.
func (s *State) layout() *lnode {
	nextID = 0
	w, h := s.size()
	screen := image.Rect(0, 0, w, h)
	bar := widget("root", image.Rect(0, 0, w, 40), "ROOT", "2", nil,
		widget("Text", image.Rect(20, 5, 120, 35), "ROOT,0", "2", map[string]string{"text": "09:41"}))
	bar.Attributes["bundleName"], bar.Attributes["abilityName"], bar.Attributes["pagePath"] = "com.ohos.systemui", "", ""
	var app *lnode
	if s.Front == Bundle && s.Rotation%2 == 0 {
		app = widget("root", screen, "ROOT", "7", nil,
			widget("Column", image.Rect(0, 40, w, h), "ROOT,0", "7", nil,
				widget("Text", image.Rect(40, 100, 400, 160), "ROOT,0,0", "7", map[string]string{"text": fmt.Sprintf("Count: %d", s.Counter)}),
				widget("TextInput", FieldRect, "ROOT,0,1", "7", map[string]string{"id": "name", "key": "name", "text": s.Field, "hint": "Your name",
					"focused": tf(s.Focused), "clickable": "true", "longClickable": "true"}),
				widget("Button", ButtonRect, "ROOT,0,2", "7", map[string]string{"id": "increment", "text": "Increment", "clickable": "true"}),
				widget("Toggle", ToggleRect, "ROOT,0,3", "7", map[string]string{"description": "Notifications", "checkable": "true",
					"checked": tf(s.Toggle), "clickable": "true"}),
				widget("Button", image.Rect(40, 600, 360, 680), "ROOT,0,4", "7", map[string]string{"text": "Hidden", "visible": "false"}),
				widget("Button", image.Rect(400, 600, 680, 680), "ROOT,0,5", "7", map[string]string{"text": "Disabled", "enabled": "false"}),
			))
		app.Attributes["bundleName"], app.Attributes["abilityName"], app.Attributes["pagePath"] = Bundle, "EntryAbility", "pages/Index"
	} else {
		app = widget("root", screen, "ROOT", "5", nil,
			widget("Text", image.Rect(40, 200, 300, 260), "ROOT,0", "5", map[string]string{"text": "Counter", "clickable": "true"}))
		app.Attributes["bundleName"], app.Attributes["abilityName"], app.Attributes["pagePath"] = "com.ohos.sceneboard", "", ""
	}
	root := map[string]string{}
	for _, n := range attrNames[:len(attrNames)-1] {
		root[n] = ""
	}
	root["bounds"] = bounds(screen)
	return &lnode{Attributes: root, Children: []*lnode{app, bar}}
}

func bm(s *State, a []string, out io.Writer) {
	if len(a) >= 2 && a[0] == "dump" && a[1] == "-a" {
		var names []string
		for _, app := range s.Apps {
			names = append(names, app.Bundle)
		}
		sort.Strings(names)
		fmt.Fprintln(out, "ID: 100:")
		for _, n := range names {
			fmt.Fprintln(out, "\t"+n)
		}
		return
	}
	if len(a) >= 3 && a[0] == "dump" && a[1] == "-n" {
		for _, app := range s.Apps {
			if app.Bundle == a[2] {
				info := map[string]any{"name": app.Bundle, "mainEntry": app.Module, "entryModuleName": app.Module,
					"applicationInfo": map[string]any{"bundleName": app.Bundle, "isSystemApp": false},
					"hapModuleInfos": []any{map[string]any{"moduleName": app.Module, "mainAbility": app.MainAbility,
						"abilityInfos": []any{map[string]any{"name": app.MainAbility, "moduleName": app.Module}}}}}
				data, _ := json.MarshalIndent(info, "", "    ")
				fmt.Fprintf(out, "%s:\n%s\n", app.Bundle, data)
				return
			}
		}
		fmt.Fprintf(out, "error: failed to get information and the parameters may be wrong.\n")
	}
}

func aa(s *State, a []string, out io.Writer) {
	if len(a) == 0 {
		return
	}
	switch a[0] {
	case "start":
		var ability, bundle, action, uri string
		for i := 1; i+1 < len(a); i++ {
			switch a[i] {
			case "-a":
				ability = a[i+1]
			case "-b":
				bundle = a[i+1]
			case "-A":
				action = a[i+1]
			case "-U":
				uri = a[i+1]
			}
		}
		if action != "" && uri != "" {
			s.Front = "com.huawei.hmos.browser"
			s.Running[s.Front] = true
			fmt.Fprintln(out, "start ability successfully.")
			return
		}
		for _, app := range s.Apps {
			if app.Bundle == bundle && app.MainAbility == ability {
				s.Front, s.Running[bundle] = bundle, true
				fmt.Fprintln(out, "start ability successfully.")
				return
			}
		}
		fmt.Fprintln(out, "error: failed to start ability.")
	case "force-stop":
		if len(a) < 2 {
			return
		}
		for _, app := range s.Apps {
			if app.Bundle == a[1] {
				delete(s.Running, a[1])
				if s.Front == a[1] {
					s.Front = "com.ohos.sceneboard"
				}
				fmt.Fprintln(out, "force stop process successfully.")
				return
			}
		}
		fmt.Fprintln(out, "error: failed to force stop process.")
	}
}
