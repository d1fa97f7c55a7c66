package x11_test

import (
	"context"
	"errors"
	"testing"

	"github.com/guiagent/guiagent/internal/backend/x11"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/platform/xvfbtest"
)

// rootSource answers like the AT-SPI client: boxes in root-window pixels.
type rootSource struct{ got desktop.ElementQuery }

func (s *rootSource) Elements(ctx context.Context, q desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	s.got = q
	return &desktop.ElementSnapshot{Source: "root", Elements: []desktop.Element{{Ref: "e1", Role: desktop.RoleButton, Box: geom.Rect{X: 10, Y: 20, W: 30, H: 40}}}, Query: q}, nil
}

func TestElementSource(t *testing.T) {
	vd := xvfbtest.Start(t, 640, 480)
	bare := x11.New(x11.Options{Display: vd.Display})
	if err := bare.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if _, ok := desktop.ElementsOf(bare); ok {
		t.Error("a backend without an element source offers one")
	}
	if _, err := bare.Elements(context.Background(), desktop.ElementQuery{}); !errors.Is(err, desktop.ErrUnsupported) {
		t.Errorf("Elements without a source: %v, want ErrUnsupported", err)
	}
	src := &rootSource{}
	b := x11.New(x11.Options{Display: vd.Display, Elements: src})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	es, ok := desktop.ElementsOf(b)
	if !ok {
		t.Fatal("a backend with an element source does not offer it")
	}
	snap, err := es.Elements(context.Background(), desktop.ElementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// Xvfb's one monitor is at the root's origin: global and root pixels agree.
	if len(src.got.Bounds) != 1 || src.got.Bounds[0] != (geom.Rect{W: 640, H: 480}) {
		t.Errorf("the source was given bounds %v, want the screen", src.got.Bounds)
	}
	if snap.Elements[0].Box != (geom.Rect{X: 10, Y: 20, W: 30, H: 40}) {
		t.Errorf("box %v", snap.Elements[0].Box)
	}
}
