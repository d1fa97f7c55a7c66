package desktop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

// source is an element source with no actor; actingSource one with.
type source struct{}

func (source) Elements(context.Context, desktop.ElementQuery) (*desktop.ElementSnapshot, error) {
	return &desktop.ElementSnapshot{}, nil
}

type actingSource struct {
	source
	did []string
}

func (a *actingSource) SetText(_ context.Context, h, text string) error {
	a.did = append(a.did, "set "+h+" "+text)
	return nil
}
func (a *actingSource) Text(_ context.Context, h string) (string, error) { return "text of " + h, nil }
func (a *actingSource) Press(_ context.Context, h string) error {
	a.did = append(a.did, "press "+h)
	return nil
}

func TestSourceActor(t *testing.T) {
	ctx := context.Background()
	a := &actingSource{}
	sa := desktop.SourceActor{Source: a}
	if err := sa.SetText(ctx, "h1", "x"); err != nil {
		t.Fatal(err)
	}
	if err := sa.Press(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	if got, err := sa.Text(ctx, "h3"); got != "text of h3" || err != nil {
		t.Errorf("Text = %q, %v", got, err)
	}
	if len(a.did) != 2 || a.did[0] != "set h1 x" || a.did[1] != "press h2" {
		t.Errorf("forwarded %q", a.did)
	}
	for _, s := range []desktop.ElementSource{source{}, nil} {
		sa := desktop.SourceActor{Source: s}
		if err := sa.Press(ctx, "h"); !errors.Is(err, desktop.ErrUnsupported) {
			t.Errorf("Press with source %T: %v, want unsupported", s, err)
		}
		if _, err := sa.Text(ctx, "h"); !errors.Is(err, desktop.ErrUnsupported) {
			t.Errorf("Text with source %T: %v, want unsupported", s, err)
		}
		if err := sa.SetText(ctx, "h", "x"); !errors.Is(err, desktop.ErrUnsupported) {
			t.Errorf("SetText with source %T: %v, want unsupported", s, err)
		}
	}
}

func TestSnapshotMove(t *testing.T) {
	s := &desktop.ElementSnapshot{Elements: []desktop.Element{{Box: geom.Rect{X: 10, Y: 20, W: 5, H: 6}}},
		Query: desktop.ElementQuery{Bounds: []geom.Rect{{X: 100, Y: 0, W: 50, H: 40}}}}
	s.Move(-100, 3)
	if b := s.Elements[0].Box; b != (geom.Rect{X: -90, Y: 23, W: 5, H: 6}) {
		t.Errorf("box moved to %v", b)
	}
	if b := s.Query.Bounds[0]; b != (geom.Rect{X: 0, Y: 3, W: 50, H: 40}) {
		t.Errorf("bounds moved to %v", b)
	}
	if rs := desktop.MoveRects(nil, 1, 1); rs == nil || len(rs) != 0 {
		t.Errorf("MoveRects(nil) = %#v, want an empty slice", rs)
	}
}
