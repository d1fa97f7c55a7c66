package portal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/geom"
)

// Device types of SelectDevices' types and Start's devices (bitmask).
const (
	deviceKeyboard = 1
	devicePointer  = 2
)

// sourceMonitor is ScreenCast's MONITOR source type.
const sourceMonitor = 1

// persistUntilRevoked is persist_mode 2: the grant persists until the user
// revokes it.
const persistUntilRevoked = 2

// stream is one ScreenCast stream of the session: its PipeWire node id (the
// stream NotifyPointerMotionAbsolute takes) and its place in the
// compositor's logical coordinates.
type stream struct {
	node   uint32
	bounds geom.Rect
}

// remote is the RemoteDesktop session: idle, pending (being set up: the
// dialog may be on the screen), ready, or failed with the reason.
type remote struct {
	b *Backend

	mu      sync.Mutex
	state   string // "" (idle), "idle", "pending", "ready", "closed"
	err     error  // why the last attempt failed, told once
	done    chan struct{}
	session dbus.ObjectPath
	streams []stream
	devices uint32
	cursor  *geom.GlobalPoint
	pressed map[string]func(context.Context) error // what is held, and how to release it
	current *request                               // the request being waited on
}

// probeRemote reads what the portal offers for input: the RemoteDesktop
// interface, its device types and ConnectToEIS.
func (b *Backend) probeRemote(ctx context.Context) {
	v, err := b.bus.version(ctx, ifaceRemote)
	if err != nil {
		b.remoteErr = fmt.Errorf("portal input: the desktop portal offers no %s, so guiagent cannot send input (%v); GNOME's and KDE's portals (xdg-desktop-portal-gnome, -kde) offer it, xdg-desktop-portal-wlr does not: on wlroots use --backend wayland", ifaceRemote, err)
		return
	}
	b.remoteVersion = v
	if p, err := b.bus.property(ctx, ifaceRemote, "AvailableDeviceTypes"); err == nil {
		b.deviceTypes, _ = p.Value().(uint32)
	}
	if missing := wantDevices &^ b.deviceTypes; missing != 0 {
		b.remoteErr = fmt.Errorf("portal input: the RemoteDesktop portal offers device types %d, without %s", b.deviceTypes, deviceNames(missing))
		return
	}
	var xml string
	if err := b.bus.conn.Object(busName, objectPath).CallWithContext(ctx, "org.freedesktop.DBus.Introspectable.Introspect", 0).Store(&xml); err == nil {
		b.eis = strings.Contains(xml, `"ConnectToEIS"`)
	}
}

const wantDevices = deviceKeyboard | devicePointer

func deviceNames(mask uint32) string {
	var n []string
	if mask&deviceKeyboard != 0 {
		n = append(n, "the keyboard")
	}
	if mask&devicePointer != 0 {
		n = append(n, "the pointer")
	}
	return strings.Join(n, " and ")
}

// begin starts setting the session up in the background, unless it is
// already pending or ready.
func (r *remote) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == "pending" || r.state == "ready" || r.state == "closed" {
		return
	}
	r.state, r.err, r.done = "pending", nil, make(chan struct{})
	go r.establish(r.done)
}

// establish runs CreateSession, SelectDevices, SelectSources and Start.
func (r *remote) establish(done chan struct{}) {
	defer close(done)
	s, err := r.setUp(r.b.ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current = nil
	if err != nil {
		if s.session != "" {
			_ = r.b.bus.conn.Object(busName, s.session).Call(ifaceSession+".Close", 0).Err
		}
		r.state, r.err = "idle", err
		return
	}
	r.state, r.session, r.streams, r.devices = "ready", s.session, s.streams, s.devices
	r.pressed = map[string]func(context.Context) error{}
}

// setUp is the portal's sequence for a remote desktop session with a
// monitor stream, asking for a grant that persists (persist_mode 2) and
// restoring the last one from its token.
func (r *remote) setUp(ctx context.Context) (started, error) {
	var s started
	res, err := r.ask(ctx, ifaceRemote+".CreateSession", map[string]dbus.Variant{"session_handle_token": dbus.MakeVariant(r.b.bus.token())})
	if err != nil {
		return s, err
	}
	if s.session, err = sessionHandle(res); err != nil {
		return s, err
	}
	devOpts := map[string]dbus.Variant{"types": dbus.MakeVariant(uint32(wantDevices)), "persist_mode": dbus.MakeVariant(uint32(persistUntilRevoked))}
	tok, err := r.b.loadToken()
	if err != nil {
		return s, err
	}
	if tok != "" {
		devOpts["restore_token"] = dbus.MakeVariant(tok)
	}
	if _, err := r.ask(ctx, ifaceRemote+".SelectDevices", devOpts, s.session); err != nil {
		return s, err
	}
	srcOpts := map[string]dbus.Variant{"types": dbus.MakeVariant(uint32(sourceMonitor)), "multiple": dbus.MakeVariant(true)}
	if _, err := r.ask(ctx, ifaceCast+".SelectSources", srcOpts, s.session); err != nil {
		return s, err
	}
	if res, err = r.ask(ctx, ifaceRemote+".Start", map[string]dbus.Variant{}, s.session, ""); err != nil {
		return s, err
	}
	if err := r.b.saveToken(res); err != nil {
		return s, err
	}
	return s, s.read(res)
}

// ask makes one request and waits for its Response, noting it as the
// current one (Close cancels it).
func (r *remote) ask(ctx context.Context, method string, opts map[string]dbus.Variant, args ...any) (map[string]dbus.Variant, error) {
	req, err := r.b.bus.call(ctx, method, opts, args...)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.current = req
	r.mu.Unlock()
	res, err := req.wait(ctx)
	var re *ResponseError
	if errors.As(err, &re) && re.Code == responseCancelled {
		return nil, fmt.Errorf("portal input: the user refused remote control in the portal's dialog (%s answered 1, cancelled); the next input call asks again", method)
	}
	return res, err
}

// started is what Start gave: the session, its streams and devices.
type started struct {
	session dbus.ObjectPath
	streams []stream
	devices uint32
}

// sessionHandle reads CreateSession's session_handle: an object path by the
// specification, a string from portals before 1.0.
func sessionHandle(res map[string]dbus.Variant) (dbus.ObjectPath, error) {
	switch v := res["session_handle"].Value().(type) {
	case dbus.ObjectPath:
		return v, nil
	case string:
		return dbus.ObjectPath(v), nil
	}
	return "", fmt.Errorf("portal input: CreateSession's response has no session_handle (results %v)", res)
}

// read takes devices and streams from Start's results and checks that the
// user granted the keyboard and the pointer and shared a monitor.
func (s *started) read(res map[string]dbus.Variant) error {
	s.devices, _ = res["devices"].Value().(uint32)
	if missing := wantDevices &^ s.devices; missing != 0 {
		return fmt.Errorf("portal input: the session was started without %s (devices %d): allow both in the portal's dialog", deviceNames(missing), s.devices)
	}
	var raw []struct {
		Node  uint32
		Props map[string]dbus.Variant
	}
	if v, ok := res["streams"]; !ok || dbus.Store([]any{v.Value()}, &raw) != nil || len(raw) == 0 {
		return errors.New("portal input: the session was started without a screen cast stream, and absolute pointer motion needs one: share a monitor in the portal's dialog")
	}
	for _, st := range raw {
		b := geom.Rect{}
		if p, ok := st.Props["position"]; ok {
			var xy struct{ X, Y int32 }
			if dbus.Store([]any{p.Value()}, &xy) == nil {
				b.X, b.Y = int(xy.X), int(xy.Y)
			}
		}
		if p, ok := st.Props["size"]; ok {
			var wh struct{ W, H int32 }
			if dbus.Store([]any{p.Value()}, &wh) == nil {
				b.W, b.H = int(wh.W), int(wh.H)
			}
		}
		s.streams = append(s.streams, stream{node: st.Node, bounds: b})
	}
	return nil
}

// ready returns the started session, waiting up to InputWait for one being
// set up (a restored grant); while the dialog waits it fails with
// ErrPermissionPending, and a failed attempt's reason is told once, after
// which the next call asks again.
func (r *remote) ready(ctx context.Context) error {
	if r.b.remoteErr != nil {
		return r.b.remoteErr
	}
	if r.b.opts.NoInput {
		return errors.New("portal input: this backend was opened for capture only")
	}
	r.mu.Lock()
	if r.state == "ready" && r.b.bus.sessionClosed(r.session) {
		r.state, r.err = "idle", errors.New("portal input: the desktop closed the remote desktop session (the user stopped sharing?); the next input call asks again")
	}
	state, err, done := r.state, r.err, r.done
	if state == "closed" {
		r.mu.Unlock()
		return errors.New("portal input: the backend is closed")
	}
	if state == "idle" && err != nil {
		r.err = nil
		r.mu.Unlock()
		return err
	}
	r.mu.Unlock()
	if state == "ready" {
		return nil
	}
	if state == "idle" || state == "" {
		r.begin()
		r.mu.Lock()
		done = r.done
		r.mu.Unlock()
	}
	t := time.NewTimer(r.b.opts.InputWait)
	defer t.Stop()
	select {
	case <-done:
		return r.ready(ctx)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	return fmt.Errorf("portal input: %w: it asks to allow remote interaction (keyboard and pointer) and to share the screen; approve it there (guiagent keeps the grant%s, so this is asked once), then retry", ErrPermissionPending, r.b.tokenNote())
}

// status says where the input grant stands, for doctor.
func (r *remote) status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.state == "ready":
		return fmt.Sprintf("ready: remote desktop session with %d monitor stream(s)", len(r.streams))
	case r.state == "pending":
		return ErrPermissionPending.Error() + ": approve remote interaction there (asked once; the grant is kept" + r.b.tokenNote() + ")"
	case r.err != nil:
		return r.err.Error()
	case r.state == "closed":
		return "closed"
	}
	return "not started"
}

// displays are the session's streams as displays, "" when not started.
func (r *remote) displays() []geom.Display {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != "ready" {
		return nil
	}
	var ds []geom.Display
	for i, s := range r.streams {
		if s.bounds.Empty() {
			return nil // sizes unknown: the screenshot's size serves
		}
		ds = append(ds, geom.Display{ID: fmt.Sprint(i), Name: fmt.Sprintf("stream %d", s.node), Bounds: s.bounds, Primary: s.bounds.X == 0 && s.bounds.Y == 0})
	}
	return ds
}

// close releases what is held, closes the session and cancels a request
// still waiting.
func (r *remote) close() {
	r.releaseAll()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil {
		r.current.cancel()
	}
	if r.state == "ready" {
		_ = r.b.bus.conn.Object(busName, r.session).Call(ifaceSession+".Close", 0).Err
	}
	r.state = "closed"
}
