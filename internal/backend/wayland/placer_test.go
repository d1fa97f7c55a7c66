package wayland

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// testdata/sway-get-tree.json is `swaymsg -t get_tree -r` of sway 1.7
// headless with two outputs (HEADLESS-2 at 1280,0, scale 2) and four GTK
// windows: "tiled-win" tiled on HEADLESS-1; "explore-win" floating, moved
// to 300,150 with a 3-pixel border and a title bar; "hidden-win" in the
// scratchpad; "scaled-win" floating on HEADLESS-2, focused.
func swayTree(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sway-get-tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var swayTreeWindows = []Window{
	{PID: 15269, AppID: "app.py", Title: "tiled-win", Rect: geom.Rect{X: 0, Y: 0, W: 1280, H: 800}},
	// The container's rect is (297,150) with the border; the content is 3 px in.
	{PID: 14147, AppID: "app.py", Title: "explore-win", Rect: geom.Rect{X: 300, Y: 150, W: 300, H: 200}},
	{PID: 15301, AppID: "app.py", Title: "scaled-win", Rect: geom.Rect{X: 2760, Y: 100, W: 300, H: 200}, Focused: true},
}

func TestSwayTreeListsTheShownWindowsContent(t *testing.T) {
	got, err := parseSwayTree(swayTree(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, swayTreeWindows) {
		t.Errorf("parseSwayTree:\n got %+v\nwant %+v (the scratchpad's hidden-win left out)", got, swayTreeWindows)
	}
	// A tabbed container's hidden tab and an XWayland window.
	tree := `{"type":"root","name":"root","nodes":[{"type":"output","name":"HEADLESS-1","nodes":[{"type":"workspace","name":"1","nodes":[
		{"type":"con","name":"tab one","pid":10,"app_id":"foot","visible":true,"rect":{"x":0,"y":25,"width":800,"height":575},"window_rect":{"x":0,"y":0,"width":800,"height":575}},
		{"type":"con","name":"tab two","pid":11,"app_id":"foot","visible":false,"rect":{"x":0,"y":25,"width":800,"height":575},"window_rect":{"x":0,"y":0,"width":800,"height":575}},
		{"type":"con","name":"xterm","pid":12,"app_id":null,"shell":"xwayland","visible":true,"window_properties":{"class":"XTerm"},"rect":{"x":800,"y":0,"width":400,"height":600},"window_rect":{"x":2,"y":2,"width":396,"height":596}}]}]}]}`
	got, err = parseSwayTree([]byte(tree))
	if err != nil {
		t.Fatal(err)
	}
	want := []Window{
		{PID: 10, AppID: "foot", Title: "tab one", Rect: geom.Rect{X: 0, Y: 25, W: 800, H: 575}},
		{PID: 12, AppID: "XTerm", Title: "xterm", Rect: geom.Rect{X: 802, Y: 2, W: 396, H: 596}, XWayland: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseSwayTree of tabs and XWayland:\n got %+v\nwant %+v", got, want)
	}
	if _, err := parseSwayTree([]byte(`[{"type":"output"}]`)); err == nil {
		t.Error("parseSwayTree accepted a reply that is not a tree")
	}
}

// fakeIPC serves one connection at a time on a socket in a temporary
// directory: serve gets what the client sent (after read takes it) and
// writes the reply.
func fakeIPC(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ipc.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			serve(c)
			_ = c.Close()
		}
	}()
	return path
}

func TestSwayPlacerSpeaksTheIPCProtocol(t *testing.T) {
	tree := swayTree(t)
	var mu sync.Mutex
	var asked []byte
	sock := fakeIPC(t, func(c net.Conn) {
		h := make([]byte, 14)
		if _, err := io.ReadFull(c, h); err != nil {
			return
		}
		mu.Lock()
		asked = h
		mu.Unlock()
		reply := append([]byte("i3-ipc"), binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(len(tree))), 4)...)
		_, _ = c.Write(append(reply, tree...))
	})
	p := NewPlacer(PlacerOptions{SwaySock: sock, HyprlandSignature: "ignored when sway's socket is set"})
	got, err := p.Windows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := append([]byte("i3-ipc"), 0, 0, 0, 0, 4, 0, 0, 0); string(asked) != string(want) {
		t.Errorf("the request was % x, want GET_TREE (type 4, no payload): % x", asked, want)
	}
	if !reflect.DeepEqual(got, swayTreeWindows) {
		t.Errorf("Windows over IPC:\n got %+v\nwant %+v", got, swayTreeWindows)
	}
	if !strings.Contains(p.Name(), sock) {
		t.Errorf("Name() = %q, want it to name the socket", p.Name())
	}

	notSway := fakeIPC(t, func(c net.Conn) { _, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) })
	if _, err := NewPlacer(PlacerOptions{SwaySock: notSway}).Windows(context.Background()); err == nil || !strings.Contains(err.Error(), "not an i3/sway IPC socket") {
		t.Errorf("a socket that is not sway's: err = %v", err)
	}
	if _, err := NewPlacer(PlacerOptions{SwaySock: filepath.Join(t.TempDir(), "gone.sock")}).Windows(context.Background()); err == nil || !strings.Contains(err.Error(), "SWAYSOCK") {
		t.Errorf("a missing socket: err = %v, want it to name SWAYSOCK", err)
	}
}

// hyprClients is a reply of "j/clients" in the format of Hyprland's
// CHyprCtl::getWindowData (src/debug/HyprCtl.cpp), with a floating GTK
// window at 300,150 (focused), a tiled foot on the same workspace, a
// window on workspace 3 (not shown), a hidden group member, and an
// XWayland client on the second monitor's workspace.
const hyprClients = `[{
    "address": "0x55d0c5a0e1a0",
    "mapped": true,
    "hidden": false,
    "at": [300, 150],
    "size": [300, 200],
    "workspace": {
        "id": 1,
        "name": "1"
    },
    "floating": true,
    "pseudo": false,
    "monitor": 0,
    "class": "app.py",
    "title": "explore-win",
    "initialClass": "app.py",
    "initialTitle": "explore-win",
    "pid": 4242,
    "xwayland": false,
    "pinned": false,
    "fullscreen": 0,
    "fullscreenClient": 0,
    "grouped": [],
    "tags": [],
    "swallowing": "0x0",
    "focusHistoryID": 0,
    "inhibitingIdle": false
},{
    "address": "0x55d0c5a0f2b0",
    "mapped": true,
    "hidden": false,
    "at": [5, 5],
    "size": [1270, 790],
    "workspace": {
        "id": 1,
        "name": "1"
    },
    "floating": false,
    "pseudo": false,
    "monitor": 0,
    "class": "foot",
    "title": "~",
    "initialClass": "foot",
    "initialTitle": "foot",
    "pid": 4300,
    "xwayland": false,
    "pinned": false,
    "fullscreen": 0,
    "fullscreenClient": 0,
    "grouped": [],
    "tags": [],
    "swallowing": "0x0",
    "focusHistoryID": 1,
    "inhibitingIdle": false
},{
    "address": "0x55d0c5a10000",
    "mapped": true,
    "hidden": false,
    "at": [5, 5],
    "size": [1270, 790],
    "workspace": {
        "id": 3,
        "name": "3"
    },
    "floating": false,
    "pseudo": false,
    "monitor": 0,
    "class": "firefox",
    "title": "Mozilla Firefox",
    "initialClass": "firefox",
    "initialTitle": "Mozilla Firefox",
    "pid": 5000,
    "xwayland": false,
    "pinned": false,
    "fullscreen": 0,
    "fullscreenClient": 0,
    "grouped": [],
    "tags": [],
    "swallowing": "0x0",
    "focusHistoryID": 2,
    "inhibitingIdle": false
},{
    "address": "0x55d0c5a11000",
    "mapped": true,
    "hidden": true,
    "at": [5, 5],
    "size": [1270, 790],
    "workspace": {
        "id": 1,
        "name": "1"
    },
    "floating": false,
    "pseudo": false,
    "monitor": 0,
    "class": "foot",
    "title": "second tab",
    "initialClass": "foot",
    "initialTitle": "foot",
    "pid": 4301,
    "xwayland": false,
    "pinned": false,
    "fullscreen": 0,
    "fullscreenClient": 0,
    "grouped": ["0x55d0c5a0f2b0", "0x55d0c5a11000"],
    "tags": [],
    "swallowing": "0x0",
    "focusHistoryID": 3,
    "inhibitingIdle": false
},{
    "address": "0x55d0c5a12000",
    "mapped": true,
    "hidden": false,
    "at": [1480, 100],
    "size": [400, 300],
    "workspace": {
        "id": 2,
        "name": "2"
    },
    "floating": true,
    "pseudo": false,
    "monitor": 1,
    "class": "XTerm",
    "title": "xterm",
    "initialClass": "XTerm",
    "initialTitle": "xterm",
    "pid": 6000,
    "xwayland": true,
    "pinned": false,
    "fullscreen": 0,
    "fullscreenClient": 0,
    "grouped": [],
    "tags": [],
    "swallowing": "0x0",
    "focusHistoryID": -1,
    "inhibitingIdle": false
}]`

// hyprMonitors is a reply of "j/monitors" (CHyprCtl::getMonitorData), cut
// to the fields around the workspaces.
const hyprMonitors = `[{
    "id": 0,
    "name": "HEADLESS-1",
    "width": 1280,
    "height": 800,
    "x": 0,
    "y": 0,
    "activeWorkspace": {
        "id": 1,
        "name": "1"
    },
    "specialWorkspace": {
        "id": 0,
        "name": ""
    },
    "scale": 1.00,
    "focused": true
},{
    "id": 1,
    "name": "HEADLESS-2",
    "width": 1920,
    "height": 1080,
    "x": 1280,
    "y": 0,
    "activeWorkspace": {
        "id": 2,
        "name": "2"
    },
    "specialWorkspace": {
        "id": 0,
        "name": ""
    },
    "scale": 2.00,
    "focused": false
}]`

var hyprWindows = []Window{
	{PID: 6000, AppID: "XTerm", Title: "xterm", Rect: geom.Rect{X: 1480, Y: 100, W: 400, H: 300}, XWayland: true},
	{PID: 4300, AppID: "foot", Title: "~", Rect: geom.Rect{X: 5, Y: 5, W: 1270, H: 790}},
	{PID: 4242, AppID: "app.py", Title: "explore-win", Rect: geom.Rect{X: 300, Y: 150, W: 300, H: 200}, Focused: true},
}

func TestHyprlandClientsListTheShownWindows(t *testing.T) {
	got, err := parseHyprland([]byte(hyprClients), []byte(hyprMonitors))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, hyprWindows) {
		t.Errorf("parseHyprland:\n got %+v\nwant %+v (workspace 3 and the hidden group member left out, the focused last)", got, hyprWindows)
	}
	if _, err := parseHyprland([]byte("unknown request"), []byte(hyprMonitors)); err == nil {
		t.Error("parseHyprland accepted a reply that is not JSON")
	}
}

func TestHyprlandPlacerAsksItsSocket(t *testing.T) {
	rt := t.TempDir()
	const sig = "v0.45.2_1731234567_123456789"
	dir := filepath.Join(rt, "hypr", sig)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	l, err := net.Listen("unix", filepath.Join(dir, ".socket.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 256)
			n, _ := c.Read(buf)
			req := string(buf[:n])
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			switch req {
			case "j/clients":
				_, _ = io.WriteString(c, hyprClients)
			case "j/monitors":
				_, _ = io.WriteString(c, hyprMonitors)
			default:
				_, _ = io.WriteString(c, "unknown request")
			}
			_ = c.Close()
		}
	}()
	p := NewPlacer(PlacerOptions{HyprlandSignature: sig, RuntimeDir: rt})
	got, err := p.Windows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, hyprWindows) {
		t.Errorf("Windows over the socket:\n got %+v\nwant %+v", got, hyprWindows)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(asked, []string{"j/clients", "j/monitors"}) {
		t.Errorf("the placer asked %q, want j/clients and j/monitors", asked)
	}
	if _, err := NewPlacer(PlacerOptions{HyprlandSignature: "gone", RuntimeDir: rt}).Windows(context.Background()); err == nil || !strings.Contains(err.Error(), "HYPRLAND_INSTANCE_SIGNATURE") {
		t.Errorf("a missing instance: err = %v, want it to name HYPRLAND_INSTANCE_SIGNATURE", err)
	}
}

func TestNoPlacerWithoutTheCompositorsIPC(t *testing.T) {
	if p := NewPlacer(PlacerOptions{RuntimeDir: t.TempDir()}); p != nil {
		t.Errorf("NewPlacer without SWAYSOCK, HYPRLAND_INSTANCE_SIGNATURE or a sway socket = %v, want nil", p.Name())
	}
	if p := NewPlacer(PlacerOptions{}); p != nil {
		t.Errorf("NewPlacer of nothing = %v, want nil", p.Name())
	}
}
