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
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// twoChecks flags the first answer (a click) with two safety checks.
func twoChecks(t fakellm.Turn) []fakellm.SafetyCheck {
	if t.Step == 1 {
		return []fakellm.SafetyCheck{
			{ID: "cu_sc_1", Code: "malicious_instructions", Message: "The page asks to buy something."},
			{ID: "cu_sc_2", Code: "irrelevant_domain", Message: "The shop is not part of the task."},
		}
	}
	return nil
}

// reqItems returns the input items of the i-th recorded request.
func reqItems(t *testing.T, srv *fakellm.ResponsesServer, i int) (prevID string, items []map[string]any) {
	t.Helper()
	var req struct {
		PreviousResponseID string           `json:"previous_response_id"`
		Input              []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(srv.Requests()[i].Body, &req); err != nil {
		t.Fatal(err)
	}
	return req.PreviousResponseID, req.Input
}

func confirm(ask action.Action, yes bool) llm.Answer {
	text := "no"
	if yes {
		text = "yes"
	}
	return llm.Answer{Ask: ask, Text: text, Approved: yes}
}

func TestSafetyChecksAskAndApprovedAnswersReleaseTheHeldAction(t *testing.T) {
	var followUp fakellm.Turn
	srv := fakellm.NewResponsesServer(fakellm.Script(
		fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Point{X: 10, Y: 10})}}),
		func(t fakellm.Turn) fakellm.Reply { followUp = t; return fakellm.Finish("purchased") },
	))
	defer srv.Close()
	srv.SafetyChecks = twoChecks
	a := newAdapter(t, srv)
	sess := a.NewSession("buy")
	d, err := sess.Next(context.Background(), obs(t, a, 1))
	if err != nil {
		t.Fatal(err)
	}
	// The checks become questions: one confirm per check, in order, and the
	// flagged click is held.
	if d.Status != llm.Continue || len(d.Actions) != 2 || len(d.SafetyChecks) != 2 || !strings.HasPrefix(d.SafetyChecks[1], "cu_sc_2") {
		t.Fatalf("decision = %+v, want continue with two confirms and the checks listed", d)
	}
	for i, id := range []string{"cu_sc_1", "cu_sc_2"} {
		q := d.Actions[i]
		if q.Kind != action.AskUser || q.AskKind() != action.AskConfirm || q.CallID != id || !strings.HasSuffix(q.Question, "Let it run?") {
			t.Fatalf("actions[%d] = %+v, want a confirm for %s", i, q, id)
		}
	}
	if want := "The model's next action was flagged for review: The page asks to buy something (malicious_instructions). Let it run?"; d.Actions[0].Question != want {
		t.Fatalf("question %q, want %q", d.Actions[0].Question, want)
	}
	if err := llm.ValidateDecision(d); err != nil {
		t.Fatalf("the questions do not validate: %v", err)
	}
	// Both approved: the held click comes back without a model call.
	o := obs(t, a, 2)
	o.Answers = []llm.Answer{confirm(d.Actions[0], true), confirm(d.Actions[1], true)}
	d, err = sess.Next(context.Background(), o)
	if err != nil || d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.Click || srv.Calls() != 1 {
		t.Fatalf("approved: decision %+v err %v calls %d; want the held click without a model call", d, err, srv.Calls())
	}
	// The next request answers the call and acknowledges exactly the checks
	// (the fake server refuses anything else).
	d, err = sess.Next(context.Background(), obs(t, a, 3))
	if err != nil || d.Status != llm.Done {
		t.Fatalf("after the click: %+v %v", d, err)
	}
	prev, items := reqItems(t, srv, 1)
	if prev != "resp_fake_1" || len(items) != 1 || items[0]["type"] != "computer_call_output" {
		t.Fatalf("follow-up: previous %q items %v, want one computer_call_output chained to resp_fake_1", prev, items)
	}
	acked, _ := json.Marshal(items[0]["acknowledged_safety_checks"])
	want := `[{"code":"malicious_instructions","id":"cu_sc_1","message":"The page asks to buy something."},{"code":"irrelevant_domain","id":"cu_sc_2","message":"The shop is not part of the task."}]`
	if string(acked) != want {
		t.Fatalf("acknowledged_safety_checks = %s, want %s", acked, want)
	}
	if strings.Contains(followUp.Prompt, "The user answered") {
		t.Fatalf("the approvals were also sent as text: %q", followUp.Prompt)
	}
}

func TestSafetyCheckNotApprovedBlocks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers func(asks []action.Action) []llm.Answer
		want    string
	}{
		{"one refused", func(asks []action.Action) []llm.Answer {
			return []llm.Answer{confirm(asks[0], true), confirm(asks[1], false)}
		}, "the user refused the provider's safety check cu_sc_2 (irrelevant_domain)"},
		{"no answers", func([]action.Action) []llm.Answer { return nil }, "safety check cu_sc_1 (malicious_instructions): The page asks to buy something. was not approved"},
		{"another check approved", func(asks []action.Action) []llm.Answer {
			other := asks[0]
			other.CallID = "some_other_check"
			return []llm.Answer{confirm(other, true), confirm(asks[1], true)}
		}, "cu_sc_1 (malicious_instructions): The page asks to buy something. was not approved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.ClickAt(image.Point{X: 10, Y: 10})}})))
			defer srv.Close()
			srv.SafetyChecks = twoChecks
			a := newAdapter(t, srv)
			sess := a.NewSession("buy")
			d, err := sess.Next(context.Background(), obs(t, a, 1))
			if err != nil {
				t.Fatal(err)
			}
			o := obs(t, a, 2)
			o.Answers = tc.answers(d.Actions)
			d, err = sess.Next(context.Background(), o)
			if err != nil || d.Status != llm.Blocked || len(d.Actions) != 0 || len(d.SafetyChecks) != 2 || srv.Calls() != 1 {
				t.Fatalf("decision %+v err %v calls %d; want blocked, no action, no model call", d, err, srv.Calls())
			}
			if !strings.Contains(d.BlockReason, tc.want) || d.NextUserAction == "" {
				t.Fatalf("block reason %q, want it to contain %q (and a next user action)", d.BlockReason, tc.want)
			}
		})
	}
}

func TestClosingQuestionAsksAndTheAnswerGoesBackChained(t *testing.T) {
	for _, text := range []string{"QUESTION: Which account should I use?", "Two accounts are listed.\nWhich account should I use?"} {
		var answered string
		srv := fakellm.NewResponsesServer(fakellm.Script(
			fakellm.Fixed(fakellm.Reply{Raw: text}),
			func(t fakellm.Turn) fakellm.Reply {
				answered, _ = t.Answered("Which account should I use?")
				return fakellm.Finish("used the work account")
			},
		))
		a := newAdapter(t, srv)
		sess := a.NewSession("send the report")
		d, err := sess.Next(context.Background(), obs(t, a, 1))
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != llm.Continue || len(d.Actions) != 1 || d.Actions[0].Kind != action.AskUser || d.Actions[0].AskKind() != action.AskText ||
			!strings.HasSuffix(d.Actions[0].Question, "Which account should I use?") {
			t.Fatalf("%q: decision %+v, want one ask_user text", text, d)
		}
		o := obs(t, a, 2)
		o.Answers = []llm.Answer{{Ask: action.Action{Kind: action.AskUser, Question: "Which account should I use?"}, Text: "the work one"}}
		if d, err = sess.Next(context.Background(), o); err != nil || d.Status != llm.Done {
			t.Fatalf("after the answer: %+v %v", d, err)
		}
		srv.Close()
		if answered != "the work one" {
			t.Fatalf("the model saw the answer %q", answered)
		}
		prev, items := reqItems(t, srv, 1)
		if prev != "resp_fake_1" || len(items) != 1 || items[0]["role"] != "user" {
			t.Fatalf("answer request: previous %q items %v, want one user message chained to resp_fake_1", prev, items)
		}
		content, _ := json.Marshal(items[0]["content"])
		if !strings.Contains(string(content), `{"text":"The user answered your question \"Which account should I use?\": \"the work one\"","type":"input_text"}`) ||
			!strings.Contains(string(content), `"type":"input_image"`) {
			t.Fatalf("answer message content = %s, want the answer as input_text and the screenshot", content)
		}
	}
}

func TestFakeAskRendersAQuestionMessage(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Ask: &fakellm.BrainAsk{Question: "Send it now?", Kind: action.AskConfirm}})))
	defer srv.Close()
	a := newAdapter(t, srv)
	d, err := a.NewSession("send").Next(context.Background(), obs(t, a, 1))
	if err != nil || len(d.Actions) != 1 || d.Actions[0].Question != "Send it now?" || d.Status != llm.Continue {
		t.Fatalf("decision %+v err %v, want the question", d, err)
	}
	if !strings.Contains(string(d.Response), `"text":"QUESTION: Send it now?"`) {
		t.Fatalf("response %s does not carry QUESTION:", d.Response)
	}
}

// png1x1 is a 1x1 PNG in base64.
const png1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="

func TestServerVerifiesAcknowledgedSafetyChecks(t *testing.T) {
	srv := fakellm.NewResponsesServer(fakellm.Script(fakellm.Fixed(fakellm.Reply{Actions: []fakellm.BrainAction{fakellm.TypeText("a")}})))
	defer srv.Close()
	srv.SafetyChecks = twoChecks
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
	tool := `"tools":[{"type":"computer_use_preview","display_width":100,"display_height":100,"environment":"linux"}],"truncation":"auto"`
	if code, body := post(`{"model":"computer-use-preview","input":"hi",` + tool + `}`); code != 200 || !strings.Contains(body, `"id":"cu_sc_2"`) {
		t.Fatalf("first request: HTTP %d %s", code, body)
	}
	output := func(acks string) string {
		return `{"model":"computer-use-preview","previous_response_id":"resp_fake_1",` + tool + `,"input":[{"type":"computer_call_output","call_id":"call_fake_1",` +
			`"output":{"type":"computer_screenshot","image_url":"data:image/png;base64,` + png1x1 + `"}` + acks + `}]}`
	}
	for acks, want := range map[string]string{
		``: "pending safety checks [cu_sc_1 cu_sc_2] that must be acknowledged",
		`,"acknowledged_safety_checks":[{"id":"cu_sc_1"}]`:                  "acknowledged_safety_checks [cu_sc_1] do not match the pending safety checks [cu_sc_1 cu_sc_2]",
		`,"acknowledged_safety_checks":[{"id":"cu_sc_1"},{"id":"cu_sc_9"}]`: "do not match",
		`,"acknowledged_safety_checks":[{"id":"cu_sc_2"},{"id":"cu_sc_1"}]`: "",
	} {
		code, body := post(output(acks))
		if want == "" {
			if code != 200 {
				t.Errorf("exact acknowledgement refused: HTTP %d %s", code, body)
			}
			continue
		}
		if code != 400 || !strings.Contains(body, want) {
			t.Errorf("acks %q: HTTP %d %s, want 400 saying %q", acks, code, body, want)
		}
	}
}
