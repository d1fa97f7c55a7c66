package gemini

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// Name is the adapter name.
const Name = llm.AdapterGemini

// Adapter is the gemini-computer model adapter. It is safe for concurrent
// use; each Session is used by one goroutine.
type Adapter struct {
	c        *client
	profile  geom.Profile
	excluded []string
}

var _ llm.Adapter = (*Adapter)(nil)

// New returns the adapter for cfg. It needs Model and APIKey; BaseURL is the
// API's host root (empty = the Gemini API). Disabled action kinds exclude
// the functions that perform them.
func New(cfg llm.Config) (llm.Adapter, error) {
	c, err := newClient("gemini-computer", cfg)
	if err != nil {
		return nil, err
	}
	return &Adapter{c: c, profile: c.cfg.ProfileOf(Name), excluded: Excluded(cfg.Disabled)}, nil
}

// Name returns "gemini-computer".
func (a *Adapter) Name() string { return Name }

// Profile returns the coordinate convention: the 0-999 grid, x then y.
func (a *Adapter) Profile() geom.Profile { return a.profile }

// NewSession starts a conversation for task.
func (a *Adapter) NewSession(task string) llm.Session { return &Session{a: a, task: task} }

// call is a function call of the last answer, still to be answered.
type call struct {
	id, name string
	confirm  string // the safety_decision's explanation when it requires confirmation
	errMsg   string // why it was refused
	acked    bool   // the person approved it: answered with safety_acknowledgement
}

// held are an answer's actions waiting for the person to approve the calls
// that require confirmation.
type held struct {
	actions     []action.Action
	observation string
}

// Session is one task's conversation. It is used by one goroutine.
type Session struct {
	a          *Adapter
	task       string
	history    []*genai.Content
	calls      []call
	held       *held
	lastMemory string
}

var _ llm.Session = (*Session)(nil)

// Next answers the previous function calls with the observation's
// screenshot and returns the model's decision. On a provider error nothing
// is committed.
func (s *Session) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	if s.held != nil {
		return s.release(obs), nil
	}
	if len(obs.Screenshot.Data) == 0 {
		return nil, fmt.Errorf("gemini-computer: %w", errNoImage)
	}
	user := s.userContent(obs)
	contents, elide := s.prune(append(s.history[:len(s.history):len(s.history)], user))
	gc := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(systemPrompt()+llm.DeviceInstructions(s.a.c.cfg.Device), genai.RoleUser),
		MaxOutputTokens:   int32(s.a.c.cfg.MaxTokens),
		Tools: []*genai.Tool{{ComputerUse: &genai.ComputerUse{
			Environment: genai.EnvironmentDesktop, ExcludedPredefinedFunctions: s.a.excluded,
		}}},
	}
	res, capt, err := s.a.c.generate(ctx, "gemini generateContent", contents, gc)
	if err != nil {
		return nil, err
	}
	d := &llm.Decision{Usage: usage(res)}
	d.Request, d.Response = capt.Bodies(elide, s.a.c.cfg.APIKey)
	cand, err := candidate(res)
	if err != nil {
		return d, err
	}
	// Commit: the request was answered.
	s.history = append(s.history, user, cand.Content)
	if obs.Memory != "" {
		s.lastMemory = obs.Memory
	}
	texts, reasoning, bad := s.readParts(cand.Content, d)
	d.Observation, d.Reasoning = strings.Join(texts, "\n"), strings.Join(reasoning, "\n")
	if len(bad) > 0 {
		for i := range s.calls {
			if s.calls[i].errMsg == "" {
				s.calls[i].errMsg = "not executed: another call in the same answer was invalid"
			}
		}
		d.Actions = nil
		return d, fmt.Errorf("%w: %s", llm.ErrBadOutput, strings.Join(bad, "; "))
	}
	return s.finish(cand, d)
}

// readParts reads the answer's parts: texts, thoughts, and function calls,
// which become s.calls and d.Actions (in order); bad lists refused calls.
func (s *Session) readParts(c *genai.Content, d *llm.Decision) (texts, reasoning, bad []string) {
	s.calls = nil
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			cl, acts := s.functionCall(p.FunctionCall)
			if cl.errMsg != "" {
				bad = append(bad, cl.errMsg)
			}
			s.calls = append(s.calls, cl)
			d.Actions = append(d.Actions, acts...)
		case p.Thought && p.Text != "":
			reasoning = append(reasoning, strings.TrimSpace(p.Text))
		case strings.TrimSpace(p.Text) != "":
			texts = append(texts, strings.TrimSpace(p.Text))
		}
	}
	return texts, reasoning, bad
}

// functionCall maps one predefined function call to actions on the grid.
func (s *Session) functionCall(fc *genai.FunctionCall) (call, []action.Action) {
	cl := call{id: fc.ID, name: fc.Name}
	a := args(fc.Args)
	if sd, ok := a["safety_decision"].(map[string]any); ok && sd["decision"] == "require_confirmation" {
		cl.confirm, _ = sd["explanation"].(string)
		if cl.confirm == "" {
			cl.confirm = "the model's next action needs your confirmation"
		}
	}
	f, ok := Functions[fc.Name]
	switch {
	case !ok:
		cl.errMsg = fmt.Sprintf("unknown function %q: use one of %s", fc.Name, strings.Join(FunctionNames(), ", "))
	case slices.Contains(s.a.excluded, fc.Name):
		cl.errMsg = fmt.Sprintf("function %s is excluded in this session: use another", fc.Name)
	}
	if cl.errMsg != "" {
		return cl, nil
	}
	raws, err := f.Map(a)
	if err == nil {
		for i := range raws {
			raws[i].CallID = fc.ID
		}
		var acts []action.Action
		if acts, err = action.ParseModelAll(raws, s.a.profile.Space()); err == nil {
			return cl, acts
		}
	}
	cl.errMsg = fmt.Sprintf("%s: %v", fc.Name, err)
	return cl, nil
}

// finish reads an answer without refused calls: actions to run (held when a
// call requires confirmation), a cut-off or blocked answer, or the final text.
func (s *Session) finish(cand *genai.Candidate, d *llm.Decision) (*llm.Decision, error) {
	if len(s.calls) > 0 {
		d.Status = llm.Continue
		var asks []action.Action
		for _, c := range s.calls {
			if c.confirm != "" {
				d.SafetyChecks = append(d.SafetyChecks, c.name+": "+c.confirm)
				asks = append(asks, action.Action{Kind: action.AskUser, Ask: action.AskConfirm, CallID: c.confirmID(),
					Question: "The model wants to run " + c.name + ": " + strings.TrimSuffix(c.confirm, ".") + ". Let it run?"})
			}
		}
		if len(asks) > 0 {
			s.held = &held{actions: d.Actions, observation: d.Observation}
			d.Actions = asks
			return d, nil
		}
		if len(d.Actions) == 0 {
			d.Actions = []action.Action{{Kind: action.Wait}}
		}
		return d, nil
	}
	switch cand.FinishReason {
	case genai.FinishReasonMaxTokens:
		return d, fmt.Errorf("%w: the answer was cut off at max_output_tokens (%d) before any action", llm.ErrBadOutput, s.a.c.cfg.MaxTokens)
	case genai.FinishReasonSafety, genai.FinishReasonProhibitedContent, genai.FinishReasonBlocklist:
		d.Status, d.Result = llm.Failed, "the model declined the task ("+string(cand.FinishReason)+")"
		return d, nil
	}
	if d.Observation == "" {
		return d, fmt.Errorf("%w: the answer has neither a function call nor text: call a computer-use function, or reply QUESTION:, DONE:, BLOCKED: or FAILED: with the question or result", llm.ErrBadOutput)
	}
	cuwire.ReadFinal(d)
	return d, nil
}

// confirmID is how the ask_user of a confirmation names its call.
func (c call) confirmID() string { return "gemini-confirm:" + c.name + ":" + c.id }

// release handles the step after a confirmation was asked: when every call
// that required it was approved, the held actions run (without a model call)
// and those calls are answered with safety_acknowledgement "true"; otherwise
// the run is blocked and nothing runs.
func (s *Session) release(obs llm.Observation) *llm.Decision {
	h := s.held
	s.held = nil
	for i, c := range s.calls {
		if c.confirm == "" {
			continue
		}
		answered, yes := false, false
		for _, a := range obs.Answers {
			if a.Ask.CallID == c.confirmID() {
				answered, yes = true, a.Approved
			}
		}
		if !yes {
			d := &llm.Decision{Observation: h.observation, Status: llm.Blocked,
				SafetyChecks:   []string{c.name + ": " + c.confirm},
				NextUserAction: "The flagged action was not run. Run the task again and approve it only if it is intended."}
			d.BlockReason = "the confirmation of " + c.name + " was not given"
			if answered {
				d.BlockReason = "the user declined " + c.name + ": " + c.confirm
			}
			return d
		}
		s.calls[i].acked = true
	}
	d := &llm.Decision{Observation: h.observation, Reasoning: "The user approved the action; running it.",
		Released: true, Actions: h.actions, Status: llm.Continue}
	if len(d.Actions) == 0 {
		d.Actions = []action.Action{{Kind: action.Wait}}
	}
	return d
}

// userContent builds the next user turn: the task and screenshot first;
// then one function response per call of the last answer (the last carrying
// the screenshot), followed by the notes.
func (s *Session) userContent(obs llm.Observation) *genai.Content {
	shot := obs.Screenshot
	img := &genai.Blob{MIMEType: cuwire.MIME(shot), Data: shot.Data}
	notes := cuwire.Notes(obs, s.lastMemory, len(s.history) > 0)
	var parts []*genai.Part
	if len(s.history) == 0 {
		parts = append(parts, genai.NewPartFromText(cuwire.TaskText(s.task, obs.Memory)))
	}
	for i, c := range s.calls {
		r := &genai.FunctionResponse{ID: c.id, Name: c.name, Response: map[string]any{"output": "done"}}
		if c.errMsg != "" {
			r.Response = map[string]any{"error": c.errMsg}
		}
		if c.acked {
			r.Response["safety_acknowledgement"] = "true"
		}
		if i == len(s.calls)-1 {
			r.Parts = []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: img.MIMEType, Data: img.Data}}}
		}
		parts = append(parts, &genai.Part{FunctionResponse: r})
	}
	for _, n := range notes {
		parts = append(parts, genai.NewPartFromText(n))
	}
	if len(s.calls) == 0 {
		parts = append(parts, genai.NewPartFromText(fmt.Sprintf("Current screen (step %d):", shot.Step)), &genai.Part{InlineData: img})
	}
	return genai.NewContentFromParts(parts, genai.RoleUser)
}

// prune returns contents with all but the last KeepImages screenshots
// replaced by a note (the history itself is not changed), and the image data
// to elide from the recorded body, in order.
func (s *Session) prune(contents []*genai.Content) ([]*genai.Content, []cuwire.Elision) {
	total := 0
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.InlineData != nil || (p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0) {
				total++
			}
		}
	}
	drop := total - s.a.c.cfg.KeepImages
	var elide []cuwire.Elision
	out := make([]*genai.Content, len(contents))
	for i, c := range contents {
		cp := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			switch {
			case p.InlineData != nil && drop > 0:
				drop--
				p = genai.NewPartFromText("[an earlier screenshot, omitted to save context]")
			case p.InlineData != nil:
				elide = append(elide, cuwire.Elision{Data: base64.StdEncoding.EncodeToString(p.InlineData.Data), Ref: "<screenshot elided>"})
			case p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0 && drop > 0:
				drop--
				r := *p.FunctionResponse
				r.Parts = nil
				r.Response = withNote(r.Response)
				p = &genai.Part{FunctionResponse: &r}
			case p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0:
				elide = append(elide, cuwire.Elision{Data: base64.StdEncoding.EncodeToString(p.FunctionResponse.Parts[0].InlineData.Data), Ref: "<screenshot elided>"})
			}
			cp.Parts = append(cp.Parts, p)
		}
		out[i] = cp
	}
	return out, elide
}

func withNote(m map[string]any) map[string]any {
	out := map[string]any{"screenshot": "omitted to save context"}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// systemPrompt tells the model how the session works and how to end it.
func systemPrompt() string {
	return "You operate a desktop computer (not only a web browser) with the computer-use functions to complete the user's task.\n" +
		"- Every function response carries a fresh screenshot; x and y are on a 0-999 grid over that screenshot.\n" +
		"- You may call several functions in one answer when the screen will not change in between; they run in order and one screenshot follows.\n" +
		"- When the task is complete, answer without a function call and start with " + cuwire.MarkDone + " followed by the result.\n" +
		"- If you need information or a decision only the user has, answer without a function call and start with " + cuwire.MarkQuestion + " followed by one question; the answer comes in the next message.\n" +
		"- If only the user can go on by acting themselves (a login, a CAPTCHA), answer starting with " + cuwire.MarkBlocked + " followed by what the user must do.\n" +
		"- If the task cannot be done, answer starting with " + cuwire.MarkFailed + " and the reason."
}
