package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// The native adapters of today's models, through the real binary on Xvfb:
// each fake provider speaks its wire as strictly as the real API, and the
// sample form reports what it received.

// nativeModel is one provider's fake server and the settings that reach it.
type nativeModel struct {
	core *fakellm.Core
	env  []string
}

func anthropicModel(t *testing.T, model string, brain fakellm.Brain) nativeModel {
	srv := fakellm.NewAnthropicServer(brain)
	t.Cleanup(srv.Close)
	return nativeModel{srv.Core, []string{"GUI_AGENT_PROVIDER=anthropic", "GUI_AGENT_MODEL=" + model, "GUI_AGENT_BASE_URL=" + srv.URL, "GUI_AGENT_API_KEY=" + canary(t, "sk-ant-e2e-")}}
}

func openaiModel(t *testing.T, model string, brain fakellm.Brain) nativeModel {
	srv := fakellm.NewResponsesServer(brain)
	t.Cleanup(srv.Close)
	return nativeModel{srv.Core, []string{"GUI_AGENT_PROVIDER=openai", "GUI_AGENT_MODEL=" + model, "GUI_AGENT_BASE_URL=" + srv.URL, "GUI_AGENT_API_KEY=" + canary(t, "sk-e2e-")}}
}

func geminiModel(t *testing.T, brain fakellm.Brain, confirm func(fakellm.Turn) string) nativeModel {
	srv := fakellm.NewGeminiServer(brain)
	srv.Confirm = confirm
	t.Cleanup(srv.Close)
	return nativeModel{srv.Core, []string{"GUI_AGENT_PROVIDER=gemini", "GUI_AGENT_MODEL=gemini-2.5-computer-use-preview-10-2025", "GUI_AGENT_BASE_URL=" + srv.URL, "GUI_AGENT_API_KEY=" + canary(t, "AIza-e2e-")}}
}

// nameAndEnter clicks the name field, types name and presses Return (which
// submits the form) in one turn, then finishes once the form says so.
func nameAndEnter(t *testing.T, name string) fakellm.Brain {
	field := widgetCentre(t, "name")
	return fakellm.Script(
		func(tn fakellm.Turn) fakellm.Reply {
			p := inImage(field, tn)
			return fakellm.Reply{Observation: "the sample form", Actions: []fakellm.BrainAction{
				{Kind: action.Click, At: &p}, fakellm.TypeText(name), fakellm.PressKeys("Return")}}
		},
		fakellm.Fixed(fakellm.Finish("submitted "+name)),
	)
}

// runNative runs task on a guiagent configured for m and checks the form
// received name.
func runNative(t *testing.T, d desktop, m nativeModel, name string) agent.Result {
	t.Helper()
	_, cs := startStdio(t, serverConfig{display: d.display, env: m.env}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, r := executeTask(ctx, t, cs, "Enter the name "+name+" and submit the form", nil)
	if r.Status != agent.Completed {
		t.Fatalf("status %s, want completed: %s", r.Status, textOf(res))
	}
	ev := waitEvent(t, d.app, "the form submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
	if ev.Fields["name"] != name {
		t.Fatalf("the form received name %q, want %q", ev.Fields["name"], name)
	}
	if r.Usage.Calls != m.core.Calls() {
		t.Errorf("usage says %d model calls, the provider received %d", r.Usage.Calls, m.core.Calls())
	}
	return r
}

// TestClaudeSonnet55BatchedToolsetTurn: claude-sonnet-5-5 answers one turn of
// three toolset members (left_click, type, key) on the GA API; they run in
// order and the form is submitted.
func TestClaudeSonnet55BatchedToolsetTurn(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	m := anthropicModel(t, "claude-sonnet-5-5", nameAndEnter(t, "Ada Lovelace"))
	r := runNative(t, d, m, "Ada Lovelace")
	if got := kindsOf(r.Trace[0].Actions); got != "click,type,key" {
		t.Fatalf("the batched turn ran %s, want click,type,key", got)
	}
	first := m.core.Requests()[0]
	if !strings.Contains(string(first.Body), `"type":"computer_toolset_20260801"`) || first.Header.Get("Anthropic-Beta") != "" {
		t.Fatalf("claude-sonnet-5-5 was not sent the GA toolset without a beta header: beta %q", first.Header.Get("Anthropic-Beta"))
	}
}

// TestGPT55OneComputerCallOfThreeActions: gpt-5.5 answers one computer_call
// of three actions on the GA computer tool.
func TestGPT55OneComputerCallOfThreeActions(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	m := openaiModel(t, "gpt-5.5", nameAndEnter(t, "Ada Lovelace"))
	r := runNative(t, d, m, "Ada Lovelace")
	if got := kindsOf(r.Trace[0].Actions); got != "click,type,key" {
		t.Fatalf("the computer_call ran %s, want click,type,key", got)
	}
	if r.Usage.Calls != 2 {
		t.Errorf("%d model calls, want 2 (the batch, then done)", r.Usage.Calls)
	}
	if body := string(m.core.Requests()[0].Body); !strings.Contains(body, `"tools":[{"type":"computer"}]`) {
		t.Fatalf("gpt-5.5 was not offered the GA computer tool: %.300s", body)
	}
}

// TestGeminiClickThenTypeWithEnter: a Gemini computer-use model clicks the
// field (click_at), then types into it with press_enter (type_text_at), on
// the 0-999 grid; the form is submitted with the text.
func TestGeminiClickThenTypeWithEnter(t *testing.T) {
	d := startDesktop(t, sampleapp.SceneForm)
	field := widgetCentre(t, "name")
	brain := fakellm.Script(
		func(tn fakellm.Turn) fakellm.Reply {
			p := inImage(field, tn)
			return fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: action.Click, At: &p}}}
		},
		func(tn fakellm.Turn) fakellm.Reply {
			p := inImage(field, tn)
			return fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: action.TypeText, Text: "Grace Hopper", At: &p}, fakellm.PressKeys("Return")}}
		},
		fakellm.Fixed(fakellm.Finish("submitted")),
	)
	m := geminiModel(t, brain, nil)
	r := runNative(t, d, m, "Grace Hopper")
	if len(r.Trace) < 2 || kindsOf(r.Trace[0].Actions) != "click" || kindsOf(r.Trace[1].Actions) != "click,type,key" {
		t.Fatalf("steps ran %v, want click_at then type_text_at (click,type,key)", traceKinds(r))
	}
	if body := string(m.core.Requests()[1].Body); !strings.Contains(body, `"functionResponse"`) || !strings.Contains(body, "ENVIRONMENT_DESKTOP") {
		t.Fatalf("the second request does not answer click_at on the desktop: %.300s", body)
	}
}

// TestGeminiConfirmationOverElicitation: a call with safety_decision
// require_confirmation is put to the MCP client's user; approved, the click
// runs and the call is acknowledged; declined, the run ends blocked and
// nothing is clicked.
func TestGeminiConfirmationOverElicitation(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "declined"}[approve], func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			submit := widgetCentre(t, "submit")
			brain := fakellm.Script(
				func(tn fakellm.Turn) fakellm.Reply {
					p := inImage(submit, tn)
					return fakellm.Reply{Actions: []fakellm.BrainAction{{Kind: action.Click, At: &p}}}
				},
				fakellm.Fixed(fakellm.Finish("submitted")),
			)
			m := geminiModel(t, brain, func(tn fakellm.Turn) string {
				if tn.Step == 1 {
					return "Submitting the form sends it to the server."
				}
				return ""
			})
			el := &elicitations{res: func(p *mcp.ElicitParams) *mcp.ElicitResult {
				if approve {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
				}
				return &mcp.ElicitResult{Action: "decline"}
			}}
			_, cs := startStdio(t, serverConfig{display: d.display, env: m.env}, &mcp.ClientOptions{ElicitationHandler: el.handler})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, r := executeTask(ctx, t, cs, "submit the form", nil)
			if msgs := el.messages(); len(msgs) != 1 || !strings.Contains(msgs[0], "Submitting the form sends it to the server") {
				t.Fatalf("elicitations %q, want one naming the model's explanation", msgs)
			}
			if !approve {
				if r.Status != agent.Blocked {
					t.Fatalf("declined: status %s, want blocked: %s", r.Status, textOf(res))
				}
				time.Sleep(500 * time.Millisecond) // an input would have arrived by now
				for _, e := range d.app.History() {
					if e.Event == "click" || e.Event == "submit" {
						t.Fatalf("declined, yet the app saw %+v", e)
					}
				}
				if m.core.Calls() != 1 {
					t.Fatalf("declined: %d model calls, want 1", m.core.Calls())
				}
				return
			}
			if r.Status != agent.Completed {
				t.Fatalf("approved: status %s, want completed: %s", r.Status, textOf(res))
			}
			waitEvent(t, d.app, "the submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
			if !strings.Contains(string(m.core.Requests()[1].Body), `"safety_acknowledgement":"true"`) {
				t.Fatal("the approved call was answered without safety_acknowledgement")
			}
		})
	}
}

// TestSampleFormTaskOnEveryNativeAdapter: the sample form task (three fields
// in one batched step, then done) on each native adapter, legacy
// claude-sonnet-4-5 included; logs model calls and wall time per adapter.
func TestSampleFormTaskOnEveryNativeAdapter(t *testing.T) {
	form := scripted.DefaultDemoForm
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) nativeModel
	}{
		{"claude-sonnet-4-5 (legacy computer_20250124)", func(t *testing.T) nativeModel {
			return anthropicModel(t, "claude-sonnet-4-5", scripted.DemoFormBrain(form))
		}},
		{"claude-sonnet-5-5 (toolset)", func(t *testing.T) nativeModel {
			return anthropicModel(t, "claude-sonnet-5-5", scripted.DemoFormBrain(form))
		}},
		{"gpt-5.5 (GA computer tool)", func(t *testing.T) nativeModel { return openaiModel(t, "gpt-5.5", scripted.DemoFormBrain(form)) }},
		{"gemini computer use", func(t *testing.T) nativeModel { return geminiModel(t, scripted.DemoFormBrain(form), nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startDesktop(t, sampleapp.SceneForm)
			m := tc.model(t)
			_, cs := startStdio(t, serverConfig{display: d.display, env: m.env}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, r := executeTask(ctx, t, cs, fmt.Sprintf("Fill the form with name %s, email %s and city %s, then press Submit", form.Name, form.Email, form.City), nil)
			if r.Status != agent.Completed {
				t.Fatalf("status %s: %s", r.Status, textOf(res))
			}
			ev := waitEvent(t, d.app, "the form submit", func(e sampleapp.Event) bool { return e.Event == "submit" })
			if ev.Fields["name"] != form.Name || ev.Fields["email"] != form.Email || ev.Fields["city"] != form.City {
				t.Fatalf("the form received %v", ev.Fields)
			}
			if r.Usage.Calls > 2 {
				t.Errorf("%d model calls, want at most 2", r.Usage.Calls)
			}
			t.Logf("%s: %d model calls, %d steps, wall %d ms", tc.name, r.Usage.Calls, r.Steps, r.Usage.WallMillis)
		})
	}
}

func kindsOf(ts []action.Trace) string {
	var out []string
	for _, a := range ts {
		out = append(out, string(a.Action.Kind))
	}
	return strings.Join(out, ",")
}

func traceKinds(r agent.Result) []string {
	var out []string
	for _, s := range r.Trace {
		out = append(out, kindsOf(s.Actions))
	}
	return out
}
