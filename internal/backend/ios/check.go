package ios

import (
	"context"
	"fmt"
	"net/http"
)

// Report is what Check found, for doctor.
type Report struct {
	URL string `json:"url"`
	// Version is WebDriverAgent's; OS and OSVersion the device's system.
	Version   string  `json:"version,omitempty"`
	OS        string  `json:"os,omitempty"`
	OSVersion string  `json:"os_version,omitempty"`
	Device    string  `json:"device,omitempty"` // iphone, ipad
	Name      string  `json:"name,omitempty"`   // the device's name
	Size      string  `json:"size,omitempty"`   // points, as the screen is turned now
	Scale     float64 `json:"scale,omitempty"`
	// Problem says why the backend cannot be used, with the fix.
	Problem string `json:"problem,omitempty"`
}

// OK reports whether the backend can be used.
func (r Report) OK() bool { return r.Problem == "" }

// Lines renders the report as doctor's lines.
func (r Report) Lines() []string {
	var out []string
	if r.Version != "" || r.OS != "" {
		out = append(out, fmt.Sprintf("WebDriverAgent %s at %s", orUnknown(r.Version), r.URL))
	}
	if r.OSVersion != "" {
		out = append(out, fmt.Sprintf("device %q (%s): %s %s, screen %s points at scale %g", r.Name, r.Device, r.OS, r.OSVersion, r.Size, r.Scale))
	}
	if r.Problem != "" {
		out = append(out, "problem: "+r.Problem)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}

// Check reports whether WebDriverAgent answers at o.URL, its version, the
// device's name, iOS version, screen size and scale. It creates no session.
func Check(ctx context.Context, o Options) Report {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	r := Report{URL: o.URL}
	c := newClient(o.URL, o.Timeout)
	var st status
	if err := c.do(ctx, http.MethodGet, "/status", nil, &st); err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Version, r.OS, r.OSVersion, r.Device = st.Build.Version, st.OS.Name, st.OS.Version, st.Device
	if err := checkVersion(st.Build.Version); err != nil {
		r.Problem = err.Error()
		return r
	}
	var info struct {
		Name string `json:"name"`
	}
	if err := c.do(ctx, http.MethodGet, "/wda/device/info", nil, &info); err == nil {
		r.Name = info.Name
	}
	var s screenInfo
	if err := c.do(ctx, http.MethodGet, "/wda/screen", nil, &s); err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Size, r.Scale = fmt.Sprintf("%gx%g", s.ScreenSize.Width, s.ScreenSize.Height), s.Scale
	return r
}
