package trace

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
)

// eventLog collects events so a benchmark can replay them.
type eventLog struct{ evs []agent.Event }

func (l *eventLog) OnEvent(ev agent.Event) { l.evs = append(l.evs, ev) }

// BenchmarkRecordStep measures what recording adds to the agent loop per step:
// OnEvent for one step's events (a 1280x800 JPEG screenshot, a model decision
// with request/response bodies, five actions, progress, the step). The writer
// catches up between steps, as it does while the loop waits for the model.
// Target: median < 5 ms per step.
func BenchmarkRecordStep(b *testing.B) {
	st := newTestStore(b, nil)
	run, err := st.Begin("bench", "task", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	var per []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		l := &eventLog{}
		play(b, l, fmt.Sprint("bench-", i), script{steps: 1, w: 1280, h: 800})
		b.StartTimer()
		t := time.Now()
		for _, ev := range l.evs {
			run.OnEvent(ev)
		}
		per = append(per, time.Since(t))
		b.StopTimer()
		run.Flush()
		b.StartTimer()
	}
	sort.Slice(per, func(i, j int) bool { return per[i] < per[j] })
	b.ReportMetric(float64(per[len(per)/2].Microseconds())/1000, "median-ms/step")
}

// fiftyStepRun records a 50-step run at w x h with every third frame repeated.
func fiftyStepRun(b testing.TB, w, h, repeatEach int) string {
	st := newTestStore(b, nil)
	run, err := st.Begin("fifty", "open the invoice and read its total", testConfig{APIKey: canary})
	if err != nil {
		b.Fatal(err)
	}
	play(b, run, run.ID(), script{steps: 50, w: w, h: h, repeatEach: repeatEach, finish: true})
	if err := run.Close(); err != nil {
		b.Fatal(err)
	}
	return run.Dir()
}

// BenchmarkReport50 measures generating report.html for a 50-step run. Target < 1 s.
func BenchmarkReport50(b *testing.B) {
	dir := fiftyStepRun(b, 640, 400, 0)
	for b.Loop() {
		if err := writeReport(dir, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunDirSize50 reports the size of a 50-step run directory with
// images at default settings, for 1280x800 and 1920x1080 screenshots, all
// frames distinct (worst case) and with every third frame unchanged.
// Target < 60 MB: the image files (at most DefaultMaxRunImageBytes) plus
// report.html, which embeds each image again as base64 so it opens alone.
func BenchmarkRunDirSize50(b *testing.B) {
	for _, c := range []struct{ w, h, repeat int }{{1280, 800, 0}, {1920, 1080, 0}, {1920, 1080, 3}} {
		b.Run(fmt.Sprintf("%dx%d-repeat%d", c.w, c.h, c.repeat), func(b *testing.B) {
			var mb float64
			for b.Loop() {
				dir := fiftyStepRun(b, c.w, c.h, c.repeat)
				mb = float64(dirSizeOf(dir)) / 1e6
			}
			b.ReportMetric(mb, "MB")
		})
	}
}

func dirSizeOf(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
