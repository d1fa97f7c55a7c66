package android

import (
	"context"
	"fmt"
	"image"
	"strconv"

	"github.com/guiagent/guiagent/internal/backend/android/adb"
)

// Report is what Check found, for doctor.
type Report struct {
	Server        string           `json:"server"`
	ServerVersion int              `json:"server_version,omitempty"` // 41 for adb 1.0.41
	Devices       []adb.DeviceInfo `json:"devices,omitempty"`
	// Serial is the device the backend would use; Problem why none (or
	// why it cannot be used), with the fix.
	Serial          string `json:"serial,omitempty"`
	Model           string `json:"model,omitempty"`
	Android         string `json:"android,omitempty"`
	SDK             int    `json:"sdk,omitempty"`
	Size            string `json:"size,omitempty"` // device pixels, as the screen is turned now
	Density         int    `json:"density,omitempty"`
	UnicodeKeyboard bool   `json:"unicode_keyboard"`
	Problem         string `json:"problem,omitempty"`
}

// OK reports whether the backend can be used.
func (r Report) OK() bool { return r.Problem == "" }

// Lines renders the report as doctor's lines.
func (r Report) Lines() []string {
	var out []string
	if r.ServerVersion > 0 {
		out = append(out, fmt.Sprintf("adb server %s: version %d", r.Server, r.ServerVersion))
	}
	for _, d := range r.Devices {
		out = append(out, fmt.Sprintf("device %s: %s %s", d.Serial, d.State, d.Model))
	}
	if r.Serial != "" && r.Model != "" {
		kb := "no Unicode keyboard (install ADBKeyboard to type text outside ASCII)"
		if r.UnicodeKeyboard {
			kb = "Unicode keyboard: ADBKeyboard"
		}
		out = append(out, fmt.Sprintf("using %s: %s, Android %s (API %d), screen %s at %d dpi, %s", r.Serial, r.Model, r.Android, r.SDK, r.Size, r.Density, kb))
	}
	if r.Problem != "" {
		out = append(out, "problem: "+r.Problem)
	}
	return out
}

// Check reports the adb server, the devices and their states, and the
// chosen device's model, Android version, screen and keyboard.
func Check(ctx context.Context, o Options) Report {
	c := &adb.Client{Addr: o.ADB, Timeout: o.Timeout}
	r := Report{Server: o.ADB}
	if r.Server == "" {
		r.Server = adb.DefaultAddr
	}
	if err := ensureServer(ctx, c, o.ADBPath); err != nil {
		r.Problem = err.Error()
		return r
	}
	v, err := c.Version(ctx)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.ServerVersion = v
	if r.Devices, err = c.Devices(ctx); err != nil {
		r.Problem = err.Error()
		return r
	}
	serial, err := chooseDevice(ctx, c, o.Serial)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Serial = serial
	b, err := Open(ctx, Options{ADB: o.ADB, Serial: serial, Timeout: o.Timeout, Logger: o.Logger})
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Model, r.Android, r.SDK, r.Density, r.UnicodeKeyboard = b.model, b.release, b.sdk, b.density, b.unicode
	s, err := b.screenSize(ctx)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Size = size(s)
	return r
}

func size(s image.Point) string { return strconv.Itoa(s.X) + "x" + strconv.Itoa(s.Y) }
