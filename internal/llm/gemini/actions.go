package gemini

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
)

// BrowserFunctions are the computer-use predefined functions that only make
// sense in a browser; a desktop session excludes them
// (excluded_predefined_functions).
var BrowserFunctions = []string{"open_web_browser", "navigate", "search", "go_back", "go_forward"}

// Function is one desktop predefined function: the action kinds it performs
// (what Config.Disabled names) and its mapping to raw actions on the 0-999 grid.
type Function struct {
	Kinds []action.Kind
	Map   func(args) ([]action.Raw, error)
}

// Functions are the desktop predefined functions of the computerUse tool.
var Functions = map[string]Function{
	"click_at":        {[]action.Kind{action.Click}, mapClick},
	"hover_at":        {[]action.Kind{action.Move}, mapHover},
	"type_text_at":    {[]action.Kind{action.Click, action.TypeText}, mapTypeAt},
	"key_combination": {[]action.Kind{action.KeyPress}, mapKeys},
	"scroll_at":       {[]action.Kind{action.Scroll}, mapScrollAt},
	"scroll_document": {[]action.Kind{action.Scroll}, mapScrollDocument},
	"drag_and_drop":   {[]action.Kind{action.Drag}, mapDrag},
	"wait_5_seconds":  {[]action.Kind{action.Wait}, func(args) ([]action.Raw, error) { return []action.Raw{{Kind: action.Wait, DurationMS: 5000}}, nil }},
}

// Excluded returns the predefined functions a desktop session excludes: the
// browser-only ones, and those performing a disabled action kind.
func Excluded(disabled []action.Kind) []string {
	out := append([]string(nil), BrowserFunctions...)
	for _, name := range FunctionNames() {
		for _, k := range Functions[name].Kinds {
			if slices.Contains(disabled, k) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// FunctionNames returns the desktop functions' names, sorted.
func FunctionNames() []string {
	var out []string
	for n := range Functions {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// args are a function call's arguments.
type args map[string]any

func (a args) num(name string) (float64, bool) {
	v, ok := a[name].(float64)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// xy reads the x and y of the grid point named by the prefix ("" or "destination_").
func (a args) xy(prefix string) ([]float64, error) {
	x, okx := a.num(prefix + "x")
	y, oky := a.num(prefix + "y")
	if !okx || !oky {
		return nil, fmt.Errorf("needs %sx and %sy on the 0-999 grid", prefix, prefix)
	}
	return []float64{x, y}, nil
}

// flag reads a boolean argument, def when absent.
func (a args) flag(name string, def bool) bool {
	if v, ok := a[name].(bool); ok {
		return v
	}
	return def
}

func (a args) str(name string) (string, bool) {
	v, ok := a[name].(string)
	return v, ok
}

func mapClick(a args) ([]action.Raw, error) {
	at, err := a.xy("")
	return []action.Raw{{Kind: action.Click, At: at, Button: "left", Clicks: 1}}, err
}

func mapHover(a args) ([]action.Raw, error) {
	at, err := a.xy("")
	return []action.Raw{{Kind: action.Move, At: at}}, err
}

// mapTypeAt clicks the field, clears it unless clear_before_typing is false
// (select all, delete), types, and presses Enter unless press_enter is false:
// the function's documented defaults.
func mapTypeAt(a args) ([]action.Raw, error) {
	at, err := a.xy("")
	if err != nil {
		return nil, err
	}
	text, ok := a.str("text")
	if !ok {
		return nil, fmt.Errorf("needs text")
	}
	out := []action.Raw{{Kind: action.Click, At: at, Button: "left", Clicks: 1}}
	if a.flag("clear_before_typing", true) {
		out = append(out, action.Raw{Kind: action.KeyPress, Keys: []string{"ctrl", "a"}}, action.Raw{Kind: action.KeyPress, Keys: []string{"Delete"}})
	}
	out = append(out, action.Raw{Kind: action.TypeText, Text: text})
	if a.flag("press_enter", true) {
		out = append(out, action.Raw{Kind: action.KeyPress, Keys: []string{"Return"}})
	}
	return out, nil
}

func mapKeys(a args) ([]action.Raw, error) {
	keys, ok := a.str("keys")
	if !ok || strings.TrimSpace(keys) == "" {
		return nil, fmt.Errorf("needs keys such as \"Control+S\"")
	}
	var parts []string
	for _, k := range strings.Split(keys, "+") {
		if k = strings.TrimSpace(k); k != "" {
			parts = append(parts, k)
		}
	}
	if strings.HasSuffix(strings.TrimSpace(keys), "++") || keys == "+" {
		parts = append(parts, "+")
	}
	return []action.Raw{{Kind: action.KeyPress, Keys: parts}}, nil
}

// scrollNotches converts a magnitude on the grid (default 800, the function's
// default) to wheel notches: one per 200, at least one.
func scrollNotches(a args) int {
	m, ok := a.num("magnitude")
	if !ok {
		m = 800
	}
	return max(1, int(math.Round(math.Abs(m)/200)))
}

func direction(a args) (string, error) {
	d, _ := a.str("direction")
	switch d = strings.ToLower(strings.TrimSpace(d)); d {
	case "up", "down", "left", "right":
		return d, nil
	}
	return "", fmt.Errorf("direction %q must be up, down, left or right", d)
}

func mapScrollAt(a args) ([]action.Raw, error) {
	at, err := a.xy("")
	if err != nil {
		return nil, err
	}
	d, err := direction(a)
	return []action.Raw{{Kind: action.Scroll, At: at, Direction: d, Amount: scrollNotches(a)}}, err
}

// mapScrollDocument scrolls where the pointer is, a page's worth.
func mapScrollDocument(a args) ([]action.Raw, error) {
	d, err := direction(a)
	return []action.Raw{{Kind: action.Scroll, Direction: d, Amount: 5}}, err
}

func mapDrag(a args) ([]action.Raw, error) {
	from, err := a.xy("")
	if err != nil {
		return nil, err
	}
	to, err := a.xy("destination_")
	return []action.Raw{{Kind: action.Drag, At: from, To: to, Button: "left"}}, err
}
