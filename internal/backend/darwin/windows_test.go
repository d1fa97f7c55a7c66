package darwin

import (
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
)

func TestActiveWindowTitle(t *testing.T) {
	menuBar := windowInfo{layer: 25, owner: "Window Server", name: "Menubar", w: 1512, h: 24, hasBounds: true}
	statusItem := windowInfo{layer: 0, owner: "Dropbox", w: 22, h: 22, hasBounds: true}
	invisible := windowInfo{layer: 0, owner: "Ghost", name: "hidden", alpha: 0, hasAlpha: true, w: 500, h: 500, hasBounds: true}
	textEdit := windowInfo{layer: 0, owner: "TextEdit", name: "Untitled", alpha: 1, hasAlpha: true, w: 600, h: 400, hasBounds: true}
	code := windowInfo{layer: 0, owner: "Code", name: "main.go — guiagent — Code", w: 1200, h: 800, hasBounds: true}
	noTitle := windowInfo{layer: 0, owner: "Finder", w: 800, h: 500, hasBounds: true}
	cases := []struct {
		name string
		ws   []windowInfo
		want string
	}{
		{"skips menu bar, status items and invisible windows", []windowInfo{menuBar, statusItem, invisible, textEdit, code}, "Untitled — TextEdit"},
		{"title already names the app", []windowInfo{code, textEdit}, "main.go — guiagent — Code"},
		{"title hidden without Screen Recording", []windowInfo{menuBar, noTitle}, "Finder"},
		{"no ordinary window", []windowInfo{menuBar, statusItem}, ""},
		{"empty list", nil, ""},
	}
	for _, tc := range cases {
		if got := activeWindowTitle(tc.ws); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestScrollWheels(t *testing.T) {
	cases := map[desktop.Direction][2]int32{desktop.Up: {1, 0}, desktop.Down: {-1, 0}, desktop.LeftD: {0, 1}, desktop.RightD: {0, -1}}
	for d, want := range cases {
		w1, w2, err := scrollWheels(d)
		if err != nil || w1 != want[0] || w2 != want[1] {
			t.Errorf("%s: wheels (%d,%d) %v, want (%d,%d)", d, w1, w2, err, want[0], want[1])
		}
	}
	if _, _, err := scrollWheels("sideways"); err == nil {
		t.Error("unknown direction accepted")
	}
}
