package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/vision"
)

// VisionModel is vision.Model over Chat Completions: one user message with
// the prompt and the screenshot, and response_format json_schema with the
// answer schema. A server that rejects response_format (HTTP 400 or 422 on a
// request carrying it) is asked again without it, the schema stated in the
// prompt, and the answer's JSON is read from its text; the model remembers
// that and sends no response_format to that server again. It is safe for
// concurrent use.
type VisionModel struct {
	c       *client
	profile geom.Profile
	// noFormat is set once the server has rejected response_format.
	noFormat atomic.Bool
}

var _ vision.Model = (*VisionModel)(nil)

// NewVisionModel returns the plain-vision model for cfg (same endpoint rules
// as NewGeneric; the profile is cfg.Profile or the table row of cfg.Model).
// UI-TARS and Qwen-VL models get a model that also implements
// vision.NativeLocator: they locate in their trained grounding format.
func NewVisionModel(cfg llm.Config) (vision.Model, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	m := &VisionModel{c: c, profile: c.profile(llm.AdapterGeneric)}
	switch nativeFormat(cfg.Model, m.profile) {
	case "ui-tars":
		return &tarsVision{m}, nil
	case "qwen":
		return &qwenVision{m}, nil
	}
	return m, nil
}

// nativeFormat names the grounding format a model was trained on ("" none).
func nativeFormat(model string, p geom.Profile) string {
	m := strings.ToLower(model)
	switch {
	case p.Name == "ui-tars" || p.Name == "ui-tars-1.5":
		return "ui-tars"
	case strings.Contains(m, "qwen") && strings.Contains(m, "vl"):
		return "qwen"
	}
	return ""
}

// Profile returns the coordinate convention of the model's boxes.
func (m *VisionModel) Profile() geom.Profile { return m.profile }

// Ask implements vision.Model.
func (m *VisionModel) Ask(ctx context.Context, img llm.Image, system, prompt string, schema json.RawMessage) (json.RawMessage, llm.Usage, error) {
	if len(img.Data) == 0 {
		return nil, llm.Usage{}, errors.New("a plain-vision call needs a screenshot: the image is empty")
	}
	var sc any
	if err := json.Unmarshal(schema, &sc); err != nil {
		return nil, llm.Usage{}, fmt.Errorf("the answer schema is not JSON: %w", err)
	}
	if m.noFormat.Load() {
		return m.askText(ctx, img, system, prompt, schema)
	}
	format := oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: sc},
	}}
	ex, err := m.c.callFormat(ctx, m.messages(img, system, prompt), &imageRefs{}, format)
	if !rejectsFormat(err) {
		if err != nil {
			return nil, ex.Usage, err
		}
		raw, err := answerJSON(ex.Text)
		return raw, ex.Usage, err
	}
	raw, u, err := m.askText(ctx, img, system, prompt, schema)
	var ae *vision.AnswerError
	if err == nil || errors.As(err, &ae) {
		// The server answered without response_format what it refused with
		// it: it does not support it, so it is not sent again.
		m.noFormat.Store(true)
	}
	return raw, ex.Usage.Add(u), err
}

// askText asks with the schema stated in the prompt and reads the JSON from
// the answer's text.
func (m *VisionModel) askText(ctx context.Context, img llm.Image, system, prompt string, schema json.RawMessage) (json.RawMessage, llm.Usage, error) {
	text := prompt + "\nAnswer with one JSON object matching this JSON Schema, and nothing else: " + string(schema)
	ex, err := m.c.call(ctx, m.messages(img, system, text), &imageRefs{})
	if err != nil {
		return nil, ex.Usage, err
	}
	raw, err := answerJSON(ex.Text)
	return raw, ex.Usage, err
}

// messages is the system message and one user message: prompt, then image.
func (m *VisionModel) messages(img llm.Image, system, prompt string) []oai.ChatCompletionMessageParamUnion {
	var msgs []oai.ChatCompletionMessageParamUnion
	if system != "" {
		msgs = append(msgs, oai.SystemMessage(system))
	}
	return append(msgs, oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
		oai.TextContentPart(prompt), imagePart(img, m.c.imageDetail(), nil),
	}))
}

// rejectsFormat reports whether err is a server refusing the request as
// malformed (400, 422), as servers without structured output do.
func rejectsFormat(err error) bool {
	var ae *llm.APIError
	return errors.As(err, &ae) && (ae.StatusCode == 400 || ae.StatusCode == 422)
}

// answerJSON reads the JSON object of an answer text (fenced or with prose
// around it), or returns a *vision.AnswerError carrying the text.
func answerJSON(text string) (json.RawMessage, error) {
	raw, err := llm.ExtractJSON(text)
	if err != nil {
		return nil, &vision.AnswerError{Text: text, Problem: "the answer holds no JSON object"}
	}
	return raw, nil
}

// tarsVision is a UI-TARS model: it locates with UI-TARS's grounding prompt
// and reads the point (or box) it answers.
type tarsVision struct{ *VisionModel }

var _ vision.NativeLocator = (*tarsVision)(nil)

// LocateNative implements vision.NativeLocator with UI-TARS's grounding
// prompt; the answer is a point "(x,y)" (also in box tokens or <point>x
// y</point>), returned as a box of no size at that point; an answer with no
// number at all is "not found" with the model's words as the reason (UI-TARS
// has no not-found answer of its own, and cannot tell a missing element).
func (t *tarsVision) LocateNative(ctx context.Context, img llm.Image, target string) (json.RawMessage, llm.Usage, error) {
	prompt := "Output only the coordinate of one point in your response. What element matches the following task: " + target
	ex, err := t.c.call(ctx, t.messages(img, "", prompt), &imageRefs{})
	if err != nil {
		return nil, ex.Usage, err
	}
	nums := numbers(ex.Text)
	switch len(nums) {
	case 0:
		// UI-TARS always points somewhere when it can; words alone mean it did not.
		return locateShape(false, []float64{0, 0, 0, 0}, "UI-TARS gave no point: "+clip(ex.Text, 200)), ex.Usage, nil
	case 2:
		nums = append(nums, nums...)
	case 4:
	default:
		return nil, ex.Usage, &vision.AnswerError{Text: ex.Text, Problem: "the grounding answer is not one point (x,y)"}
	}
	return locateShape(true, nums, "UI-TARS grounding: "+clip(ex.Text, 200)), ex.Usage, nil
}

// qwenVision is a Qwen-VL model: it locates with Qwen's grounding prompt and
// reads its [{"bbox_2d": [x1, y1, x2, y2], "label": ...}] answer.
type qwenVision struct{ *VisionModel }

var _ vision.NativeLocator = (*qwenVision)(nil)

// LocateNative implements vision.NativeLocator with Qwen-VL's grounding
// prompt; an empty list means not found.
func (q *qwenVision) LocateNative(ctx context.Context, img llm.Image, target string) (json.RawMessage, llm.Usage, error) {
	prompt := "Locate " + target + " in the image, output its bbox coordinates using JSON format."
	ex, err := q.c.call(ctx, q.messages(img, "", prompt), &imageRefs{})
	if err != nil {
		return nil, ex.Usage, err
	}
	var items []struct {
		Box   []float64 `json:"bbox_2d"`
		Label string    `json:"label"`
	}
	body := ex.Text
	if i, j := strings.Index(body, "["), strings.LastIndex(body, "]"); i >= 0 && j > i {
		body = body[i : j+1]
	}
	if err := json.Unmarshal([]byte(body), &items); err != nil {
		return nil, ex.Usage, &vision.AnswerError{Text: ex.Text, Problem: `the grounding answer is not [{"bbox_2d": [x1, y1, x2, y2], "label": "..."}]`}
	}
	if len(items) == 0 {
		return locateShape(false, []float64{0, 0, 0, 0}, "Qwen-VL grounding found nothing"), ex.Usage, nil
	}
	if len(items[0].Box) != 4 {
		return nil, ex.Usage, &vision.AnswerError{Text: ex.Text, Problem: "bbox_2d needs 4 numbers"}
	}
	return locateShape(true, items[0].Box, "Qwen-VL grounding: "+items[0].Label), ex.Usage, nil
}

func locateShape(found bool, box []float64, reason string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"found": found, "box": box, "reason": reason})
	return b
}

// numbers returns the numbers in s, in order.
func numbers(s string) []float64 {
	var out []float64
	for _, m := range tarsNum.FindAllString(s, -1) {
		v, _ := strconv.ParseFloat(m, 64)
		out = append(out, v)
	}
	return out
}
