package openai

import (
	"testing"

	"github.com/guiagent/guiagent/internal/action/actiontest"
	"github.com/guiagent/guiagent/internal/geom"
)

// FuzzParseUITARS feeds the UI-TARS text parser arbitrary answers in both of
// its conventions (0-1000 and smart-resized pixels): it never panics, and
// every action it accepts validates, with finite points in range.
func FuzzParseUITARS(f *testing.F) {
	for _, s := range []string{
		"Thought: x\nAction: click(start_box='(120,340)')",
		"Thought: x\nAction: type(content='it's broken')",
		"Thought： x\nAction： drag(start_box='(1,2)', end_box='(1e15,400)')",
		"Action: left_double(start_box='<|box_start|>(5,6)<|box_end|>')\n\nhotkey(key='ctrl c')",
		"Action: right_single(point='<point>7 8</point>')",
		"Action: scroll(start_box='[10, 20, 30, 40]', direction='down')",
		"Action: type(content='a\\'b\\n')\n\nfinished(content='done')",
		"Action: type(content='x\\",
		"Action: call_user()\nwait()",
		"Action: click(start_box='(-99999999999999999999,1)')",
	} {
		f.Add(s)
	}
	profiles := []geom.Profile{geom.ProfileFor("ui-tars-72b"), geom.ProfileFor("ui-tars-1.5-7b")}
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range profiles {
			d, err := ParseUITARS(text, p)
			if err != nil {
				if d != nil {
					t.Fatalf("%s: an error with a decision: %v", p.Name, err)
				}
				continue
			}
			actiontest.CheckModelActions(t, d.Actions)
		}
	})
}
