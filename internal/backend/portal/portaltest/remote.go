package portaltest

import (
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"
)

type remoteIface struct{ f *Fake }

type castIface struct{ f *Fake }

type sessionIface struct {
	f *Fake
	s *session
}

// Close is org.freedesktop.portal.Session.Close.
func (si *sessionIface) Close() *dbus.Error {
	si.f.mu.Lock()
	si.s.closed = true
	si.f.mu.Unlock()
	si.f.record(Call{Method: "Session.Close", Session: si.s.path})
	return nil
}

// CreateSession is RemoteDesktop.CreateSession(a{sv} options) -> o handle;
// the Response carries session_handle (o).
func (r *remoteIface) CreateSession(sender dbus.Sender, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	o, derr := options("CreateSession", opts, map[string]string{"handle_token": "s", "session_handle_token": "s"})
	if derr != nil {
		return "", derr
	}
	f := r.f
	f.record(Call{Method: "RemoteDesktop.CreateSession", Options: o})
	tok, _ := o["session_handle_token"].(string)
	if tok == "" {
		tok = "session"
	}
	s := &session{path: dbus.ObjectPath("/org/freedesktop/portal/desktop/session/" + strings.ReplaceAll(strings.TrimPrefix(string(sender), ":"), ".", "_") + "/" + tok), devices: 7}
	f.mu.Lock()
	f.sessions[s.path] = s
	f.mu.Unlock()
	if err := f.conn.Export(&sessionIface{f, s}, s.path, ifaceSession); err != nil {
		return "", dbus.MakeFailedError(err)
	}
	path, answer := f.request(sender, o)
	go answer(0, map[string]dbus.Variant{"session_handle": dbus.MakeVariant(s.path)})
	return path, nil
}

// session returns the open session at path, unstarted when wantStarted is false.
func (f *Fake) session(path dbus.ObjectPath, wantStarted bool) (*session, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[path]
	switch {
	case !ok || s.closed:
		return nil, invalid("no open session %s", path)
	case s.started != wantStarted:
		return nil, invalid("session %s: started is %v", path, s.started)
	}
	return s, nil
}

// SelectDevices is RemoteDesktop.SelectDevices(o session_handle, a{sv} options) -> o handle.
func (r *remoteIface) SelectDevices(sender dbus.Sender, sh dbus.ObjectPath, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	o, derr := options("SelectDevices", opts, map[string]string{"handle_token": "s", "types": "u", "restore_token": "s", "persist_mode": "u"})
	if derr != nil {
		return "", derr
	}
	f := r.f
	f.record(Call{Method: "RemoteDesktop.SelectDevices", Session: sh, Options: o})
	s, derr := f.session(sh, false)
	if derr != nil {
		return "", derr
	}
	f.mu.Lock()
	if t, ok := o["types"].(uint32); ok {
		s.devices = t
	}
	s.persist, _ = o["persist_mode"].(uint32)
	if tok, _ := o["restore_token"].(string); f.tokens[tok] {
		delete(f.tokens, tok) // a token restores once
		s.restored = true
	}
	s.selected = true
	f.mu.Unlock()
	path, answer := f.request(sender, o)
	go answer(0, map[string]dbus.Variant{})
	return path, nil
}

// SelectSources is ScreenCast.SelectSources(o session_handle, a{sv} options)
// -> o handle. persist_mode and restore_token belong to RemoteDesktop for a
// remote desktop session, so they are refused here.
func (c *castIface) SelectSources(sender dbus.Sender, sh dbus.ObjectPath, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	o, derr := options("SelectSources", opts, map[string]string{"handle_token": "s", "types": "u", "multiple": "b", "cursor_mode": "u", "restore_token": "s", "persist_mode": "u"})
	if derr != nil {
		return "", derr
	}
	f := c.f
	f.record(Call{Method: "ScreenCast.SelectSources", Session: sh, Options: o})
	if _, ok := o["persist_mode"]; ok {
		return "", invalid("Remote desktop sessions cannot persist through ScreenCast: use RemoteDesktop.SelectDevices")
	}
	if _, ok := o["restore_token"]; ok {
		return "", invalid("Remote desktop sessions cannot be restored through ScreenCast: use RemoteDesktop.SelectDevices")
	}
	s, derr := f.session(sh, false)
	if derr != nil {
		return "", derr
	}
	f.mu.Lock()
	s.sources = true
	f.mu.Unlock()
	path, answer := f.request(sender, o)
	go answer(0, map[string]dbus.Variant{})
	return path, nil
}

// streamProps is one entry of Start's streams, a(ua{sv}).
type streamProps struct {
	Node  uint32
	Props map[string]dbus.Variant
}

// Start is RemoteDesktop.Start(o session_handle, s parent_window, a{sv}
// options) -> o handle: the dialog, unless the session was restored.
func (r *remoteIface) Start(sender dbus.Sender, sh dbus.ObjectPath, parent string, opts map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	o, derr := options("Start", opts, map[string]string{"handle_token": "s"})
	if derr != nil {
		return "", derr
	}
	f := r.f
	f.record(Call{Method: "RemoteDesktop.Start", Session: sh, Options: o, Args: []any{parent}})
	s, derr := f.session(sh, false)
	if derr != nil {
		return "", derr
	}
	if !s.selected {
		return "", invalid("Start before SelectDevices")
	}
	path, answer := f.request(sender, o)
	decide := func(approve bool) {
		if !approve {
			answer(1, map[string]dbus.Variant{})
			return
		}
		answer(0, f.started(s))
	}
	f.mu.Lock()
	restored, ask := s.restored, f.o.AskUser
	if !restored {
		f.dialogs++
		if ask {
			f.pending[path] = decide
		}
	}
	f.mu.Unlock()
	if restored || !ask {
		go decide(true)
	}
	return path, nil
}

// started marks s started and returns Start's results: devices, streams
// and, with persist_mode 2, a new restore token.
func (f *Fake) started(s *session) map[string]dbus.Variant {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.started = true
	res := map[string]dbus.Variant{"devices": dbus.MakeVariant(s.devices & 3), "clipboard_enabled": dbus.MakeVariant(false)}
	if s.sources {
		var streams []streamProps
		for i, m := range f.o.Monitors {
			streams = append(streams, streamProps{Node: uint32(40 + i), Props: map[string]dbus.Variant{
				"id": dbus.MakeVariant(fmt.Sprint(i)), "source_type": dbus.MakeVariant(uint32(1)),
				"position": dbus.MakeVariant(struct{ X, Y int32 }{int32(m.X), int32(m.Y)}),
				"size":     dbus.MakeVariant(struct{ W, H int32 }{int32(m.W), int32(m.H)})}})
		}
		res["streams"] = dbus.MakeVariant(streams)
	}
	if s.persist == 2 {
		f.seq++
		tok := fmt.Sprintf("restore-%d", f.seq)
		f.tokens[tok] = true
		res["restore_token"] = dbus.MakeVariant(tok)
	}
	return res
}

// notify records a Notify* call on a started session that was granted device.
// apply, when set, changes the held state before the OnNotify hook runs.
func (f *Fake) notify(method string, sh dbus.ObjectPath, opts map[string]dbus.Variant, device uint32, apply func() *dbus.Error, args ...any) (*session, *dbus.Error) {
	o, derr := options(method, opts, map[string]string{"finish": "b"})
	if derr != nil {
		return nil, derr
	}
	c := Call{Method: "RemoteDesktop." + method, Session: sh, Options: o, Args: args}
	f.record(c)
	s, derr := f.session(sh, true)
	if derr != nil {
		return nil, derr
	}
	if s.devices&device == 0 {
		return nil, invalid("%s: the session has no device %d", method, device)
	}
	if apply != nil {
		if derr := apply(); derr != nil {
			return nil, derr
		}
	}
	f.mu.Lock()
	fn := f.onNotify
	f.mu.Unlock()
	if fn != nil {
		fn(c)
	}
	return s, nil
}

func (f *Fake) press(what string, state uint32) *dbus.Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch state {
	case 1:
		f.pressed[what] = true
	case 0:
		delete(f.pressed, what)
	default:
		return invalid("state %d: 0 released, 1 pressed", state)
	}
	return nil
}

// NotifyPointerMotionAbsolute(o session_handle, a{sv} options, u stream, d x, d y).
func (r *remoteIface) NotifyPointerMotionAbsolute(sh dbus.ObjectPath, opts map[string]dbus.Variant, stream uint32, x, y float64) *dbus.Error {
	_, derr := r.f.notify("NotifyPointerMotionAbsolute", sh, opts, 2, nil, stream, x, y)
	if derr != nil {
		return derr
	}
	i := int(stream) - 40
	if i < 0 || i >= len(r.f.o.Monitors) {
		return invalid("unknown stream %d", stream)
	}
	if m := r.f.o.Monitors[i]; x < 0 || y < 0 || x >= float64(m.W) || y >= float64(m.H) {
		return invalid("(%g, %g) is outside stream %d (%dx%d)", x, y, stream, m.W, m.H)
	}
	return nil
}

// NotifyPointerButton(o session_handle, a{sv} options, i button, u state).
func (r *remoteIface) NotifyPointerButton(sh dbus.ObjectPath, opts map[string]dbus.Variant, button int32, state uint32) *dbus.Error {
	apply := func() *dbus.Error { return r.f.press(fmt.Sprint("button ", button), state) }
	_, derr := r.f.notify("NotifyPointerButton", sh, opts, 2, apply, button, state)
	return derr
}

// NotifyPointerAxisDiscrete(o session_handle, a{sv} options, u axis, i steps).
func (r *remoteIface) NotifyPointerAxisDiscrete(sh dbus.ObjectPath, opts map[string]dbus.Variant, axis uint32, steps int32) *dbus.Error {
	if axis > 1 {
		return invalid("axis %d: 0 vertical, 1 horizontal", axis)
	}
	_, derr := r.f.notify("NotifyPointerAxisDiscrete", sh, opts, 2, nil, axis, steps)
	return derr
}

// NotifyPointerAxis(o session_handle, a{sv} options, d dx, d dy).
func (r *remoteIface) NotifyPointerAxis(sh dbus.ObjectPath, opts map[string]dbus.Variant, dx, dy float64) *dbus.Error {
	_, derr := r.f.notify("NotifyPointerAxis", sh, opts, 2, nil, dx, dy)
	return derr
}

// NotifyKeyboardKeysym(o session_handle, a{sv} options, i keysym, u state).
func (r *remoteIface) NotifyKeyboardKeysym(sh dbus.ObjectPath, opts map[string]dbus.Variant, keysym int32, state uint32) *dbus.Error {
	apply := func() *dbus.Error { return r.f.press(fmt.Sprintf("key %#x", keysym), state) }
	_, derr := r.f.notify("NotifyKeyboardKeysym", sh, opts, 1, apply, keysym, state)
	return derr
}
