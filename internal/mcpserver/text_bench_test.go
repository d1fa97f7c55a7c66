package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/ocr/tesseract"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// BenchmarkClickTextTarget is a click by an OCR target end to end, with no
// model configured: gui_click with target `the first "GREEN"` on the sample app's
// buttons scene (1280x800; the first of two GREENs on it) takes a new screenshot, reads it (a new frame
// each time, so no cached page), clicks the label's centre, and the app
// reports the click on the green button. It reports the median time from
// the call to the app's click event: with the engine's line cache off
// (every click reads every line) and on (the screen unchanged, no line is
// read again).
func BenchmarkClickTextTarget(b *testing.B) {
	labels := map[string]string{"red": "RED", "green": "GREEN", "blue": "BLUE"}
	cold := clickTimes(b, startTextEnvWith(b, sampleapp.SceneButtons, labels, true, tesseract.Options{LineCache: -1}))
	cached := clickTimes(b, startTextEnv(b, sampleapp.SceneButtons, labels, true))
	b.ReportMetric(float64(cold.Microseconds())/1000, "click-median-ms")
	b.ReportMetric(float64(cached.Microseconds())/1000, "click-cached-median-ms")
}

// clickTimes clicks the target as b.Loop says and returns the median time.
func clickTimes(b *testing.B, e *textEnv) time.Duration {
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
	for range max(b.N, 3) {
		ds = append(ds, click())
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
