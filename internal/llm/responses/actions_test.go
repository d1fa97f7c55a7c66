package responses

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
)

func TestMapEveryComputerAction(t *testing.T) {
	prof := geom.Profile{Name: "openai-computer"}
	for _, tc := range []struct {
		action string
		want   []action.Raw
	}{
		{`{"type":"screenshot"}`, nil},
		{`{"type":"click","button":"left","x":10,"y":20}`, []action.Raw{{Kind: action.Click, At: []float64{10, 20}, Button: "left", Clicks: 1}}},
		{`{"type":"click","button":"right","x":10,"y":20}`, []action.Raw{{Kind: action.Click, At: []float64{10, 20}, Button: "right", Clicks: 1}}},
		{`{"type":"click","button":"wheel","x":10,"y":20}`, []action.Raw{{Kind: action.Click, At: []float64{10, 20}, Button: "middle", Clicks: 1}}},
		{`{"type":"click","button":"back","x":10,"y":20}`, []action.Raw{{Kind: action.Move, At: []float64{10, 20}}, {Kind: action.KeyPress, Keys: []string{"alt", "Left"}}}},
		{`{"type":"double_click","x":3,"y":4}`, []action.Raw{{Kind: action.DoubleClick, At: []float64{3, 4}}}},
		{`{"type":"move","x":5,"y":6}`, []action.Raw{{Kind: action.Move, At: []float64{5, 6}}}},
		{`{"type":"drag","path":[{"x":1,"y":2},{"x":3,"y":4},{"x":5,"y":6}]}`, []action.Raw{{Kind: action.Drag, At: []float64{1, 2}, To: []float64{5, 6}, Path: [][]float64{{3, 4}}, Button: "left"}}},
		{`{"type":"keypress","keys":["CTRL","SHIFT","T"]}`, []action.Raw{{Kind: action.KeyPress, Keys: []string{"CTRL", "SHIFT", "T"}}}},
		{`{"type":"keypress","keys":["ENTER"]}`, []action.Raw{{Kind: action.KeyPress, Keys: []string{"ENTER"}}}},
		{`{"type":"type","text":"hello"}`, []action.Raw{{Kind: action.TypeText, Text: "hello"}}},
		{`{"type":"scroll","x":100,"y":200,"scroll_x":0,"scroll_y":300}`, []action.Raw{{Kind: action.Scroll, At: []float64{100, 200}, Direction: "down", Amount: 3}}},
		{`{"type":"scroll","x":100,"y":200,"scroll_x":-40,"scroll_y":-250}`, []action.Raw{
			{Kind: action.Scroll, At: []float64{100, 200}, Direction: "up", Amount: 3},
			{Kind: action.Scroll, At: []float64{100, 200}, Direction: "left", Amount: 1}}},
		{`{"type":"wait"}`, []action.Raw{{Kind: action.Wait, DurationMS: defaultWaitMS}}},
	} {
		got, err := mapAction(decode(t, tc.action))
		if err != nil {
			t.Errorf("%s: %v", tc.action, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.action, got, tc.want)
		}
		if err := parseErr(got, prof); err != nil {
			t.Errorf("%s: mapped actions do not validate: %v", tc.action, err)
		}
	}
	for in, want := range map[string]string{
		`{"type":"click","x":1}`:                         "needs x and y",
		`{"type":"click","button":"fourth","x":1,"y":1}`: "unknown button",
		`{"type":"drag","path":[{"x":1,"y":2}]}`:         "at least 2 points",
		`{"type":"keypress","keys":[]}`:                  "needs keys",
		`{"type":"scroll","x":1,"y":1}`:                  "does nothing",
		`{"type":"teleport"}`:                            "unknown computer action",
		`{"type":"move","x":-3,"y":1}`:                   "non-negative",
	} {
		if _, err := mapAction(decode(t, in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one mentioning %q", in, err, want)
		}
	}
}

func decode(t *testing.T, s string) cuAction {
	t.Helper()
	var a cuAction
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestComputerCallWithBothActionForms(t *testing.T) {
	var c computerCall
	if err := json.Unmarshal([]byte(`{"call_id":"c1","actions":[{"type":"type","text":"a"},{"type":"keypress","keys":["ENTER"]}]}`), &c); err != nil {
		t.Fatal(err)
	}
	acts, err := c.actions(geom.SpaceImage, true)
	if err != nil || len(acts) != 2 || acts[1].CallID != "c1" {
		t.Fatalf("batched: %+v %v", acts, err)
	}
	c = computerCall{CallID: "c2"}
	if _, err := c.actions(geom.SpaceImage, true); err == nil {
		t.Fatal("a computer_call without action was accepted")
	}
}

func TestSafetyCheckStringAndQuestion(t *testing.T) {
	c := safetyCheck{ID: "sc_1", Code: "irrelevant_domain", Message: "The site is off-task."}
	if c.String() != "sc_1 (irrelevant_domain): The site is off-task." {
		t.Fatalf("String = %q", c.String())
	}
	for ch, want := range map[safetyCheck]string{
		c:                       "The model's next action was flagged for review: The site is off-task (irrelevant_domain). Let it run?",
		{ID: "sc_2", Code: "x"}: "The model's next action was flagged for review: x. Let it run?",
		{ID: "sc_3"}:            "The model's next action was flagged for review: check sc_3. Let it run?",
	} {
		if got := ch.question(); got != want {
			t.Errorf("question(%+v) = %q, want %q", ch, got, want)
		}
	}
}

// parseErr parses raws the way the adapter does.
func parseErr(raws []action.Raw, p geom.Profile) error {
	_, err := action.ParseModelAll(raws, p.Space())
	return err
}
