package responses

import (
	"encoding/json"
	"testing"

	"github.com/guiagent/guiagent/internal/action/actiontest"
	"github.com/guiagent/guiagent/internal/geom"
)

// FuzzComputerCall feeds a computer_call output item (one action or a batch)
// through its parsing: it never panics, and every action it accepts
// validates, with finite points in range and the call's id.
func FuzzComputerCall(f *testing.F) {
	for _, s := range []string{
		`{"call_id":"c1","action":{"type":"click","x":10,"y":20,"button":"left"}}`,
		`{"call_id":"c2","actions":[{"type":"double_click","x":1,"y":2},{"type":"type","text":"hi"},{"type":"keypress","keys":["CTRL","S"]}]}`,
		`{"call_id":"c3","action":{"type":"drag","path":[{"x":1,"y":2},{"x":1e15,"y":4}]}}`,
		`{"call_id":"c4","action":{"type":"scroll","x":5,"y":5,"scroll_x":0,"scroll_y":-1e308}}`,
		`{"call_id":"c5","action":{"type":"move","x":-3,"y":2},"actions":null}`,
		`{"call_id":"c6","action":{"type":"wait"},"actions":[{"type":"screenshot"}]}`,
		`{"call_id":"c7","action":{"type":"click","x":1,"button":"back"}}`,
		`{"call_id":"c8","actions":{}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, item string) {
		var c computerCall
		if json.Unmarshal([]byte(item), &c) != nil {
			return
		}
		acts, err := c.actions(geom.SpaceImage, true)
		if err != nil {
			return
		}
		actiontest.CheckModelActions(t, acts)
		for _, a := range acts {
			if a.CallID != c.CallID {
				t.Fatalf("action %s has call id %q, want %q", a.Kind, a.CallID, c.CallID)
			}
		}
	})
}
