package anthropic_test

import (
	"context"
	"encoding/json"
	"image"
	"strings"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/desktop"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/anthropic"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

func claude5(c *llm.Config) { c.Model = "claude-sonnet-5-5" }

// toolsetRequest is what a toolset request carries that the tests check.
type toolsetRequest struct {
	Tools []struct {
		Type    string                     `json:"type"`
		Name    *string                    `json:"name"`
		Configs map[string]json.RawMessage `json:"configs"`
	} `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			Name      string  `json:"name"`
			Toolset   *string `json:"toolset_name"`
			ToolUseID string  `json:"tool_use_id"`
		} `json:"content"`
	} `json:"messages"`
}

// TestToolsetBatchedTurnRunsClickTypeKeyInOrder: Claude 5.x gets the GA
// toolset without a beta header; one answer of three member tool_use blocks
// is one decision of three actions in order, and the next request replays
// them and answers each with a tool_result, all carrying toolset_name.
func TestToolsetBatchedTurnRunsClickTypeKeyInOrder(t *testing.T) {
	field := image.Pt(700, 300)
	brain := fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Observation: "A form.", Actions: []fakellm.BrainAction{
			fakellm.ClickAt(field), fakellm.TypeText("Ada"), {Kind: action.KeyPress, Keys: []string{"Tab"}, Amount: 2},
		}}),
		fakellm.Fixed(fakellm.Finish("Filled in.")),
	)
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv, claude5)
	if a.ToolVersion() != anthropic.Toolset20260801 {
		t.Fatalf("tool = %s, want the toolset for claude-sonnet-5-5", a.ToolVersion())
	}
	sc := defaultScreen()
	sess := a.NewSession("Fill in the form")
	d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Task: "Fill in the form", Screenshot: sc.shot(t, a.Profile(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []action.Kind
	for _, x := range d.Actions {
		kinds = append(kinds, x.Kind)
	}
	if len(d.Actions) != 3 || kinds[0] != action.Click || kinds[1] != action.TypeText || kinds[2] != action.KeyPress {
		t.Fatalf("actions = %v, want click, type, key", kinds)
	}
	if at := d.Actions[0].At; at == nil || at.X != 700 || at.Y != 300 || d.Actions[1].Text != "Ada" || d.Actions[2].Repeats() != 2 {
		t.Fatalf("actions = %+v", d.Actions)
	}
	if _, err := sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: sc.shot(t, a.Profile(), 2)}); err != nil {
		t.Fatalf("the replay was refused: %v", err)
	}
	reqs := srv.Requests()
	for i, r := range reqs {
		if b := r.Header.Get("Anthropic-Beta"); b != "" {
			t.Errorf("request %d has the beta header %q", i+1, b)
		}
	}
	var req toolsetRequest
	if err := json.Unmarshal(reqs[1].Body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 1 || req.Tools[0].Type != anthropic.Toolset20260801 || req.Tools[0].Name != nil {
		t.Fatalf("tools = %+v, want one toolset entry without a name", req.Tools)
	}
	uses, results := 0, 0
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Type != "tool_use" && c.Type != "tool_result" {
				continue
			}
			if c.Toolset == nil || *c.Toolset != "computer" {
				t.Errorf("%s %s%s has no toolset_name computer", c.Type, c.ID, c.ToolUseID)
			}
			if c.Type == "tool_use" {
				uses++
			} else {
				results++
			}
		}
	}
	if uses != 3 || results != 3 {
		t.Fatalf("the replay has %d tool_use and %d tool_result blocks, want 3 and 3", uses, results)
	}
}

// TestToolsetMembersMapToActions: every member a model may call maps to the
// action vocabulary, key with repeat, left_click_drag with its held keys,
// zoom with its region in screenshot pixels.
func TestToolsetMembersMapToActions(t *testing.T) {
	p := func(x, y int) *image.Point { q := image.Pt(x, y); return &q }
	acts := []fakellm.BrainAction{
		{Kind: action.KeyPress, Keys: []string{"Down"}, Amount: 3},
		{Kind: action.HoldKey, Keys: []string{"shift"}, Amount: 1},
		fakellm.TypeText("x"),
		{Kind: action.Move, At: p(10, 10)},
		{Kind: action.MouseDown, At: p(11, 11)},
		{Kind: action.MouseUp, At: p(12, 12)},
		{Kind: action.Click, At: p(20, 20), Keys: []string{"shift"}},
		{Kind: action.Drag, At: p(30, 30), To: p(60, 60), Keys: []string{"ctrl"}},
		{Kind: action.Click, At: p(40, 40), Button: "right"},
		{Kind: action.Click, At: p(41, 41), Button: "middle"},
		{Kind: action.DoubleClick, At: p(50, 50)},
		{Kind: action.TripleClick, At: p(51, 51)},
		{Kind: action.Scroll, At: p(70, 70), Direction: "down", Amount: 4},
		{Kind: action.Wait, Amount: 1},
		{Kind: action.Zoom, At: p(0, 0), To: p(100, 80)},
		{Kind: fakellm.AskScreenshot},
		{Kind: fakellm.AskCursor},
	}
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: acts})))
	defer srv.Close()
	a := newAdapter(t, srv, claude5)
	d, err := a.NewSession("t").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	want := []action.Kind{action.KeyPress, action.HoldKey, action.TypeText, action.Move, action.MouseDown, action.MouseUp,
		action.Click, action.Drag, action.Click, action.Click, action.DoubleClick, action.TripleClick, action.Scroll,
		action.Wait, action.Zoom}
	if len(d.Actions) != len(want) {
		t.Fatalf("%d actions, want %d: %+v", len(d.Actions), len(want), d.Actions)
	}
	for i, k := range want {
		if d.Actions[i].Kind != k {
			t.Errorf("actions[%d] = %s, want %s", i, d.Actions[i].Kind, k)
		}
	}
	if d.Actions[0].Repeats() != 3 {
		t.Errorf("key repeat = %d, want 3", d.Actions[0].Repeats())
	}
	if k := d.Actions[6].Keys; len(k) != 1 || k[0] != desktop.Key("Shift_L") {
		t.Errorf("shift-click keys = %v", k)
	}
	if k := d.Actions[7].Keys; len(k) != 1 || k[0] != desktop.Key("Control_L") {
		t.Errorf("ctrl-drag keys = %v", k)
	}
	if d.Actions[8].Button != desktop.Right || d.Actions[9].Button != desktop.Middle {
		t.Errorf("buttons = %v, %v", d.Actions[8].Button, d.Actions[9].Button)
	}
	if z := d.Actions[14]; z.To == nil || z.To.X != 100 || z.To.Y != 80 {
		t.Errorf("zoom = %+v", z)
	}
	if len(anthropic.Members) != 17 {
		t.Errorf("%d members, want the toolset's 17", len(anthropic.Members))
	}
}

// TestToolsetWithholdsDisabledMembers: disabled action kinds are switched off
// in the toolset's configs, and a model that calls one anyway is refused.
func TestToolsetWithholdsDisabledMembers(t *testing.T) {
	brain := fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Pt(5, 5))}}))
	srv := fakellm.NewAnthropicServer(brain)
	defer srv.Close()
	a := newAdapter(t, srv, claude5, func(c *llm.Config) {
		c.Disabled = []action.Kind{action.Zoom, action.MouseDown, action.MouseUp}
	})
	if _, err := a.NewSession("t").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)}); err != nil {
		t.Fatal(err)
	}
	var req toolsetRequest
	if err := json.Unmarshal(srv.Requests()[0].Body, &req); err != nil {
		t.Fatal(err)
	}
	got := req.Tools[0].Configs
	for _, m := range []string{"zoom", "left_mouse_down", "left_mouse_up"} {
		if string(got[m]) != `{"enabled":false}` {
			t.Errorf("configs.%s = %s, want enabled false", m, got[m])
		}
	}
	if len(got) != 3 {
		t.Errorf("configs = %v, want only the three disabled members", got)
	}
	if strings.Contains(string(srv.Requests()[0].Body), "zoom to read") {
		t.Error("the system prompt offers zoom, which is disabled")
	}

	zoom := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{
		{Kind: action.Zoom, At: &image.Point{}, To: &image.Point{X: 9, Y: 9}}}})))
	defer zoom.Close()
	b := newAdapter(t, zoom, claude5, func(c *llm.Config) { c.Disabled = []action.Kind{action.Zoom} })
	_, err := b.NewSession("t").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, b.Profile(), 1)})
	if err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("a disabled member reached the model: %v", err)
	}
}

// TestLegacyToolStaysForClaude4AndWhenChosen: claude-sonnet-4-5 keeps the
// beta computer tool with its header, and GUI_AGENT_TOOL_VERSION still picks one.
func TestLegacyToolStaysForClaude4AndWhenChosen(t *testing.T) {
	srv := fakellm.NewAnthropicServer(fakellm.Script(fakellm.Fixed(fakellm.Finish("ok"))))
	defer srv.Close()
	a := newAdapter(t, srv)
	if _, err := a.NewSession("t").Next(context.Background(), llm.Observation{Step: 1, Screenshot: defaultScreen().shot(t, a.Profile(), 1)}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if tool, _ := declaredDisplay(t, r.Body); tool != anthropic.Tool20250124 || r.Header.Get("Anthropic-Beta") != anthropic.Beta20250124 {
		t.Fatalf("claude-sonnet-4-5 got %s with beta %q", tool, r.Header.Get("Anthropic-Beta"))
	}
	chosen := newAdapter(t, srv, func(c *llm.Config) { c.ToolVersion = anthropic.Tool20251124; c.Model = "claude-opus-4-6" })
	if chosen.ToolVersion() != anthropic.Tool20251124 {
		t.Fatalf("GUI_AGENT_TOOL_VERSION was not honoured: %s", chosen.ToolVersion())
	}
	if _, err := anthropic.New(llm.Config{Model: "claude-sonnet-5-5", APIKey: testKey, ToolVersion: "computer_1999"}); err == nil || !strings.Contains(err.Error(), anthropic.Toolset20260801) {
		t.Fatalf("a bad tool version: %v", err)
	}
}
