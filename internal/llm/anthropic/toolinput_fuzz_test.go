package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/guiagent/guiagent/internal/action/actiontest"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// FuzzToolInput feeds the computer tool's input (one tool_use block, then a
// second that may act at the pointer the first left) through the session's
// own mapping: it never panics, and every action it accepts validates, with
// finite points in range.
func FuzzToolInput(f *testing.F) {
	for _, s := range [][2]string{
		{`{"action":"left_click","coordinate":[10,20]}`, `{"action":"type","text":"hi"}`},
		{`{"action":"left_click_drag","start_coordinate":[1,2],"coordinate":[1e15,4]}`, `{"action":"left_click"}`},
		{`{"action":"scroll","coordinate":[5,5],"scroll_direction":"down","scroll_amount":3}`, `{"action":"key","text":"ctrl+s"}`},
		{`{"action":"hold_key","text":"shift","duration":1.5}`, `{"action":"wait","duration":2}`},
		{`{"action":"zoom","region":[0,0,100,100]}`, `{"action":"mouse_move","coordinate":[-5,3]}`},
		{`{"action":"triple_click","coordinate":[1,"x"]}`, `{"action":"screenshot"}`},
		{`{"action":"left_mouse_down"}`, `{"action":"left_mouse_up","coordinate":[3,3]}`},
		{`{"action":"scroll","scroll_direction":"left","scroll_amount":1e300}`, `[]`},
	} {
		f.Add(s[0], s[1])
	}
	s := &Session{a: &Adapter{profile: geom.ProfileFor("claude-sonnet-4-5"), tool: Tool20251124}}
	f.Fuzz(func(t *testing.T, first, second string) {
		var ptr []float64
		for i, in := range []string{first, second} {
			d := &llm.Decision{}
			p := s.toolUse(answerBlock{id: "toolu_fuzz", name: ToolName}, json.RawMessage(in), &ptr, d)
			if p.errMsg != "" {
				if len(d.Actions) > 0 {
					t.Fatalf("input %d refused (%s) but its actions were kept: %+v", i, p.errMsg, d.Actions)
				}
				continue
			}
			actiontest.CheckModelActions(t, d.Actions)
		}
	})
}
