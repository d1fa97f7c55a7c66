package openai

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// UITARS is the adapter for UI-TARS and Doubao UI-TARS models: their text
// action format ("Thought: ...\nAction: click(start_box='(x,y)')") over Chat
// Completions. Coordinates follow the profile: 0-1000 for UI-TARS 1.0 and
// Doubao, pixels of the smart-resized image for UI-TARS 1.5 (the loop sends
// the image at exactly Profile().PrepareSize).
type UITARS struct {
	c       *client
	profile geom.Profile
}

var _ llm.Adapter = (*UITARS)(nil)

// NewUITARS returns the UI-TARS adapter for cfg. Without cfg.Profile it uses
// llm.ProfileFor(llm.AdapterUITARS, cfg.Model, "").
func NewUITARS(cfg llm.Config) (llm.Adapter, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	return &UITARS{c: c, profile: c.profile(llm.AdapterUITARS)}, nil
}

// Name returns "ui-tars".
func (u *UITARS) Name() string { return llm.AdapterUITARS }

// Profile returns the coordinate convention answers are read in.
func (u *UITARS) Profile() geom.Profile { return u.profile }

// NewSession starts a conversation for task.
func (u *UITARS) NewSession(task string) llm.Session {
	return &tarsSession{u: u, task: task, answers: map[int]string{}}
}

// tarsSystem is the UI-TARS instruction: the model's action space and output
// format. The action spellings are the model's trained interface.
func tarsSystem(task, extra string) string {
	return `You are a GUI agent operating a computer. You get a task, the history of your actions and screenshots, and you choose the next action.

## Output Format
Thought: ...
Action: ...

## Action Space
click(start_box='(x1,y1)')
left_double(start_box='(x1,y1)')
right_single(start_box='(x1,y1)')
drag(start_box='(x1,y1)', end_box='(x2,y2)')
hotkey(key='ctrl c') # keys separated by spaces, lower case, at most 3
type(content='xxx') # escape \', \" and \n; end content with \n to submit
scroll(start_box='(x1,y1)', direction='down or up or right or left')
wait() # pause about two seconds, then look at the screen again
finished(content='xxx') # the task is done; content is the answer or result
call_user() # ask the user for information or a decision only they have; write the question in Thought

## Note
- Use English in the Thought part.
- In Thought, write a short plan and end with one sentence naming your next action and its target element.
` + extra + `
## User Instruction
` + task
}

type tarsSession struct {
	u    *UITARS
	task string
	// answers holds this session's earlier raw answers by step, to replay the
	// conversation the way UI-TARS was trained (screenshot, answer, screenshot...).
	answers map[int]string
}

// maxTextTurns bounds how many earlier answers are replayed (older steps are in
// obs.History), so the request stays flat as a run grows.
const maxTextTurns = 6

// Next implements llm.Session. Malformed answers return an error wrapping
// llm.ErrBadOutput with a Decision carrying only Usage, Request and Response.
func (s *tarsSession) Next(ctx context.Context, obs llm.Observation) (*llm.Decision, error) {
	if len(obs.Screenshot.Data) == 0 {
		return nil, fmt.Errorf("observation for step %d has no screenshot: the loop must capture one before asking the model", obs.Step)
	}
	var extra strings.Builder
	if s.u.profile.Divisor != 0 {
		fmt.Fprintf(&extra, "- Coordinates are relative positions from 0 to %g across the screenshot (x to the right, y down).\n", s.u.profile.Divisor)
	} else {
		extra.WriteString("- Coordinates are pixels of the screenshot as you see it (x to the right, y down).\n")
	}
	if m := strings.TrimSpace(obs.Memory); m != "" {
		extra.WriteString("- Remembered so far: " + strings.ReplaceAll(m, "\n", " ") + "\n")
	}
	if h := strings.TrimSpace(obs.History); h != "" {
		extra.WriteString("- Recent steps: " + strings.ReplaceAll(h, "\n", " ") + "\n")
	}
	for _, w := range obs.Warnings {
		extra.WriteString("- Warning: " + w + "\n")
	}
	refs := &imageRefs{}
	detail := s.u.c.imageDetail()
	msgs := []oai.ChatCompletionMessageParamUnion{oai.UserMessage(tarsSystem(s.task, extra.String()))}

	// Earlier turns: the kept screenshots with the answers given on them;
	// answers of older steps as text only.
	keep := max(1, s.u.c.cfg.KeepImages)
	recent := obs.Recent
	if len(recent) > keep-1 {
		recent = recent[len(recent)-(keep-1):]
	}
	withImage := map[int]llm.Image{}
	for _, im := range recent {
		if len(im.Data) > 0 {
			withImage[im.Step] = im
		}
	}
	var steps []int
	for st := range s.answers {
		if st < obs.Step {
			steps = append(steps, st)
		}
	}
	slices.Sort(steps)
	if len(steps) > maxTextTurns {
		steps = steps[len(steps)-maxTextTurns:]
	}
	for _, st := range steps {
		if im, ok := withImage[st]; ok {
			msgs = append(msgs, oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{imagePart(im, detail, refs)}))
		}
		msgs = append(msgs, oai.AssistantMessage(s.answers[st]))
	}
	cur := []oai.ChatCompletionContentPartUnionParam{imagePart(obs.Screenshot, detail, refs)}
	if f := strings.TrimSpace(obs.Feedback); f != "" {
		if obs.ReAsk {
			f = "Your previous answer could not be used: " + f + " Answer again in the exact format: Thought: ... then Action: ..."
		}
		cur = append(cur, oai.TextContentPart(f))
	}
	if len(obs.Answers) > 0 {
		cur = append(cur, oai.TextContentPart(strings.Join(llm.AnswerNotes(obs.Answers), "\n")))
	}
	msgs = append(msgs, oai.UserMessage(cur))

	ex, err := s.u.c.call(ctx, msgs, refs)
	d := &llm.Decision{Usage: ex.Usage, Request: ex.Request, Response: ex.Response}
	if err != nil {
		return d, err
	}
	parsed, err := ParseUITARS(ex.Text, s.u.profile)
	if err != nil {
		return d, err
	}
	s.answers[obs.Step] = ex.Text
	parsed.Usage, parsed.Request, parsed.Response = d.Usage, d.Request, d.Response
	return parsed, nil
}

var (
	tarsActionLine = regexp.MustCompile(`(?m)^\s*Action\s*[:：]`)
	tarsArg        = regexp.MustCompile(`(?s)([a-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`)
	tarsNum        = regexp.MustCompile(`-?\d+(?:\.\d+)?`)
)

// ParseUITARS reads a UI-TARS answer ("Thought: ...\nAction: ...", one or more
// calls separated by newlines) into a Decision with coordinates in p's
// convention. Points may be spelled '(x,y)', '<|box_start|>(x,y)<|box_end|>',
// '<point>x y</point>', '[x1, y1, x2, y2]' or '<bbox>x1 y1 x2 y2</bbox>'.
// Problems return an error wrapping llm.ErrBadOutput and no decision.
func ParseUITARS(text string, p geom.Profile) (*llm.Decision, error) {
	t := strings.TrimSpace(text)
	loc := tarsActionLine.FindStringIndex(t)
	if loc == nil {
		return nil, fmt.Errorf("%w: the answer has no \"Action:\" line: write Thought: ... then Action: followed by one call such as click(start_box='(x,y)')", llm.ErrBadOutput)
	}
	head, body := t[:loc[0]], strings.TrimSpace(t[loc[1]:])
	d := &llm.Decision{}
	// Labels may end in a full-width colon, as models trained on Chinese write them.
	labels := []string{"Thought:", "Action_Summary:", "Reflection:", "Thought：", "Action_Summary：", "Reflection："}
	for _, label := range labels {
		if i := strings.Index(head, label); i >= 0 {
			v := head[i+len(label):]
			for _, other := range labels {
				if j := strings.Index(v, other); j >= 0 {
					v = v[:j]
				}
			}
			if d.Reasoning == "" {
				d.Reasoning = strings.TrimSpace(v)
			}
		}
	}
	d.Observation = d.Reasoning
	calls := splitCalls(body)
	if len(calls) == 0 {
		return nil, fmt.Errorf("%w: no action call after \"Action:\" (got %q): write a call such as click(start_box='(x,y)')", llm.ErrBadOutput, clip(body, 80))
	}
	var probs []string
	var raws []action.Raw
	for i, c := range calls {
		acts, status, result, err := tarsAction(c.name, c.args)
		if err != nil {
			probs = append(probs, fmt.Sprintf("action %d %s(...): %v", i+1, c.name, err))
			continue
		}
		raws = append(raws, acts...)
		if status == llm.Done {
			d.Status, d.Result = status, result
		}
	}
	// call_user() asks the user: the thought is the question.
	for i := range raws {
		if raws[i].Kind == action.AskUser {
			raws[i].Question = d.Reasoning
			if raws[i].Question == "" {
				raws[i].Question = llm.HelpQuestion
			}
		}
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%w: %s", llm.ErrBadOutput, strings.Join(probs, "; "))
	}
	if d.Status == "" {
		d.Status = llm.Continue
	}
	acts, err := llm.ParseActions(raws, p)
	if err != nil {
		return nil, err
	}
	d.Actions = acts
	if err := llm.ValidateDecision(d); err != nil {
		return nil, err
	}
	return d, nil
}

type tarsCallText struct {
	name string
	args map[string]string
}

// splitCalls finds name(args) calls, respecting quotes inside arguments.
func splitCalls(s string) []tarsCallText {
	var out []tarsCallText
	i := 0
	for i < len(s) {
		// skip to a name
		for i < len(s) && !isNameByte(s[i]) {
			i++
		}
		start := i
		for i < len(s) && isNameByte(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '(' || start == i {
			if start == i {
				i++
			}
			continue
		}
		name := s[start:i]
		i++ // '('
		if content, end, ok := contentArg(s, i); ok && contentCalls[strings.ToLower(name)] {
			out = append(out, tarsCallText{name: name, args: map[string]string{"content": content}})
			i = end
			continue
		}
		argStart := i
		var quote byte
		for i < len(s) {
			c := s[i]
			if quote != 0 {
				if c == '\\' {
					i += 2
					continue
				}
				if c == quote {
					quote = 0
				}
			} else if c == '\'' || c == '"' {
				quote = c
			} else if c == ')' {
				break
			}
			i++
		}
		argText := s[argStart:min(i, len(s))]
		i++
		args := map[string]string{}
		for _, m := range tarsArg.FindAllStringSubmatch(argText, -1) {
			v := m[2]
			if v == "" {
				v = m[3]
			}
			args[m[1]] = v
		}
		out = append(out, tarsCallText{name: name, args: args})
	}
	return out
}

// contentCalls are the calls whose one argument, content, is free text.
var contentCalls = map[string]bool{"type": true, "input": true, "finished": true, "finish": true}

// tarsContent is the start of a content argument: content=' or content=".
var tarsContent = regexp.MustCompile(`^\s*content\s*=\s*(['"])`)

// contentArg reads a content='...' argument starting at s[i], as the UI-TARS
// reference parser does: the text runs to the last quote before the closing
// parenthesis, that is the first quote followed only by spaces, ')' and the
// end of the line, so an unescaped quote inside (it's broken) is kept. It
// returns the text and the index after ')', or ok false when the call does
// not end that way.
func contentArg(s string, i int) (content string, end int, ok bool) {
	m := tarsContent.FindStringSubmatchIndex(s[i:])
	if m == nil {
		return "", 0, false
	}
	q, from := s[i+m[2]], i+m[1]
	for j := from; j < len(s); j++ {
		if s[j] == '\\' {
			j++
			continue
		}
		if s[j] != q {
			continue
		}
		k := j + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k >= len(s) || s[k] != ')' {
			continue
		}
		e := k + 1
		for e < len(s) && (s[e] == ' ' || s[e] == '\t' || s[e] == '\r') {
			e++
		}
		if e >= len(s) || s[e] == '\n' {
			return s[from:j], k + 1, true
		}
	}
	return "", 0, false
}

func isNameByte(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// unescape undoes the Python-style escapes UI-TARS writes in quoted content.
func unescape(s string) string {
	r := strings.NewReplacer(`\\`, `\`, `\'`, `'`, `\"`, `"`, `\n`, "\n", `\t`, "\t")
	return r.Replace(s)
}

func tarsCoords(args map[string]string, keys ...string) ([]float64, error) {
	for _, k := range keys {
		v, ok := args[k]
		if !ok {
			continue
		}
		ms := tarsNum.FindAllString(v, -1)
		if len(ms) != 2 && len(ms) != 4 {
			return nil, fmt.Errorf("%s=%q needs 2 numbers (x,y) or 4 (a box), found %d", k, v, len(ms))
		}
		out := make([]float64, len(ms))
		for i, m := range ms {
			out[i], _ = strconv.ParseFloat(m, 64)
		}
		return out, nil
	}
	return nil, nil
}

// tarsPointActions are the UI-TARS calls that act at start_box: name -> action.
var tarsPointActions = map[string]action.Raw{
	"click": {Kind: action.Click}, "left_single": {Kind: action.Click}, "left_click": {Kind: action.Click},
	"left_double": {Kind: action.DoubleClick}, "double_click": {Kind: action.DoubleClick}, "left_double_click": {Kind: action.DoubleClick},
	"left_triple": {Kind: action.TripleClick}, "triple_click": {Kind: action.TripleClick},
	"right_single": {Kind: action.Click, Button: "right"}, "right_click": {Kind: action.Click, Button: "right"},
	"hover": {Kind: action.Move}, "mouse_move": {Kind: action.Move}, "move_to": {Kind: action.Move},
}

// tarsCalls are the other UI-TARS calls, by name.
var tarsCalls = map[string]func(args map[string]string, at []float64) ([]action.Raw, llm.Status, string, error){
	"drag": tarsDrag, "select": tarsDrag, "left_drag": tarsDrag,
	"hotkey": tarsKeys, "press": tarsKeys, "keypress": tarsKeys, "key": tarsKeys,
	"type": tarsType, "input": tarsType,
	"scroll": tarsScroll,
	"wait": func(map[string]string, []float64) ([]action.Raw, llm.Status, string, error) {
		return []action.Raw{{Kind: action.Wait, DurationMS: 2000}}, "", "", nil
	},
	"finished": tarsFinished, "finish": tarsFinished,
	"call_user": func(map[string]string, []float64) ([]action.Raw, llm.Status, string, error) {
		return []action.Raw{{Kind: action.AskUser, Ask: string(action.AskText)}}, "", "", nil
	},
}

// tarsAction maps one UI-TARS call to raw actions, or to a final status.
func tarsAction(name string, args map[string]string) ([]action.Raw, llm.Status, string, error) {
	at, err := tarsCoords(args, "start_box", "point", "start_point")
	if err != nil {
		return nil, "", "", err
	}
	name = strings.ToLower(name)
	if a, ok := tarsPointActions[name]; ok {
		if at == nil {
			return nil, "", "", fmt.Errorf("needs start_box='(x,y)'")
		}
		a.At = at
		return []action.Raw{a}, "", "", nil
	}
	if call, ok := tarsCalls[name]; ok {
		return call(args, at)
	}
	return nil, "", "", fmt.Errorf("unknown action %q: use click, left_double, right_single, drag, hotkey, type, scroll, wait, finished or call_user", name)
}

func tarsDrag(args map[string]string, at []float64) ([]action.Raw, llm.Status, string, error) {
	to, err := tarsCoords(args, "end_box", "end_point")
	if err != nil {
		return nil, "", "", err
	}
	if at == nil || to == nil {
		return nil, "", "", fmt.Errorf("needs start_box='(x1,y1)' and end_box='(x2,y2)'")
	}
	return []action.Raw{{Kind: action.Drag, At: at, To: to}}, "", "", nil
}

func tarsKeys(args map[string]string, _ []float64) ([]action.Raw, llm.Status, string, error) {
	k := strings.TrimSpace(args["key"])
	if k == "" {
		k = strings.TrimSpace(args["keys"])
	}
	if k == "" {
		return nil, "", "", fmt.Errorf("needs key='...' such as key='ctrl c'")
	}
	k = strings.ReplaceAll(k, "+", " ")
	return []action.Raw{{Kind: action.KeyPress, Keys: strings.Fields(strings.ToLower(k))}}, "", "", nil
}

// tarsType types content; a trailing newline means "and press Enter".
func tarsType(args map[string]string, _ []float64) ([]action.Raw, llm.Status, string, error) {
	content := unescape(args["content"])
	if content == "" {
		return nil, "", "", fmt.Errorf("needs content='...'")
	}
	submit := strings.HasSuffix(content, "\n")
	content = strings.TrimRight(content, "\n")
	var acts []action.Raw
	if content != "" {
		acts = append(acts, action.Raw{Kind: action.TypeText, Text: content})
	}
	if submit {
		acts = append(acts, action.Raw{Kind: action.KeyPress, Keys: []string{"Return"}})
	}
	return acts, "", "", nil
}

func tarsScroll(args map[string]string, at []float64) ([]action.Raw, llm.Status, string, error) {
	dir := strings.ToLower(strings.TrimSpace(args["direction"]))
	if dir == "" {
		return nil, "", "", fmt.Errorf("needs direction='up', 'down', 'left' or 'right'")
	}
	return []action.Raw{{Kind: action.Scroll, At: at, Direction: dir}}, "", "", nil
}

func tarsFinished(args map[string]string, _ []float64) ([]action.Raw, llm.Status, string, error) {
	return nil, llm.Done, unescape(args["content"]), nil
}
