//go:build linux

package flow

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/backend/atspi"
	"github.com/guiagent/guiagent/internal/backend/atspi/atspitest"
	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/imaging"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
	"github.com/guiagent/guiagent/internal/testenv"
)

// TestTreeFlowOnGTK: a flow clicks the GTK test window's Ping button with no
// model at all: the first run finds the button in the accessibility tree
// (located_by accessibility), the second replays it from the cache though
// the button's label changed with the click (else finds it in the tree
// again); the application's own label counts every click.
func TestTreeFlowOnGTK(t *testing.T) {
	testenv.NeedX(t)
	vd := xvfbtest.Start(t, 1280, 800)
	bus := atspitest.Bus(t, vd.Display)
	client := atspi.New(atspi.Options{SessionBus: bus, Logger: slog.New(slog.DiscardHandler)})
	be := x11.New(x11.Options{Display: vd.Display, Elements: client, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := be.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	atspitest.Start(t, vd.Display, bus, "ready", atspitest.FormApp("--rows", "3")...)
	r, err := NewRunner(Options{Input: desktop.NewInput(be), Shot: imaging.Options{Format: "png"}, Settle: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, "name: ping\nsteps:\n  - click: the Ping button\n", nil)
	path := filepath.Join(t.TempDir(), "ping.cache.yaml")
	pinged := func(n string) bool {
		return atspitest.Wait(context.Background(), 10*time.Second, func() bool {
			snap, err := be.Elements(context.Background(), desktop.ElementQuery{})
			if err != nil {
				return false
			}
			for _, e := range snap.Elements {
				if e.Name == "Ping "+n {
					return true
				}
			}
			return false
		})
	}
	if !pinged("0") {
		t.Fatal("the Ping button is not in the tree")
	}
	for i, want := range []string{"1", "2"} {
		c, err := OpenCache(path, ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		res := r.Run(context.Background(), f, nil, c)
		if res.Status != Passed || res.ModelCalls != 0 {
			t.Fatalf("run %d: %s: %s (%d model calls)", i+1, res.Status, res.Summary, res.ModelCalls)
		}
		if by := res.Steps[0].Actions[0].LocatedBy; (i == 0 && by != "accessibility") || (i == 1 && by != "accessibility" && by != "cache") {
			t.Errorf("run %d: located_by %q", i+1, by)
		}
		if !pinged(want) {
			t.Fatalf("run %d: the button's label never said Ping %s: the click did not reach it", i+1, want)
		}
		t.Logf("run %d: cache %s, located_by %s", i+1, res.Steps[0].Cache, res.Steps[0].Actions[0].LocatedBy)
	}
	if y, err := os.ReadFile(path); err != nil || !strings.Contains(string(y), "role: button") {
		t.Errorf("the cache keeps no identity of the button: %v\n%s", err, y)
	}
}
