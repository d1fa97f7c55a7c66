// Package anthropic is the anthropic-computer adapter: Anthropic's Messages API
// with the native computer tool, through the official SDK with its retries
// off (llm.Do retries). Claude 5.x models get the GA computer toolset
// (computer_toolset_20260801: one tools[] entry without a name, whose members
// come back as tool_use blocks named after the member with toolset_name
// "computer") on the GA Messages API with no beta header; Claude 4.x models
// the beta computer tool (computer_20250124, or computer_20251124 which adds
// zoom) with its beta header. Rules (register.go) choose by model id.
//
// A Session keeps the conversation: every tool_use the model sends is answered
// by a tool_result in the next request (carrying toolset_name for a toolset
// member), the last one carrying the current screenshot; screenshots beyond
// Config.KeepImages become a line of text. Several tool_use blocks in one
// answer form one batched step. An answer without tool_use ends the task or
// asks the user: see cuwire.ClassifyFinal for how its text is read (a
// question, done, blocked, failed). A question becomes an ask_user text
// action; its answer goes back as text in the next user message, after the
// assistant's closing text.
package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/internal/cuwire"
)

// Name is the adapter name.
const Name = llm.AdapterAnthropic

// Computer tool versions and the beta header each legacy one needs.
const (
	Toolset20260801 = "computer_toolset_20260801"
	Tool20250124    = "computer_20250124"
	Tool20251124    = "computer_20251124"
	Beta20250124    = "computer-use-2025-01-24"
	Beta20251124    = "computer-use-2025-11-24"
)

// ToolName is the name the legacy computer tool is declared (and called)
// with, and the toolset_name of the toolset's members.
const ToolName = "computer"

// ToolVersionFor returns the computer tool version a model takes, by the
// first of Rules matching it: computer_toolset_20260801 for Claude 5.x,
// computer_20251124 for Opus 4.5 and the 4.6-and-later models,
// computer_20250124 for the earlier ones (and names it does not recognize).
func ToolVersionFor(model string) string {
	p := llm.Provider{Rules: Rules}
	if r, ok := p.Choose(model); ok && r.ToolVersion != "" {
		return r.ToolVersion
	}
	return Tool20250124
}

// BetaFor returns the beta header value a legacy tool version needs; the
// toolset needs none ("").
func BetaFor(tool string) (string, error) {
	switch tool {
	case Toolset20260801:
		return "", nil
	case Tool20250124:
		return Beta20250124, nil
	case Tool20251124:
		return Beta20251124, nil
	}
	return "", fmt.Errorf("unknown Anthropic computer tool version %q: use %s, %s or %s", tool, Toolset20260801, Tool20251124, Tool20250124)
}

// Adapter is the anthropic-computer model adapter. It is safe for concurrent
// use; each Session is used by one goroutine.
type Adapter struct {
	cfg     llm.Config
	profile geom.Profile
	tool    string
	beta    string
	svc     sdk.BetaMessageService // legacy tools
	ga      sdk.MessageService     // the toolset
	// off are the members withheld from the model (Config.Disabled).
	off map[string]bool
}

var _ llm.Adapter = (*Adapter)(nil)

// New returns the adapter for cfg. It needs Model and APIKey; BaseURL is the
// host root (the SDK adds /v1/messages). ToolVersion, when set, overrides the
// version chosen by model name; Disabled withholds members (the toolset
// declares them off; a legacy tool refuses them, and offers zoom only when
// it is not disabled).
func New(cfg llm.Config) (llm.Adapter, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("anthropic-computer: no model given: set %s to a Claude model such as %s", cfg.Vars.ModelVar(), Example)
	}
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic-computer: no API key: set %s to an Anthropic API key", cfg.Vars.APIKeyVar())
	}
	tool := cfg.ToolVersion
	if tool == "" {
		tool = ToolVersionFor(cfg.Model)
	}
	beta, err := BetaFor(tool)
	if err != nil {
		return nil, fmt.Errorf("anthropic-computer: %s: %w", cfg.Vars.ToolVersionVar(), err)
	}
	off, err := disabledMembers(cfg.Disabled)
	if err != nil {
		return nil, fmt.Errorf("anthropic-computer: %w", err)
	}
	cfg, client := newClient(cfg)
	return &Adapter{cfg: cfg, profile: cfg.ProfileOf(Name), tool: tool, beta: beta,
		svc: client.Beta.Messages, ga: client.Messages, off: off}, nil
}

// newClient fills cfg's zero Timeout and MaxTokens and returns it with an SDK
// client for it: SDK retries off (llm.Do retries), each attempt bounded by
// cfg.Timeout, no ANTHROPIC_* environment variables read.
func newClient(cfg llm.Config) (llm.Config, sdk.Client) {
	cfg = cfg.WithDefaults()
	hc := cfg.HTTPClient
	if hc == nil {
		// Each attempt is bounded by the SDK's request timeout (cfg.Timeout),
		// which cuwire.RequestError reports as a timeout; the client's own
		// timeout is only a backstop and must not race it.
		hc = &http.Client{Timeout: cfg.Timeout + 10*time.Second}
	}
	hc = llm.LimitResponses(hc, llm.MaxResponseBytes)
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return cfg, sdk.NewClient(opts...)
}

// Name returns "anthropic-computer".
func (a *Adapter) Name() string { return Name }

// Profile returns the coordinate convention: pixels of the image sent.
func (a *Adapter) Profile() geom.Profile { return a.profile }

// ToolVersion returns the computer tool version requests declare.
func (a *Adapter) ToolVersion() string { return a.tool }

// block is one content block of the conversation as the session keeps it;
// requests are rendered from blocks so old images can be pruned.
type block struct {
	kind    string // "text", "image", "tool_use", "tool_result"
	text    string // text, or a tool_use's name
	img     *llm.Image
	id      string          // tool_use id, or the id a tool_result answers
	input   json.RawMessage // tool_use input
	data    string          // a kept image's base64 (set by prune)
	toolset string          // a toolset member's tool_use and tool_result: "computer"
	isError bool            // tool_result
	content []block         // tool_result content: text and image blocks
}

type turn struct {
	assistant bool
	blocks    []block
}

// pendingUse is a tool_use of the last answer still to be answered.
type pendingUse struct {
	id      string
	toolset string
	answer  answerKind
	errMsg  string // set when the tool_use was refused
}

// answer is a Messages API response as the session reads it, whichever
// client (GA or beta) sent the request.
type answer struct {
	content []answerBlock
	stop    string
	usage   llm.Usage
}

// answerBlock is one content block of an answer.
type answerBlock struct {
	typ, text, id, name, toolset string
	input                        json.RawMessage
}

// Session is one task's conversation. It is used by one goroutine.
type Session struct {
	a          *Adapter
	task       string
	turns      []turn
	pending    []pendingUse
	lastMemory string
	display    geom.Size
}

var _ llm.Session = (*Session)(nil)

// NewSession starts a conversation for task.
func (a *Adapter) NewSession(task string) llm.Session {
	return &Session{a: a, task: task}
}

// toolset reports whether the adapter speaks the GA computer toolset.
func (a *Adapter) toolset() bool { return a.tool == Toolset20260801 }

// zoom reports whether the model is offered zoom.
func (a *Adapter) zoom() bool { return a.tool != Tool20250124 && !a.off["zoom"] }

// Next sends the observation (answering the previous answer's tool_use blocks)
// and returns the model's decision. On a provider error nothing is committed,
// so calling Next again resends the same exchange.
func (s *Session) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	if len(obs.Screenshot.Data) == 0 {
		return nil, errors.New("anthropic-computer: the observation has no screenshot: the loop must capture one before asking the model")
	}
	s.display = cuwire.DeclaredDisplay(s.display, obs.Screenshot.Frame)
	user := s.userTurn(obs)
	turns := append(s.turns[:len(s.turns):len(s.turns)], user)
	var res *answer
	var capt *cuwire.Capture
	var elide []cuwire.Elision
	var err error
	if s.a.toolset() {
		res, capt, elide, err = s.callToolset(ctx, turns)
	} else {
		res, capt, elide, err = s.callBeta(ctx, turns)
	}
	if err != nil {
		return nil, err
	}
	d := &llm.Decision{Usage: res.usage}
	d.Request, d.Response = capt.Bodies(elide, s.a.cfg.APIKey)
	asst, texts, pending, bad := s.readAnswer(res, obs, d)
	// Commit: the request was answered, so both turns are now history.
	s.turns = append(s.turns, user, asst)
	s.pending = pending
	if obs.Memory != "" {
		s.lastMemory = obs.Memory
	}
	d.Observation = strings.Join(texts, "\n")

	if len(bad) > 0 {
		for i := range s.pending {
			if s.pending[i].errMsg == "" {
				s.pending[i].errMsg = "not executed: another action in the same answer was invalid"
			}
		}
		d.Actions = nil
		return d, fmt.Errorf("%w: %s", llm.ErrBadOutput, strings.Join(bad, "; "))
	}
	if len(pending) > 0 {
		d.Status = llm.Continue
		if len(d.Actions) == 0 {
			// Only screenshot or cursor_position: nothing to do but look again,
			// which the next step does anyway.
			d.Actions = []action.Action{{Kind: action.Wait, CallID: pending[len(pending)-1].id}}
		}
		return d, nil
	}
	return s.finalAnswer(res, d)
}

// readAnswer reads the answer's content: the assistant turn to keep, its
// texts, the tool_use blocks to answer next time and the problems of refused
// ones. Valid actions are appended to d.Actions, in the answer's order.
func (s *Session) readAnswer(res *answer, obs llm.Observation, d *llm.Decision) (asst turn, texts []string, pending []pendingUse, bad []string) {
	asst = turn{assistant: true}
	var ptr []float64 // the pointer as the batch moves it, in image pixels
	if obs.Cursor != nil {
		ptr = []float64{obs.Cursor.X, obs.Cursor.Y}
	}
	for _, c := range res.content {
		switch c.typ {
		case "text":
			if t := strings.TrimSpace(c.text); t != "" {
				texts = append(texts, t)
			}
			asst.blocks = append(asst.blocks, block{kind: "text", text: c.text})
		case "tool_use":
			input := c.input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			asst.blocks = append(asst.blocks, block{kind: "tool_use", id: c.id, text: c.name, input: input, toolset: c.toolset})
			p := s.toolUse(c, input, &ptr, d)
			if p.errMsg != "" {
				bad = append(bad, p.errMsg)
			}
			pending = append(pending, p)
		}
	}
	return asst, texts, pending, bad
}

// toolUse maps one tool_use block to actions (appended to d.Actions) and
// returns what its tool_result must answer, or why it was refused.
func (s *Session) toolUse(c answerBlock, input json.RawMessage, ptr *[]float64, d *llm.Decision) pendingUse {
	p := pendingUse{id: c.id, toolset: c.toolset}
	var raws []action.Raw
	var err error
	if s.a.toolset() {
		raws, p.answer, err = s.member(c, input)
	} else {
		if c.name != ToolName {
			p.errMsg = fmt.Sprintf("unknown tool %q: the only tool is %q", c.name, ToolName)
			return p
		}
		raws, p.answer, err = mapToolUse(input, s.a.zoom(), s.a.off)
	}
	if err == nil {
		err = fillPointer(raws, ptr)
	}
	for i := range raws {
		raws[i].CallID = c.id
	}
	var acts []action.Action
	if err == nil {
		acts, err = action.ParseModelAll(raws, s.a.profile.Space())
	}
	if err != nil {
		p.errMsg = err.Error()
		return p
	}
	d.Actions = append(d.Actions, acts...)
	return p
}

// member maps one toolset member's tool_use: its name is the member, its
// toolset_name "computer", its input the member's own (no action field).
func (s *Session) member(c answerBlock, input json.RawMessage) ([]action.Raw, answerKind, error) {
	if c.toolset != ToolName {
		return nil, 0, fmt.Errorf("tool_use %q has toolset_name %q: the only toolset is %q", c.name, c.toolset, ToolName)
	}
	if _, ok := Members[c.name]; !ok {
		return nil, 0, fmt.Errorf("unknown computer toolset member %q: use one of %s", c.name, strings.Join(MemberNames(), ", "))
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, 0, fmt.Errorf("%s input is not a JSON object: %v", c.name, err)
	}
	if _, has := in["action"]; has {
		return nil, 0, fmt.Errorf("%s input has an action field: toolset members are named by the tool_use itself", c.name)
	}
	act, _ := json.Marshal(c.name)
	in["action"] = act
	legacy, _ := json.Marshal(in)
	return mapToolUse(legacy, s.a.zoom(), s.a.off)
}

// finalAnswer reads an answer without tool use: a refusal, a cut-off answer,
// or the final text.
func (s *Session) finalAnswer(res *answer, d *llm.Decision) (*llm.Decision, error) {
	switch res.stop {
	case "refusal":
		d.Status, d.Result = llm.Failed, "the model declined the task: "+d.Observation
		return d, nil
	case "max_tokens":
		return d, fmt.Errorf("%w: the answer was cut off at max_tokens (%d) before any action", llm.ErrBadOutput, s.a.cfg.MaxTokens)
	}
	if d.Observation == "" {
		return d, fmt.Errorf("%w: the answer has neither an action nor text: call the computer tool, or reply QUESTION:, DONE:, BLOCKED: or FAILED: with the question or result", llm.ErrBadOutput)
	}
	cuwire.ReadFinal(d)
	return d, nil
}

// userTurn builds the message answering the last answer: one tool_result per
// tool_use (the last carrying the screenshot), then feedback and warnings.
func (s *Session) userTurn(obs llm.Observation) turn {
	u := turn{}
	shot := obs.Screenshot
	notes := cuwire.Notes(obs, s.lastMemory, len(s.turns) > 0)
	if len(s.turns) == 0 {
		u.blocks = append(u.blocks, block{kind: "text", text: cuwire.TaskText(s.task, obs.Memory)})
		for _, n := range notes {
			u.blocks = append(u.blocks, block{kind: "text", text: n})
		}
		u.blocks = append(u.blocks, block{kind: "text", text: screenNote(shot)}, block{kind: "image", img: &shot})
		return u
	}
	if len(s.pending) == 0 {
		for _, n := range notes {
			u.blocks = append(u.blocks, block{kind: "text", text: n})
		}
		u.blocks = append(u.blocks, block{kind: "text", text: screenNote(shot)}, block{kind: "image", img: &shot})
		return u
	}
	// The loop delivers zoomed regions as the last earlier images: partial
	// frames of their display. Each zoom tool_use gets its own, in order.
	var zooms []llm.Image
	for _, img := range obs.Recent {
		if f := img.Frame; f.Region != f.Display.Bounds && !f.Display.Bounds.Empty() {
			zooms = append(zooms, img)
		}
	}
	nZoom := 0
	for _, p := range s.pending {
		if p.errMsg == "" && p.answer == answerZoom {
			nZoom++
		}
	}
	if len(zooms) > nZoom {
		zooms = zooms[len(zooms)-nZoom:]
	}
	for i, p := range s.pending {
		r := block{kind: "tool_result", id: p.id, toolset: p.toolset}
		switch {
		case p.errMsg != "":
			r.isError = true
			r.content = append(r.content, block{kind: "text", text: p.errMsg})
		case p.answer == answerCursor:
			if obs.Cursor != nil {
				r.content = append(r.content, block{kind: "text",
					text: fmt.Sprintf("X=%d,Y=%d", int(obs.Cursor.X+0.5), int(obs.Cursor.Y+0.5))})
			} else {
				r.content = append(r.content, block{kind: "text", text: "The cursor position is not known; look for the pointer in the screenshot."})
			}
		case p.answer == answerZoom:
			if len(zooms) > 0 {
				z := zooms[0]
				zooms = zooms[1:]
				r.content = append(r.content, block{kind: "image", img: &z})
			} else {
				r.content = append(r.content, block{kind: "text", text: "The zoomed view could not be captured."})
			}
		}
		if i == len(s.pending)-1 {
			for _, n := range notes {
				r.content = append(r.content, block{kind: "text", text: n})
			}
			r.content = append(r.content, block{kind: "image", img: &shot})
		}
		u.blocks = append(u.blocks, r)
	}
	return u
}

func screenNote(img llm.Image) string {
	return fmt.Sprintf("Current screen (step %d):", img.Step)
}

// prune returns turns with all but the last KeepImages screenshots replaced
// by a text note and each kept image's base64 in its data, and lists the
// image data to elide from the recorded body, in request order.
func (s *Session) prune(turns []turn) ([]turn, []cuwire.Elision) {
	total := 0
	for _, t := range turns {
		total += countImages(t.blocks)
	}
	drop := total - s.a.cfg.KeepImages // the oldest images to replace
	var elide []cuwire.Elision
	var walk func(bs []block) []block
	walk = func(bs []block) []block {
		out := make([]block, 0, len(bs))
		for _, b := range bs {
			switch {
			case b.kind == "image" && drop > 0:
				drop--
				b = block{kind: "text", text: prunedNote(b.img)}
			case b.kind == "image":
				b.data = base64.StdEncoding.EncodeToString(b.img.Data)
				elide = append(elide, cuwire.Elision{Data: b.data, Ref: cuwire.ImageRef(*b.img)})
			case b.kind == "tool_result":
				b.content = walk(b.content)
			}
			out = append(out, b)
		}
		return out
	}
	out := make([]turn, len(turns))
	for i, t := range turns {
		out[i] = turn{assistant: t.assistant, blocks: walk(t.blocks)}
	}
	return out, elide
}

func countImages(bs []block) int {
	n := 0
	for _, b := range bs {
		if b.kind == "image" {
			n++
		}
		n += countImages(b.content)
	}
	return n
}

func prunedNote(img *llm.Image) string {
	return fmt.Sprintf("[screenshot of step %d omitted to save context]", img.Step)
}

// systemPrompt tells the model how the session works and how to end it.
func systemPrompt(zoom bool) string {
	var b strings.Builder
	b.WriteString("You operate a desktop computer with the computer tool to complete the user's task.\n")
	b.WriteString("- Every reply you get carries a fresh screenshot; you never need to ask for one.\n")
	b.WriteString("- You may call the tool several times in one answer when the screen will not change in between (for example to fill several fields); the calls run in order and one screenshot follows.\n")
	b.WriteString("- Coordinates are pixels of the screenshot you were sent.\n")
	if zoom {
		b.WriteString("- Use zoom to read small text in a region before acting on it.\n")
	}
	b.WriteString("- When the task is complete, answer without calling the tool and start with " + cuwire.MarkDone + " followed by the result (what you found, entered or decided).\n")
	b.WriteString("- If you need information or a decision only the user has (a value the task does not give, which account or option to use, whether to go ahead with something that cannot be undone), answer without calling the tool and start with " + cuwire.MarkQuestion + " followed by one question; the user's answer comes in the next message and the task goes on. Never ask about ordinary steps.\n")
	b.WriteString("- If only the user can go on by acting themselves (a login, a CAPTCHA), answer without calling the tool and start with " + cuwire.MarkBlocked + " followed by what the user must do.\n")
	b.WriteString("- If the task cannot be done, answer starting with " + cuwire.MarkFailed + " and the reason.")
	return b.String()
}
