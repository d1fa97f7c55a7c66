package fakellm

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
)

// Brain action kinds that only native computer tools have: a brain returns
// them to make the model ask for a screenshot or for the cursor position.
const (
	AskScreenshot action.Kind = "screenshot"
	AskCursor     action.Kind = "cursor_position"
)

// anthropicBetas maps each computer tool version to the beta header it needs.
var anthropicBetas = map[string]string{
	"computer_20250124": "computer-use-2025-01-24",
	"computer_20251124": "computer-use-2025-11-24",
}

// AnthropicServer is an Anthropic Messages server (POST {URL}/v1/messages)
// with the computer tool, answering with a Brain. It checks each request the
// way the real API would (API key, anthropic-version, model, max_tokens, the
// beta header of the declared computer tool version, a system prompt given as
// a string or text blocks, non-empty text, message order, a tool_result for
// every tool_use) and answers a malformed one with HTTP 400 in Anthropic's
// error format. A plain request, one declaring no computer tool (a text
// model's), is answered with the brain's Reply.Result (or Raw) as text.
//
// The GA computer toolset (computer_toolset_20260801) is checked as strictly:
// it is refused with a computer-use beta header, with a name or display
// fields, with configs naming an unknown member, and for a Claude 4.x model;
// a legacy tool is refused for a Claude 5.x model. Its actions are answered
// as one tool_use per member (name the member, toolset_name "computer", no
// action field), never a member the configs disabled; a replayed toolset
// tool_use or its tool_result without toolset_name, or naming an unknown
// member, is refused.
type AnthropicServer struct {
	*Core
	// URL is the host root, the way the Anthropic SDK takes its base URL.
	URL string
	// Model is reported in responses; empty = the requested model.
	Model string

	srv *httptest.Server
}

// NewAnthropicServer starts a Messages server answering with brain. Close it when done.
func NewAnthropicServer(brain Brain) *AnthropicServer {
	s := &AnthropicServer{Core: NewCore(brain)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		s.Handler(&anthropicWire{s: s, header: r.Header}).ServeHTTP(w, r)
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down, ending hung requests.
func (s *AnthropicServer) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// anthropicWire implements Wire for one request (it sees that request's header).
type anthropicWire struct {
	s      *AnthropicServer
	header http.Header
	plain  bool // set by Parse: the request declares no computer tool
	// toolset is set by Parse when the request declares the GA toolset;
	// disabled are the members its configs switch off.
	toolset  bool
	disabled map[string]bool
	// answerTool is the custom tool the request forces (a plain-vision
	// request), set by Parse; "" for others.
	answerTool string
}

// toolsetMembers are the members of computer_toolset_20260801.
var toolsetMembers = []string{"key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down",
	"left_mouse_up", "left_click", "left_click_drag", "right_click", "middle_click", "double_click",
	"triple_click", "scroll", "wait", "screenshot", "zoom"}

// claude5 matches Claude 5.x model ids (after llm.NormalizeModel), the models
// that take the toolset and refuse the legacy tools.
var claude5 = regexp.MustCompile(`^claude-((sonnet|opus|haiku)-5|fable-|mythos-)`)

type anthRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type          string `json:"type"`
		Name          string `json:"name"`
		DisplayWidth  int    `json:"display_width_px"`
		DisplayHeight int    `json:"display_height_px"`
		EnableZoom    *bool  `json:"enable_zoom"`
		// Configs are the toolset's per-member overrides.
		Configs map[string]struct {
			Enabled *bool `json:"enabled"`
		} `json:"configs"`
		// InputSchema is a custom tool's schema (a plain-vision answer).
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

type anthBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Toolset   *string         `json:"toolset_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// blocks decodes message content: a string or a list of blocks.
func anthBlocks(raw json.RawMessage) ([]anthBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthBlock{{Type: "text", Text: s}}, nil
	}
	var bs []anthBlock
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, fmt.Errorf("content is neither a string nor a list of blocks: %w", err)
	}
	return bs, nil
}

// Parse implements Wire: it validates the request as the Messages API would
// and extracts the latest image and all text.
func (aw *anthropicWire) Parse(body []byte) (Parsed, error) {
	req, err := aw.request(body)
	if err != nil {
		return Parsed{}, err
	}
	ap := &anthParse{toolset: aw.toolset}
	if err := ap.system(req.System); err != nil {
		return Parsed{}, err
	}
	for i, m := range req.Messages {
		if err := ap.message(i, m.Role, m.Content); err != nil {
			return Parsed{}, err
		}
	}
	if req.Messages[len(req.Messages)-1].Role != "user" {
		return Parsed{}, errors.New("messages: the last message must be a user message")
	}
	if ap.lastImage != "" {
		img, err := DecodeImage(ap.lastImage)
		if err != nil {
			return Parsed{}, err
		}
		ap.p.Image = img
	}
	ap.p.Prompt = strings.Join(ap.texts, "\n")
	if tc := req.ToolChoice; tc != nil && tc.Type == "tool" {
		for _, t := range req.Tools {
			if t.Name == tc.Name && t.Type == "" && len(t.InputSchema) > 0 {
				aw.answerTool, ap.p.Schema = t.Name, t.InputSchema
			}
		}
		if aw.answerTool == "" {
			return Parsed{}, fmt.Errorf("tool_choice: the forced tool %q is not declared with an input_schema", tc.Name)
		}
	}
	return ap.p, nil
}

// request checks the headers and the request's top-level fields and tools,
// as the Messages API does.
func (aw *anthropicWire) request(body []byte) (*anthRequest, error) {
	if aw.header.Get("X-Api-Key") == "" && aw.header.Get("Authorization") == "" {
		return nil, errAuth
	}
	if aw.header.Get("Anthropic-Version") == "" {
		return nil, errors.New("anthropic-version: header is required")
	}
	var req anthRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("request body is not JSON: %w", err)
	}
	switch {
	case req.Model == "":
		return nil, errors.New("model: field required")
	case req.MaxTokens <= 0:
		return nil, errors.New("max_tokens: must be greater than 0")
	case len(req.Messages) == 0:
		return nil, errors.New("messages: at least one message is required")
	}
	return &req, aw.checkTools(&req)
}

// checkTools checks the computer tool declarations against the beta header
// and the model.
func (aw *anthropicWire) checkTools(req *anthRequest) error {
	betas := strings.Split(strings.Join(aw.header.Values("Anthropic-Beta"), ","), ",")
	for i := range betas {
		betas[i] = strings.TrimSpace(betas[i])
	}
	five := claude5.MatchString(llm.NormalizeModel(req.Model))
	aw.plain = true
	for i, t := range req.Tools {
		if t.Type == "computer_toolset_20260801" {
			aw.plain, aw.toolset = false, true
			if err := aw.checkToolset(i, req.Model, five, betas, t.Name, t.DisplayWidth, t.Configs); err != nil {
				return err
			}
			continue
		}
		beta, ok := anthropicBetas[t.Type]
		if !ok {
			continue // other tools are not this fake's business
		}
		aw.plain = false
		switch {
		case five:
			return fmt.Errorf("tools.%d: %s is not supported by %s: use computer_toolset_20260801", i, t.Type, req.Model)
		case t.Name != "computer":
			return fmt.Errorf("tools.%d.name: the %s tool must be named \"computer\"", i, t.Type)
		case t.DisplayWidth <= 0 || t.DisplayHeight <= 0:
			return fmt.Errorf("tools.%d: display_width_px and display_height_px are required", i)
		case !slices.Contains(betas, beta):
			return fmt.Errorf("tools.%d: the %s tool requires the anthropic-beta header %q (got %q)", i, t.Type, beta, strings.Join(betas, ","))
		case t.EnableZoom != nil && t.Type != "computer_20251124":
			return fmt.Errorf("tools.%d.enable_zoom: extra inputs are not permitted for %s", i, t.Type)
		}
	}
	return nil
}

// checkToolset checks a computer_toolset_20260801 entry.
func (aw *anthropicWire) checkToolset(i int, model string, five bool, betas []string, name string, width int, configs map[string]struct {
	Enabled *bool `json:"enabled"`
}) error {
	for _, b := range betas {
		if strings.HasPrefix(b, "computer-use-") {
			return fmt.Errorf("tools.%d: computer_toolset_20260801 is a GA tool and must not be sent with the anthropic-beta header %q", i, b)
		}
	}
	switch {
	case !five:
		return fmt.Errorf("tools.%d: computer_toolset_20260801 is not supported by %s: use computer_20251124 or computer_20250124 with its beta header", i, model)
	case name != "":
		return fmt.Errorf("tools.%d.name: extra inputs are not permitted: a toolset entry carries no name", i)
	case width != 0:
		return fmt.Errorf("tools.%d.display_width_px: extra inputs are not permitted for computer_toolset_20260801", i)
	}
	aw.disabled = map[string]bool{}
	for m, c := range configs {
		if !slices.Contains(toolsetMembers, m) {
			return fmt.Errorf("tools.%d.configs.%s: unknown member of computer_toolset_20260801", i, m)
		}
		if c.Enabled != nil && !*c.Enabled {
			aw.disabled[m] = true
		}
	}
	return nil
}

// anthParse walks a request's system prompt and messages.
type anthParse struct {
	p         Parsed
	texts     []string
	lastImage string
	openUses  []string        // tool_use ids of the previous assistant message
	toolset   bool            // the request declares the toolset
	members   map[string]bool // tool_use ids of toolset members
}

// toolUse checks a replayed tool_use: under the toolset, a member's name
// must be a member and its toolset_name "computer".
func (ap *anthParse) toolUse(where string, b anthBlock) error {
	if !ap.toolset {
		return nil
	}
	if b.Toolset == nil {
		return fmt.Errorf("%s.toolset_name: field required for the computer toolset member %q", where, b.Name)
	}
	if *b.Toolset != "computer" {
		return fmt.Errorf("%s.toolset_name: unknown toolset %q", where, *b.Toolset)
	}
	if !slices.Contains(toolsetMembers, b.Name) {
		return fmt.Errorf("%s.name: %q is not a member of computer_toolset_20260801", where, b.Name)
	}
	if ap.members == nil {
		ap.members = map[string]bool{}
	}
	ap.members[b.ID] = true
	return nil
}

func (ap *anthParse) system(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	bs, err := anthBlocks(raw)
	if err != nil {
		return fmt.Errorf("system: %w", err)
	}
	for j, b := range bs {
		if b.Type != "text" {
			return fmt.Errorf("system.%d.type: system blocks must be text blocks, got %q", j, b.Type)
		}
		if b.Text == "" && raw[0] == '[' {
			return fmt.Errorf("system.%d.text: text content blocks must be non-empty", j)
		}
		ap.texts = append(ap.texts, b.Text)
	}
	return nil
}

// message checks message i: alternating roles, its blocks, and that a user
// message answers every tool_use of the assistant message before it.
func (ap *anthParse) message(i int, role string, content json.RawMessage) error {
	want := "user"
	if i%2 == 1 {
		want = "assistant"
	}
	if role != want {
		return fmt.Errorf("messages.%d.role: roles must alternate starting with user; got %q where %q was expected", i, role, want)
	}
	bs, err := anthBlocks(content)
	if err != nil {
		return fmt.Errorf("messages.%d: %w", i, err)
	}
	if len(bs) == 0 {
		return fmt.Errorf("messages.%d: content must not be empty", i)
	}
	var uses []string
	answered := map[string]bool{}
	seenOther := false
	for j, b := range bs {
		where := fmt.Sprintf("messages.%d.content.%d", i, j)
		if err := ap.block(where, role, b, &uses, answered, &seenOther); err != nil {
			return err
		}
	}
	if role == "user" {
		for _, id := range ap.openUses {
			if !answered[id] {
				return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after: %s. Each tool_use block must have a corresponding tool_result block in the next message", i, id)
			}
		}
	}
	ap.openUses = uses
	return nil
}

// block checks one content block of a message with role.
func (ap *anthParse) block(where, role string, b anthBlock, uses *[]string, answered map[string]bool, seenOther *bool) error {
	switch b.Type {
	case "text":
		if b.Text == "" {
			return fmt.Errorf("%s.text: text content blocks must be non-empty", where)
		}
		ap.texts = append(ap.texts, b.Text)
		*seenOther = true
	case "image":
		if role != "user" {
			return fmt.Errorf("%s: images are only allowed in user messages", where)
		}
		*seenOther = true
		return ap.image(where, b)
	case "tool_use":
		if role != "assistant" {
			return fmt.Errorf("%s: tool_use blocks are only allowed in assistant messages", where)
		}
		if b.ID == "" {
			return fmt.Errorf("%s.id: field required", where)
		}
		if err := ap.toolUse(where, b); err != nil {
			return err
		}
		*uses = append(*uses, b.ID)
	case "tool_result":
		if role != "user" {
			return fmt.Errorf("%s: tool_result blocks are only allowed in user messages", where)
		}
		if *seenOther {
			return fmt.Errorf("%s: tool_result blocks must come before any other content in the message", where)
		}
		if !slices.Contains(ap.openUses, b.ToolUseID) {
			return fmt.Errorf("%s: unexpected tool_use_id %q: each tool_result must answer a tool_use of the previous message", where, b.ToolUseID)
		}
		if ap.members[b.ToolUseID] && (b.Toolset == nil || *b.Toolset != "computer") {
			return fmt.Errorf("%s.toolset_name: the tool_result of toolset member tool_use %q must carry toolset_name \"computer\"", where, b.ToolUseID)
		}
		answered[b.ToolUseID] = true
		return ap.toolResult(where, b)
	default:
		return fmt.Errorf("%s.type: unknown content block type %q", where, b.Type)
	}
	return nil
}

// image checks an image block and counts it.
func (ap *anthParse) image(where string, b anthBlock) error {
	data, err := anthImage(b)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	ap.p.Images++
	ap.lastImage = data
	return nil
}

// toolResult checks a tool_result's content: text and image blocks only.
func (ap *anthParse) toolResult(where string, b anthBlock) error {
	if len(b.Content) == 0 {
		return nil
	}
	inner, err := anthBlocks(b.Content)
	if err != nil {
		return fmt.Errorf("%s.content: %w", where, err)
	}
	for k, c := range inner {
		switch c.Type {
		case "text":
			ap.texts = append(ap.texts, c.Text)
		case "image":
			if err := ap.image(fmt.Sprintf("%s.content.%d", where, k), c); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s.content.%d: type %q is not allowed in a tool_result", where, k, c.Type)
		}
	}
	return nil
}

var errAuth = errors.New("x-api-key header is required")

func anthImage(b anthBlock) (string, error) {
	if b.Source == nil || b.Source.Type != "base64" {
		return "", errors.New("image source must be {type: base64, media_type, data}")
	}
	switch b.Source.MediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
	default:
		return "", fmt.Errorf("image media_type %q is not one of image/jpeg, image/png, image/gif, image/webp", b.Source.MediaType)
	}
	if _, err := base64.StdEncoding.DecodeString(b.Source.Data); err != nil {
		return "", fmt.Errorf("image data is not valid base64: %w", err)
	}
	return b.Source.Data, nil
}

// anthErrorType is the Anthropic error type of an HTTP status.
func anthErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// WriteError implements Wire with Anthropic's error body.
func (aw *anthropicWire) WriteError(w http.ResponseWriter, rep Reply) {
	status := rep.HTTPStatus
	if status == http.StatusBadRequest && strings.Contains(rep.Result, errAuth.Error()) {
		status = http.StatusUnauthorized
		rep.ErrorType = "authentication_error"
	}
	typ := rep.ErrorType
	if typ == "" {
		typ = anthErrorType(status)
	}
	msg := rep.Result
	if msg == "" {
		msg = "scripted error " + strconv.Itoa(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}

// WriteReply implements Wire: actions become computer tool_use blocks, a
// reply without actions becomes closing text (QUESTION: for an Ask,
// BLOCKED:/FAILED: prefixed for those statuses, as the adapter's system
// prompt asks). A plain request is
// answered with Raw or Result as the only text (no text block when both are
// empty); a brain giving it actions gets HTTP 500, since a model without tools
// cannot act.
func (aw *anthropicWire) WriteReply(w http.ResponseWriter, t Turn, rep Reply, inputTokens int) {
	var content []map[string]any
	text := ""
	stop := "end_turn"
	switch {
	case aw.answerTool != "" && rep.Answer != nil && rep.Raw == "":
		stop = "tool_use"
		content = append(content, map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d_1", t.Calls), "name": aw.answerTool, "input": anthropicVision(rep),
		})
	case aw.plain && len(rep.Actions) > 0 && rep.Raw == "":
		aw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "api_error",
			Result: "fakellm: the brain answered a request without the computer tool with actions: reply with Result text"})
		return
	case aw.plain:
		text = rep.Raw
		if text == "" {
			text = rep.Result
		}
	case rep.Raw != "":
		text = rep.Raw
	case rep.Ask != nil && len(rep.Actions) > 0:
		aw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "api_error",
			Result: "fakellm: a computer-use model asks in a closing text, without tool calls: give the brain's Ask without Actions"})
		return
	case rep.Ask != nil:
		text = "QUESTION: " + rep.Ask.Question
		if rep.Observation != "" {
			text = rep.Observation + "\n\n" + text
		}
	case len(rep.Actions) > 0:
		text = rep.Observation
		stop = "tool_use"
	default:
		switch StatusOf(rep) {
		case llm.Blocked:
			text = "BLOCKED: " + rep.Result
		case llm.Failed:
			text = "FAILED: " + rep.Result
		default:
			text = rep.Result
		}
		if rep.Observation != "" {
			text = rep.Observation + "\n\n" + text
		}
	}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	if rep.Raw == "" {
		for i, a := range rep.Actions {
			input, err := anthInput(a)
			if err != nil {
				aw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "api_error", Result: "fakellm: " + err.Error()})
				return
			}
			use := map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d_%d", t.Calls, i+1), "name": "computer", "input": input}
			if aw.toolset {
				member := input["action"].(string)
				if aw.disabled[member] {
					aw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "api_error",
						Result: "fakellm: the brain used the toolset member " + member + ", which the request's configs disabled"})
					return
				}
				delete(input, "action")
				if a.Kind == action.KeyPress && a.Amount > 1 {
					input["repeat"] = a.Amount
				}
				use["name"], use["toolset_name"] = member, "computer"
			}
			content = append(content, use)
		}
	}
	model := aw.s.Model
	if model == "" {
		model = "claude-fake"
	}
	raw, _ := json.Marshal(content)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", fmt.Sprintf("req_fake_%d", t.Calls))
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id":            fmt.Sprintf("msg_fake_%d", t.Calls),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": inputTokens, "output_tokens": EstimateOutputTokens(string(raw)),
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
		},
	})
}

func pt(p *image.Point) []int { return []int{p.X, p.Y} }

// anthInput renders a brain action as computer tool input.
func anthInput(a BrainAction) (map[string]any, error) {
	in := map[string]any{}
	need := func() error {
		if a.At == nil {
			return fmt.Errorf("brain action %s has no point", a.Kind)
		}
		in["coordinate"] = pt(a.At)
		return nil
	}
	optional := func() {
		if a.At != nil {
			in["coordinate"] = pt(a.At)
		}
	}
	mods := func() {
		if len(a.Keys) > 0 {
			in["text"] = strings.Join(a.Keys, "+")
		}
	}
	secs := func() float64 {
		if a.Amount > 0 {
			return float64(a.Amount)
		}
		return 1
	}
	switch a.Kind {
	case action.Click:
		switch a.Button {
		case "right":
			in["action"] = "right_click"
		case "middle":
			in["action"] = "middle_click"
		default:
			in["action"] = "left_click"
		}
		optional()
		mods()
	case action.DoubleClick:
		in["action"] = "double_click"
		optional()
		mods()
	case action.TripleClick:
		in["action"] = "triple_click"
		optional()
		mods()
	case action.Move:
		in["action"] = "mouse_move"
		if err := need(); err != nil {
			return nil, err
		}
	case action.Drag:
		if a.To == nil {
			return nil, errors.New("brain drag has no end point (To)")
		}
		in["action"] = "left_click_drag"
		if a.At != nil {
			in["start_coordinate"] = pt(a.At)
		}
		in["coordinate"] = pt(a.To)
		mods()
	case action.MouseDown:
		in["action"] = "left_mouse_down"
		optional()
	case action.MouseUp:
		in["action"] = "left_mouse_up"
		optional()
	case action.Scroll:
		in["action"] = "scroll"
		optional()
		in["scroll_direction"] = a.Direction
		amount := a.Amount
		if amount == 0 {
			amount = 3
		}
		in["scroll_amount"] = amount
		mods()
	case action.TypeText:
		in["action"], in["text"] = "type", a.Text
	case action.KeyPress:
		in["action"], in["text"] = "key", strings.Join(a.Keys, "+")
	case action.HoldKey:
		in["action"], in["text"], in["duration"] = "hold_key", strings.Join(a.Keys, "+"), secs()
	case action.Wait:
		in["action"], in["duration"] = "wait", secs()
	case action.Zoom:
		if a.At == nil || a.To == nil {
			return nil, errors.New("brain zoom needs At and To (the region's corners)")
		}
		in["action"], in["region"] = "zoom", []int{a.At.X, a.At.Y, a.To.X, a.To.Y}
	case AskScreenshot:
		in["action"] = "screenshot"
	case AskCursor:
		in["action"] = "cursor_position"
	default:
		return nil, fmt.Errorf("the Anthropic computer tool has no action for %q", a.Kind)
	}
	return in, nil
}
