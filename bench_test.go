package guiagent_test

import (
	"context"
	"io"
	"testing"

	"github.com/guiagent/guiagent"

	"github.com/guiagent/guiagent/internal/testenv"
)

func benchAgent(b *testing.B) *guiagent.Agent {
	testenv.NeedX(b)
	b.Helper()
	a, err := guiagent.New(context.Background(), guiagent.Options{
		VirtualDisplay: guiagent.Size{Width: 1280, Height: 800}, AlwaysVirtualDisplay: true,
		RunsDir: b.TempDir(), StateDir: b.TempDir(), Log: io.Discard,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}

// BenchmarkNew is the start of an agent on a private 1280x800 Xvfb, Close included.
func BenchmarkNew(b *testing.B) {
	testenv.NeedX(b)
	for b.Loop() {
		a, err := guiagent.New(context.Background(), guiagent.Options{
			VirtualDisplay: guiagent.Size{Width: 1280, Height: 800}, AlwaysVirtualDisplay: true,
			RunsDir: b.TempDir(), StateDir: b.TempDir(), Log: io.Discard,
		})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}

// BenchmarkScreenshot is one 1280x800 JPEG screenshot through the public API.
func BenchmarkScreenshot(b *testing.B) {
	a := benchAgent(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.Screenshot(ctx, guiagent.ScreenshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClickAtScreenshotPoint is a click at a point of a screenshot:
// resolve, audit, ledger and X input.
func BenchmarkClickAtScreenshotPoint(b *testing.B) {
	a := benchAgent(b)
	ctx := context.Background()
	shot, err := a.Screenshot(ctx, guiagent.ScreenshotOptions{MaxLongEdge: 640})
	if err != nil {
		b.Fatal(err)
	}
	p := shot.Point(320, 200)
	for b.Loop() {
		if err := a.Click(ctx, p, guiagent.ClickOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
