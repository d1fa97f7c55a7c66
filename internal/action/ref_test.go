package action

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

// TestParseRefs: a ref takes the place of coordinates on the pointer
// actions (and to_ref on a drag's end), survives the record's JSON, and
// reads in String.
func TestParseRefs(t *testing.T) {
	c, err := Parse(Raw{Kind: Click, Ref: " e12 ", Button: "right"}, geom.SpaceImage)
	if err != nil || c.Ref != "e12" || c.At != nil {
		t.Fatalf("click by ref: %+v %v", c, err)
	}
	if got := c.String(); got != "click right e12" {
		t.Errorf("String = %q", got)
	}
	for _, k := range []Kind{DoubleClick, TripleClick, Move, Scroll, MouseDown, MouseUp} {
		r := Raw{Kind: k, Ref: "e3"}
		if k == Scroll {
			r.Direction = "down"
		}
		if _, err := Parse(r, geom.SpaceImage); err != nil {
			t.Errorf("%s by ref: %v", k, err)
		}
	}
	d, err := Parse(Raw{Kind: Drag, Ref: "e1", ToRef: "e2"}, geom.SpaceImage)
	if err != nil || d.Ref != "e1" || d.ToRef != "e2" {
		t.Fatalf("drag by refs: %+v %v", d, err)
	}
	if got := d.String(); got != "drag e1 to e2" {
		t.Errorf("String = %q", got)
	}
	mixed, err := Parse(Raw{Kind: Drag, Ref: "e1", To: []float64{5, 6}}, geom.SpaceImage)
	if err != nil {
		t.Fatalf("drag from a ref to coordinates: %v", err)
	}
	b, _ := json.Marshal(d)
	var back Action
	if err := json.Unmarshal(b, &back); err != nil || back.Ref != "e1" || back.ToRef != "e2" {
		t.Fatalf("JSON round trip %s: %+v %v", b, back, err)
	}
	g := geom.GlobalPoint{X: 40, Y: 50}
	if got := (Trace{Action: mixed, Global: &g}).String(); got != "drag e1 at (40,50) to (5,6)" {
		t.Errorf("trace String = %q", got)
	}
}

// TestRefsRefused: a ref with coordinates or a target for the same point, a
// ref on an action without a point, to_ref off a drag and a malformed ref are
// errors that say what to give.
func TestRefsRefused(t *testing.T) {
	for _, tc := range []struct {
		r    Raw
		want string
	}{
		{Raw{Kind: Click, Ref: "e1", At: []float64{1, 2}}, "not both"},
		{Raw{Kind: Click, Ref: "e1", Target: "OK button"}, "not both"},
		{Raw{Kind: Drag, Ref: "e1", ToRef: "e2", To: []float64{1, 2}}, "not both"},
		{Raw{Kind: TypeText, Ref: "e1", Text: "x"}, "type takes no ref"},
		{Raw{Kind: KeyPress, Ref: "e1", Keys: []string{"Return"}}, "key takes no ref"},
		{Raw{Kind: Click, Ref: "e1", ToRef: "e2"}, "only a drag"},
		{Raw{Kind: Click, Ref: "the OK button"}, "not an element ref"},
		{Raw{Kind: Click, Ref: strings.Repeat("e", 40)}, "not an element ref"},
	} {
		_, err := Parse(tc.r, geom.SpaceImage)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to say %q", tc.r, err, tc.want)
		}
	}
	if err := (Action{Kind: Drag, Ref: "e1"}).Validate(); err == nil || !strings.Contains(err.Error(), "to_ref") {
		t.Errorf("a drag from a ref with no end: %v", err)
	}
}
