package platform

import (
	"fmt"
	"runtime"
	"strings"
)

// Choice is the backend Select picked and why, in words a person checks
// against their session ("WAYLAND_DISPLAY=wayland-1 and
// XDG_SESSION_TYPE=wayland: wayland (wlroots: sway)").
type Choice struct {
	Backend Backend
	Why     string
	// Compositor is the Wayland compositor named by XDG_CURRENT_DESKTOP, or "".
	Compositor string
}

// rule is one row of the selection table: when it matches o, it picks a
// backend; why explains the pick.
type rule struct {
	match func(o Options) bool
	pick  func(o Options) (Choice, error)
}

// rules is the selection table, tried in order; the first match decides.
var rules = []rule{
	{func(o Options) bool { return o.Backend != "" && o.Backend != Auto }, explicit},
	{func(o Options) bool { return o.VNC != "" }, func(o Options) (Choice, error) {
		return Choice{Backend: VNC, Why: "--vnc " + o.VNC + " is set"}, nil
	}},
	{func(Options) bool { return runtime.GOOS == "windows" }, native(Windows)},
	{func(Options) bool { return runtime.GOOS == "darwin" }, native(Darwin)},
	{func(o Options) bool { return o.ForceVirtual }, func(Options) (Choice, error) {
		return Choice{Backend: X11, Why: "a private Xvfb this process starts for itself"}, nil
	}},
	{waylandSession, fromWayland},
	{func(o Options) bool { return o.Session.XDisplay != "" }, func(o Options) (Choice, error) {
		why := "DISPLAY=" + o.Session.XDisplay
		if t := o.Session.Type; t != "" {
			why += " and XDG_SESSION_TYPE=" + t
		}
		return Choice{Backend: X11, Why: why + ": x11"}, nil
	}},
	{func(o Options) bool { return o.VirtualDisplay.W != 0 }, func(Options) (Choice, error) {
		return Choice{Backend: X11, Why: "neither WAYLAND_DISPLAY nor DISPLAY is set: a private Xvfb for --virtual-display"}, nil
	}},
}

// Select picks the backend for o from the table above: an explicit
// o.Backend, else VNC when an address is given, else the OS's own desktop
// (Windows, macOS), else on Linux the session: Wayland (WAYLAND_DISPLAY set
// and XDG_SESSION_TYPE wayland or unset) with the native backend on wlroots
// compositors and the portal on GNOME, KDE and the others, else X11
// (DISPLAY), else a private Xvfb when --virtual-display asks for one.
func Select(o Options) (Choice, error) {
	for _, r := range rules {
		if r.match(o) {
			return r.pick(o)
		}
	}
	return Choice{}, fmt.Errorf("%w: neither WAYLAND_DISPLAY nor DISPLAY is set; run inside a desktop session, or pass --virtual-display 1280x800 to use a private Xvfb", ErrNoDisplay)
}

// Backends lists the backends --backend accepts on this operating system.
func Backends() []Backend {
	anywhere := []Backend{VNC, Browser, Android, IOS, Harmony}
	switch runtime.GOOS {
	case "linux":
		return append([]Backend{Auto, X11, Wayland, Portal}, anywhere...)
	case "windows":
		return append([]Backend{Auto, Windows}, anywhere...)
	case "darwin":
		return append([]Backend{Auto, Darwin}, anywhere...)
	}
	return append([]Backend{Auto}, anywhere...)
}

func (o Options) backendSetting() string {
	if o.BackendSetting != "" {
		return o.BackendSetting
	}
	return "--backend "
}

// explicit is the row of a backend asked for by name.
func explicit(o Options) (Choice, error) {
	ok := false
	var names []string
	for _, b := range Backends() {
		ok = ok || b == o.Backend
		names = append(names, string(b))
	}
	if !ok {
		return Choice{}, fmt.Errorf("%s%s: not available on %s; use one of %s", o.backendSetting(), o.Backend, runtime.GOOS, strings.Join(names, ", "))
	}
	ch := Choice{Backend: o.Backend, Why: o.backendSetting() + string(o.Backend)}
	switch o.Backend {
	case VNC:
		if o.VNC == "" {
			return Choice{}, fmt.Errorf("%svnc needs the server's address: pass --vnc host[:port]", o.backendSetting())
		}
	case Wayland, Portal:
		if o.Session.WaylandDisplay == "" {
			return Choice{}, fmt.Errorf("%s%s needs a Wayland session, but WAYLAND_DISPLAY is not set: run inside the session, or set WAYLAND_DISPLAY (and XDG_RUNTIME_DIR) to its socket", o.backendSetting(), o.Backend)
		}
		ch.Compositor = compositor(o.Session.CurrentDesktop)
	}
	return ch, nil
}

func native(b Backend) func(Options) (Choice, error) {
	return func(Options) (Choice, error) {
		return Choice{Backend: b, Why: "the " + runtime.GOOS + " desktop of this session"}, nil
	}
}

// waylandSession: WAYLAND_DISPLAY is set and XDG_SESSION_TYPE does not say
// another kind of session (an X11 session with a nested compositor stays X11).
func waylandSession(o Options) bool {
	t := strings.ToLower(o.Session.Type)
	return o.Session.WaylandDisplay != "" && (t == "" || t == "wayland" || o.Session.XDisplay == "")
}

// wlroots lists compositors, as XDG_CURRENT_DESKTOP names them (lowercase),
// that offer the wlroots protocols the native backend needs (screencopy,
// virtual pointer and keyboard).
var wlroots = map[string]bool{"sway": true, "hyprland": true, "river": true, "wayfire": true, "labwc": true, "dwl": true, "qtile": true, "cage": true, "wlroots": true}

// compositor is the first entry of XDG_CURRENT_DESKTOP (a colon list such as
// "ubuntu:GNOME"): the one that names the compositor, or the last when the
// first is a distribution's name.
func compositor(currentDesktop string) string {
	parts := strings.Split(currentDesktop, ":")
	for _, p := range parts {
		if wlroots[strings.ToLower(p)] {
			return p
		}
	}
	return parts[len(parts)-1]
}

// fromWayland picks wayland on a wlroots compositor and the portal on every
// other one (GNOME's Mutter and KDE's KWin offer no wlroots protocols).
func fromWayland(o Options) (Choice, error) {
	why := "WAYLAND_DISPLAY=" + o.Session.WaylandDisplay
	if t := o.Session.Type; t != "" {
		why += " and XDG_SESSION_TYPE=" + t
	}
	c := compositor(o.Session.CurrentDesktop)
	switch {
	case c == "":
		return Choice{Backend: Wayland, Why: why + ": wayland (wlroots assumed: XDG_CURRENT_DESKTOP is not set; pass --backend portal on GNOME or KDE)"}, nil
	case wlroots[strings.ToLower(c)]:
		return Choice{Backend: Wayland, Compositor: c, Why: why + ": wayland (wlroots: " + c + ")"}, nil
	}
	return Choice{Backend: Portal, Compositor: c, Why: why + ": portal (XDG_CURRENT_DESKTOP=" + o.Session.CurrentDesktop + " is not a wlroots compositor)"}, nil
}
