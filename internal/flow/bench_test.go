package flow

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/flow/flowtest"
)

// modelLatency stands in for a vision model's answer time in the first-run
// benchmark (real locate calls take one to several seconds).
const modelLatency = time.Second

// BenchmarkFormFlow runs the six-step form flow on the sample app under Xvfb:
// "model" asks colorSeer (with modelLatency) for every locating step, as a
// first run does; "cached" replays from the cache the first run wrote, with no
// model at all (a model call would fail the benchmark); "cached-moved" does so
// with the window moved. The target is cached at least 5x faster than model.
// Each iteration starts a fresh app (not timed).
func BenchmarkFormFlow(b *testing.B) {
	e := startX11(b)
	path := filepath.Join(b.TempDir(), "form.cache.yaml")
	f, err := Parse([]byte(formFlow), formVars)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, seer *flowtest.ColorSeer, strategy Strategy, x, y int) {
		for b.Loop() {
			b.StopTimer()
			app := e.app(b, x, y, nil)
			cache, err := OpenCache(path, strategy)
			if err != nil {
				b.Fatal(err)
			}
			r := e.runner(b, seer)
			if seer == nil {
				r.o.Seer = nil
			}
			b.StartTimer()
			res := r.Run(context.Background(), f, formVars, cache)
			b.StopTimer()
			app.Close()
			if res.Status != Passed {
				b.Fatalf("%s: %s", res.Status, res.Summary)
			}
			b.ReportMetric(float64(res.ModelCalls), "model-calls/op")
			b.StartTimer()
		}
	}
	b.Run("model", func(b *testing.B) { run(b, &flowtest.ColorSeer{Latency: modelLatency}, WriteOnly, 0, 0) })
	b.Run("cached", func(b *testing.B) { run(b, nil, ReadOnly, 0, 0) })
	// The window moved by (+150,+90): every element is searched for (read-only
	// keeps the cache at the old place), still without the model.
	b.Run("cached-moved", func(b *testing.B) { run(b, nil, ReadOnly, 150, 90) })
}
