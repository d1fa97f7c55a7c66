package fakellm

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// ChatFormat is how a ChatServer renders a brain's Reply as the assistant message text.
type ChatFormat int

// Chat answer formats.
const (
	// ChatJSON is the generic adapter's JSON answer (observation, actions, status...).
	ChatJSON ChatFormat = iota
	// ChatUITARS is the UI-TARS text format ("Thought: ...\nAction: click(start_box='(x,y)')").
	// UI-TARS has no blocked or failed: a Reply.Ask, and a blocked or failed
	// reply, is call_user() with the question (or Result) as the Thought,
	// which the adapter reads as a question.
	ChatUITARS
	// ChatText answers Reply.Result as plain text (memory summaries).
	ChatText
	// ChatPoints answers a grounding request: {"points":[[x,y] or null, ...]}, one
	// entry per Reply action (an action with a nil At becomes null).
	ChatPoints
	// ChatQwen answers a plain-vision locate request without a schema in
	// Qwen-VL's grounding format: [{"bbox_2d": [x1, y1, x2, y2], "label": ...}],
	// or [] when not found. Requests with a schema get JSON.
	ChatQwen
)

// UITARSSpelling is how a ChatServer in ChatUITARS format writes a point.
type UITARSSpelling int

// UI-TARS point spellings.
const (
	// TARSParens writes start_box='(x,y)'.
	TARSParens UITARSSpelling = iota
	// TARSBoxTokens writes start_box='<|box_start|>(x,y)<|box_end|>'.
	TARSBoxTokens
	// TARSPointTag writes point='<point>x y</point>' (newer UI-TARS releases).
	TARSPointTag
)

// ChatOptions configures a ChatServer. The zero value answers generic JSON with
// points in pixels of the image received, x before y.
type ChatOptions struct {
	// Profile is the coordinate convention of the answers (divisor and axis
	// order); the zero value means pixels of the image received, xy.
	Profile geom.Profile
	// Format is how answers are written.
	Format ChatFormat
	// Boxes writes every point as a box of BoxRadiusPx pixels around it.
	Boxes bool
	// BoxRadiusPx is the half size of boxes in image pixels; zero = 6.
	BoxRadiusPx int
	// Fenced wraps JSON answers in a ```json fence after a line of prose, as
	// chatty models do.
	Fenced bool
	// Spelling is the point spelling of ChatUITARS answers.
	Spelling UITARSSpelling
	// Model is reported in responses; empty = "fake-model".
	Model string
	// RejectResponseFormat answers every request carrying response_format
	// with HTTP 400, as servers without structured output do.
	RejectResponseFormat bool
	// NoUsage leaves the usage object out of answers, as a scripted model
	// that reads no tokens should (the demo): no invented token counts.
	NoUsage bool
}

// ChatServer is an OpenAI-compatible Chat Completions server (POST
// {URL}/chat/completions) whose answers come from a Brain.
type ChatServer struct {
	*Core
	// URL is the base URL to configure clients with, up to and including /v1.
	URL string
	// Root is the server's root URL; Root+"/v1beta/openai/" serves the same
	// answers at the path of Gemini's OpenAI-compatible endpoint.
	Root string

	opts ChatOptions
	srv  *httptest.Server
}

// NewChatServer starts a Chat Completions server answering with brain. Close it when done.
func NewChatServer(brain Brain, opts ChatOptions) *ChatServer {
	s := &ChatServer{Core: NewCore(brain), opts: opts}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", s.Handler(chatWire{s}))
	// Gemini's OpenAI-compatible endpoint lives under /v1beta/openai/.
	mux.Handle("POST /v1beta/openai/chat/completions", s.Handler(chatWire{s}))
	s.srv = httptest.NewServer(mux)
	s.Root = s.srv.URL
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down, ending hung requests.
func (s *ChatServer) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// chatWire implements Wire for Chat Completions.
type chatWire struct{ s *ChatServer }

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model          string `json:"model"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// Parse implements Wire.
func (cw chatWire) Parse(body []byte) (Parsed, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return Parsed{}, fmt.Errorf("request body is not Chat Completions JSON: %w", err)
	}
	if len(req.Messages) == 0 {
		return Parsed{}, fmt.Errorf("request has no messages")
	}
	var p Parsed
	if rf := req.ResponseFormat; rf != nil {
		if cw.s.opts.RejectResponseFormat {
			return Parsed{}, fmt.Errorf("response_format is not supported by this server")
		}
		if rf.Type == "json_schema" {
			p.Schema = rf.JSONSchema.Schema
		}
	}
	var texts []string
	lastURL := ""
	for i, m := range req.Messages {
		if len(m.Content) == 0 || string(m.Content) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			texts = append(texts, s)
			continue
		}
		var parts []chatPart
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return Parsed{}, fmt.Errorf("message %d content is neither a string nor a list of parts: %w", i, err)
		}
		for _, part := range parts {
			switch part.Type {
			case "text":
				texts = append(texts, part.Text)
			case "image_url":
				p.Images++
				lastURL = part.ImageURL.URL
			default:
				return Parsed{}, fmt.Errorf("message %d has a content part of unknown type %q", i, part.Type)
			}
		}
	}
	if lastURL != "" {
		img, err := DecodeImage(lastURL)
		if err != nil {
			return Parsed{}, err
		}
		p.Image = img
	}
	p.Prompt = strings.Join(texts, "\n")
	return p, nil
}

// WriteError implements Wire with OpenAI's error body.
func (cw chatWire) WriteError(w http.ResponseWriter, rep Reply) {
	typ := rep.ErrorType
	if typ == "" {
		typ = defaultErrorType(rep.HTTPStatus)
	}
	msg := rep.Result
	if msg == "" {
		msg = "scripted error " + strconv.Itoa(rep.HTTPStatus)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.HTTPStatus)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": typ,
	}})
}

func defaultErrorType(status int) string {
	switch {
	case status == 401:
		return "invalid_api_key"
	case status == 429:
		return "rate_limit_exceeded"
	case status == 529:
		return "overloaded_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// WriteReply implements Wire.
func (cw chatWire) WriteReply(w http.ResponseWriter, t Turn, rep Reply, inputTokens int) {
	content := rep.Raw
	if content == "" {
		content = cw.s.render(t, rep)
	}
	model := cw.s.opts.Model
	if model == "" {
		model = "fake-model"
	}
	out := EstimateOutputTokens(content)
	w.Header().Set("Content-Type", "application/json")
	answer := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", t.Calls),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil},
			"finish_reason": "stop",
			"logprobs":      nil,
		}},
		"usage": map[string]any{
			"prompt_tokens": inputTokens, "completion_tokens": out, "total_tokens": inputTokens + out,
		},
	}
	if cw.s.opts.NoUsage {
		delete(answer, "usage")
	}
	_ = json.NewEncoder(w).Encode(answer)
}

// render writes rep in the server's format.
func (s *ChatServer) render(t Turn, rep Reply) string {
	if rep.Answer != nil {
		return s.renderVision(t, rep)
	}
	switch s.opts.Format {
	case ChatText:
		return rep.Result
	case ChatPoints:
		pts := make([]any, len(rep.Actions))
		for i, a := range rep.Actions {
			if a.At != nil {
				pts[i] = s.coords(t, *a.At)
			}
		}
		b, _ := json.Marshal(map[string]any{"points": pts})
		return string(b)
	case ChatUITARS:
		return s.renderTARS(t, rep)
	}
	return s.renderJSON(t, rep)
}

// coords expresses an image pixel in the server's convention: a point, or a box
// around it when Boxes is set.
func (s *ChatServer) coords(t Turn, p image.Point) []float64 {
	f := geom.Frame{Content: t.ImageSize, Prepared: t.ImageSize}
	conv := func(x, y float64) []float64 {
		v := s.opts.Profile.FromImage(geom.ImagePoint{X: x, Y: y}, f)
		for i := range v {
			v[i] = roundFor(v[i], s.opts.Profile.Divisor)
		}
		return v
	}
	if !s.opts.Boxes {
		return conv(float64(p.X), float64(p.Y))
	}
	r := s.opts.BoxRadiusPx
	if r == 0 {
		r = 6
	}
	a := conv(float64(p.X-r), float64(p.Y-r))
	b := conv(float64(p.X+r), float64(p.Y+r))
	return []float64{a[0], a[1], b[0], b[1]}
}

// roundFor rounds v the way models write numbers: integers for pixels and 0-1000
// grids, three decimals for 0-1 fractions.
func roundFor(v, divisor float64) float64 {
	if divisor == 1 {
		return math.Round(v*1000) / 1000
	}
	return math.Round(v)
}

func (s *ChatServer) renderJSON(t Turn, rep Reply) string {
	status := StatusOf(rep)
	ans := map[string]any{
		"observation":      rep.Observation,
		"reasoning":        "scripted",
		"memory_update":    nonNil(rep.Memory),
		"expected_outcome": "",
		"status":           string(status),
		"image_width":      t.ImageSize.W,
		"image_height":     t.ImageSize.H,
	}
	switch status {
	case llm.Done:
		ans["result"] = rep.Result
	case llm.Blocked, llm.Failed:
		ans["block_reason"] = rep.Result
	}
	acts := []any{}
	for _, a := range rep.Actions {
		m := map[string]any{"action": string(a.Kind)}
		if a.At != nil {
			c := s.coords(t, *a.At)
			switch {
			case len(c) == 4:
				m["box"] = c
			case s.opts.Profile.Order == geom.YX:
				m["point"] = c
			default:
				m["x"], m["y"] = c[0], c[1]
			}
		}
		if a.To != nil {
			m["to"] = s.coords(t, *a.To)
		}
		if a.Ref != "" {
			m["ref"] = a.Ref
		}
		if a.ToRef != "" {
			m["to_ref"] = a.ToRef
		}
		if a.Text != "" {
			m["text"] = a.Text
		}
		if len(a.Keys) > 0 {
			m["keys"] = a.Keys
		}
		if a.Direction != "" {
			m["direction"] = a.Direction
		}
		if a.Amount != 0 {
			m["amount"] = a.Amount
		}
		if a.Button != "" {
			m["button"] = a.Button
		}
		acts = append(acts, m)
	}
	if q := rep.Ask; q != nil {
		m := map[string]any{"action": string(action.AskUser), "question": q.Question}
		if q.Kind != "" {
			m["ask"] = string(q.Kind)
		}
		if len(q.Options) > 0 {
			m["options"] = q.Options
		}
		if q.Secret {
			m["secret"] = true
		}
		acts = append(acts, m)
	}
	ans["actions"] = acts
	b, _ := json.MarshalIndent(ans, "", "  ")
	if s.opts.Fenced {
		return "Here is my answer.\n```json\n" + string(b) + "\n```\n"
	}
	return string(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *ChatServer) tarsPoint(t Turn, p image.Point) string {
	c := s.coords(t, p)
	nums := make([]string, len(c))
	for i, v := range c {
		nums[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch s.opts.Spelling {
	case TARSBoxTokens:
		return "'<|box_start|>(" + strings.Join(nums, ",") + ")<|box_end|>'"
	case TARSPointTag:
		return "'<point>" + strings.Join(nums, " ") + "</point>'"
	}
	return "'(" + strings.Join(nums, ",") + ")'"
}

func (s *ChatServer) renderTARS(t Turn, rep Reply) string {
	arg := "start_box="
	endArg := "end_box="
	if s.opts.Spelling == TARSPointTag {
		arg, endArg = "point=", "end_point="
	}
	var lines []string
	for _, a := range rep.Actions {
		at := ""
		if a.At != nil {
			at = arg + s.tarsPoint(t, *a.At)
		}
		switch a.Kind {
		case action.Click:
			name := "click"
			if a.Button == "right" {
				name = "right_single"
			}
			lines = append(lines, name+"("+at+")")
		case action.DoubleClick:
			lines = append(lines, "left_double("+at+")")
		case action.Drag:
			end := ""
			if a.To != nil {
				end = ", " + endArg + s.tarsPoint(t, *a.To)
			}
			lines = append(lines, "drag("+at+end+")")
		case action.KeyPress:
			lines = append(lines, "hotkey(key='"+tarsEscape(strings.Join(a.Keys, " "))+"')")
		case action.TypeText:
			lines = append(lines, "type(content='"+tarsEscape(a.Text)+"')")
		case action.Scroll:
			sep := ""
			if at != "" {
				sep = ", "
			}
			lines = append(lines, "scroll("+at+sep+"direction='"+a.Direction+"')")
		case action.Wait:
			lines = append(lines, "wait()")
		default:
			lines = append(lines, string(a.Kind)+"("+at+")")
		}
	}
	thought := rep.Observation
	switch st := StatusOf(rep); {
	case rep.Ask != nil:
		lines = append(lines, "call_user()")
		thought = rep.Ask.Question
	case st == llm.Done:
		lines = append(lines, "finished(content='"+tarsEscape(rep.Result)+"')")
	case st == llm.Blocked, st == llm.Failed:
		// UI-TARS has no blocked or failed: it calls the user, which the
		// adapter reads as a question (the thought).
		lines = append(lines, "call_user()")
		if rep.Result != "" {
			thought = rep.Result
		}
	}
	if thought == "" {
		thought = "I look at the screen and act."
	}
	return "Thought: " + thought + "\nAction: " + strings.Join(lines, "\n\n")
}

// tarsEscape escapes a string for a single-quoted UI-TARS argument.
func tarsEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return r.Replace(s)
}
