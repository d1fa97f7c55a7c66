package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/sampleapp"
)

// BenchmarkClickTextTarget is a click by an OCR target end to end, with no
// model configured: gui_click with target `the first "GREEN"` on the sample app's
// buttons scene (1280x800; the first of two GREENs on it) takes a new screenshot, reads it (a new frame
// each time, so no cached page), clicks the label's centre, and the app
// reports the click on the green button. It reports the median time from
// the call to the app's click event.
func BenchmarkClickTextTarget(b *testing.B) {
	e := startTextEnv(b, sampleapp.SceneButtons, map[string]string{"red": "RED", "green": "GREEN", "blue": "BLUE"}, true)
	click := func() time.Duration {
		t0 := time.Now()
		out := ok(b, e.cs, "gui_click", map[string]any{"target": `the first "GREEN"`})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ev, err := e.app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "click" })
		if err != nil || ev.Target != "green" || !strings.Contains(out, "read \"GREEN\"") {
			b.Fatalf("click: %+v %v (%s), want OCR to click the green button", ev, err, out)
		}
		return time.Since(t0)
	}
	click() // the OCR processes start
	var ds []time.Duration
	for b.Loop() {
		ds = append(ds, click())
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "click-median-ms")
}
