//go:build linux

package atspi_test

import (
	"context"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/desktop"
)

// BenchmarkWidgetFactory snapshots gtk3-widget-factory's window (ModeAuto
// and ModeOn; GTK 3 offers its cache in both once it is up) and has pyatspi
// walk the same window in the same run (testdata/oracle.py, which reads
// what a snapshot reads: see there). First come pyatspiRounds rounds of
// three snapshots, then one pyatspi walk in a fresh process (cold, as a
// snapshot is: the client keeps nothing of the tree between snapshots),
// then a pause; then five pyatspi walks in one process (the last four warm:
// libatspi keeps what it read) and the timed snapshots. Metrics: median_ms
// (the timed snapshots), round_ms (the median of the rounds' medians),
// pyatspi_cold_ms and pyatspi_warm_ms (medians), x_pyatspi (the median of
// the rounds' ratios, pyatspi's cold walk over the round's snapshot: both
// under the same load), x_pyatspi_warm (pyatspi_warm_ms over median_ms),
// calls (D-Bus calls per snapshot), cpu_ms (the median of the CPU time
// this process spent per snapshot: it competes with the application's),
// elements (returned) and
// pyatspi_elements (of pyatspi's objects, those a snapshot returns: with a
// box on screen, not a nameless container or text).
func BenchmarkWidgetFactory(b *testing.B) {
	for _, mode := range []atspi.Mode{atspi.ModeAuto, atspi.ModeOn} {
		b.Run(string(mode), func(b *testing.B) {
			s := newSession(b, mode)
			atspitest.Start(b, s.display, s.bus, "", "gtk3-widget-factory")
			q := desktop.ElementQuery{Scope: desktop.ScopeApp, App: "gtk3-widget-factory", Bounds: screen}
			first := s.waitFor(b, q, "the widget factory", func(s *desktop.ElementSnapshot) bool { return len(s.Elements) > 100 })
			r := rounds(b, s, q, first.Window)
			warm := runOracle(b, s, first.Window, 5)
			var took, cpu []time.Duration
			var calls int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c0, cpu0 := atspi.CallsSent(), cpuTime(b)
				snap, err := s.c.Elements(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				calls += atspi.CallsSent() - c0
				took, cpu = append(took, snap.Took), append(cpu, cpuTime(b)-cpu0)
			}
			b.StopTimer()
			b.ReportMetric(ms(median(cpu)), "cpu_ms")
			warmMS := medianF(warm.Seconds[1:]) * 1000
			b.ReportMetric(ms(median(took)), "median_ms")
			b.ReportMetric(ms(median(r.ours)), "round_ms")
			b.ReportMetric(ms(median(r.cold)), "pyatspi_cold_ms")
			b.ReportMetric(warmMS, "pyatspi_warm_ms")
			b.ReportMetric(medianF(r.ratios), "x_pyatspi")
			b.ReportMetric(warmMS/ms(median(took)), "x_pyatspi_warm")
			b.ReportMetric(float64(calls)/float64(b.N), "calls")
			b.ReportMetric(float64(len(first.Elements)), "elements")
			b.ReportMetric(float64(len(oracleWant(r.last))), "pyatspi_elements")
		})
	}
}

// pyatspiRounds is how many rounds of snapshots and a cold pyatspi walk
// BenchmarkWidgetFactory takes.
const pyatspiRounds = 9

// roundsResult is what rounds measured: per round, the median of its
// snapshots, pyatspi's cold walk and their ratio; and the last walk.
type roundsResult struct {
	ours, cold []time.Duration
	ratios     []float64
	last       oracleResult
}

// rounds takes pyatspiRounds rounds of three snapshots and one pyatspi walk
// in a fresh process.
func rounds(b *testing.B, s *session, q desktop.ElementQuery, title string) roundsResult {
	var r roundsResult
	for range pyatspiRounds {
		var round []time.Duration
		for range 3 {
			snap, err := s.c.Elements(context.Background(), q)
			if err != nil {
				b.Fatal(err)
			}
			round = append(round, snap.Took)
		}
		r.last = runOracle(b, s, title, 1)
		cold := time.Duration(r.last.Seconds[0] * float64(time.Second))
		r.ours, r.cold = append(r.ours, median(round)), append(r.cold, cold)
		r.ratios = append(r.ratios, float64(cold)/float64(median(round)))
		// The application drops what pyatspi's process held when it exits:
		// that is pyatspi's cost, not the next snapshot's.
		time.Sleep(300 * time.Millisecond)
	}
	return r
}

// BenchmarkLongList snapshots the 20000-row list box (every row a widget)
// and, while each snapshot runs, asks the application for its role over
// and over: probe_max_ms is the slowest of those answers, how long the
// application was kept from answering.
func BenchmarkLongList(b *testing.B) {
	for _, mode := range []string{"treeview", "listbox"} {
		b.Run(mode, func(b *testing.B) {
			s := newSession(b, atspi.ModeAuto)
			args := []string{"--rows", "20000"}
			if mode == "listbox" {
				args = append(args, "--listbox")
			}
			atspitest.Start(b, s.display, s.bus, "ready", atspitest.FormApp(args...)...)
			first := s.waitFor(b, desktop.ElementQuery{}, "the list's first row", hasName("Row 0"))
			probe := prober(b, s, first.Elements[0])
			var took, worst []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				stop := probe()
				snap, err := s.c.Elements(context.Background(), desktop.ElementQuery{Bounds: screen})
				worst = append(worst, stop())
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, snap.Took)
			}
			b.StopTimer()
			b.ReportMetric(ms(median(took)), "median_ms")
			b.ReportMetric(ms(slices.Max(worst)), "probe_max_ms")
			b.ReportMetric(float64(len(first.Elements)), "elements")
		})
	}
}

// prober returns a function that starts asking e's application for e's
// role every 5 ms, on a connection of its own, and returns a function that
// stops and returns the slowest answer.
func prober(b testing.TB, s *session, e desktop.Element) func() func() time.Duration {
	conn := a11yBus(b, s.bus)
	h := e.Handle
	i := 0
	for i < len(h) && h[i] != '/' {
		i++
	}
	obj := conn.Object(h[:i], dbus.ObjectPath(h[i:]))
	return func() func() time.Duration {
		done := make(chan struct{})
		worst := make(chan time.Duration)
		go func() {
			var w time.Duration
			for {
				select {
				case <-done:
					worst <- w
					return
				default:
				}
				t := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = obj.CallWithContext(ctx, "org.a11y.atspi.Accessible.GetRole", 0).Err
				cancel()
				w = max(w, time.Since(t))
				time.Sleep(5 * time.Millisecond)
			}
		}()
		return func() time.Duration { close(done); return <-worst }
	}
}

func a11yBus(b testing.TB, session string) *dbus.Conn {
	sess, err := dbus.Connect(session)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	var addr string
	if err := sess.Object("org.a11y.Bus", "/org/a11y/bus").Call("org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil {
		b.Fatal(err)
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	return conn
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(f []float64) float64 {
	s := slices.Clone(f)
	sort.Float64s(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the CPU time this process has used so far.
func cpuTime(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
