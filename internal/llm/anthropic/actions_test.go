package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestMapEveryComputerAction(t *testing.T) {
	prof := geom.Profile{Name: "anthropic", MaxLongEdge: 1568, MaxPixels: 1_150_000}
	for _, tc := range []struct {
		input string
		want  []action.Raw
		ans   answerKind
	}{
		{`{"action":"screenshot"}`, nil, answerNone},
		{`{"action":"cursor_position"}`, nil, answerCursor},
		{`{"action":"left_click","coordinate":[10,20]}`, []action.Raw{{Kind: action.Click, At: []float64{10, 20}, Button: "left", Clicks: 1}}, 0},
		{`{"action":"left_click","coordinate":[10,20],"text":"ctrl+shift"}`, []action.Raw{{Kind: action.Click, At: []float64{10, 20}, Button: "left", Clicks: 1, Keys: []string{"ctrl", "shift"}}}, 0},
		{`{"action":"right_click","coordinate":[1,2]}`, []action.Raw{{Kind: action.Click, At: []float64{1, 2}, Button: "right", Clicks: 1}}, 0},
		{`{"action":"middle_click","coordinate":[1,2]}`, []action.Raw{{Kind: action.Click, At: []float64{1, 2}, Button: "middle", Clicks: 1}}, 0},
		{`{"action":"double_click","coordinate":[3,4]}`, []action.Raw{{Kind: action.DoubleClick, At: []float64{3, 4}}}, 0},
		{`{"action":"triple_click","coordinate":[3,4]}`, []action.Raw{{Kind: action.TripleClick, At: []float64{3, 4}}}, 0},
		{`{"action":"mouse_move","coordinate":[5,6]}`, []action.Raw{{Kind: action.Move, At: []float64{5, 6}}}, 0},
		{`{"action":"left_click_drag","start_coordinate":[1,1],"coordinate":[90,80]}`, []action.Raw{{Kind: action.Drag, At: []float64{1, 1}, To: []float64{90, 80}, Button: "left"}}, 0},
		{`{"action":"left_mouse_down","coordinate":[7,8]}`, []action.Raw{{Kind: action.MouseDown, At: []float64{7, 8}, Button: "left"}}, 0},
		{`{"action":"left_mouse_down"}`, []action.Raw{{Kind: action.MouseDown, Button: "left"}}, 0},
		{`{"action":"left_mouse_up"}`, []action.Raw{{Kind: action.MouseUp, Button: "left"}}, 0},
		{`{"action":"scroll","coordinate":[100,200],"scroll_direction":"down","scroll_amount":5,"text":"shift"}`, []action.Raw{{Kind: action.Scroll, At: []float64{100, 200}, Direction: "down", Amount: 5, Keys: []string{"shift"}}}, 0},
		{`{"action":"type","text":"héllo wörld"}`, []action.Raw{{Kind: action.TypeText, Text: "héllo wörld"}}, 0},
		{`{"action":"key","text":"ctrl+s"}`, []action.Raw{{Kind: action.KeyPress, Keys: []string{"ctrl", "s"}}}, 0},
		{`{"action":"key","text":"ctrl+a BackSpace"}`, []action.Raw{{Kind: action.KeyPress, Keys: []string{"ctrl", "a"}}, {Kind: action.KeyPress, Keys: []string{"BackSpace"}}}, 0},
		{`{"action":"key","text":"ctrl++"}`, []action.Raw{{Kind: action.KeyPress, Keys: []string{"ctrl", "+"}}}, 0},
		{`{"action":"hold_key","text":"shift","duration":1.5}`, []action.Raw{{Kind: action.HoldKey, Keys: []string{"shift"}, DurationMS: 1500}}, 0},
		{`{"action":"wait","duration":2}`, []action.Raw{{Kind: action.Wait, DurationMS: 2000}}, 0},
		{`{"action":"zoom","region":[0,0,400,300]}`, []action.Raw{{Kind: action.Zoom, At: []float64{0, 0}, To: []float64{400, 300}}}, answerZoom},
	} {
		got, ans, err := mapToolUse(json.RawMessage(tc.input), true, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.input, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || ans != tc.ans {
			t.Errorf("%s:\n got %+v (%d)\nwant %+v (%d)", tc.input, got, ans, tc.want, tc.ans)
		}
		ptr := []float64{1, 1}
		if err := fillPointer(got, &ptr); err != nil {
			t.Errorf("%s: %v", tc.input, err)
		}
		if err := parseErr(got, prof); err != nil {
			t.Errorf("%s: mapped actions do not validate: %v", tc.input, err)
		}
	}
}

func TestRefuseBadComputerActions(t *testing.T) {
	for input, want := range map[string]string{
		`{"action":"left_click","coordinate":[10]}`:             "[x, y]",
		`{"action":"mouse_move"}`:                               "needs coordinate",
		`{"action":"left_click","coordinate":[-5,3]}`:           "non-negative",
		`{"action":"scroll","scroll_direction":"sideways"}`:     "sideways",
		`{"action":"type"}`:                                     "needs text",
		`{"action":"key","text":" "}`:                           "needs text",
		`{"action":"hold_key","text":"shift"}`:                  "duration",
		`{"action":"wait","duration":1000}`:                     "between 0 and 100",
		`{"action":"zoom","region":[10,10,5,5]}`:                "x2 > x1",
		`{"action":"left_click_drag","start_coordinate":[1,1]}`: "needs coordinate",
		`{"action":"fly"}`:                                      "unknown computer action",
		`{}`:                                                    "no action",
		`[1,2]`:                                                 "not a JSON object",
		`{"action":"scroll","scroll_direction":"up","scroll_amount":-1}`: "scroll_amount",
	} {
		_, _, err := mapToolUse(json.RawMessage(input), true, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one mentioning %q", input, err, want)
		}
	}
	if _, _, err := mapToolUse(json.RawMessage(`{"action":"zoom","region":[0,0,10,10]}`), false, nil); err == nil || !strings.Contains(err.Error(), "computer_20251124") {
		t.Errorf("zoom without the 20251124 tool: %v", err)
	}
}

func TestFillPointerFollowsTheBatch(t *testing.T) {
	acts := []action.Raw{
		{Kind: action.Click},                       // at the pointer (from the observation)
		{Kind: action.Move, At: []float64{50, 60}}, // moves it
		{Kind: action.DoubleClick},                 // at 50,60
		{Kind: action.Drag, To: []float64{90, 95}}, // from 50,60
		{Kind: action.Click},                       // at the drag's end
	}
	ptr := []float64{5, 6}
	if err := fillPointer(acts, &ptr); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(acts[0].At, acts[2].At, acts[3].At, acts[4].At)
	if got != "[5 6] [50 60] [50 60] [90 95]" {
		t.Fatalf("points = %s", got)
	}
	var unknown []float64
	if err := fillPointer([]action.Raw{{Kind: action.Click}}, &unknown); err == nil || !strings.Contains(err.Error(), "give coordinate") {
		t.Fatalf("click without coordinate and unknown pointer: %v", err)
	}
}

// parseErr parses raws the way the adapter does.
func parseErr(raws []action.Raw, p geom.Profile) error {
	_, err := action.ParseModelAll(raws, p.Space())
	return err
}
