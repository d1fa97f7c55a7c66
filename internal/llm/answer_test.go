package llm

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/geom"
)

func TestParseAnswerSpellings(t *testing.T) {
	px := geom.ProfileFor("gpt-4o")
	gem := geom.ProfileFor("gemini-2.5-pro")
	cases := []struct {
		name string
		p    geom.Profile
		text string
		want string // the parsed actions as JSON: points as named [x, y] in their space
	}{
		{"prose and fence", px, "Sure! Here it is:\n```json\n{\"actions\":[{\"action\":\"click\",\"x\":10,\"y\":20}],\"status\":\"continue\"}\n```\nGood luck.",
			`[{"kind":"click","at":[10,20],"space":"image"}]`},
		{"leading prose, braces in strings", px, `I think {this} is it: {"observation":"a } brace","actions":[{"action":"type","text":"a{b}"}],"status":"continue"}`,
			`[{"kind":"type","text":"a{b}"}]`},
		{"yx named keys stay named", gem, `{"actions":[{"action":"click","x":300,"y":700}],"status":"continue"}`,
			`[{"kind":"click","at":[300,700],"space":"normalized-1000"}]`},
		{"yx box: its centre, named", gem, `{"actions":[{"action":"click","box":[100,200,300,400]}],"status":"continue"}`,
			`[{"kind":"click","at":[300,200],"space":"normalized-1000"}]`},
		{"aliases and string numbers", px, `{"actions":[{"action":"right_click","x":"5","y":"6"},{"action":"hotkey","keys":"ctrl+s"}],"status":"continue"}`,
			`[{"kind":"click","at":[5,6],"button":"right","space":"image"},{"kind":"key","keys":["Control_L","s"]}]`},
		{"drag and zoom", px, `{"actions":[{"action":"drag","x":1,"y":2,"to":[3,4]},{"action":"zoom","box":[10,20,30,40]}],"status":"continue"}`,
			`[{"kind":"drag","at":[1,2],"to":[3,4],"space":"image"},{"kind":"zoom","at":[10,20],"to":[30,40],"space":"image"}]`},
		{"target for a grounder", px, `{"actions":[{"action":"click","target":"the OK button"}],"status":"continue"}`,
			`[{"kind":"click","target":"the OK button"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseAnswer(tc.text, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(d.Actions)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("actions = %s\nwant      %s", got, tc.want)
			}
		})
	}
}

func TestParseAnswerFields(t *testing.T) {
	d, err := ParseAnswer(`{"observation":"form","memory_update":"name=Ada","status":"done","result":"saved","image_width":1280,"image_height":800}`, geom.ProfileFor("x"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != Done || d.Result != "saved" || !reflect.DeepEqual(d.MemoryUpdate, []string{"name=Ada"}) || *d.ImageSize != (geom.Size{W: 1280, H: 800}) {
		t.Fatalf("decision = %+v", d)
	}
	d, err = ParseAnswer(`{"status":"blocked","block_reason":"login needed"}`, geom.ProfileFor("x"))
	if err != nil || d.Status != Blocked || d.BlockReason != "login needed" {
		t.Fatalf("blocked: %v %+v", err, d)
	}
}

func TestParseAnswerRejectsOutOfRangeNormalized(t *testing.T) {
	_, err := ParseAnswer(`{"actions":[{"action":"click","x":1500,"y":20}],"status":"continue"}`, geom.ProfileFor("glm-4.5v"))
	if !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), "outside 0-1000") {
		t.Fatalf("err = %v", err)
	}
}

func TestInstructionsMatchParser(t *testing.T) {
	// Every example action in the instructions must parse in its own profile.
	for _, name := range []string{"gpt-4o", "gemini-2.5-pro", "glm-4.5v", "showui-2b"} {
		p := geom.ProfileFor(name)
		ins := AnswerInstructions(p)
		n := 0
		for _, line := range strings.Split(ins, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, `{"action"`) || strings.Contains(line, "|") || strings.Contains(line, "notches") {
				continue
			}
			obj := line[:strings.LastIndex(line, "}")+1]
			if _, err := ParseAnswer(`{"actions":[`+obj+`],"status":"continue"}`, p); err != nil {
				t.Errorf("%s: example %s does not parse: %v", name, obj, err)
			}
			n++
		}
		if n < 6 {
			t.Fatalf("%s: only %d examples checked", name, n)
		}
	}
}

// TestParseAnswerRefs: "ref" (or a mark's bare number), "from_ref" and
// "to_ref" reach the actions; a ref with coordinates is refused.
func TestParseAnswerRefs(t *testing.T) {
	px := geom.ProfileFor("gpt-4o")
	d, err := ParseAnswer(`{"actions":[{"action":"click","ref":"e12"},{"action":"double_click","ref":7},{"action":"drag","from_ref":"e3","to_ref":"e4"}],"status":"continue"}`, px)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d.Actions)
	if want := `[{"kind":"click","ref":"e12"},{"kind":"double_click","ref":"e7"},{"kind":"drag","ref":"e3","to_ref":"e4"}]`; string(got) != want {
		t.Fatalf("actions = %s\nwant      %s", got, want)
	}
	_, err = ParseAnswer(`{"actions":[{"action":"click","ref":"e12","x":4,"y":5}],"status":"continue"}`, px)
	if !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("ref with coordinates: %v", err)
	}
	if ins := RefInstructions(); !strings.Contains(ins, `{"action": "click", "ref": "e12"}`) || !strings.Contains(ins, "never both") {
		t.Fatalf("RefInstructions = %q", ins)
	}
}
