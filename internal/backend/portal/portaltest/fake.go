package portaltest

import (
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/geom"
)

// The portal's names and interfaces, from the specification.
const (
	busName      = "org.freedesktop.portal.Desktop"
	objectPath   = dbus.ObjectPath("/org/freedesktop/portal/desktop")
	ifaceRequest = "org.freedesktop.portal.Request"
	ifaceSession = "org.freedesktop.portal.Session"
	ifaceShot    = "org.freedesktop.portal.Screenshot"
	ifaceRemote  = "org.freedesktop.portal.RemoteDesktop"
	ifaceCast    = "org.freedesktop.portal.ScreenCast"
)

// Call is one method call the fake received: its interface and member, the
// session it names, its options (the variants' values) and its other
// arguments in order.
type Call struct {
	Method  string // "RemoteDesktop.SelectDevices", "RemoteDesktop.NotifyPointerButton", ...
	Session dbus.ObjectPath
	Options map[string]any
	Args    []any
}

func (c Call) String() string { return fmt.Sprintf("%s%v", c.Method, c.Args) }

// FakeOptions configures a Fake.
type FakeOptions struct {
	// Monitors are the monitors a started session's streams cover, in the
	// compositor's logical coordinates; their nodes are 40, 41, ...
	Monitors []geom.Rect
	// Screen is what the Screenshot portal returns (a PNG in a temporary file).
	Screen image.Image
	// AskUser makes RemoteDesktop.Start wait for Approve or Deny (the dialog)
	// unless a valid restore token was given; otherwise it approves at once.
	AskUser bool
	// NoRemoteDesktop leaves the RemoteDesktop and ScreenCast interfaces out
	// (as xdg-desktop-portal-wlr does for RemoteDesktop).
	NoRemoteDesktop bool
	// EIS offers ConnectToEIS in the introspection data.
	EIS bool
}

// Fake is a fake xdg-desktop-portal on a bus: Screenshot, RemoteDesktop and
// ScreenCast with Request objects whose Response signals carry the
// results, Session objects, restore tokens and option types checked as the
// specification gives them. It records every call and what input is held.
type Fake struct {
	o    FakeOptions
	conn *dbus.Conn
	dir  string

	mu       sync.Mutex
	calls    []Call
	seq      int
	sessions map[dbus.ObjectPath]*session
	tokens   map[string]bool                        // restore tokens not yet used
	pending  map[dbus.ObjectPath]func(approve bool) // dialogs up, by request
	closed   map[dbus.ObjectPath]bool               // requests closed by their caller
	dialogs  int
	pressed  map[string]bool
	shots    []string
	onNotify func(Call)
}

type session struct {
	path              dbus.ObjectPath
	devices, persist  uint32
	restored, sources bool
	selected, started bool
	closed            bool
}

// StartFake connects a fake portal to the bus at addr and names it
// org.freedesktop.portal.Desktop; it disconnects when the test ends.
func StartFake(t testing.TB, addr string, o FakeOptions) *Fake {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &Fake{o: o, conn: conn, dir: t.TempDir(), sessions: map[dbus.ObjectPath]*session{}, tokens: map[string]bool{}, pressed: map[string]bool{},
		pending: map[dbus.ObjectPath]func(bool){}, closed: map[dbus.ObjectPath]bool{}}
	exports := map[string]any{ifaceShot: &shotIface{f}, "org.freedesktop.DBus.Properties": &propsIface{f}, "org.freedesktop.DBus.Introspectable": &introIface{f}}
	if !o.NoRemoteDesktop {
		exports[ifaceRemote], exports[ifaceCast] = &remoteIface{f}, &castIface{f}
	}
	for iface, v := range exports {
		if err := conn.Export(v, objectPath, iface); err != nil {
			t.Fatal(err)
		}
	}
	reply, err := conn.RequestName(busName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v (reply %d)", busName, err, reply)
	}
	return f
}

// Calls returns the calls received so far.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Dialogs counts the permission dialogs shown (Starts without a valid restore token).
func (f *Fake) Dialogs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dialogs
}

// Pressed lists the keys and buttons held now ("key 0x61", "button 272").
func (f *Fake) Pressed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.pressed {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Tokens lists the restore tokens issued and not yet used.
func (f *Fake) Tokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.tokens {
		out = append(out, k)
	}
	return out
}

// ClosedRequests counts the requests their caller closed (Request.Close).
func (f *Fake) ClosedRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.closed)
}

// Screenshots lists the files the Screenshot portal wrote.
func (f *Fake) Screenshots() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.shots...)
}

// OnNotify calls fn with each Notify* call, after it is recorded.
func (f *Fake) OnNotify(fn func(Call)) {
	f.mu.Lock()
	f.onNotify = fn
	f.mu.Unlock()
}

// Approve answers the waiting dialogs with success; Deny with response 1
// (the user cancelled). Each reports whether a dialog was waiting.
func (f *Fake) Approve() bool { return f.decide(true) }

// Deny: see Approve.
func (f *Fake) Deny() bool { return f.decide(false) }

func (f *Fake) decide(approve bool) bool {
	f.mu.Lock()
	p := f.pending
	f.pending = map[dbus.ObjectPath]func(bool){}
	f.mu.Unlock()
	for _, fn := range p {
		fn(approve)
	}
	return len(p) > 0
}

func invalid(format string, a ...any) *dbus.Error {
	return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{fmt.Sprintf(format, a...)})
}

// options checks that opts has only the keys of want, each with the
// signature want gives, and returns their values.
func options(method string, opts map[string]dbus.Variant, want map[string]string) (map[string]any, *dbus.Error) {
	out := map[string]any{}
	for k, v := range opts {
		sig, ok := want[k]
		if !ok {
			return nil, invalid("%s: unknown option %q", method, k)
		}
		if v.Signature().String() != sig {
			return nil, invalid("%s: option %s has type %s, the specification says %s", method, k, v.Signature(), sig)
		}
		out[k] = v.Value()
	}
	return out, nil
}

// record notes a call.
func (f *Fake) record(c Call) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
}

// request makes the Request object of a call from sender with the
// handle_token in opts (or one of its own), exported until it answers; the
// answer is sent as its Response signal.
func (f *Fake) request(sender dbus.Sender, opts map[string]any) (dbus.ObjectPath, func(code uint32, results map[string]dbus.Variant)) {
	f.mu.Lock()
	f.seq++
	tok, _ := opts["handle_token"].(string)
	if tok == "" {
		tok = fmt.Sprintf("fake%d", f.seq)
	}
	f.mu.Unlock()
	path := dbus.ObjectPath("/org/freedesktop/portal/desktop/request/" + strings.ReplaceAll(strings.TrimPrefix(string(sender), ":"), ".", "_") + "/" + tok)
	var once sync.Once
	answer := func(code uint32, results map[string]dbus.Variant) {
		once.Do(func() {
			_ = f.conn.Export(nil, path, ifaceRequest)
			_ = f.conn.Emit(path, ifaceRequest+".Response", code, results)
		})
	}
	closeReq := func() {
		once.Do(func() { _ = f.conn.Export(nil, path, ifaceRequest) })
		f.mu.Lock()
		delete(f.pending, path) // the dialog goes away
		f.closed[path] = true
		f.mu.Unlock()
	}
	_ = f.conn.Export(&requestIface{close: closeReq}, path, ifaceRequest)
	return path, answer
}

type requestIface struct{ close func() }

// Close is org.freedesktop.portal.Request.Close: the dialog goes away, no Response.
func (r *requestIface) Close() *dbus.Error { r.close(); return nil }

type shotIface struct{ f *Fake }

// Screenshot is org.freedesktop.portal.Screenshot.Screenshot(s parent_window, a{sv} options) -> o handle.
func (s *shotIface) Screenshot(sender dbus.Sender, parent string, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	o, derr := options("Screenshot", opts, map[string]string{"handle_token": "s", "modal": "b", "interactive": "b"})
	if derr != nil {
		return "", derr
	}
	f := s.f
	f.record(Call{Method: "Screenshot.Screenshot", Options: o, Args: []any{parent}})
	path, answer := f.request(sender, o)
	f.mu.Lock()
	name := filepath.Join(f.dir, fmt.Sprintf("Screenshot-%d.png", f.seq))
	f.shots = append(f.shots, name)
	f.mu.Unlock()
	go func() {
		file, err := os.Create(name)
		if err == nil {
			err = png.Encode(file, f.o.Screen)
			file.Close()
		}
		if err != nil {
			answer(2, map[string]dbus.Variant{})
			return
		}
		answer(0, map[string]dbus.Variant{"uri": dbus.MakeVariant((&url.URL{Scheme: "file", Path: name}).String())})
	}()
	return path, nil
}

type propsIface struct{ f *Fake }

// Get is org.freedesktop.DBus.Properties.Get for the portal's version and
// device properties.
func (p *propsIface) Get(iface, name string) (dbus.Variant, *dbus.Error) {
	switch {
	case iface == ifaceShot && name == "version":
		return dbus.MakeVariant(uint32(2)), nil
	case p.f.o.NoRemoteDesktop:
	case iface == ifaceRemote && name == "version":
		return dbus.MakeVariant(uint32(2)), nil
	case iface == ifaceRemote && name == "AvailableDeviceTypes":
		return dbus.MakeVariant(uint32(7)), nil
	case iface == ifaceCast && name == "version":
		return dbus.MakeVariant(uint32(5)), nil
	case iface == ifaceCast && name == "AvailableSourceTypes":
		return dbus.MakeVariant(uint32(7)), nil
	}
	return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.UnknownInterface", []any{"no such interface " + iface})
}

type introIface struct{ f *Fake }

// Introspect returns the interfaces the fake offers, by name.
func (i *introIface) Introspect() (string, *dbus.Error) {
	xml := `<node><interface name="` + ifaceShot + `"><method name="Screenshot"/></interface>`
	if !i.f.o.NoRemoteDesktop {
		xml += `<interface name="` + ifaceRemote + `"><method name="CreateSession"/>`
		if i.f.o.EIS {
			xml += `<method name="ConnectToEIS"/>`
		}
		xml += `</interface>`
	}
	return xml + `</node>`, nil
}
