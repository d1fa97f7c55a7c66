package action

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestParseTypesEveryField(t *testing.T) {
	a, err := Parse(Raw{Kind: Click, At: []float64{10, 20}, Button: "RIGHT", Clicks: 2, Keys: []string{"ctrl", "shift"}, CallID: "c1"}, geom.SpaceImage)
	if err != nil {
		t.Fatal(err)
	}
	if *a.At != (Point{geom.SpaceImage, 10, 20}) || a.Button != desktop.Right || a.Clicks() != 2 ||
		len(a.Keys) != 2 || a.Keys[0] != desktop.Ctrl || a.Keys[1] != desktop.Shift || a.CallID != "c1" {
		t.Fatalf("parsed %+v", a)
	}
	s, err := Parse(Raw{Kind: Scroll, Direction: "Down", DurationMS: 0}, geom.SpaceScreen)
	if err != nil || s.Direction != desktop.Down || s.Notches() != DefaultScrollNotches || s.At != nil {
		t.Fatalf("scroll %+v %v", s, err)
	}
	h, err := Parse(Raw{Kind: HoldKey, Keys: []string{"shift"}, DurationMS: 1500}, geom.SpaceImage)
	if err != nil || h.Duration != 1500*time.Millisecond {
		t.Fatalf("hold %+v %v", h, err)
	}
}

func TestParseReadsArraysInTheSpaceOrder(t *testing.T) {
	// yx-normalized-1000: [y, x], and a box [ymin, xmin, ymax, xmax] means its centre.
	a, err := Parse(Raw{Kind: Click, At: []float64{100, 200, 300, 400}}, geom.SpaceYXNorm1000)
	if err != nil {
		t.Fatal(err)
	}
	if *a.At != (Point{geom.SpaceNorm1000, 300, 200}) {
		t.Fatalf("at = %+v, want named x 300, y 200 in normalized-1000", *a.At)
	}
}

func TestParseNamesEveryProblemAndItsFix(t *testing.T) {
	for _, tc := range []struct {
		raw  Raw
		sp   geom.Space
		want []string
	}{
		{Raw{Kind: "teleport"}, geom.SpaceImage, []string{`unknown action "teleport"`, "use one of click"}},
		{Raw{Kind: Click}, geom.SpaceImage, []string{"needs a position"}},
		{Raw{Kind: Click, At: []float64{1}}, geom.SpaceImage, []string{"2 numbers (a point) or 4 (a box), got 1"}},
		{Raw{Kind: Click, At: []float64{1, 2}, Button: "fourth", Keys: []string{"nosuchkey"}}, geom.SpaceImage,
			[]string{`unknown mouse button "fourth"`, `unknown key "nosuchkey"`}},
		{Raw{Kind: Drag, At: []float64{1, 2}}, geom.SpaceImage, []string{"needs an end position"}},
		{Raw{Kind: Scroll}, geom.SpaceImage, []string{"needs a direction"}},
		{Raw{Kind: TypeText}, geom.SpaceImage, []string{"needs text"}},
		{Raw{Kind: KeyPress}, geom.SpaceImage, []string{"needs keys"}},
		{Raw{Kind: HoldKey, Keys: []string{"shift"}}, geom.SpaceImage, []string{"needs duration_ms"}},
		{Raw{Kind: Zoom, At: []float64{1, 2}}, geom.SpaceImage, []string{"needs a region"}},
		{Raw{Kind: Click, At: []float64{1, 2}, Clicks: 4}, geom.SpaceImage, []string{"clicks 4 is out of range 1-3"}},
	} {
		_, err := Parse(tc.raw, tc.sp)
		if err == nil {
			t.Errorf("%+v parsed", tc.raw)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not mention %q", tc.raw, err, w)
			}
		}
	}
}

func TestParseModelChecksTheRangeParseDoesNot(t *testing.T) {
	r := Raw{Kind: Click, At: []float64{1200, 500}}
	if _, err := ParseModel(r, geom.SpaceNorm1000); err == nil || !strings.Contains(err.Error(), "outside 0-1000") {
		t.Fatalf("ParseModel: %v", err)
	}
	if _, err := Parse(r, geom.SpaceNorm1000); err != nil {
		t.Fatalf("Parse rejected what the resolver judges: %v", err)
	}
	if _, err := ParseModel(Raw{Kind: Click, At: []float64{-5, 3}}, geom.SpaceImage); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("negative pixels: %v", err)
	}
	_, err := ParseModelAll([]Raw{{Kind: TypeText, Text: "ok"}, {Kind: Click}}, geom.SpaceImage)
	if err == nil || !strings.Contains(err.Error(), "actions[1] (click): needs a position") {
		t.Fatalf("ParseModelAll: %v", err)
	}
}

func TestValidateCatchesMixedAndUnknownSpaces(t *testing.T) {
	a := Action{Kind: Drag, At: &Point{geom.SpaceImage, 1, 2}, To: &Point{geom.SpaceScreen, 3, 4}}
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "same space") {
		t.Fatalf("mixed spaces: %v", err)
	}
	a = Action{Kind: Move, At: &Point{"model", 1, 2}}
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "unknown coordinate space") {
		t.Fatalf("unknown space: %v", err)
	}
}

func TestLimitsAreApplied(t *testing.T) {
	if n := (Action{Kind: Scroll, Amount: 5000}).Notches(); n != MaxScrollNotches {
		t.Fatalf("notches %d", n)
	}
	if n := (Action{Kind: KeyPress, Amount: 5000}).Repeats(); n != MaxKeyRepeat {
		t.Fatalf("repeats %d", n)
	}
	if d := (Action{Kind: Wait}).WaitFor(time.Minute); d != DefaultWait {
		t.Fatalf("wait %v", d)
	}
	if d := (Action{Kind: Wait, Duration: time.Hour}).WaitFor(time.Minute); d != time.Minute {
		t.Fatalf("capped wait %v", d)
	}
	if n := (Action{Kind: TripleClick}).Clicks(); n != 3 {
		t.Fatalf("triple click %d", n)
	}
}

func TestStringForHumans(t *testing.T) {
	a, _ := Parse(Raw{Kind: Click, At: []float64{640, 200}, Button: "right", Keys: []string{"ctrl"}}, geom.SpaceImage)
	if s := a.String(); s != "click right at (640,200) ctrl" {
		t.Errorf("String = %q", s)
	}
	g := geom.GlobalPoint{X: 1280, Y: 400}
	if s := (Trace{Action: a, Global: &g}).String(); s != "click right at (1280,400) ctrl" {
		t.Errorf("Trace.String = %q", s)
	}
	n, _ := Parse(Raw{Kind: Move, At: []float64{0.5, 0.25}}, geom.SpaceNorm1)
	if s := n.String(); s != "move at (0.5,0.25) normalized-0-1" {
		t.Errorf("normalized String = %q", s)
	}
	k, _ := Parse(Raw{Kind: KeyPress, Keys: []string{"ctrl+s"}, Amount: 3}, geom.SpaceImage)
	if s := k.Label(); s != "key ctrl+s x3" {
		t.Errorf("Label = %q", s)
	}
	tx, _ := Parse(Raw{Kind: TypeText, Text: strings.Repeat("a", 60)}, geom.SpaceImage)
	if s := tx.Label(); len(s) > 60 || !strings.HasSuffix(s, `..."`) {
		t.Errorf("long text label = %q", s)
	}
	tg, _ := Parse(Raw{Kind: Click, Target: "the OK button"}, geom.SpaceImage)
	if s := tg.String(); s != `click on "the OK button"` {
		t.Errorf("target String = %q", s)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	a, err := Parse(Raw{Kind: Drag, At: []float64{1, 2}, To: []float64{30, 40}, Path: [][]float64{{10, 20}}, Button: "middle", CallID: "x"}, geom.SpaceNorm1000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(Trace{Action: a, Outcome: OutcomeOK})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"action":{"kind":"drag","at":[1,2],"to":[30,40],"path":[[10,20]],"button":"middle","call_id":"x","space":"normalized-1000"},"outcome":"ok","ms":0}`
	if string(b) != want {
		t.Fatalf("json %s\nwant %s", b, want)
	}
	var back Trace
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Action.String() != a.String() || *back.Action.To != *a.To || back.Action.Button != desktop.Middle || back.Action.Path[0] != a.Path[0] {
		t.Fatalf("round trip %+v, want %+v", back.Action, a)
	}
	// A record written before points carried a space reads as image pixels.
	var old Action
	if err := json.Unmarshal([]byte(`{"kind":"click","at":[5,6],"button":"left"}`), &old); err != nil || *old.At != (Point{geom.SpaceImage, 5, 6}) {
		t.Fatalf("old record: %+v %v", old, err)
	}
}

func TestParsePoint(t *testing.T) {
	p, err := ParsePoint([]float64{500, 250}, geom.SpaceYXNorm1000)
	if err != nil || p != (Point{geom.SpaceNorm1000, 250, 500}) {
		t.Fatalf("point %+v %v", p, err)
	}
	if _, err := ParsePoint([]float64{1, 2, 3}, geom.SpaceImage); err == nil {
		t.Fatal("3 numbers accepted")
	}
}

// A model's absurd pixel numbers (a drag to x = 1e15) are refused when the
// answer is parsed, so the model is asked again; nothing downstream sees them.
func TestParseModelRefusesAbsurdPixels(t *testing.T) {
	for _, sp := range []geom.Space{geom.SpaceImage, geom.SpaceScreen} {
		_, err := ParseModel(Raw{Kind: Drag, At: []float64{10, 10}, To: []float64{1e15, 10}}, sp)
		if err == nil || !strings.Contains(err.Error(), "end position (to) coordinate 1e+15 is beyond 100000") {
			t.Errorf("%s: drag to 1e15: %v", sp, err)
		}
	}
	if _, err := ParsePoint([]float64{5, -2e9}, geom.SpaceScreen); err == nil {
		t.Error("ParsePoint accepted y = -2e9")
	}
	if _, err := ParseModel(Raw{Kind: Drag, At: []float64{10, 10}, To: []float64{99_999, 10}}, geom.SpaceImage); err != nil {
		t.Errorf("a large but possible number is for CheckNear to judge: %v", err)
	}
}

func TestCheckNearHoldsPointsToTheImage(t *testing.T) {
	d := geom.Display{ID: "0", Bounds: geom.Rect{W: 1920, H: 1080}}
	f := geom.NewFrame("f", d, d.Bounds, geom.Size{W: 1280, H: 720})
	pt := func(sp geom.Space, x, y float64) *Point { return &Point{Space: sp, X: x, Y: y} }
	for _, c := range []struct {
		a    Action
		fail string
	}{
		{Action{Kind: Click, At: pt(geom.SpaceImage, 1279, 719)}, ""},
		{Action{Kind: Click, At: pt(geom.SpaceImage, 1300, -30)}, ""},     // a little off: clamped later
		{Action{Kind: Click, At: pt(geom.SpaceImage, 2560, 1440)}, ""},    // one image side off: the limit
		{Action{Kind: Click, At: pt(geom.SpaceScreen, 50_000, 0)}, ""},    // screen points meet the displays instead
		{Action{Kind: Click, At: pt(geom.SpaceNorm1000, 1000, 1000)}, ""}, // a grid's far corner
		{Action{Kind: Drag, At: pt(geom.SpaceImage, 10, 10), To: pt(geom.SpaceImage, 1e15, 10)}, "end position (to) (1e+15,10) is far outside the 1280x720 screenshot"},
		{Action{Kind: Click, At: pt(geom.SpaceImage, 10, 2200)}, "position (10,2200) is far outside"},
		{Action{Kind: Drag, At: pt(geom.SpaceImage, 1, 1), To: pt(geom.SpaceImage, 2, 2), Path: []Point{*pt(geom.SpaceImage, -5000, 3)}}, "path[0]"},
		{Action{Kind: Click, At: pt(geom.SpaceNorm1, 3.5, 0.5)}, "position (3.5,0.5) normalized-0-1 is far outside"},
	} {
		err := c.a.CheckNear(f)
		if c.fail == "" && err != nil || c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)) {
			t.Errorf("%v: CheckNear = %v, want %q", c.a, err, c.fail)
		}
	}
}
