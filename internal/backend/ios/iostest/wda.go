// Package iostest is a fake WebDriverAgent for tests: an httptest server
// that follows WDA's routes and answers as appium/WebDriverAgent's source
// declares them (WebDriverAgentLib/Commands: FBSessionCommands.m,
// FBCustomCommands.m, FBScreenshotCommands.m, FBOrientationCommands.m,
// FBTouchActionCommands.m, FBElementCommands.m, FBDebugCommands.m; the
// envelope {"value", "sessionId"} and errors {"error", "message",
// "traceback"} of Routing/FBResponsePayload.m and FBCommandStatus.m; the
// JSON source of XCUIApplication+FBHelpers.m's dictionaryForElement), in
// front of a scripted phone: a screen in pixels at a scale, turned by
// SetOrientation, an app with a text field, a button that counts its taps
// and a switch, the touches W3C actions made, and a session that Expire
// ends as a WDA restart does.
package iostest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Event is a touch event the fake saw: kind "down", "move" or "up", at
// points X, Y; an up carries how long the finger was down (the actions'
// pauses and move durations: the fake does not wait them out).
type Event struct {
	Kind string
	X, Y int
	Held time.Duration
}

// Layout of the scripted app, in points of the portrait screen.
var (
	FieldRect   = image.Rect(20, 100, 355, 144)
	ButtonRect  = image.Rect(20, 200, 180, 244)
	SwitchRect  = image.Rect(300, 200, 351, 231)
	AppBundleID = "com.example.counter"
)

// WDA is the fake WebDriverAgent.
type WDA struct {
	*httptest.Server
	// Version is what /status says of WDA (build.version).
	Version string

	mu          sync.Mutex
	session     string
	sessions    int
	w, h        int     // portrait points
	scale       float64 // pixels per point
	orientation string
	canvas      *image.RGBA // pixels, as turned now
	events      []Event
	field       string
	focused     bool
	counter     int
	switchOn    bool
	running     map[string]bool
	front       string
	buttons     []string
	requests    []string
}

// Start starts a fake WDA of an iPhone SE (2nd generation): 375x667
// points at scale 2, iOS 17.5, WDA 9.3.3.
func Start(t testing.TB) *WDA {
	w := &WDA{Version: "9.3.3", w: 375, h: 667, scale: 2, orientation: "PORTRAIT",
		running: map[string]bool{AppBundleID: true, "com.apple.springboard": true}, front: AppBundleID}
	w.canvas = w.blank()
	w.Server = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.Close)
	return w
}

var gray = color.RGBA{R: 128, G: 128, B: 128, A: 255}

func (w *WDA) size() (int, int) {
	if strings.Contains(w.orientation, "LANDSCAPE") {
		return w.h, w.w
	}
	return w.w, w.h
}

func (w *WDA) blank() *image.RGBA {
	pw, ph := w.size()
	img := image.NewRGBA(image.Rect(0, 0, int(float64(pw)*w.scale), int(float64(ph)*w.scale)))
	draw.Draw(img, img.Rect, &image.Uniform{gray}, image.Point{}, draw.Src)
	return img
}

// Scale is pixels per point.
func (w *WDA) Scale() float64 { return w.scale }

// Fill paints r (pixels) in c.
func (w *WDA) Fill(r image.Rectangle, c color.RGBA) {
	w.mu.Lock()
	defer w.mu.Unlock()
	draw.Draw(w.canvas, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

// Clear repaints the screen gray.
func (w *WDA) Clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.canvas = w.blank()
}

// SetOrientation turns the screen: PORTRAIT, LANDSCAPE,
// UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT (and repaints it gray).
func (w *WDA) SetOrientation(o string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.orientation = o
	w.canvas = w.blank()
}

// Expire ends the session, as a WDA that restarted has none.
func (w *WDA) Expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.session = ""
}

// Sessions is how many sessions were created.
func (w *WDA) Sessions() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessions
}

// Events returns the touch events since the last call.
func (w *WDA) Events() []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.events
	w.events = nil
	return e
}

// Field is the text field's text; SetField sets it (and focuses it).
func (w *WDA) Field() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.field
}

// SetField sets the text field's text and focuses it.
func (w *WDA) SetField(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.field, w.focused = s, true
}

// Counter is how many taps the button took.
func (w *WDA) Counter() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counter
}

// SwitchOn reports the switch's state.
func (w *WDA) SwitchOn() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.switchOn
}

// Buttons lists the hardware buttons pressed (pressButton names, "home").
func (w *WDA) Buttons() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.buttons...)
}

// Front is the app in front.
func (w *WDA) Front() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.front
}

// Requests lists "METHOD path" of every request since the last call.
func (w *WDA) Requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.requests
	w.requests = nil
	return r
}

func (w *WDA) reply(rw http.ResponseWriter, code int, value any) {
	rw.Header().Set("Content-Type", "application/json;charset=UTF-8")
	rw.WriteHeader(code)
	var sid any
	if w.session != "" {
		sid = w.session
	}
	_ = json.NewEncoder(rw).Encode(map[string]any{"value": value, "sessionId": sid})
}

func (w *WDA) fail(rw http.ResponseWriter, code int, errCode, msg string) {
	w.reply(rw, code, map[string]any{"error": errCode, "message": msg, "traceback": ""})
}

func (w *WDA) serve(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests = append(w.requests, r.Method+" "+r.URL.Path)
	path := r.URL.Path
	if rest, ok := strings.CutPrefix(path, "/session/"); ok {
		id, sub, _ := strings.Cut(rest, "/")
		if id != w.session || w.session == "" {
			w.fail(rw, http.StatusNotFound, "invalid session id", "Session does not exist")
			return
		}
		if sub == "" && r.Method == http.MethodDelete {
			w.session = ""
			w.reply(rw, 200, nil)
			return
		}
		w.sessionRoute(rw, r.Method, "/"+sub, r, body)
		return
	}
	switch r.Method + " " + path {
	case "GET /status":
		w.reply(rw, 200, map[string]any{"ready": true, "message": "WebDriverAgent is ready to accept commands", "state": "success",
			"os":     map[string]any{"name": "iOS", "version": "17.5", "sdkVersion": "17.5", "testmanagerdVersion": 28},
			"ios":    map[string]any{"ip": "192.168.1.23"},
			"build":  map[string]any{"time": "Jun  3 2026 10:00:00", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner", "version": w.Version},
			"device": "iphone"})
	case "POST /session":
		var req map[string]any
		if json.Unmarshal(body, &req) != nil || req["capabilities"] == nil {
			w.fail(rw, 500, "session not created", "'capabilities' is mandatory to create a new session")
			return
		}
		w.sessions++
		w.session = fmt.Sprintf("5E8C%04d-7A1B-4C2D-9E3F-0123456789AB", w.sessions)
		w.reply(rw, 200, map[string]any{"sessionId": w.session, "capabilities": map[string]any{"device": "iphone", "sdkVersion": "17.5", "CFBundleIdentifier": w.front}})
	default:
		w.common(rw, r.Method, path, r, body)
	}
}

// common answers the routes WDA serves with and without a session.
func (w *WDA) common(rw http.ResponseWriter, method, path string, r *http.Request, body []byte) {
	switch method + " " + path {
	case "GET /wda/screen":
		pw, ph := w.size()
		w.reply(rw, 200, map[string]any{"screenSize": map[string]any{"width": pw, "height": ph},
			"statusBarSize": map[string]any{"width": pw, "height": 20}, "scale": w.scale})
	case "GET /screenshot":
		var buf bytes.Buffer
		_ = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, w.canvas)
		w.reply(rw, 200, base64.StdEncoding.EncodeToString(buf.Bytes()))
	case "GET /orientation":
		w.reply(rw, 200, w.orientation)
	case "GET /wda/device/info":
		w.reply(rw, 200, map[string]any{"currentLocale": "en_US", "timeZone": "Europe/Berlin", "name": "Test iPhone", "model": "iPhone",
			"uuid": "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", "userInterfaceIdiom": 0, "userInterfaceStyle": "light", "isSimulator": false, "thermalState": 0})
	case "GET /wda/activeAppInfo":
		w.reply(rw, 200, map[string]any{"pid": 4242, "bundleId": w.front, "name": "", "processArguments": map[string]any{}})
	case "POST /wda/homescreen":
		w.buttons = append(w.buttons, "home")
		w.front = "com.apple.springboard"
		w.reply(rw, 200, nil)
	case "GET /source":
		if f := r.URL.Query().Get("format"); f != "json" {
			w.fail(rw, 400, "invalid argument", "this fake serves format=json only")
			return
		}
		w.reply(rw, 200, w.tree())
	default:
		w.fail(rw, 404, "unknown command", "The requested resource could not be found, or a request was received using an HTTP method that is not supported by the mapped resource")
	}
}

func (w *WDA) sessionRoute(rw http.ResponseWriter, method, path string, r *http.Request, body []byte) {
	var args map[string]any
	_ = json.Unmarshal(body, &args)
	switch method + " " + path {
	case "POST /actions":
		if err := w.actions(body); err != nil {
			w.fail(rw, 400, "invalid argument", err.Error())
			return
		}
		w.reply(rw, 200, nil)
	case "POST /wda/keys":
		vals, _ := args["value"].([]any)
		var s strings.Builder
		for _, v := range vals {
			str, _ := v.(string)
			s.WriteString(str)
		}
		if !w.focused {
			w.fail(rw, 400, "invalid element state", "Keyboard is not present")
			return
		}
		for _, c := range s.String() {
			if c == '\b' {
				if n := len(w.field); n > 0 {
					_, size := utf8.DecodeLastRuneInString(w.field)
					w.field = w.field[:n-size]
				}
				continue
			}
			w.field += string(c)
		}
		w.reply(rw, 200, nil)
	case "POST /wda/pressButton":
		name, _ := args["name"].(string)
		if name != "home" && name != "volumeUp" && name != "volumeDown" {
			w.fail(rw, 500, "unknown error", fmt.Sprintf("The button '%s' is unknown", name))
			return
		}
		w.buttons = append(w.buttons, name)
		w.reply(rw, 200, nil)
	case "POST /wda/apps/launch":
		id, _ := args["bundleId"].(string)
		w.running[id], w.front = true, id
		w.reply(rw, 200, nil)
	case "POST /wda/apps/terminate":
		id, _ := args["bundleId"].(string)
		was := w.running[id]
		delete(w.running, id)
		if w.front == id {
			w.front = "com.apple.springboard"
		}
		w.reply(rw, 200, was)
	case "GET /wda/apps/list":
		var list []map[string]any
		pid := 100
		for id := range w.running {
			pid++
			list = append(list, map[string]any{"pid": pid, "bundleId": id})
		}
		w.reply(rw, 200, list)
	case "POST /url":
		w.buttons = append(w.buttons, "url "+fmt.Sprint(args["url"]))
		w.reply(rw, 200, nil)
	default:
		w.common(rw, method, path, r, body)
	}
}

// wdaError is an error message as WDA words it.
type wdaError string

func (e wdaError) Error() string { return string(e) }

// actions plays one touch pointer's W3C actions.
func (w *WDA) actions(body []byte) error {
	var req struct {
		Actions []struct {
			Type       string            `json:"type"`
			ID         string            `json:"id"`
			Parameters map[string]string `json:"parameters"`
			Actions    []struct {
				Type     string   `json:"type"`
				Duration *float64 `json:"duration"`
				X, Y     *float64
				Button   *int `json:"button"`
			} `json:"actions"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	for _, src := range req.Actions {
		if src.Type != "pointer" || src.Parameters["pointerType"] != "touch" {
			return wdaError(fmt.Sprintf("Only pointer type 'touch' is supported. '%s' is given instead for action with id '%s'", src.Parameters["pointerType"], src.ID))
		}
		var x, y int
		moved, isDown := false, false
		var held time.Duration
		var downX, downY int
		for i, a := range src.Actions {
			d := time.Duration(0)
			if a.Duration != nil {
				d = time.Duration(*a.Duration) * time.Millisecond
			}
			switch a.Type {
			case "pointerMove":
				if a.X == nil || a.Y == nil {
					return fmt.Errorf("'x' and 'y' are mandatory for pointerMove")
				}
				x, y, moved = int(*a.X), int(*a.Y), true
				if isDown {
					held += d
					w.events = append(w.events, Event{Kind: "move", X: x, Y: y})
				}
			case "pointerDown":
				if !moved {
					return wdaError(fmt.Sprintf("The '%s' action item must be preceded by pointerMove item", a.Type))
				}
				isDown, held, downX, downY = true, 0, x, y
				w.events = append(w.events, Event{Kind: "down", X: x, Y: y})
			case "pause":
				if isDown {
					held += d
				}
			case "pointerUp":
				if i == 0 || !isDown {
					return wdaError(fmt.Sprintf("Pointer Up must not be the first action in '%s'", src.ID))
				}
				isDown = false
				w.events = append(w.events, Event{Kind: "up", X: x, Y: y, Held: held})
				if x == downX && y == downY && held < 500*time.Millisecond {
					w.tap(x, y)
				}
			default:
				return fmt.Errorf("unknown action item type %q", a.Type)
			}
		}
		if isDown {
			w.events = append(w.events, Event{Kind: "up", X: x, Y: y, Held: held})
		}
	}
	return nil
}

// portraitPoint maps a point of the screen as turned to the app's layout
// (the app is laid out in portrait; turned, it is not hit).
func (w *WDA) tap(x, y int) {
	if strings.Contains(w.orientation, "LANDSCAPE") || w.front != AppBundleID {
		return
	}
	p := image.Pt(x, y)
	switch {
	case p.In(ButtonRect):
		w.counter++
	case p.In(FieldRect):
		w.focused = true
	case p.In(SwitchRect):
		w.switchOn = !w.switchOn
	default:
		w.focused = false
	}
}

func rect(r image.Rectangle) map[string]any {
	return map[string]any{"x": r.Min.X, "y": r.Min.Y, "width": r.Dx(), "height": r.Dy()}
}

func frame(r image.Rectangle) string {
	return fmt.Sprintf("{{%d, %d}, {%d, %d}}", r.Min.X, r.Min.Y, r.Dx(), r.Dy())
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// node is one element as dictionaryForElement writes it.
func node(typ string, r image.Rectangle, name, label, value any, enabled, visible, focused bool, extra map[string]any, children ...map[string]any) map[string]any {
	n := map[string]any{"type": typ, "rawIdentifier": nil, "name": name, "value": value, "label": label,
		"rect": rect(r), "frame": frame(r), "nativeFrame": frame(r), "customActions": nil,
		"isEnabled": b01(enabled), "isVisible": b01(visible), "isAccessible": b01(typ != "Other" && typ != "Application" && typ != "Window"),
		"isNativeAccessibilityElement": "1", "isFocused": b01(focused), "traits": ""}
	for k, v := range extra {
		n[k] = v
	}
	if len(children) > 0 {
		n["children"] = children
	}
	return n
}

// tree is the foreground app's source.
func (w *WDA) tree() map[string]any {
	pw, ph := w.size()
	screen := image.Rect(0, 0, pw, ph)
	if w.front != AppBundleID {
		return node("Application", screen, "SpringBoard", "SpringBoard", nil, true, true, false, nil,
			node("Window", screen, nil, nil, nil, true, true, false, nil,
				node("Icon", image.Rect(20, 60, 80, 120), "Counter", "Counter", nil, true, true, false, nil)))
	}
	var field any = w.field
	if w.field == "" {
		field = "Your name" // iOS shows the placeholder as the value of an empty field
	}
	sw := "0"
	if w.switchOn {
		sw = "1"
	}
	return node("Application", screen, "Counter", "Counter", nil, true, true, false, nil,
		node("Window", screen, nil, nil, nil, true, true, false, nil,
			node("Other", screen, nil, nil, nil, true, true, false, nil,
				node("StaticText", image.Rect(20, 60, 200, 80), fmt.Sprintf("Count: %d", w.counter), fmt.Sprintf("Count: %d", w.counter), nil, true, true, false, nil),
				node("TextField", FieldRect, "name", "Name", field, true, true, w.focused, map[string]any{"placeholderValue": "Your name", "rawIdentifier": "name"}),
				node("Button", ButtonRect, "Increment", "Increment", nil, true, true, false, map[string]any{"rawIdentifier": "increment"}),
				node("Switch", SwitchRect, "Notifications", "Notifications", sw, true, true, false, nil),
				node("Button", image.Rect(20, 300, 180, 344), "Hidden", "Hidden", nil, true, false, false, nil),
				node("Button", image.Rect(200, 300, 355, 344), "Disabled", "Disabled", nil, false, true, false, nil),
			)))
}
