package harmony

import (
	"context"
	"errors"
	"fmt"
)

// Report is what Check found, for doctor.
type Report struct {
	HDC     string   `json:"hdc,omitempty"`
	Targets []string `json:"targets,omitempty"`
	// Target is the device the backend would use; Problem why none (or
	// why it cannot be used), with the fix.
	Target  string `json:"target,omitempty"`
	Model   string `json:"model,omitempty"`
	Version string `json:"version,omitempty"`
	API     string `json:"api,omitempty"`
	Size    string `json:"size,omitempty"` // pixels, as the screen is turned now
	// NoHDC is set when the hdc program is missing.
	NoHDC   bool   `json:"no_hdc,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// OK reports whether the backend can be used.
func (r Report) OK() bool { return r.Problem == "" }

// Lines renders the report as doctor's lines.
func (r Report) Lines() []string {
	var out []string
	if r.HDC != "" {
		out = append(out, fmt.Sprintf("hdc %s: devices %s", r.HDC, orNone(r.Targets)))
	}
	if r.Target != "" && r.Model != "" {
		out = append(out, fmt.Sprintf("using %s: %s, %s (API %s), screen %s", r.Target, r.Model, r.Version, r.API, r.Size))
	}
	if r.Problem != "" {
		out = append(out, "problem: "+r.Problem)
	}
	return out
}

// Check reports whether hdc is there, the devices connected, and the
// chosen device's model, system version and screen.
func Check(ctx context.Context, o Options) Report {
	var r Report
	hdc, err := FindHDC(o)
	if err != nil {
		r.NoHDC, r.Problem = errors.Is(err, ErrNoHDC), err.Error()
		return r
	}
	r.HDC = hdc
	if r.Targets, err = Targets(ctx, hdc, o.Timeout); err != nil {
		r.Problem = err.Error()
		return r
	}
	b, err := Open(ctx, o)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	defer b.Close()
	r.Target, r.Model, r.Version, r.API = b.target, b.model, b.version, b.api
	s, err := b.screenSize(ctx)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Size = fmt.Sprintf("%dx%d", s.X, s.Y)
	return r
}
