package vision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// ErrBadAnswer wraps the error of a call whose answer did not match its
// shape twice (the first answer and the re-ask). The error's text carries the
// model's last answer.
var ErrBadAnswer = errors.New("the model's answer does not match the expected shape")

// ErrBadSchema wraps a caller's query schema that is not a usable JSON Schema.
var ErrBadSchema = errors.New("the answer schema is not a valid JSON Schema")

// AnswerError is what a Model returns when the model answered, but not with
// JSON the Service can read (no JSON object in its text): Text is the model's
// text, Problem says what is wrong. The Service re-asks once on it.
type AnswerError struct {
	Text    string
	Problem string
}

// Error names the problem and quotes the answer (clipped).
func (e *AnswerError) Error() string {
	return fmt.Sprintf("%s: %s (the model answered %q)", llm.ErrBadOutput, e.Problem, clip(e.Text, 500))
}

// Unwrap makes an AnswerError match llm.ErrBadOutput.
func (e *AnswerError) Unwrap() error { return llm.ErrBadOutput }

// NativeLocator is a Model with a trained grounding format of its own (UI-TARS,
// Qwen-VL). LocateNative asks in that format and translates the answer into
// the locate shape {"found", "box", "reason"}, the box in the model's
// Profile; an answer it cannot read is an *AnswerError. The Service uses it
// for Locate instead of Ask when the locating model has it.
type NativeLocator interface {
	LocateNative(ctx context.Context, img llm.Image, target string) (json.RawMessage, llm.Usage, error)
}

// Service implements Seer over two models: Locate asks the grounding model,
// Query and Assert the main one. It is safe for concurrent use when its
// models are.
type Service struct {
	main, ground Model
}

var _ Seer = (*Service)(nil)

// NewService returns a Service asking main, and ground for Locate (nil: main).
// main must not be nil.
func NewService(main, ground Model) (*Service, error) {
	if main == nil {
		return nil, errors.New("vision: no model: set " + config.Vars("Provider", "Model", "APIKey"))
	}
	if ground == nil {
		ground = main
	}
	return &Service{main: main, ground: ground}, nil
}

// LocateModel is the model Locate asks.
func (s *Service) LocateModel() Model { return s.ground }

// AskProfile is the profile of the model Query and Assert ask: prepare
// their screenshots for it (imaging.Options.Profile).
func (s *Service) AskProfile() geom.Profile { return s.main.Profile() }

// LocateProfile is the profile of the model Locate asks: prepare its
// screenshots for it.
func (s *Service) LocateProfile() geom.Profile { return s.ground.Profile() }

// System is the system text of every plain-vision call.
const System = "You look at one screenshot of a computer desktop and answer one question about it, precisely and only from what is visible. " +
	"Answer with one JSON object that matches the given JSON Schema, and nothing else."

// Answer schemas the model must produce (the README documents them).
var (
	LocateSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"found":{"type":"boolean","description":"whether the element is visible on the screenshot"},` +
		`"box":{"type":"array","items":{"type":"number"},"description":"the element's bounding box [x1, y1, x2, y2] in the stated coordinate convention; [0, 0, 0, 0] when not found"},` +
		`"reason":{"type":"string","description":"what you see that answers the question"}},` +
		`"required":["found","box","reason"],"additionalProperties":false}`)
	VerdictSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"pass":{"type":"boolean","description":"whether the statement is true of the screenshot"},` +
		`"reason":{"type":"string","description":"what you see that decides it"}},` +
		`"required":["pass","reason"],"additionalProperties":false}`)
)

// DefaultQuerySchema is the schema of a query's data when the caller gives none.
var DefaultQuerySchema = json.RawMessage(`{"type":"string"}`)

// QuerySchema wraps a caller's data schema into the query answer shape
// {"data": <schema>, "reason": string}.
func QuerySchema(data json.RawMessage) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"data":` + string(data) +
		`,"reason":{"type":"string","description":"what you see that answers the question"}},"required":["data","reason"],"additionalProperties":false}`)
}

// BoxConvention states how a model of profile p writes a box.
func BoxConvention(p geom.Profile) string {
	order := "[x1, y1, x2, y2]: left, top, right, bottom"
	if p.Order == geom.YX {
		order = "[y1, x1, y2, x2]: top, left, bottom, right (vertical first)"
	}
	unit := "pixels of the screenshot exactly as you receive it"
	switch {
	case p.Divisor == 1:
		unit = "fractions 0-1 of the screenshot's width and height"
	case p.Divisor != 0:
		unit = fmt.Sprintf("positions normalized to 0-%g over the screenshot's width and height", p.Divisor)
	}
	return "The box is " + order + ", in " + unit + "."
}

// Locate finds target on img with the grounding model and returns its box in
// image pixels of img.Frame.
func (s *Service) Locate(ctx context.Context, img llm.Image, target string) (Location, llm.Usage, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return Location{}, llm.Usage{}, errors.New("the target is empty: describe the element in words, e.g. \"the Submit button\"")
	}
	p := s.ground.Profile()
	prompt := fmt.Sprintf("Find this element on the screenshot: %s\n%s %s\n"+
		"Answer {\"found\": true, \"box\": [...], \"reason\": \"...\"} with the element's bounding box, "+
		"or {\"found\": false, \"box\": [0, 0, 0, 0], \"reason\": \"...\"} when it is not visible.",
		target, llm.ImageSizeLine(img.Frame.ImageSize()), BoxConvention(p))
	var loc Location
	parse := func(raw json.RawMessage) error {
		var err error
		loc, err = readLocation(raw, p, img.Frame)
		return err
	}
	var u llm.Usage
	var err error
	if nl, ok := s.ground.(NativeLocator); ok {
		u, err = s.ask(ctx, "locate", parse, func(ctx context.Context, _ string) (json.RawMessage, llm.Usage, error) {
			return nl.LocateNative(ctx, img, target)
		}, prompt)
	} else {
		u, err = s.ask(ctx, "locate", parse, func(ctx context.Context, pr string) (json.RawMessage, llm.Usage, error) {
			return s.ground.Ask(ctx, img, System, pr, LocateSchema)
		}, prompt)
	}
	if err != nil {
		return Location{}, u, err
	}
	loc.Frame = img.Frame.ID
	return loc, u, nil
}

// Query answers question about img with the main model; the answer's data
// is valid against schema (nil: DefaultQuerySchema).
func (s *Service) Query(ctx context.Context, img llm.Image, question string, schema json.RawMessage) (Answer, llm.Usage, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return Answer{}, llm.Usage{}, errors.New("the question is empty: ask what you want to read from the screen")
	}
	if len(schema) == 0 {
		schema = DefaultQuerySchema
	}
	rs, err := compileSchema(schema)
	if err != nil {
		return Answer{}, llm.Usage{}, err
	}
	prompt := fmt.Sprintf("Question about the screenshot: %s\nAnswer {\"data\": <the answer>, \"reason\": \"...\"}, where data matches this JSON Schema: %s",
		question, schema)
	var ans Answer
	parse := func(raw json.RawMessage) error {
		var err error
		ans, err = readAnswer(raw, rs)
		return err
	}
	u, err := s.ask(ctx, "query", parse, func(ctx context.Context, pr string) (json.RawMessage, llm.Usage, error) {
		return s.main.Ask(ctx, img, System, pr, QuerySchema(schema))
	}, prompt)
	return ans, u, err
}

// Assert decides whether assertion holds on img with the main model.
func (s *Service) Assert(ctx context.Context, img llm.Image, assertion string) (Verdict, llm.Usage, error) {
	assertion = strings.TrimSpace(assertion)
	if assertion == "" {
		return Verdict{}, llm.Usage{}, errors.New("the assertion is empty: state what should be true of the screen")
	}
	prompt := fmt.Sprintf("Statement about the screenshot: %s\nAnswer {\"pass\": true, \"reason\": \"...\"} if the statement is true of what is visible, else {\"pass\": false, \"reason\": \"...\"}.", assertion)
	var v Verdict
	parse := func(raw json.RawMessage) error {
		var err error
		v, err = readVerdict(raw)
		return err
	}
	u, err := s.ask(ctx, "assert", parse, func(ctx context.Context, pr string) (json.RawMessage, llm.Usage, error) {
		return s.main.Ask(ctx, img, System, pr, VerdictSchema)
	}, prompt)
	return v, u, err
}

// ask calls the model with prompt and parses its answer; a non-matching
// answer (parse fails, or the model returns an *AnswerError) is re-asked once
// with the problem stated, then the call fails with ErrBadAnswer and the
// model's text.
func (s *Service) ask(ctx context.Context, what string, parse func(json.RawMessage) error,
	call func(ctx context.Context, prompt string) (json.RawMessage, llm.Usage, error), prompt string) (llm.Usage, error) {
	var total llm.Usage
	pr := prompt
	for attempt := 0; ; attempt++ {
		raw, u, err := call(ctx, pr)
		total = total.Add(u)
		text, problem := string(raw), ""
		var ae *AnswerError
		switch {
		case errors.As(err, &ae):
			text, problem = ae.Text, ae.Problem
		case err != nil:
			return total, err
		default:
			if perr := parse(raw); perr == nil {
				return total, nil
			} else {
				problem = perr.Error()
			}
		}
		if attempt == 1 {
			return total, fmt.Errorf("%w (%s, asked twice): %s; the model answered: %s", ErrBadAnswer, what, problem, clip(text, 1000))
		}
		pr = prompt + "\n\nYour previous answer was:\n" + clip(text, 2000) + "\nIt could not be used: " + problem +
			"\nAnswer again with one JSON object of exactly the requested shape."
	}
}

// readLocation reads a locate answer and converts its box from profile p's
// convention to image pixels of f through geom (ArrayPoint, SpaceToImage).
func readLocation(raw json.RawMessage, p geom.Profile, f geom.Frame) (Location, error) {
	var a struct {
		Found  *bool            `json:"found"`
		Box    *json.RawMessage `json:"box"`
		Reason *string          `json:"reason"`
	}
	if err := strictObject(raw, &a, "found", "box", "reason"); err != nil {
		return Location{}, err
	}
	if a.Found == nil || a.Reason == nil {
		return Location{}, errors.New(`the answer needs "found" (true or false) and "reason" (a string)`)
	}
	loc := Location{Found: *a.Found, Reason: *a.Reason}
	if !loc.Found {
		return loc, nil
	}
	var nums []float64
	if a.Box == nil || json.Unmarshal(*a.Box, &nums) != nil || len(nums) != 4 {
		return Location{}, errors.New(`"found" is true but "box" is not 4 numbers [x1, y1, x2, y2]`)
	}
	b, err := boxToImage(nums, p, f)
	if err != nil {
		return Location{}, err
	}
	loc.Box = b
	return loc, nil
}

// boxToImage maps a box of 4 numbers in p's convention to image pixels of f,
// corners ordered and cut to the image.
func boxToImage(nums []float64, p geom.Profile, f geom.Frame) (Box, error) {
	x1, y1, err := geom.ArrayPoint(nums[:2], p.Order)
	if err != nil {
		return Box{}, err
	}
	x2, y2, err := geom.ArrayPoint(nums[2:], p.Order)
	if err != nil {
		return Box{}, err
	}
	a := geom.SpaceToImage(p.Space(), x1, y1, f)
	b := geom.SpaceToImage(p.Space(), x2, y2, f)
	img := f.ImageSize()
	w, h := float64(img.W), float64(img.H)
	box := Box{
		X1: clampTo(math.Min(a.X, b.X), w), Y1: clampTo(math.Min(a.Y, b.Y), h),
		X2: clampTo(math.Max(a.X, b.X), w), Y2: clampTo(math.Max(a.Y, b.Y), h),
	}
	if box.X1 >= w || box.Y1 >= h || box.X2 <= 0 || box.Y2 <= 0 || (box.X2 == box.X1 && box.Y2 == box.Y1 && box.X1 == 0 && box.Y1 == 0) {
		return Box{}, fmt.Errorf("the box %v lies outside the %dx%d screenshot (%s)", nums, img.W, img.H, BoxConvention(p))
	}
	return box, nil
}

func clampTo(v, hi float64) float64 { return math.Max(0, math.Min(v, hi)) }

// readVerdict reads {"pass", "reason"}.
func readVerdict(raw json.RawMessage) (Verdict, error) {
	var a struct {
		Pass   *bool   `json:"pass"`
		Reason *string `json:"reason"`
	}
	if err := strictObject(raw, &a, "pass", "reason"); err != nil {
		return Verdict{}, err
	}
	if a.Pass == nil || a.Reason == nil {
		return Verdict{}, errors.New(`the answer needs "pass" (true or false) and "reason" (a string)`)
	}
	return Verdict{Pass: *a.Pass, Reason: *a.Reason}, nil
}

// readAnswer reads {"data", "reason"} and validates data against rs.
func readAnswer(raw json.RawMessage, rs *jsonschema.Resolved) (Answer, error) {
	var a struct {
		Data   json.RawMessage `json:"data"`
		Reason *string         `json:"reason"`
	}
	if err := strictObject(raw, &a, "data", "reason"); err != nil {
		return Answer{}, err
	}
	if a.Data == nil || a.Reason == nil {
		return Answer{}, errors.New(`the answer needs "data" (matching the schema) and "reason" (a string)`)
	}
	var v any
	if err := json.Unmarshal(a.Data, &v); err != nil {
		return Answer{}, fmt.Errorf(`"data" is not JSON: %v`, err)
	}
	if err := rs.Validate(v); err != nil {
		return Answer{}, fmt.Errorf(`"data" does not match the schema: %v`, err)
	}
	return Answer{Data: a.Data, Reason: *a.Reason}, nil
}

// strictObject unmarshals raw (a JSON object) into v and rejects keys other
// than the allowed ones.
func strictObject(raw json.RawMessage, v any, allowed ...string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf("the answer is not a JSON object (want keys %s)", strings.Join(allowed, ", "))
	}
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return fmt.Errorf("the answer has the unexpected key %q (want exactly %s)", k, strings.Join(allowed, ", "))
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("the answer's fields have the wrong types: %v", err)
	}
	return nil
}

// compileSchema parses and resolves a caller's JSON Schema.
func compileSchema(schema json.RawMessage) (*jsonschema.Resolved, error) {
	var sc jsonschema.Schema
	if err := json.Unmarshal(schema, &sc); err != nil {
		return nil, fmt.Errorf("%w: %v (give a JSON Schema object such as {\"type\": \"number\"})", ErrBadSchema, err)
	}
	rs, err := sc.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	return rs, nil
}

// ValidateSchema reports whether schema is a JSON Schema Query can use.
func ValidateSchema(schema json.RawMessage) error {
	_, err := compileSchema(schema)
	return err
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
