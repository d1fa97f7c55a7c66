package portal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/godbus/dbus/v5"
)

// The portal's well-known names, object path and interfaces, as the
// xdg-desktop-portal specification gives them.
const (
	busName        = "org.freedesktop.portal.Desktop"
	objectPath     = dbus.ObjectPath("/org/freedesktop/portal/desktop")
	ifaceRequest   = "org.freedesktop.portal.Request"
	ifaceSession   = "org.freedesktop.portal.Session"
	ifaceShot      = "org.freedesktop.portal.Screenshot"
	ifaceRemote    = "org.freedesktop.portal.RemoteDesktop"
	ifaceCast      = "org.freedesktop.portal.ScreenCast"
	ifaceProps     = "org.freedesktop.DBus.Properties"
	requestPrefix  = "/org/freedesktop/portal/desktop/request/"
	sessionPrefix  = "/org/freedesktop/portal/desktop/session/"
	tokenPrefix    = "guiagent"
	signalResponse = ifaceRequest + ".Response"
	signalClosed   = ifaceSession + ".Closed"
)

// The codes of org.freedesktop.portal.Request::Response.
const (
	responseSuccess   = 0 // the request was carried out
	responseCancelled = 1 // the user cancelled the interaction
	responseOther     = 2 // the interaction was ended in some other way
)

// response is one org.freedesktop.portal.Request::Response signal.
type response struct {
	code    uint32
	results map[string]dbus.Variant
}

// ResponseError is a request the portal answered with a code other than
// success: Code 1 means the user cancelled (refused) it, 2 that it ended
// another way (the backend failed or the dialog was closed).
type ResponseError struct {
	Method string
	Code   uint32
}

func (e *ResponseError) Error() string {
	switch e.Code {
	case responseCancelled:
		return fmt.Sprintf("%s: the user cancelled the request (portal response 1)", e.Method)
	case responseOther:
		return fmt.Sprintf("%s: the portal ended the request without a result (response 2: its backend failed or the dialog was closed; the portal's log says why)", e.Method)
	}
	return fmt.Sprintf("%s: the portal answered with the unknown response code %d", e.Method, e.Code)
}

// bus is a connection to the portal: it makes the Request objects' handles
// (handle_token) and routes each Response signal to the call that waits for it.
type bus struct {
	conn   *dbus.Conn
	obj    dbus.BusObject
	sender string // the unique name as request paths spell it: ":1.42" -> "1_42"
	seq    atomic.Uint64

	mu      sync.Mutex
	waiters map[dbus.ObjectPath]chan response
	early   map[dbus.ObjectPath]response // responses that came before their waiter knew its path
	closed  map[dbus.ObjectPath]bool     // sessions the portal closed
	onClose func(dbus.ObjectPath)
	signals chan *dbus.Signal
}

// dial connects to the session bus at addr and subscribes to the portal's
// Response and Closed signals.
func dial(addr string) (*bus, error) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the session bus %s: %w", addr, err)
	}
	b := &bus{conn: conn, obj: conn.Object(busName, objectPath), waiters: map[dbus.ObjectPath]chan response{},
		early: map[dbus.ObjectPath]response{}, closed: map[dbus.ObjectPath]bool{}, signals: make(chan *dbus.Signal, 64)}
	b.sender = strings.ReplaceAll(strings.TrimPrefix(conn.Names()[0], ":"), ".", "_")
	for _, m := range [][]dbus.MatchOption{
		{dbus.WithMatchInterface(ifaceRequest), dbus.WithMatchMember("Response")},
		{dbus.WithMatchInterface(ifaceSession), dbus.WithMatchMember("Closed")},
	} {
		if err := conn.AddMatchSignal(m...); err != nil {
			conn.Close()
			return nil, fmt.Errorf("subscribe to the portal's signals: %w", err)
		}
	}
	conn.Signal(b.signals)
	go b.dispatch()
	return b, nil
}

func (b *bus) close() error { return b.conn.Close() }

// dispatch hands each Response to its waiter and notes each closed session.
func (b *bus) dispatch() {
	for s := range b.signals {
		switch s.Name {
		case signalResponse:
			var r response
			if len(s.Body) != 2 || dbus.Store(s.Body, &r.code, &r.results) != nil {
				continue
			}
			b.mu.Lock()
			if ch, ok := b.waiters[s.Path]; ok {
				delete(b.waiters, s.Path)
				ch <- r
			} else if strings.HasPrefix(string(s.Path), requestPrefix+b.sender+"/") {
				b.early[s.Path] = r
			}
			b.mu.Unlock()
		case signalClosed:
			b.mu.Lock()
			b.closed[s.Path] = true
			f := b.onClose
			b.mu.Unlock()
			if f != nil {
				f(s.Path)
			}
		}
	}
}

// token returns a fresh handle_token (or session_handle_token).
func (b *bus) token() string {
	return tokenPrefix + strconv.FormatUint(b.seq.Add(1), 10)
}

// request is a portal call whose result comes as a Response signal.
type request struct {
	b      *bus
	method string
	path   dbus.ObjectPath
	ch     chan response
}

// call calls method (interface.Member) with args and the options vardict
// opts, to which it adds handle_token, and returns the Request to wait on.
// The waiter is in place before the call, so no Response is missed.
func (b *bus) call(ctx context.Context, method string, opts map[string]dbus.Variant, args ...any) (*request, error) {
	tok := b.token()
	opts["handle_token"] = dbus.MakeVariant(tok)
	r := &request{b: b, method: method, path: dbus.ObjectPath(requestPrefix + b.sender + "/" + tok), ch: make(chan response, 1)}
	b.mu.Lock()
	b.waiters[r.path] = r.ch
	b.mu.Unlock()
	var handle dbus.ObjectPath
	if err := b.obj.CallWithContext(ctx, method, 0, append(args, opts)...).Store(&handle); err != nil {
		b.forget(r.path)
		return nil, fmt.Errorf("%s: %w", method, describeCallError(err))
	}
	if handle != r.path { // a portal older than 0.9 chose its own path
		b.mu.Lock()
		delete(b.waiters, r.path)
		r.path = handle
		if early, ok := b.early[handle]; ok {
			delete(b.early, handle)
			r.ch <- early
		} else {
			b.waiters[handle] = r.ch
		}
		b.mu.Unlock()
	}
	return r, nil
}

func (b *bus) forget(path dbus.ObjectPath) {
	b.mu.Lock()
	delete(b.waiters, path)
	b.mu.Unlock()
}

// wait waits for the Response: the results on success, a *ResponseError
// otherwise, ctx's error when it ends first (the request stays open).
func (r *request) wait(ctx context.Context) (map[string]dbus.Variant, error) {
	select {
	case resp := <-r.ch:
		r.ch <- resp // a later wait sees it again
		if resp.code != responseSuccess {
			return nil, &ResponseError{Method: r.method, Code: resp.code}
		}
		return resp.results, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cancel closes the Request (org.freedesktop.portal.Request.Close), which
// takes its dialog off the screen.
func (r *request) cancel() {
	r.b.forget(r.path)
	_ = r.b.conn.Object(busName, r.path).Call(ifaceRequest+".Close", 0).Err
}

// property reads a property of the portal object; ok is false when the
// portal lacks the interface.
func (b *bus) property(ctx context.Context, iface, name string) (dbus.Variant, error) {
	var v dbus.Variant
	err := b.obj.CallWithContext(ctx, ifaceProps+".Get", 0, iface, name).Store(&v)
	return v, err
}

// version is the version property of iface, or 0 with the error when the
// portal does not offer iface.
func (b *bus) version(ctx context.Context, iface string) (uint32, error) {
	v, err := b.property(ctx, iface, "version")
	if err != nil {
		return 0, describeCallError(err)
	}
	n, ok := v.Value().(uint32)
	if !ok {
		return 0, fmt.Errorf("%s.version is %s, not a uint32", iface, v.Signature())
	}
	return n, nil
}

// describeCallError says what a D-Bus error from the portal means for the user.
func describeCallError(err error) error {
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
			return fmt.Errorf("%w: xdg-desktop-portal is not running on this session bus (apt-get install xdg-desktop-portal and the portal of your desktop: xdg-desktop-portal-gnome, xdg-desktop-portal-kde or xdg-desktop-portal-wlr)", err)
		}
	}
	return err
}

// sessionClosed reports whether the portal closed session s.
func (b *bus) sessionClosed(s dbus.ObjectPath) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed[s]
}
