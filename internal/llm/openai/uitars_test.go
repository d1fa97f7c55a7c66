package openai

import (
	"errors"
	"github.com/guiagent/guiagent/internal/action/actiontest"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

func TestParseUITARS(t *testing.T) {
	p := geom.ProfileFor("ui-tars-72b")
	cases := []struct {
		name, text string
		want       []action.Raw
		status     llm.Status
		result     string
	}{
		{"parens", "Thought: The OK button.\nAction: click(start_box='(120,340)')",
			[]action.Raw{{Kind: action.Click, At: []float64{120, 340}}}, llm.Continue, ""},
		{"box tokens", "Thought: x\nAction: left_double(start_box='<|box_start|>(5,6)<|box_end|>')",
			[]action.Raw{{Kind: action.DoubleClick, At: []float64{5, 6}}}, llm.Continue, ""},
		{"point tag", "Thought: x\nAction: right_single(point='<point>7 8</point>')",
			[]action.Raw{{Kind: action.Click, Button: "right", At: []float64{7, 8}}}, llm.Continue, ""},
		{"bracket box", "Thought: x\nAction: click(start_box='[10, 20, 30, 40]')",
			[]action.Raw{{Kind: action.Click, At: []float64{10, 20, 30, 40}}}, llm.Continue, ""},
		{"drag", "Thought: x\nAction: drag(start_box='(1,2)', end_box='(300,400)')",
			[]action.Raw{{Kind: action.Drag, At: []float64{1, 2}, To: []float64{300, 400}}}, llm.Continue, ""},
		{"hotkey", "Thought: save\nAction: hotkey(key='ctrl s')",
			[]action.Raw{{Kind: action.KeyPress, Keys: []string{"ctrl", "s"}}}, llm.Continue, ""},
		{"type and submit", `Thought: x` + "\nAction: type(content='it\\'s (fine)\\n')",
			[]action.Raw{{Kind: action.TypeText, Text: "it's (fine)"}, {Kind: action.KeyPress, Keys: []string{"Return"}}}, llm.Continue, ""},
		{"scroll", "Thought: x\nAction: scroll(start_box='(500,500)', direction='down')",
			[]action.Raw{{Kind: action.Scroll, At: []float64{500, 500}, Direction: "down"}}, llm.Continue, ""},
		{"several actions", "Thought: fill\nAction: click(start_box='(1,1)')\n\ntype(content='Ada')",
			[]action.Raw{{Kind: action.Click, At: []float64{1, 1}}, {Kind: action.TypeText, Text: "Ada"}}, llm.Continue, ""},
		{"finished", "Thought: done\nAction: finished(content='The total is 42.')", nil, llm.Done, "The total is 42."},
		// An unescaped quote inside content: the text runs to the last quote
		// before the closing parenthesis, as in the UI-TARS reference parser.
		{"unescaped quote", "Thought: x\nAction: type(content='it's broken')",
			[]action.Raw{{Kind: action.TypeText, Text: "it's broken"}}, llm.Continue, ""},
		{"unescaped quotes then more calls", "Thought: x\nAction: type(content='don't say 'no') now')  \n\nhotkey(key='enter')",
			[]action.Raw{{Kind: action.TypeText, Text: "don't say 'no') now"}, {Kind: action.KeyPress, Keys: []string{"enter"}}}, llm.Continue, ""},
		{"double quotes inside", "Thought: x\nAction: type(content=\"say \"hi\" and go\n\")",
			[]action.Raw{{Kind: action.TypeText, Text: "say \"hi\" and go"}, {Kind: action.KeyPress, Keys: []string{"Return"}}}, llm.Continue, ""},
		{"finished with a quote", "Thought: done\nAction: finished(content='It's 42.')", nil, llm.Done, "It's 42."},
		{"full-width colon", "Thought： 点击确定\nAction： click(start_box='(120,340)')",
			[]action.Raw{{Kind: action.Click, At: []float64{120, 340}}}, llm.Continue, ""},
		{"call user", "Thought: Which account should I use?\nAction: call_user()",
			[]action.Raw{{Kind: action.AskUser, Ask: "text", Question: "Which account should I use?"}}, llm.Continue, ""},
		{"call user without a thought", "Action: call_user()",
			[]action.Raw{{Kind: action.AskUser, Ask: "text", Question: llm.HelpQuestion}}, llm.Continue, ""},
		{"act then call user", "Thought: Two accounts are listed; which one?\nAction: scroll(start_box='(10,20)', direction='down')\n\ncall_user()",
			[]action.Raw{{Kind: action.Scroll, At: []float64{10, 20}, Direction: "down"}, {Kind: action.AskUser, Ask: "text", Question: "Two accounts are listed; which one?"}}, llm.Continue, ""},
		{"wait", "Thought: loading\nAction: wait()", []action.Raw{{Kind: action.Wait, DurationMS: 2000}}, llm.Continue, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseUITARS(tc.text, p)
			if err != nil {
				t.Fatal(err)
			}
			if !actiontest.Same(t, d.Actions, tc.want, p.Space()) || d.Status != tc.status || d.Result != tc.result {
				t.Fatalf("got %+v status %s result %q\nwant %+v status %s result %q", d.Actions, d.Status, d.Result, tc.want, tc.status, tc.result)
			}
		})
	}
	if d, err := ParseUITARS("Thought： 点击确定\nAction： click(start_box='(1,2)')", p); err != nil || d.Reasoning != "点击确定" {
		t.Fatalf("a full-width colon after Thought: reasoning %q, err %v", d.Reasoning, err)
	}
}

func TestParseUITARSErrors(t *testing.T) {
	p := geom.ProfileFor("ui-tars-72b")
	for _, tc := range []struct{ text, want string }{
		{"I would click the button.", `no "Action:" line`},
		{"Thought: x\nAction: click()", "needs start_box"},
		{"Thought: x\nAction: click(start_box='(1)')", "2 numbers"},
		{"Thought: x\nAction: open_app(name='x')", `unknown action "open_app"`},
		{"Thought: x\nAction: click(start_box='(5000,10)')", "outside 0-1000"},
		{"Thought: x\nAction: click(start_box='(1,2)')\n\nhotkey(key='ctrl nosuchkey')", "unknown key"},
		{"Thought: which one?\nAction: call_user()\n\nclick(start_box='(1,2)')", "comes after the ask_user"},
	} {
		d, err := ParseUITARS(tc.text, p)
		if !errors.Is(err, llm.ErrBadOutput) || !strings.Contains(err.Error(), tc.want) || d != nil {
			t.Errorf("%q: err = %v, want ErrBadOutput mentioning %q and no decision", tc.text, err, tc.want)
		}
	}
}
