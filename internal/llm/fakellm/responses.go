package fakellm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/llm"
)

// SafetyCheck is a pending safety check a ResponsesServer attaches to a computer_call.
type SafetyCheck struct {
	ID      string `json:"id"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ResponsesServer is an OpenAI Responses API server (POST {URL}/responses)
// with the computer tool, answering with a Brain. It keeps the responses it
// gave, so it checks what the real API checks: a bearer key, the computer
// tool's declaration (the GA {"type": "computer"} without display or
// environment, for any model but computer-use-preview; computer_use_preview
// with them, only for computer-use-preview), truncation "auto", a known
// previous_response_id, a computer_call_output for every computer_call of
// that response and none for a call_id it did not issue, a screenshot detail
// the API knows, and acknowledged_safety_checks matching exactly the checks
// that were pending. A GA tool's computer_call carries its actions as an
// "actions" batch, with the keys held during pointer actions.
type ResponsesServer struct {
	*Core
	// URL is the base URL to configure clients with, up to and including /v1.
	URL string
	// Model is reported in responses; empty = the requested model.
	Model string
	// SafetyChecks, when set, is asked for every reply with actions; the checks
	// it returns become the computer_call's pending_safety_checks.
	SafetyChecks func(t Turn) []SafetyCheck

	mu    sync.Mutex
	calls map[string][]issuedCall // response id -> its computer_calls
	srv   *httptest.Server
}

// issuedCall is a computer_call the server sent.
type issuedCall struct {
	callID string
	checks []SafetyCheck
}

// NewResponsesServer starts a Responses server answering with brain. Close it when done.
func NewResponsesServer(brain Brain) *ResponsesServer {
	s := &ResponsesServer{Core: NewCore(brain), calls: map[string][]issuedCall{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
		s.Handler(&responsesWire{s: s, header: r.Header}).ServeHTTP(w, r)
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down, ending hung requests.
func (s *ResponsesServer) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// responsesWire implements Wire for one request.
type responsesWire struct {
	s      *ResponsesServer
	header http.Header
	model  string
	prevID string
	ga     bool // the request declares the GA computer tool
}

type respRequest struct {
	Model              string          `json:"model"`
	Instructions       string          `json:"instructions"`
	Input              json.RawMessage `json:"input"`
	PreviousResponseID string          `json:"previous_response_id"`
	Truncation         string          `json:"truncation"`
	Tools              []struct {
		Type          string `json:"type"`
		DisplayWidth  int    `json:"display_width"`
		DisplayHeight int    `json:"display_height"`
		Environment   string `json:"environment"`
	} `json:"tools"`
}

type respItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Output  *struct {
		Type     string `json:"type"`
		ImageURL string `json:"image_url"`
		Detail   string `json:"detail"`
	} `json:"output"`
	Acknowledged []SafetyCheck `json:"acknowledged_safety_checks"`
}

var errBearer = errors.New("you didn't provide an API key: send it as Authorization: Bearer <key>")

// Parse implements Wire: it validates the request as the Responses API would
// and extracts the latest image and all text.
func (rw *responsesWire) Parse(body []byte) (Parsed, error) {
	req, items, err := rw.request(body)
	if err != nil {
		return Parsed{}, err
	}
	rw.s.mu.Lock()
	prev, known := rw.s.calls[req.PreviousResponseID]
	rw.s.mu.Unlock()
	if req.PreviousResponseID != "" && !known {
		return Parsed{}, fmt.Errorf("previous response with id '%s' not found", req.PreviousResponseID)
	}
	rp := &respParse{prev: prev, answered: map[string]bool{}}
	if req.Instructions != "" {
		rp.texts = append(rp.texts, req.Instructions)
	}
	for i, it := range items {
		if err := rp.item(fmt.Sprintf("input[%d]", i), it); err != nil {
			return Parsed{}, err
		}
	}
	for _, c := range prev {
		if !rp.answered[c.callID] {
			return Parsed{}, fmt.Errorf("no computer_call_output found for computer call %s of the previous response", c.callID)
		}
	}
	if rp.lastImage != "" {
		img, err := DecodeImage(rp.lastImage)
		if err != nil {
			return Parsed{}, err
		}
		rp.p.Image = img
	}
	rp.p.Prompt = strings.Join(rp.texts, "\n")
	return rp.p, nil
}

// request checks the header, the top-level fields and the computer tool, and
// returns the input items.
func (rw *responsesWire) request(body []byte) (*respRequest, []respItem, error) {
	auth := rw.header.Get("Authorization")
	if !strings.HasPrefix(auth, "Bearer ") || strings.TrimSpace(strings.TrimPrefix(auth, "Bearer ")) == "" {
		return nil, nil, errBearer
	}
	var req respRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, fmt.Errorf("request body is not JSON: %w", err)
	}
	if req.Model == "" {
		return nil, nil, errors.New("missing required parameter: 'model'")
	}
	rw.model, rw.prevID = req.Model, req.PreviousResponseID
	computer := false
	preview := strings.HasPrefix(req.Model, "computer-use-preview")
	for i, t := range req.Tools {
		switch t.Type {
		case "computer":
			computer, rw.ga = true, true
			switch {
			case preview:
				return nil, nil, fmt.Errorf("tools[%d]: the computer tool is not supported with %s: use computer_use_preview", i, req.Model)
			case t.DisplayWidth != 0 || t.DisplayHeight != 0 || t.Environment != "":
				return nil, nil, fmt.Errorf("tools[%d]: unknown parameter: the computer tool takes no display_width, display_height or environment", i)
			}
		case "computer_use_preview":
			computer = true
			switch {
			case !preview:
				return nil, nil, fmt.Errorf("tools[%d]: the computer_use_preview tool is only supported with computer-use-preview; %s takes the computer tool", i, req.Model)
			case t.DisplayWidth <= 0 || t.DisplayHeight <= 0:
				return nil, nil, fmt.Errorf("tools[%d]: display_width and display_height are required", i)
			case !slices.Contains([]string{"windows", "mac", "linux", "ubuntu", "browser"}, t.Environment):
				return nil, nil, fmt.Errorf("tools[%d].environment: %q is not one of windows, mac, linux, ubuntu, browser", i, t.Environment)
			}
		}
	}
	if computer && req.Truncation != "auto" {
		return nil, nil, errors.New("truncation must be 'auto' when using the computer tool")
	}
	var items []respItem
	var asText string
	if json.Unmarshal(req.Input, &asText) == nil {
		items = []respItem{{Type: "message", Role: "user", Content: req.Input}}
	} else if err := json.Unmarshal(req.Input, &items); err != nil {
		return nil, nil, fmt.Errorf("input is neither a string nor a list of items: %w", err)
	}
	if len(items) == 0 {
		return nil, nil, errors.New("input must not be empty")
	}
	return &req, items, nil
}

// respParse walks a request's input items.
type respParse struct {
	p         Parsed
	texts     []string
	lastImage string
	prev      []issuedCall // the calls of the previous response
	answered  map[string]bool
}

func (rp *respParse) item(where string, it respItem) error {
	switch it.Type {
	case "", "message":
		if it.Role != "user" && it.Role != "developer" && it.Role != "system" {
			return fmt.Errorf("%s.role: %q is not allowed in input messages here", where, it.Role)
		}
		return rp.message(where, it.Content)
	case "computer_call_output":
		return rp.callOutput(where, it)
	}
	return fmt.Errorf("%s.type: %q is not supported by this fake", where, it.Type)
}

// message reads an input message: a string, or input_text and input_image parts.
func (rp *respParse) message(where string, content json.RawMessage) error {
	var s string
	if json.Unmarshal(content, &s) == nil {
		rp.texts = append(rp.texts, s)
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL string `json:"image_url"`
		Detail   string `json:"detail"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return fmt.Errorf("%s.content: neither a string nor a list of parts: %w", where, err)
	}
	for j, part := range parts {
		switch part.Type {
		case "input_text":
			rp.texts = append(rp.texts, part.Text)
		case "input_image":
			if !strings.HasPrefix(part.ImageURL, "data:image/") {
				return fmt.Errorf("%s.content[%d].image_url: expected a data:image/... URL", where, j)
			}
			rp.p.Images++
			rp.lastImage = part.ImageURL
		default:
			return fmt.Errorf("%s.content[%d].type: %q is not an input content type", where, j, part.Type)
		}
	}
	return nil
}

// callOutput checks that a computer_call_output answers a call of the
// previous response with a screenshot and acknowledges exactly its checks.
func (rp *respParse) callOutput(where string, it respItem) error {
	var issued *issuedCall
	for k := range rp.prev {
		if rp.prev[k].callID == it.CallID {
			issued = &rp.prev[k]
		}
	}
	if issued == nil {
		return fmt.Errorf("%s: no computer call found for call_id %q in the previous response", where, it.CallID)
	}
	if it.Output == nil || it.Output.Type != "computer_screenshot" || !strings.HasPrefix(it.Output.ImageURL, "data:image/") {
		return fmt.Errorf("%s.output: expected {type: computer_screenshot, image_url: data:image/...}", where)
	}
	if d := it.Output.Detail; d != "" && !slices.Contains([]string{"low", "high", "auto", "original"}, d) {
		return fmt.Errorf("%s.output.detail: %q is not one of low, high, auto, original", where, d)
	}
	if err := sameChecks(issued.checks, it.Acknowledged); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	rp.answered[it.CallID] = true
	rp.p.Images++
	rp.lastImage = it.Output.ImageURL
	return nil
}

// sameChecks checks that acknowledged lists exactly the pending checks.
func sameChecks(pending, acked []SafetyCheck) error {
	var want, got []string
	for _, c := range pending {
		want = append(want, c.ID)
	}
	for _, c := range acked {
		got = append(got, c.ID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		if len(want) > 0 && len(got) == 0 {
			return fmt.Errorf("the computer call has pending safety checks %v that must be acknowledged in acknowledged_safety_checks", want)
		}
		return fmt.Errorf("acknowledged_safety_checks %v do not match the pending safety checks %v", got, want)
	}
	return nil
}

// WriteError implements Wire with OpenAI's error body.
func (rw *responsesWire) WriteError(w http.ResponseWriter, rep Reply) {
	status := rep.HTTPStatus
	typ := rep.ErrorType
	if status == http.StatusBadRequest && strings.Contains(rep.Result, errBearer.Error()) {
		status, typ = http.StatusUnauthorized, "invalid_api_key"
	}
	if typ == "" {
		typ = defaultErrorType(status)
	}
	msg := rep.Result
	if msg == "" {
		msg = "scripted error " + strconv.Itoa(status)
	}
	errType := typ
	switch typ {
	case "rate_limit_exceeded":
		errType = "requests"
	case "invalid_api_key":
		errType = "invalid_request_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": errType, "param": nil, "code": typ,
	}})
}

// WriteReply implements Wire: actions become one computer_call (the single
// "action" field for one action, the batched "actions" list for several), a
// reply without actions becomes an assistant message (QUESTION: for an Ask,
// BLOCKED:/FAILED: prefixed for those statuses, as the adapter's instructions
// ask). SafetyChecks attach pending_safety_checks to the computer_call; the
// next request must acknowledge exactly them (after the user approved).
func (rw *responsesWire) WriteReply(w http.ResponseWriter, t Turn, rep Reply, inputTokens int) {
	id := fmt.Sprintf("resp_fake_%d", t.Calls)
	var output []map[string]any
	var issued []issuedCall
	if rep.Observation != "" && rep.Raw == "" && len(rep.Actions) > 0 {
		output = append(output, map[string]any{
			"type": "reasoning", "id": fmt.Sprintf("rs_fake_%d", t.Calls),
			"summary": []any{map[string]any{"type": "summary_text", "text": rep.Observation}},
		})
	}
	if rep.Raw == "" && rep.Ask != nil && len(rep.Actions) > 0 {
		rw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "server_error",
			Result: "fakellm: a computer-use model asks in a closing message, without a computer_call: give the brain's Ask without Actions"})
		return
	}
	if rep.Raw == "" && len(rep.Actions) > 0 {
		var acts []map[string]any
		for _, a := range rep.Actions {
			m, err := respAction(a, rw.ga)
			if err != nil {
				rw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "server_error", Result: "fakellm: " + err.Error()})
				return
			}
			acts = append(acts, m)
		}
		var checks []SafetyCheck
		if rw.s.SafetyChecks != nil {
			checks = rw.s.SafetyChecks(t)
		}
		call := map[string]any{
			"type": "computer_call", "id": fmt.Sprintf("cu_fake_%d", t.Calls), "call_id": fmt.Sprintf("call_fake_%d", t.Calls),
			"status": "completed", "pending_safety_checks": append([]SafetyCheck{}, checks...),
		}
		switch {
		case rw.ga:
			call["actions"] = acts
		case len(acts) == 1:
			call["action"] = acts[0]
		default:
			rw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, ErrorType: "server_error",
				Result: "fakellm: computer_use_preview answers one action per computer_call: give the brain one action at a time"})
			return
		}
		output = append(output, call)
		issued = append(issued, issuedCall{callID: call["call_id"].(string), checks: checks})
	} else {
		text := rep.Raw
		if text == "" {
			switch st := StatusOf(rep); {
			case rep.Ask != nil:
				text = "QUESTION: " + rep.Ask.Question
			case st == llm.Blocked:
				text = "BLOCKED: " + rep.Result
			case st == llm.Failed:
				text = "FAILED: " + rep.Result
			default:
				text = rep.Result
			}
		}
		output = append(output, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_fake_%d", t.Calls), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
		})
	}
	rw.s.mu.Lock()
	rw.s.calls[id] = issued
	rw.s.mu.Unlock()

	model := rw.s.Model
	if model == "" {
		model = rw.model
	}
	raw, _ := json.Marshal(output)
	out := EstimateOutputTokens(string(raw))
	var prev any
	if rw.prevID != "" {
		prev = rw.prevID
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id, "object": "response", "created_at": time.Now().Unix(), "status": "completed",
		"model": model, "output": output, "previous_response_id": prev, "truncation": "auto",
		"parallel_tool_calls": true, "error": nil, "incomplete_details": nil,
		"usage": map[string]any{
			"input_tokens": inputTokens, "output_tokens": out, "total_tokens": inputTokens + out,
			"input_tokens_details":  map[string]any{"cached_tokens": 0},
			"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		},
	})
}

// respAction renders a brain action as a computer tool action; the GA tool
// (ga) carries the keys held during a pointer action.
func respAction(a BrainAction, ga bool) (map[string]any, error) {
	m, err := respActionOf(a)
	if err != nil {
		return nil, err
	}
	if len(a.Keys) > 0 && a.Kind != action.KeyPress {
		if !ga {
			return nil, fmt.Errorf("computer_use_preview holds no keys during %s", a.Kind)
		}
		keys := make([]string, len(a.Keys))
		for i, k := range a.Keys {
			keys[i] = strings.ToUpper(k)
		}
		m["keys"] = keys
	}
	return m, nil
}

// respActionOf renders a brain action without its held keys.
func respActionOf(a BrainAction) (map[string]any, error) {
	at := func() error {
		if a.At == nil {
			return fmt.Errorf("brain action %s has no point", a.Kind)
		}
		return nil
	}
	switch a.Kind {
	case action.Click:
		if err := at(); err != nil {
			return nil, err
		}
		button := a.Button
		switch button {
		case "":
			button = "left"
		case "middle":
			button = "wheel"
		}
		return map[string]any{"type": "click", "button": button, "x": a.At.X, "y": a.At.Y}, nil
	case action.DoubleClick:
		if err := at(); err != nil {
			return nil, err
		}
		return map[string]any{"type": "double_click", "x": a.At.X, "y": a.At.Y}, nil
	case action.Move:
		if err := at(); err != nil {
			return nil, err
		}
		return map[string]any{"type": "move", "x": a.At.X, "y": a.At.Y}, nil
	case action.Drag:
		if err := at(); err != nil {
			return nil, err
		}
		if a.To == nil {
			return nil, errors.New("brain drag has no end point (To)")
		}
		return map[string]any{"type": "drag", "path": []any{
			map[string]any{"x": a.At.X, "y": a.At.Y}, map[string]any{"x": a.To.X, "y": a.To.Y},
		}}, nil
	case action.Scroll:
		if err := at(); err != nil {
			return nil, err
		}
		px := 100 * max(a.Amount, 1)
		sx, sy := 0, 0
		switch a.Direction {
		case "down":
			sy = px
		case "up":
			sy = -px
		case "right":
			sx = px
		case "left":
			sx = -px
		default:
			return nil, fmt.Errorf("brain scroll direction %q", a.Direction)
		}
		return map[string]any{"type": "scroll", "x": a.At.X, "y": a.At.Y, "scroll_x": sx, "scroll_y": sy}, nil
	case action.TypeText:
		return map[string]any{"type": "type", "text": a.Text}, nil
	case action.KeyPress:
		keys := make([]string, len(a.Keys))
		for i, k := range a.Keys {
			keys[i] = strings.ToUpper(k) // the model writes key names in capitals
		}
		return map[string]any{"type": "keypress", "keys": keys}, nil
	case action.Wait:
		return map[string]any{"type": "wait"}, nil
	case AskScreenshot:
		return map[string]any{"type": "screenshot"}, nil
	}
	return nil, fmt.Errorf("the OpenAI computer tool has no action for %q", a.Kind)
}
