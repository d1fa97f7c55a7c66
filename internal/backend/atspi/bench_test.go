//go:build linux

package atspi_test

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/desktop"
)

// BenchmarkWidgetFactory snapshots gtk3-widget-factory's window (ModeAuto
// and ModeOn; GTK 3 offers its cache in both once it is up) and pyatspi
// walking the same window in the same run (testdata/oracle.py: it reads
// what a snapshot reads, see there). First come pyatspiPairs rounds of one
// snapshot then one pyatspi walk in a fresh process (cold, as a snapshot
// is: it keeps nothing of the tree between snapshots), so that both see
// the same load; then pyatspi's later walks in one process (warm: libatspi
// keeps what it read) and the timed snapshots. It reports median_ms (the
// timed snapshots), paired_ms (the snapshots of the pairs), pyatspi_cold_ms
// and pyatspi_warm_ms (medians), x_pyatspi (the faster pyatspi median over
// paired_ms), calls (D-Bus calls per snapshot), elements (returned) and
// pyatspi_elements (of pyatspi's objects, those a snapshot would return).
func BenchmarkWidgetFactory(b *testing.B) {
	for _, mode := range []atspi.Mode{atspi.ModeAuto, atspi.ModeOn} {
		b.Run(string(mode), func(b *testing.B) {
			s := newSession(b, mode)
			atspitest.Start(b, s.display, s.bus, "", "gtk3-widget-factory")
			q := desktop.ElementQuery{Scope: desktop.ScopeApp, App: "gtk3-widget-factory", Bounds: screen}
			first := s.waitFor(b, q, "the widget factory", func(s *desktop.ElementSnapshot) bool { return len(s.Elements) > 100 })
			paired, cold, oracle := pairs(b, s, q, first.Window)
			warm := runOracle(b, s, first.Window, 6)
			var took []time.Duration
			var calls int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c0 := atspi.CallsSent()
				snap, err := s.c.Elements(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				calls += atspi.CallsSent() - c0
				took = append(took, snap.Took)
			}
			b.StopTimer()
			py := min(median(cold), time.Duration(medianF(warm.Seconds[1:])*float64(time.Second)))
			b.ReportMetric(ms(median(took)), "median_ms")
			b.ReportMetric(ms(median(paired)), "paired_ms")
			b.ReportMetric(ms(median(cold)), "pyatspi_cold_ms")
			b.ReportMetric(medianF(warm.Seconds[1:])*1000, "pyatspi_warm_ms")
			b.ReportMetric(float64(py)/float64(median(paired)), "x_pyatspi")
			b.ReportMetric(float64(calls)/float64(b.N), "calls")
			b.ReportMetric(float64(len(first.Elements)), "elements")
			b.ReportMetric(float64(len(oracleWant(oracle))), "pyatspi_elements")
		})
	}
}

// pyatspiPairs is how many rounds of one snapshot and one cold pyatspi walk
// BenchmarkWidgetFactory takes.
const pyatspiPairs = 9

// pairs takes pyatspiPairs rounds of one snapshot and one pyatspi walk in a
// fresh process, and returns their times and the last walk.
func pairs(b *testing.B, s *session, q desktop.ElementQuery, title string) (ours, cold []time.Duration, last oracleResult) {
	for range pyatspiPairs {
		snap, err := s.c.Elements(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		ours = append(ours, snap.Took)
		last = runOracle(b, s, title, 1)
		cold = append(cold, time.Duration(last.Seconds[0]*float64(time.Second)))
		// The application drops what pyatspi's process held when it exits:
		// that is pyatspi's cost, not the next snapshot's.
		time.Sleep(300 * time.Millisecond)
	}
	return ours, cold, last
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
