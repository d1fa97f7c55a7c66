// Package actiontest holds test helpers for code that produces actions: Same
// compares parsed actions; CheckModelActions checks the properties every action
// parsed from a model's answer must have (the parsers' fuzz targets use it).
package actiontest

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

// Same reports whether got are want parsed as a model's answer in space sp
// (compared as JSON), logging both when they differ.
func Same(t testing.TB, got []action.Action, want []action.Raw, sp geom.Space) bool {
	t.Helper()
	w, err := action.ParseModelAll(want, sp)
	if err != nil {
		t.Fatalf("want does not parse: %v", err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(w)
	if string(a) != string(b) {
		t.Logf("actions %s\nwant    %s", a, b)
		return false
	}
	return true
}

// CheckModelActions fails t unless every action of acts validates and every
// point is finite and within the range action.ParseModel allows: a normalized
// grid within 5% of its divisor, pixels from -1 to action.MaxModelPixel.
func CheckModelActions(t testing.TB, acts []action.Action) {
	t.Helper()
	for i, a := range acts {
		if err := a.Validate(); err != nil {
			t.Fatalf("accepted action %d (%s) does not validate: %v", i, a.Kind, err)
		}
		pts := append([]action.Point(nil), a.Path...)
		for _, p := range []*action.Point{a.At, a.To} {
			if p != nil {
				pts = append(pts, *p)
			}
		}
		for _, p := range pts {
			if !inRange(p) {
				t.Fatalf("accepted action %d (%s) has point %v outside the range of its space", i, a.Kind, p)
			}
		}
	}
}

func inRange(p action.Point) bool {
	lo, hi := -1.0, float64(action.MaxModelPixel)
	switch div := p.Space.Divisor(); {
	case div > 0:
		lo, hi = -0.05*div, 1.05*div
	case p.Space == geom.SpaceScreen:
		lo = -hi
	}
	for _, v := range []float64{p.X, p.Y} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
			return false
		}
	}
	return true
}
