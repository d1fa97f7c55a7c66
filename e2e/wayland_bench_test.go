//go:build linux

package e2e

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/backend/wayland/swaytest"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/testenv"
)

// clickSamples is how many clicks each median of BenchmarkClickRoundTrip is of.
const clickSamples = 200

// BenchmarkClickRoundTrip measures gui_click over MCP (stdio), from the
// call to its result, on headless sway with the GTK fixture (the wayland
// backend) and, in the same run, on a 1280x800 Xvfb (the x11 backend) as the
// baseline, with the sample application receiving the clicks there. The
// clicks alternate between two points of the canvas of the
// first output (screen space). Metrics: medians and 90th percentiles in ms
// of clickSamples clicks each.
func BenchmarkClickRoundTrip(b *testing.B) {
	d := startWayland(b, nil, benchEnv...)
	o := d.displays[swaytest.Output1]
	wl := clickTimes(b, d.cs, o.X+300, o.Y+300)
	d.app.Take()

	vd := xvfbtest.Start(b, 1280, 800)
	xapp, err := sampleapp.Start(context.Background(), sampleapp.Options{Display: vd.Display, Scene: sampleapp.SceneForm})
	if err != nil {
		b.Fatal(err)
	}
	defer xapp.Close()
	cmd := newGuiagentTB(b, append([]string{"DISPLAY=" + vd.Display}, benchEnv...)...).command("serve")
	logs := &testenv.Buffer{}
	cmd.Stderr = logs
	x := clickTimes(b, mustDial(b, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, client{name: "e2e-bench-x11"}, logs), 300, 300)

	for b.Loop() {
		call(b, d.cs, "gui_click", map[string]any{"x": o.X + 300, "y": o.Y + 300, "space": "screen"})
	}
	b.ReportMetric(percentile(wl, 50), "wl-median-ms")
	b.ReportMetric(percentile(wl, 90), "wl-p90-ms")
	b.ReportMetric(percentile(x, 50), "x11-median-ms")
	b.ReportMetric(percentile(x, 90), "x11-p90-ms")
}

// benchEnv is the setting of both servers of BenchmarkClickRoundTrip.
var benchEnv = []string{"GUI_AGENT_LOG_LEVEL=info"}

// clickTimes clicks clickSamples times over cs, alternating between (x, y)
// and 40 pixels right of it, and returns each call's time in ms.
func clickTimes(b *testing.B, cs *mcp.ClientSession, x, y int) []float64 {
	b.Helper()
	ctx := context.Background()
	for range 10 { // warm up
		call(b, cs, "gui_click", map[string]any{"x": x, "y": y, "space": "screen"})
	}
	ts := make([]float64, 0, clickSamples)
	for i := range clickSamples {
		args := map[string]any{"x": x + 40*(i%2), "y": y, "space": "screen"}
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gui_click", Arguments: args})
		el := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatalf("gui_click: %v %s", err, textOf(res))
		}
		ts = append(ts, float64(el.Microseconds())/1000)
	}
	return ts
}

// percentile returns the p-th percentile of ts (sorted in place).
func percentile(ts []float64, p int) float64 {
	slices.Sort(ts)
	return ts[min(len(ts)-1, len(ts)*p/100)]
}

// newGuiagentTB is a guiagent process's environment for benchmarks: a
// private state directory and extra settings.
func newGuiagentTB(b *testing.B, extra ...string) *guiagent {
	state := b.TempDir()
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state}, extra...)
	return &guiagent{state: state, env: env}
}
