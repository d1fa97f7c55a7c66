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

// BenchmarkWidgetFactory snapshots gtk3-widget-factory's window (ModeAuto:
// walked level by level; ModeOn: through its cache), and reports beside it
// the same walk by pyatspi in the same run: median_ms for the snapshot,
// pyatspi_cold_ms (a fresh pyatspi process, as cold as a snapshot is) and
// pyatspi_warm_ms (its later walks, with libatspi's own cache), and the
// number of elements.
func BenchmarkWidgetFactory(b *testing.B) {
	for _, mode := range []atspi.Mode{atspi.ModeAuto, atspi.ModeOn} {
		b.Run(string(mode), func(b *testing.B) {
			s := newSession(b, mode)
			atspitest.Start(b, s.display, s.bus, "", "gtk3-widget-factory")
			q := desktop.ElementQuery{Scope: desktop.ScopeApp, App: "gtk3-widget-factory", Bounds: screen}
			first := s.waitFor(b, q, "the widget factory", func(s *desktop.ElementSnapshot) bool { return len(s.Elements) > 100 })
			oracle := runOracle(b, s, first.Window, 1)
			warm := runOracle(b, s, first.Window, 5)
			var took []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				snap, err := s.c.Elements(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, snap.Took)
			}
			b.StopTimer()
			b.ReportMetric(ms(median(took)), "median_ms")
			b.ReportMetric(oracle.Seconds[0]*1000, "pyatspi_cold_ms")
			b.ReportMetric(medianF(warm.Seconds[1:])*1000, "pyatspi_warm_ms")
			b.ReportMetric(float64(len(first.Elements)), "elements")
			b.ReportMetric(float64(len(oracle.Elements)), "pyatspi_objects")
		})
	}
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
			probe := prober(b, s, first)
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

// prober returns a function that starts asking the application of snap's
// first element for its role in a loop, and returns a function that stops
// and returns the slowest answer.
func prober(b *testing.B, s *session, snap *desktop.ElementSnapshot) func() func() time.Duration {
	conn := a11yBus(b, s.bus)
	h := snap.Elements[0].Handle
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
				_ = obj.Call("org.a11y.atspi.Accessible.GetRole", 0).Err
				w = max(w, time.Since(t))
				time.Sleep(5 * time.Millisecond)
			}
		}()
		return func() time.Duration { close(done); return <-worst }
	}
}

func a11yBus(b *testing.B, session string) *dbus.Conn {
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
