// Package vision asks a multimodal model about one screenshot through the
// provider's plain vision API (not its computer-use tool): where an element
// is (Locate), what the screen says (Query), and whether a statement about
// it holds (Assert). It is the layer under the gui_locate, gui_query,
// gui_assert and gui_wait_for tools, `target` on the input tools, and flows.
//
// The answer shapes the model must produce are part of the public contract
// (README): locate {"found", "box": [x1,y1,x2,y2], "reason"} with the box in
// the model's coordinate convention; assert {"pass", "reason"}; query
// {"data": <caller's schema>, "reason"}. An answer that does not match is
// re-asked once, then the call fails with an error carrying the model's text.
package vision

import (
	"context"
	"encoding/json"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// Box is a rectangle in image pixels of one screenshot's frame: X1,Y1 is the
// top-left corner, X2,Y2 the bottom-right (exclusive).
type Box struct {
	X1 float64 `json:"x1"`
	Y1 float64 `json:"y1"`
	X2 float64 `json:"x2"`
	Y2 float64 `json:"y2"`
}

// Center is the middle of b.
func (b Box) Center() geom.ImagePoint {
	return geom.ImagePoint{X: (b.X1 + b.X2) / 2, Y: (b.Y1 + b.Y2) / 2}
}

// Location is the answer to Locate. Found false with a Reason is a normal
// answer, not an error.
type Location struct {
	Found  bool   `json:"found"`
	Box    Box    `json:"box"`      // image pixels of Frame (zero when not found)
	Reason string `json:"reason"`   // the model's words
	Frame  string `json:"frame_id"` // the frame Box refers to
}

// Answer is the answer to Query: Data is valid against the caller's schema.
type Answer struct {
	Data   json.RawMessage `json:"data"`
	Reason string          `json:"reason"`
}

// Verdict is the answer to Assert (and to one check of a wait-for).
type Verdict struct {
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

// Model is one plain-vision model call: the screenshot, a system text, a
// prompt and the JSON Schema the answer must match; it returns the answer's
// JSON as the model gave it (the provider's structured-output mechanism when
// it has one, else JSON parsed from text). Providers implement it: OpenAI-
// compatible Chat Completions (response_format json_schema, falling back to
// text for servers that reject it) and Anthropic Messages (a forced tool
// call whose input_schema is the answer schema).
type Model interface {
	Ask(ctx context.Context, img llm.Image, system, prompt string, schema json.RawMessage) (json.RawMessage, llm.Usage, error)
	// Profile is the model's coordinate convention, which locate boxes are
	// given in and which geom resolves to image pixels.
	Profile() geom.Profile
}

// Seer is what the tools and flows use. *Service implements it; tests may
// fake it.
type Seer interface {
	Locate(ctx context.Context, img llm.Image, target string) (Location, llm.Usage, error)
	Query(ctx context.Context, img llm.Image, question string, schema json.RawMessage) (Answer, llm.Usage, error)
	Assert(ctx context.Context, img llm.Image, assertion string) (Verdict, llm.Usage, error)
}
