package llm

import (
	"testing"

	"github.com/guiagent/guiagent/internal/action/actiontest"
	"github.com/guiagent/guiagent/internal/geom"
)

// FuzzParseAnswer feeds the generic JSON answer parser arbitrary model text in
// three conventions (pixels, 0-1000, yx 0-1000): it never panics, and every
// action it accepts validates, with finite points in the range of its space.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"continue","actions":[{"action":"click","x":10,"y":20}]}`,
		`{"status":"continue","actions":[{"action":"drag","x":10,"y":10,"to":[1e15,10]}]}`,
		"```json\n{\"status\":\"done\",\"result\":\"42\"}\n```",
		`{"actions":[{"action":"click","box":[1,2,3,4]},{"action":"type","text":"hi"},{"action":"key","keys":["ctrl","s"]}]}`,
		`{"actions":[{"action":"scroll","point":[500,500],"direction":"down","amount":3}],"image_width":1280,"image_height":720}`,
		`{"actions":[{"action":"click","x":"NaN","y":1}]}`,
		`{"actions":[{"action":"hold_key","keys":["shift"],"duration_ms":500},{"action":"wait"}]}`,
		`{"actions":[{"action":"zoom","box":[0,0,10,10]}],"memory_update":"x"}`,
		`{"status":"continue","actions":[{"action":"click","x":-1e308,"y":1e308}]}`,
		`not json at all`,
	} {
		f.Add(s)
	}
	profiles := []geom.Profile{{Name: "px"}, {Name: "n1000", Divisor: 1000}, {Name: "yx", Divisor: 1000, Order: geom.YX}}
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range profiles {
			d, err := ParseAnswer(text, p)
			if err != nil {
				continue
			}
			actiontest.CheckModelActions(t, d.Actions)
			if err := ValidateDecision(d); err != nil {
				t.Fatalf("%s: accepted decision does not validate: %v", p.Name, err)
			}
		}
	})
}
