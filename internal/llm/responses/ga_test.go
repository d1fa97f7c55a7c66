package responses_test

import (
	"context"
	"encoding/json"
	"image"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/responses"
)

// TestGAToolOneCallOfThreeActions: gpt-5.5 declares the GA computer tool
// (no display, no environment); one computer_call of three actions is one
// decision of three actions in order, the shift held during the click kept;
// the next request answers the call with the screenshot at detail original.
func TestGAToolOneCallOfThreeActions(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{
			{Kind: action.Click, At: &image.Point{X: 100, Y: 120}, Keys: []string{"shift"}},
			fakellm.TypeText("Ada"), fakellm.PressKeys("Return"),
		}}),
		fakellm.Fixed(fakellm.Finish("saved")),
	))
	defer srv.Close()
	a := newAdapter(t, srv)
	if got := a.(*responses.Adapter).ToolVersion(); got != responses.ToolComputer {
		t.Fatalf("gpt-5.5 speaks %s, want the GA computer tool", got)
	}
	sess := a.NewSession("fill")
	d, err := sess.Next(context.Background(), obs(t, a, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 3 || d.Actions[0].Kind != action.Click || d.Actions[1].Kind != action.TypeText || d.Actions[2].Kind != action.KeyPress {
		t.Fatalf("actions = %+v, want click, type, key", d.Actions)
	}
	if k := d.Actions[0].Keys; len(k) != 1 || k[0] != desktop.Key("Shift_L") {
		t.Fatalf("the click holds %v, want shift", k)
	}
	if _, err := sess.Next(context.Background(), obs(t, a, 2)); err != nil {
		t.Fatalf("the answer to the call was refused: %v", err)
	}
	var first struct {
		Tools []map[string]any `json:"tools"`
		Input []struct {
			Content []struct {
				Type   string `json:"type"`
				Detail string `json:"detail"`
			} `json:"content"`
		} `json:"input"`
	}
	reqs := srv.Requests()
	if err := json.Unmarshal(reqs[0].Body, &first); err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 1 || len(first.Tools[0]) != 1 || first.Tools[0]["type"] != "computer" {
		t.Fatalf("tools = %v, want [{type: computer}] only", first.Tools)
	}
	if c := first.Input[0].Content; c[len(c)-1].Type != "input_image" || c[len(c)-1].Detail != "original" {
		t.Fatalf("the first screenshot is sent as %+v, want detail original", c[len(c)-1])
	}
	var second struct {
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output struct {
				Detail string `json:"detail"`
			} `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(reqs[1].Body, &second); err != nil {
		t.Fatal(err)
	}
	if second.Input[0].Type != "computer_call_output" || second.Input[0].Output.Detail != "original" {
		t.Fatalf("the call is answered with %+v, want a computer_call_output at detail original", second.Input[0])
	}
}

// TestGAToolHoldsKeysDuringPointerActions: keys of click, double_click, drag,
// move and scroll reach the actions (the executor holds them through the
// release ledger); the preview tool, which had none, refuses them.
func TestGAToolHoldsKeysDuringPointerActions(t *testing.T) {
	p := func(x, y int) *image.Point { q := image.Pt(x, y); return &q }
	acts := []fakellm.BrainAction{
		{Kind: action.DoubleClick, At: p(10, 10), Keys: []string{"ctrl"}},
		{Kind: action.Drag, At: p(20, 20), To: p(40, 40), Keys: []string{"shift"}},
		{Kind: action.Move, At: p(50, 50), Keys: []string{"alt"}},
		{Kind: action.Scroll, At: p(60, 60), Direction: "down", Amount: 2, Keys: []string{"ctrl"}},
	}
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: acts})))
	defer srv.Close()
	a := newAdapter(t, srv)
	d, err := a.NewSession("t").Next(context.Background(), obs(t, a, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Actions) != 4 {
		t.Fatalf("actions = %+v", d.Actions)
	}
	for i, x := range d.Actions {
		if len(x.Keys) != 1 {
			t.Errorf("actions[%d] (%s) holds %v, want one key", i, x.Kind, x.Keys)
		}
	}
}

// TestResponsesFakeRefusesWhatTheAPIRefuses: the GA tool with display fields,
// the preview tool for a GA model, the GA tool for computer-use-preview, and
// a computer_call_output whose call_id was never issued.
func TestResponsesFakeRefusesWhatTheAPIRefuses(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Pt(1, 1))}})))
	defer srv.Close()
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/responses", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	ga := `"tools":[{"type":"computer"}],"truncation":"auto"`
	if code, body := post(`{"model":"gpt-5.5","input":"hi",` + ga + `}`); code != 200 || !strings.Contains(body, `"actions":[`) {
		t.Fatalf("a good GA request: %d %s", code, body)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"the GA tool with a display", `{"model":"gpt-5.5","input":"hi","tools":[{"type":"computer","display_width":10,"display_height":10}],"truncation":"auto"}`, "unknown parameter"},
		{"the preview tool for gpt-5.5", `{"model":"gpt-5.5","input":"hi","tools":[{"type":"computer_use_preview","display_width":10,"display_height":10,"environment":"linux"}],"truncation":"auto"}`, "only supported with computer-use-preview"},
		{"the GA tool for computer-use-preview", `{"model":"computer-use-preview","input":"hi",` + ga + `}`, "not supported with computer-use-preview"},
		{"an unknown call_id", `{"model":"gpt-5.5","previous_response_id":"resp_fake_1",` + ga + `,"input":[{"type":"computer_call_output","call_id":"call_nobody","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,AA=="}}]}`, "no computer call found for call_id"},
	} {
		if code, body := post(tc.body); code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.name, code, body, tc.want)
		}
	}
}

// TestPreviewOnlyWhenChosen: computer-use-preview keeps its tool, and the GA
// tool is the default for any other model the adapter is given.
func TestPreviewOnlyWhenChosen(t *testing.T) {
	for model, want := range map[string]string{
		"computer-use-preview": responses.ToolPreview, "computer-use-preview-2025-03-11": responses.ToolPreview,
		"gpt-5.4": responses.ToolComputer, "gpt-5.5": responses.ToolComputer, "gpt-6-sol": responses.ToolComputer,
	} {
		if got := responses.ToolFor(model); got != want {
			t.Errorf("ToolFor(%s) = %s, want %s", model, got, want)
		}
	}
	if _, err := responses.New(llm.Config{Model: "gpt-5.5", APIKey: testKey, ToolVersion: "computer_2099"}); err == nil {
		t.Error("an unknown tool version was accepted")
	}
}
