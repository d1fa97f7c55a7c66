package atspi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

// Report is what Check found, for doctor.
type Report struct {
	Mode Mode `json:"mode"`
	// Reachable says whether the accessibility bus answered; Problem says
	// why not, and what to do.
	Reachable bool   `json:"reachable"`
	Problem   string `json:"problem,omitempty"`
	Address   string `json:"address,omitempty"`
	// Enabled is org.a11y.Status.IsEnabled on the session bus (Known: it
	// could be read). Chromium, Qt and GTK 4 expose their trees only when it
	// is set (GUI_AGENT_ACCESSIBILITY=on sets it).
	Enabled      bool `json:"enabled"`
	EnabledKnown bool `json:"enabled_known"`
	// Apps are the applications registered on the bus.
	Apps []AppReport `json:"apps"`
}

// AppReport is one application on the accessibility bus.
type AppReport struct {
	Name string `json:"name"`
	// Windows is how many top-level objects (windows) its tree has: an
	// application with none exposes no tree worth reading.
	Windows int `json:"windows"`
}

// Check reports whether the accessibility bus is reachable, whether
// IsEnabled is set, and which applications expose trees. It changes
// nothing (not even with ModeOn) and gives up after ctx or a few seconds.
func Check(ctx context.Context, o Options) Report {
	r := Report{Mode: o.Mode}
	if r.Mode == "" {
		r.Mode = ModeAuto
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = time.Second
	}
	if o.SessionBus != "" {
		r.Enabled, r.EnabledKnown = isEnabled(ctx, o)
	}
	probe := o
	probe.Mode = ModeAuto // read only: Check sets nothing
	addr, err := busAddress(ctx, probe)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Address = addr
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		r.Problem = fmt.Sprintf("%v: connect to %s: %v", ErrNoBus, addr, err)
		return r
	}
	defer conn.Close()
	c := &Client{o: o}
	apps, err := c.apps(ctx, conn)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Reachable = true
	r.Apps = make([]AppReport, len(apps))
	err = pipeline(ctx, peer{}, len(apps), 32, o.CallTimeout, func(ctx context.Context, i int) *dbus.Call {
		r.Apps[i].Name = apps[i].name
		return apps[i].p.call(ctx, rootPath, ifaceProps, "Get", ifAccessible, "ChildCount")
	}, func(i int, call *dbus.Call) error {
		var v dbus.Variant
		if call.Err == nil && call.Store(&v) == nil {
			n, _ := v.Value().(int32)
			r.Apps[i].Windows = int(n)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errHung) {
		r.Problem = err.Error()
	}
	return r
}

func isEnabled(ctx context.Context, o Options) (bool, bool) {
	sess, err := dbus.Connect(o.SessionBus, dbus.WithContext(ctx))
	if err != nil {
		return false, false
	}
	defer sess.Close()
	call, err := peer{conn: sess, dest: busName}.do(ctx, o.CallTimeout, busPath, ifaceProps, "Get", ifaceStatus, "IsEnabled")
	var v dbus.Variant
	if err != nil || call.Store(&v) != nil {
		return false, false
	}
	on, ok := v.Value().(bool)
	return on, ok
}
