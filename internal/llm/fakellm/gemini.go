package fakellm

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// geminiFunctions are the computer-use predefined functions the API knows.
var geminiFunctions = []string{"open_web_browser", "navigate", "search", "go_back", "go_forward", "click_at", "hover_at",
	"type_text_at", "key_combination", "scroll_at", "scroll_document", "drag_and_drop", "wait_5_seconds"}

// GeminiServer is a Gemini API server (POST {URL}/v1beta/models/{model}:generateContent)
// answering with a Brain. It checks what the API checks: the x-goog-api-key
// header, contents alternating user and model turns and ending with a user
// turn, inline images with an image media type, the computerUse tool's
// environment and excluded functions, a functionResponse (same name and id)
// for every functionCall of the previous model turn and none for another,
// and a safety_acknowledgement "true" in the response to every call that
// carried safety_decision require_confirmation. With the computerUse tool the
// brain's actions become predefined function calls on the 0-999 grid (never
// an excluded one); with a responseJsonSchema its Answer is the JSON text;
// otherwise its Result is the text.
type GeminiServer struct {
	*Core
	// URL is the host root, the way the genai SDK takes its base URL.
	URL string
	// Confirm, when set, is asked for every reply with actions; a non-empty
	// explanation puts safety_decision require_confirmation on its first call.
	Confirm func(t Turn) string

	srv *httptest.Server
}

// NewGeminiServer starts a Gemini server answering with brain. Close it when done.
func NewGeminiServer(brain Brain) *GeminiServer {
	s := &GeminiServer{Core: NewCore(brain)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{call}", func(w http.ResponseWriter, r *http.Request) {
		model, ok := strings.CutSuffix(r.PathValue("call"), ":generateContent")
		gw := &geminiWire{s: s, header: r.Header, model: model}
		if !ok {
			gw.WriteError(w, Reply{HTTPStatus: http.StatusNotFound, Result: "unknown method " + r.PathValue("call")})
			return
		}
		s.Handler(gw).ServeHTTP(w, r)
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down, ending hung requests.
func (s *GeminiServer) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

type geminiWire struct {
	s        *GeminiServer
	header   http.Header
	model    string
	computer bool
	excluded []string
	schema   bool
}

type gemPart struct {
	Text       string `json:"text"`
	Thought    bool   `json:"thought"`
	InlineData *struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FunctionCall *struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string         `json:"id"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
		Parts    []struct {
			InlineData *struct {
				MIMEType string `json:"mimeType"`
				Data     string `json:"data"`
			} `json:"inlineData"`
		} `json:"parts"`
	} `json:"functionResponse"`
}

type gemRequest struct {
	Contents []struct {
		Role  string    `json:"role"`
		Parts []gemPart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []gemPart `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		ComputerUse *struct {
			Environment                 string   `json:"environment"`
			ExcludedPredefinedFunctions []string `json:"excludedPredefinedFunctions"`
		} `json:"computerUse"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMIMEType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

// Parse implements Wire.
func (gw *geminiWire) Parse(body []byte) (Parsed, error) {
	if gw.header.Get("X-Goog-Api-Key") == "" {
		return Parsed{}, errGoogKey
	}
	var req gemRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return Parsed{}, fmt.Errorf("invalid JSON payload: %w", err)
	}
	if len(req.Contents) == 0 {
		return Parsed{}, errors.New("contents is not specified")
	}
	if err := gw.tools(&req); err != nil {
		return Parsed{}, err
	}
	gp := &gemParse{}
	if si := req.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			gp.texts = append(gp.texts, p.Text)
		}
	}
	for i, c := range req.Contents {
		if err := gp.content(i, c.Role, c.Parts); err != nil {
			return Parsed{}, err
		}
	}
	if req.Contents[len(req.Contents)-1].Role != "user" {
		return Parsed{}, errors.New("contents: the last turn must be a user turn")
	}
	if len(gp.open) > 0 {
		return Parsed{}, fmt.Errorf("contents: function calls %v of the last model turn have no functionResponse", gp.open)
	}
	if gp.lastImage != "" {
		img, err := DecodeImage(gp.lastImage)
		if err != nil {
			return Parsed{}, err
		}
		gp.p.Image = img
	}
	gp.p.Prompt = strings.Join(gp.texts, "\n")
	if gw.schema {
		gp.p.Schema = req.GenerationConfig.ResponseJSONSchema
	}
	return gp.p, nil
}

// tools checks the computerUse tool and the generation config.
func (gw *geminiWire) tools(req *gemRequest) error {
	for i, t := range req.Tools {
		cu := t.ComputerUse
		if cu == nil {
			continue
		}
		gw.computer = true
		if !slices.Contains([]string{"ENVIRONMENT_DESKTOP", "ENVIRONMENT_BROWSER", "ENVIRONMENT_MOBILE"}, cu.Environment) {
			return fmt.Errorf("tools[%d].computerUse.environment: %q is not a valid environment", i, cu.Environment)
		}
		for _, f := range cu.ExcludedPredefinedFunctions {
			if !slices.Contains(geminiFunctions, f) {
				return fmt.Errorf("tools[%d].computerUse.excludedPredefinedFunctions: %q is not a predefined function", i, f)
			}
		}
		gw.excluded = cu.ExcludedPredefinedFunctions
	}
	if len(req.GenerationConfig.ResponseJSONSchema) > 0 {
		if req.GenerationConfig.ResponseMIMEType != "application/json" {
			return errors.New("generationConfig.responseJsonSchema requires responseMimeType application/json")
		}
		gw.schema = true
	}
	return nil
}

var errGoogKey = errors.New("API key not valid: send it in the x-goog-api-key header")

// gemParse walks a request's contents.
type gemParse struct {
	p         Parsed
	texts     []string
	lastImage string
	// open are the function calls of the last model turn not yet answered,
	// by name and id; confirm the ones needing a safety acknowledgement.
	open    []string
	confirm map[string]bool
}

func callKey(name, id string) string { return name + "#" + id }

func (gp *gemParse) content(i int, role string, parts []gemPart) error {
	want := map[bool]string{true: "user", false: "model"}[i%2 == 0]
	if role != want {
		return fmt.Errorf("contents[%d].role: %q where %q was expected: turns alternate user and model, starting with user", i, role, want)
	}
	if len(parts) == 0 {
		return fmt.Errorf("contents[%d].parts: must not be empty", i)
	}
	if role == "model" {
		gp.open, gp.confirm = nil, map[string]bool{}
	}
	for j, p := range parts {
		if err := gp.part(fmt.Sprintf("contents[%d].parts[%d]", i, j), role, p); err != nil {
			return err
		}
	}
	if role == "user" && len(gp.open) > 0 {
		return fmt.Errorf("contents[%d]: function calls %v of the previous model turn have no functionResponse", i, gp.open)
	}
	return nil
}

func (gp *gemParse) part(where, role string, p gemPart) error {
	switch {
	case p.FunctionCall != nil:
		if role != "model" {
			return fmt.Errorf("%s: functionCall parts belong to model turns", where)
		}
		k := callKey(p.FunctionCall.Name, p.FunctionCall.ID)
		gp.open = append(gp.open, k)
		if sd, ok := p.FunctionCall.Args["safety_decision"].(map[string]any); ok && sd["decision"] == "require_confirmation" {
			gp.confirm[k] = true
		}
	case p.FunctionResponse != nil:
		return gp.response(where, role, p)
	case p.InlineData != nil:
		if role != "user" {
			return fmt.Errorf("%s: inline images belong to user turns here", where)
		}
		return gp.image(where, p.InlineData.MIMEType, p.InlineData.Data)
	default:
		if !p.Thought {
			gp.texts = append(gp.texts, p.Text)
		}
	}
	return nil
}

// response checks a functionResponse against the open calls.
func (gp *gemParse) response(where, role string, p gemPart) error {
	r := p.FunctionResponse
	if role != "user" {
		return fmt.Errorf("%s: functionResponse parts belong to user turns", where)
	}
	k := callKey(r.Name, r.ID)
	i := slices.Index(gp.open, k)
	if i < 0 {
		return fmt.Errorf("%s: functionResponse %s (id %q) answers no function call of the previous model turn", where, r.Name, r.ID)
	}
	gp.open = slices.Delete(gp.open, i, i+1)
	if gp.confirm[k] && r.Response["safety_acknowledgement"] != "true" {
		return fmt.Errorf("%s: the function call %s required confirmation: its response must carry safety_acknowledgement \"true\"", where, r.Name)
	}
	if out, _ := json.Marshal(r.Response); len(out) > 2 {
		gp.texts = append(gp.texts, string(out))
	}
	for k, rp := range r.Parts {
		if rp.InlineData == nil {
			return fmt.Errorf("%s.parts[%d]: only inlineData is supported", where, k)
		}
		if err := gp.image(fmt.Sprintf("%s.parts[%d]", where, k), rp.InlineData.MIMEType, rp.InlineData.Data); err != nil {
			return err
		}
	}
	return nil
}

func (gp *gemParse) image(where, mime, data string) error {
	if !strings.HasPrefix(mime, "image/") {
		return fmt.Errorf("%s.inlineData.mimeType: %q is not an image type", where, mime)
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return fmt.Errorf("%s.inlineData.data: not base64: %w", where, err)
	}
	gp.p.Images++
	gp.lastImage = data
	return nil
}

// WriteError implements Wire with Google's error body.
func (gw *geminiWire) WriteError(w http.ResponseWriter, rep Reply) {
	status := rep.HTTPStatus
	if status == http.StatusBadRequest && strings.Contains(rep.Result, errGoogKey.Error()) {
		status = http.StatusUnauthorized
	}
	msg := rep.Result
	if msg == "" {
		msg = "scripted error " + strconv.Itoa(status)
	}
	names := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
	st, ok := names[status]
	if !ok {
		st = "INTERNAL"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}

// WriteReply implements Wire.
func (gw *geminiWire) WriteReply(w http.ResponseWriter, t Turn, rep Reply, inputTokens int) {
	var parts []map[string]any
	switch {
	case gw.schema && rep.Answer != nil:
		ans := map[string]any{}
		for k, v := range rep.Answer {
			ans[k] = v
		}
		if _, ok := ans["found"]; ok && rep.Box != nil {
			ans["box"] = BoxIn(geom.ProfileFor(gw.model), *rep.Box, t.ImageSize)
		}
		b, _ := json.Marshal(ans)
		parts = append(parts, map[string]any{"text": string(b)})
	case gw.computer && rep.Raw == "" && len(rep.Actions) > 0:
		calls, err := gw.calls(t, rep)
		if err != nil {
			gw.WriteError(w, Reply{HTTPStatus: http.StatusInternalServerError, Result: "fakellm: " + err.Error()})
			return
		}
		if rep.Observation != "" {
			parts = append(parts, map[string]any{"text": rep.Observation})
		}
		parts = append(parts, calls...)
	default:
		parts = append(parts, map[string]any{"text": closingText(rep)})
	}
	raw, _ := json.Marshal(parts)
	out := EstimateOutputTokens(string(raw))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": inputTokens, "candidatesTokenCount": out, "totalTokenCount": inputTokens + out},
		"modelVersion":  gw.model,
		"responseId":    fmt.Sprintf("resp_fake_%d", t.Calls),
	})
}

// closingText is a reply without actions as a computer-use model writes it.
func closingText(rep Reply) string {
	if rep.Raw != "" {
		return rep.Raw
	}
	switch st := StatusOf(rep); {
	case rep.Ask != nil:
		return "QUESTION: " + rep.Ask.Question
	case st == llm.Blocked:
		return "BLOCKED: " + rep.Result
	case st == llm.Failed:
		return "FAILED: " + rep.Result
	}
	return rep.Result
}

// calls renders the brain's actions as predefined function calls: a type
// types at its own point (At) or the last action's, pressing Enter when a
// Return key follows it.
func (gw *geminiWire) calls(t Turn, rep Reply) ([]map[string]any, error) {
	grid := func(p image.Point) (float64, float64) {
		g := func(v, side int) float64 {
			return math.Min(999, math.Max(0, math.Round(float64(v)*1000/float64(max(side, 1)))))
		}
		return g(p.X, t.ImageSize.W), g(p.Y, t.ImageSize.H)
	}
	var out []map[string]any
	var last *image.Point
	acts := rep.Actions
	for i := 0; i < len(acts); i++ {
		a := acts[i]
		name, args := "", map[string]any{}
		if a.At != nil {
			last = a.At
			args["x"], args["y"] = grid(*a.At)
		}
		switch a.Kind {
		case action.Click:
			name = "click_at"
		case action.Move:
			name = "hover_at"
		case action.TypeText: // at its own point (At), or where the last action was
			if last == nil {
				return nil, errors.New("a Gemini computer-use model types at a point: give the brain a click before the text")
			}
			name = "type_text_at"
			args["x"], args["y"] = grid(*last)
			args["text"], args["clear_before_typing"], args["press_enter"] = a.Text, false, false
			if i+1 < len(acts) && acts[i+1].Kind == action.KeyPress && len(acts[i+1].Keys) == 1 && acts[i+1].Keys[0] == "Return" {
				args["press_enter"] = true
				i++
			}
		case action.KeyPress:
			name, args["keys"] = "key_combination", strings.Join(a.Keys, "+")
		case action.Scroll:
			name, args["direction"], args["magnitude"] = "scroll_at", a.Direction, 200*max(a.Amount, 1)
		case action.Drag:
			name = "drag_and_drop"
			args["destination_x"], args["destination_y"] = grid(*a.To)
		case action.Wait:
			name = "wait_5_seconds"
		default:
			return nil, fmt.Errorf("gemini computer use has no function for %q", a.Kind)
		}
		if slices.Contains(gw.excluded, name) {
			return nil, fmt.Errorf("the brain used %s, which the request excluded", name)
		}
		out = append(out, map[string]any{"functionCall": map[string]any{"id": fmt.Sprintf("fc_%d_%d", t.Calls, len(out)+1), "name": name, "args": args}})
	}
	if gw.s.Confirm != nil && len(out) > 0 {
		if why := gw.s.Confirm(t); why != "" {
			fc := out[0]["functionCall"].(map[string]any)
			fc["args"].(map[string]any)["safety_decision"] = map[string]any{"decision": "require_confirmation", "explanation": why}
		}
	}
	return out, nil
}
