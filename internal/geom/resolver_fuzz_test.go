package geom

import (
	"errors"
	"math"
	"testing"
)

// FuzzResolveIn drives the resolver with any point in any space over any
// frame of a two-display desktop: it never panics, and a point it accepts
// lands on a display (the one it lies on for screen points, the frame's
// display for the others).
func FuzzResolveIn(f *testing.F) {
	f.Add(uint8(0), 10.0, 20.0, int16(0), int16(0), uint16(1920), uint16(1080), uint16(1280), uint16(720), uint16(0), 0.0, int16(0), int16(0))
	f.Add(uint8(1), 2500.0, 10.0, int16(-1920), int16(0), uint16(1920), uint16(1080), uint16(1280), uint16(720), uint16(28), 50.0, int16(5), int16(7))
	f.Add(uint8(2), 1e15, -1e15, int16(0), int16(0), uint16(800), uint16(600), uint16(800), uint16(600), uint16(0), -1.0, int16(0), int16(0))
	f.Add(uint8(3), math.Inf(1), math.NaN(), int16(100), int16(-50), uint16(3840), uint16(2160), uint16(1568), uint16(882), uint16(3), 0.0, int16(-3), int16(900))
	f.Add(uint8(5), 999.0, 0.0, int16(0), int16(0), uint16(1), uint16(1), uint16(1), uint16(1), uint16(0), 1e300, int16(0), int16(0))
	f.Fuzz(func(t *testing.T, spi uint8, x, y float64, dx, dy int16, dw, dh, cw, ch, pad uint16, slack float64, rx, ry int16) {
		sp := spaceTable[int(spi)%len(spaceTable)].space
		d := Display{ID: "0", Bounds: Rect{X: int(dx), Y: int(dy), W: max(1, int(dw)), H: max(1, int(dh))}, Primary: true}
		other := Display{ID: "1", Bounds: Rect{X: d.Bounds.X + d.Bounds.W, Y: d.Bounds.Y, W: 1280, H: 1024}}
		// The frame's region lies inside its display.
		region := Rect{X: d.Bounds.X + abs(int(rx))%d.Bounds.W, Y: d.Bounds.Y + abs(int(ry))%d.Bounds.H}
		region.W, region.H = d.Bounds.X+d.Bounds.W-region.X, d.Bounds.Y+d.Bounds.H-region.Y
		fr := NewFrame("f", d, region, Size{W: max(1, int(cw)), H: max(1, int(ch))})
		fr.Prepared = Size{W: fr.Content.W + int(pad%100), H: fr.Content.H + int(pad%100)}
		ds := []Display{d, other}
		r, err := ResolveIn(sp, x, y, fr, ds, slack)
		if err != nil {
			if !errors.Is(err, ErrOffDisplay) && !errors.Is(err, ErrOutside) && !errors.Is(err, ErrInPadding) {
				t.Fatalf("ResolveIn(%s, %v, %v): an error that is no sentinel: %v", sp, x, y, err)
			}
			return
		}
		on, ok := DisplayAt(ds, r.Global)
		if !ok || on.ID != r.Display.ID {
			t.Fatalf("ResolveIn(%s, %v, %v) = %v on display %q, which does not hold it (on %v: %v)", sp, x, y, r.Global, r.Display.ID, on.ID, ok)
		}
		if sp != SpaceScreen && r.Display.ID != d.ID {
			t.Fatalf("ResolveIn(%s, %v, %v) landed on display %q, not the frame's", sp, x, y, r.Display.ID)
		}
	})
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
