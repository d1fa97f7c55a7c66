// Package responses is the openai-computer adapter: OpenAI's Responses API
// with the GA computer tool ({"type": "computer"}: no declared display, one
// computer_call carries a batch of actions, the keys held during pointer
// actions honoured) for gpt-5.4 and later, through the official SDK with its
// retries off (llm.Do retries). The shut-down computer-use-preview model and
// its computer_use_preview tool (declared display, one action per call)
// remain only when chosen explicitly. Screenshots go back at detail
// "original", the detail OpenAI's computer-use guide recommends for the GA
// tool, so the model's pixels are the screenshot's.
//
// A Session chains requests with previous_response_id and truncation "auto",
// so the server keeps (and trims) the conversation. Each computer_call is
// answered in the next request by a computer_call_output carrying the current
// screenshot. A computer_call with pending_safety_checks is never run and never
// acknowledged silently: its actions are held and the decision asks the user
// instead, one ask_user confirm per check (the checks in
// Decision.SafetyChecks). Only when the next Observation's Answers approve
// every check does the session release the held actions (without a model
// call) and acknowledge exactly those checks in the next request; otherwise
// the decision is blocked. A closing message that asks the user (QUESTION:,
// see cuwire.ClassifyFinal) becomes an ask_user text action, and its answer
// goes back as a user message chained with previous_response_id.
package responses

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	sdk "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// Name is the adapter name.
const Name = llm.AdapterOpenAIComputer

// DefaultBaseURL is where requests go when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Computer tool versions (Config.ToolVersion).
const (
	// ToolComputer is the GA computer tool.
	ToolComputer = "computer"
	// ToolPreview is the computer_use_preview tool of computer-use-preview,
	// which OpenAI shut down on 2026-07-23.
	ToolPreview = "computer_use_preview"
)

// ToolFor returns the computer tool a model takes, by the first of the
// provider's rules naming this adapter: computer_use_preview for
// computer-use-preview*, the GA tool for everything else.
func ToolFor(model string) string {
	if r := llm.RuleFor(Name, model); r.ToolVersion != "" {
		return r.ToolVersion
	}
	return ToolComputer
}

// Adapter is the openai-computer model adapter. It is safe for concurrent use;
// each Session is used by one goroutine.
type Adapter struct {
	cfg         llm.Config
	profile     geom.Profile
	environment string
	tool        string
	svc         sdk.ResponseService
}

var _ llm.Adapter = (*Adapter)(nil)

// New returns the adapter for cfg. It needs Model and APIKey; BaseURL is given
// up to and including /v1 (empty = OpenAI).
func New(cfg llm.Config) (llm.Adapter, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("openai-computer: no model given: set %s to a model with the computer tool such as gpt-5.5", cfg.Vars.ModelVar())
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("openai-computer: no API key: set %s to an OpenAI API key", cfg.Vars.APIKeyVar())
	}
	tool := cfg.ToolVersion
	if tool == "" {
		tool = ToolFor(cfg.Model)
	}
	if tool != ToolComputer && tool != ToolPreview {
		return nil, fmt.Errorf("openai-computer: %s=%q: use %s (the GA tool) or %s", cfg.Vars.ToolVersionVar(), tool, ToolComputer, ToolPreview)
	}
	cfg = cfg.WithDefaults()
	hc := cfg.HTTPClient
	if hc == nil {
		// Each attempt is bounded by the SDK's request timeout (cfg.Timeout),
		// which cuwire.RequestError reports as a timeout; the client's own
		// timeout is only a backstop and must not race it.
		hc = &http.Client{Timeout: cfg.Timeout + 10*time.Second}
	}
	hc = llm.LimitResponses(hc, llm.MaxResponseBytes)
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	// The service is built directly (not through openai.NewClient) so no
	// OPENAI_* environment variable changes where requests go or what they carry.
	svc := sdk.NewResponseService(
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
	)
	return &Adapter{cfg: cfg, profile: cfg.ProfileOf(Name), environment: EnvironmentFor(runtime.GOOS), tool: tool, svc: svc}, nil
}

// EnvironmentFor returns the computer tool environment for a GOOS value:
// "windows", "mac", or "linux".
func EnvironmentFor(goos string) string {
	switch goos {
	case "windows":
		return "windows"
	case "darwin":
		return "mac"
	}
	return "linux"
}

// Name returns "openai-computer".
func (a *Adapter) Name() string { return Name }

// Profile returns the coordinate convention: pixels of the image sent.
func (a *Adapter) Profile() geom.Profile { return a.profile }

// ToolVersion returns the computer tool requests declare.
func (a *Adapter) ToolVersion() string { return a.tool }

// NewSession starts a conversation for task.
func (a *Adapter) NewSession(task string) llm.Session {
	return &Session{a: a, task: task}
}

// pendingCall is a computer_call of the last response still to be answered.
type pendingCall struct {
	callID string
	checks []safetyCheck
	acked  bool // a human approved every check
}

// held is a computer_call's actions waiting for the user to approve its
// safety checks.
type held struct {
	actions     []action.Action
	checks      []safetyCheck
	observation string
}

// Session is one task's conversation. It is used by one goroutine.
type Session struct {
	a          *Adapter
	task       string
	prevID     string
	calls      []pendingCall
	held       *held
	lastMemory string
	display    geom.Size
}

var _ llm.Session = (*Session)(nil)

// Next answers the previous computer_calls with the observation's screenshot
// and returns the model's decision. On a provider error nothing is committed.
func (s *Session) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	if s.held != nil {
		return s.release(obs), nil
	}
	if len(obs.Screenshot.Data) == 0 {
		return nil, errors.New("openai-computer: the observation has no screenshot: the loop must capture one before asking the model")
	}
	s.display = cuwire.DeclaredDisplay(s.display, obs.Screenshot.Frame)
	input, elide := s.input(obs)
	params := sdk.ResponseNewParams{
		Model:           shared.ResponsesModel(s.a.cfg.Model),
		Instructions:    openai.String(instructions(s.a.tool == ToolComputer) + llm.DeviceInstructions(s.a.cfg.Device)), // not carried over by previous_response_id
		Input:           sdk.ResponseNewParamsInputUnion{OfInputItemList: input},
		MaxOutputTokens: openai.Int(int64(s.a.cfg.MaxTokens)),
		Truncation:      sdk.ResponseNewParamsTruncationAuto,
		Reasoning:       shared.ReasoningParam{Summary: shared.ReasoningSummaryConcise},
		Tools:           []sdk.ToolUnionParam{s.toolParam()},
	}
	if s.prevID != "" {
		params.PreviousResponseID = openai.String(s.prevID)
	}
	res, capt, err := cuwire.Do(ctx, s.a.cfg, "openai", "openai responses", func(ctx context.Context, c *cuwire.Capture) (*sdk.Response, error) {
		return s.a.svc.New(ctx, params, option.WithMiddleware(c.Middleware))
	})
	if err != nil {
		return nil, err
	}
	d := &llm.Decision{
		Usage: llm.Usage{Calls: 1, InputTokens: int(res.Usage.InputTokens), OutputTokens: int(res.Usage.OutputTokens)},
	}
	d.Request, d.Response = capt.Bodies(elide, s.a.cfg.APIKey)
	if res.Status == "failed" {
		msg := res.Error.Message
		if msg == "" {
			msg = "the response failed without a message"
		}
		return nil, &llm.APIError{Provider: "openai", StatusCode: http.StatusOK, Type: string(res.Error.Code), Message: cuwire.RedactString(msg, s.a.cfg.APIKey)}
	}
	// The response exists now: the next request chains to it.
	s.prevID = res.ID
	s.calls = nil
	if obs.Memory != "" {
		s.lastMemory = obs.Memory
	}

	texts, reasoning, bad, checks := s.readOutput(res, d)
	d.Observation = strings.Join(texts, "\n")
	d.Reasoning = strings.Join(reasoning, "\n")

	if len(bad) > 0 {
		d.Actions = nil
		return d, fmt.Errorf("%w: %s", llm.ErrBadOutput, strings.Join(bad, "; "))
	}
	if len(checks) > 0 {
		s.hold(d, checks)
		return d, nil
	}
	return s.finish(res, d)
}

// toolParam declares the computer tool: the GA tool has no display; the
// preview tool declares the size of the image sent and the environment.
func (s *Session) toolParam() sdk.ToolUnionParam {
	if s.a.tool == ToolComputer {
		t := sdk.NewComputerToolParam()
		return sdk.ToolUnionParam{OfComputer: &t}
	}
	return sdk.ToolUnionParam{OfComputerUsePreview: &sdk.ComputerUsePreviewToolParam{
		DisplayWidth:  int64(s.display.W),
		DisplayHeight: int64(s.display.H),
		Environment:   sdk.ComputerUsePreviewToolEnvironment(s.a.environment),
	}}
}

// readOutput reads the response's output items: message texts, reasoning
// summaries, the problems of computer calls that do not parse and the pending
// safety checks. Computer calls become s.calls and their actions d.Actions.
func (s *Session) readOutput(res *sdk.Response, d *llm.Decision) (texts, reasoning, bad []string, checks []safetyCheck) {
	for _, item := range res.Output {
		raw := json.RawMessage(item.RawJSON())
		switch item.Type {
		case "reasoning":
			reasoning = append(reasoning, summaryTexts(raw)...)
		case "message":
			texts = append(texts, messageTexts(raw)...)
		case "computer_call":
			var c computerCall
			if err := json.Unmarshal(raw, &c); err != nil || c.CallID == "" {
				bad = append(bad, fmt.Sprintf("computer_call item does not parse: %v", err))
				continue
			}
			s.calls = append(s.calls, pendingCall{callID: c.CallID, checks: c.PendingSafetyChecks})
			checks = append(checks, c.PendingSafetyChecks...)
			acts, err := c.actions(s.a.profile.Space(), s.a.tool == ToolComputer)
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			d.Actions = append(d.Actions, acts...)
		}
	}
	return texts, reasoning, bad, checks
}

// summaryTexts returns a reasoning item's summary texts.
func summaryTexts(raw json.RawMessage) []string {
	var r struct {
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
	}
	_ = json.Unmarshal(raw, &r)
	var out []string
	for _, x := range r.Summary {
		if t := strings.TrimSpace(x.Text); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// messageTexts returns a message item's texts and refusals.
func messageTexts(raw json.RawMessage) []string {
	var m struct {
		Content []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &m)
	var out []string
	for _, c := range m.Content {
		if t := strings.TrimSpace(c.Text + c.Refusal); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// hold keeps d's actions until the user approves checks and turns d into
// the questions: one ask_user confirm per check (CallID the check's id),
// status continue, the checks listed in SafetyChecks. See release.
func (s *Session) hold(d *llm.Decision, checks []safetyCheck) {
	var list []string
	var asks []action.Action
	for _, c := range checks {
		list = append(list, c.String())
		asks = append(asks, action.Action{Kind: action.AskUser, Ask: action.AskConfirm, CallID: c.ID, Question: c.question()})
	}
	s.held = &held{actions: d.Actions, checks: checks, observation: d.Observation}
	d.Status = llm.Continue
	d.SafetyChecks = list
	d.Actions = asks
}

// finish reads a response without safety checks: actions to run, a cut-off
// answer, or the final text.
func (s *Session) finish(res *sdk.Response, d *llm.Decision) (*llm.Decision, error) {
	if len(s.calls) > 0 {
		d.Status = llm.Continue
		if len(d.Actions) == 0 { // only screenshot: the next step's screenshot answers it
			d.Actions = []action.Action{{Kind: action.Wait, CallID: s.calls[len(s.calls)-1].callID}}
		}
		return d, nil
	}
	if res.Status == "incomplete" {
		return d, fmt.Errorf("%w: the answer was cut off (%s) before any action", llm.ErrBadOutput, res.IncompleteDetails.Reason)
	}
	if d.Observation == "" {
		return d, fmt.Errorf("%w: the answer has neither a computer action nor text: act with the computer tool, or reply QUESTION:, DONE:, BLOCKED: or FAILED: with the question or result", llm.ErrBadOutput)
	}
	cuwire.ReadFinal(d)
	return d, nil
}

// release handles the step after hold. When every held check has an answer
// approving it (Answer.Ask.CallID its id, Approved) the held actions are
// returned without a model call, and exactly those checks are acknowledged
// in the next request. Otherwise the decision is blocked, naming the check
// the user did not approve; the actions stay held and are never run.
func (s *Session) release(obs llm.Observation) *llm.Decision {
	for _, c := range s.held.checks {
		answered, yes := false, false
		for _, a := range obs.Answers {
			if a.Ask.CallID == c.ID {
				answered, yes = true, a.Approved
			}
		}
		if !yes {
			return s.held.blocked(c, answered)
		}
	}
	for i := range s.calls {
		s.calls[i].acked = true
	}
	d := &llm.Decision{
		Observation: s.held.observation,
		Reasoning:   "The user approved the safety checks; running the held action.",
		Released:    true,
		Actions:     s.held.actions,
		Status:      llm.Continue,
	}
	if len(d.Actions) == 0 {
		d.Actions = []action.Action{{Kind: action.Wait}}
	}
	s.held = nil
	return d
}

// blocked is the decision when the user did not approve check c (refused
// it when answered, else gave no answer to it).
func (h *held) blocked(c safetyCheck, answered bool) *llm.Decision {
	d := &llm.Decision{Observation: h.observation, Status: llm.Blocked}
	for _, k := range h.checks {
		d.SafetyChecks = append(d.SafetyChecks, k.String())
	}
	if answered {
		d.BlockReason = "the user refused the provider's safety check " + c.String()
	} else {
		d.BlockReason = "the provider's safety check " + c.String() + " was not approved"
	}
	d.NextUserAction = "The flagged action was not run. Run the task again and approve the check only if the action is intended."
	return d
}

// input builds the request's input items and the image data to elide.
func (s *Session) input(obs llm.Observation) (sdk.ResponseInputParam, []cuwire.Elision) {
	shot := obs.Screenshot
	url := "data:" + cuwire.MIME(shot) + ";base64," + base64.StdEncoding.EncodeToString(shot.Data)
	var elide []cuwire.Elision
	notes := cuwire.Notes(obs, s.lastMemory, s.prevID != "")
	message := func(texts []string, withImage bool) sdk.ResponseInputItemUnionParam {
		var content sdk.ResponseInputMessageContentListParam
		for _, t := range texts {
			content = append(content, sdk.ResponseInputContentUnionParam{OfInputText: &sdk.ResponseInputTextParam{Text: t}})
		}
		if withImage {
			content = append(content, sdk.ResponseInputContentUnionParam{OfInputImage: &sdk.ResponseInputImageParam{
				Detail: s.detail(), ImageURL: openai.String(url),
			}})
			elide = append(elide, cuwire.Elision{Data: url, Ref: cuwire.ImageRef(shot)})
		}
		return sdk.ResponseInputItemUnionParam{OfMessage: &sdk.EasyInputMessageParam{
			Role: sdk.EasyInputMessageRoleUser, Content: sdk.EasyInputMessageContentUnionParam{OfInputItemContentList: content},
		}}
	}
	var items sdk.ResponseInputParam
	switch {
	case s.prevID == "":
		items = append(items, message(append([]string{cuwire.TaskText(s.task, obs.Memory)}, notes...), true))
	case len(s.calls) > 0:
		for _, c := range s.calls {
			shotParam := sdk.ResponseComputerToolCallOutputScreenshotParam{ImageURL: openai.String(url)}
			if s.a.tool == ToolComputer {
				// The SDK's param has no detail field yet; the API's computer_screenshot takes one.
				shotParam.SetExtraFields(map[string]any{"detail": string(sdk.ResponseInputImageDetailOriginal)})
			}
			out := &sdk.ResponseInputItemComputerCallOutputParam{CallID: c.callID, Output: shotParam}
			if c.acked {
				for _, k := range c.checks {
					ack := sdk.ResponseInputItemComputerCallOutputAcknowledgedSafetyCheckParam{ID: k.ID}
					if k.Code != "" {
						ack.Code = openai.String(k.Code)
					}
					if k.Message != "" {
						ack.Message = openai.String(k.Message)
					}
					out.AcknowledgedSafetyChecks = append(out.AcknowledgedSafetyChecks, ack)
				}
			}
			items = append(items, sdk.ResponseInputItemUnionParam{OfComputerCallOutput: out})
			elide = append(elide, cuwire.Elision{Data: url, Ref: cuwire.ImageRef(shot)})
		}
		if len(notes) > 0 {
			items = append(items, message(notes, false))
		}
	default:
		items = append(items, message(notes, true))
	}
	return items, elide
}

// detail is the detail screenshots are sent at: original for the GA tool
// (OpenAI's computer-use guide: the model then sees the screenshot's own
// pixels), auto for the preview.
func (s *Session) detail() sdk.ResponseInputImageDetail {
	if s.a.tool == ToolComputer {
		return sdk.ResponseInputImageDetailOriginal
	}
	return sdk.ResponseInputImageDetailAuto
}

// instructions tells the model how the session works and how to end it.
func instructions(batch bool) string {
	s := "You operate a desktop computer with the computer tool to complete the user's task.\n" +
		"- Every computer_call is answered with a fresh screenshot; coordinates are pixels of that screenshot.\n"
	if batch {
		s += "- One computer_call may carry several actions when the screen will not change in between (for example to fill several fields); they run in order and one screenshot follows.\n"
	}
	return s + "- Do not ask for confirmation of ordinary steps; carry the task through.\n" +
		"- If you need information or a decision only the user has (a value the task does not give, which account or option to use, whether to go ahead with something that cannot be undone), reply without a computer action and start with " + cuwire.MarkQuestion + " followed by one question; the user's answer comes in the next message and the task goes on.\n" +
		"- When the task is complete, reply without a computer action and start with " + cuwire.MarkDone + " followed by the result (what you found, entered or decided).\n" +
		"- If only the user can go on by acting themselves (a login, a CAPTCHA), reply starting with " + cuwire.MarkBlocked + " followed by what the user must do.\n" +
		"- If the task cannot be done, reply starting with " + cuwire.MarkFailed + " and the reason."
}
