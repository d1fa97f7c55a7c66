package browser

import (
	"image"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// BenchmarkScreenshot captures the whole 1280x800 viewport, as PNG (what
// Capture uses) and as JPEG quality 95.
func BenchmarkScreenshot(b *testing.B) {
	s := newSite(b)
	be := newContext(b)
	navigate(b, be, s.URL+"/form")
	tb, err := be.current(tctx(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{"png", "jpeg"} {
		b.Run(format, func(b *testing.B) {
			var dst = geomImage()
			for b.Loop() {
				img, err := be.capture(tctx(b), tb, geom.Rect{W: 1280, H: 800}, dst, format)
				if err != nil {
					b.Fatal(err)
				}
				dst = img
			}
		})
	}
}

// BenchmarkClickByRef presses a button by its handle: reveal (scroll, box,
// hit test) and a click.
func BenchmarkClickByRef(b *testing.B) {
	s := newSite(b)
	be := newContext(b)
	navigate(b, be, s.URL+"/dialog")
	be.opts.Dialogs = DialogDismiss
	btn := find(b, snapshot(b, be, desktop.ElementQuery{}), desktop.RoleButton, "Delete")
	for b.Loop() {
		if err := be.Press(tctx(b), btn.Handle); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotTable3000 snapshots a page of 3000 rows; bytes/op is
// what the Go side allocates.
func BenchmarkSnapshotTable3000(b *testing.B) {
	s := newSite(b)
	be := newContext(b)
	navigate(b, be, s.URL+"/table")
	// The first snapshot of a page has the browser build its
	// accessibility tree: it is reported apart.
	start := time.Now()
	if _, err := be.Elements(tctx(b), desktop.ElementQuery{Budget: desktop.BudgetCap}); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		snap, err := be.Elements(tctx(b), desktop.ElementQuery{Budget: desktop.BudgetCap})
		if err != nil {
			b.Fatal(err)
		}
		n = len(snap.Elements)
	}
	b.ReportMetric(float64(n), "elements")
	b.ReportMetric(float64(first.Milliseconds()), "first-ms")
}

func geomImage() *image.RGBA { return nil }

// BenchmarkPressField presses a text field by its handle (no dialog, no
// navigation): reveal alone, and reveal with the click's three mouse events.
func BenchmarkPressField(b *testing.B) {
	s := newSite(b)
	be := newContext(b)
	navigate(b, be, s.URL+"/form")
	name := find(b, snapshot(b, be, desktop.ElementQuery{}), desktop.RoleTextbox, "Name")
	b.Run("reveal", func(b *testing.B) {
		for b.Loop() {
			if _, err := be.Reveal(tctx(b), name.Handle); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("press", func(b *testing.B) {
		for b.Loop() {
			if err := be.Press(tctx(b), name.Handle); err != nil {
				b.Fatal(err)
			}
		}
	})
}
