package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
)

// TextModel completes plain text over Chat Completions (memory summaries).
type TextModel struct{ c *client }

var _ llm.TextModel = (*TextModel)(nil)

// NewTextModel returns a text model for cfg (same endpoint rules as NewGeneric).
func NewTextModel(cfg llm.Config) (*TextModel, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	return &TextModel{c: c}, nil
}

// Complete sends system and prompt and returns the answer text.
func (t *TextModel) Complete(ctx context.Context, system, prompt string) (string, llm.Usage, error) {
	var msgs []oai.ChatCompletionMessageParamUnion
	if system != "" {
		msgs = append(msgs, oai.SystemMessage(system))
	}
	msgs = append(msgs, oai.UserMessage(prompt))
	ex, err := t.c.call(ctx, msgs, nil)
	if err != nil {
		return "", ex.Usage, err
	}
	return strings.TrimSpace(ex.Text), ex.Usage, nil
}

// Grounder finds named targets on a screenshot with one Chat Completions call;
// the answer is {"points": [...]} in the grounder model's profile.
type Grounder struct {
	c       *client
	profile geom.Profile
}

var _ llm.Grounder = (*Grounder)(nil)

// NewGrounder returns a grounder for cfg (GUI_AGENT_GROUNDING_MODEL); its
// profile is cfg.Profile or the table row of cfg.Model.
func NewGrounder(cfg llm.Config) (*Grounder, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Grounder{c: c, profile: c.profile(llm.AdapterGeneric)}, nil
}

// Profile returns the convention of the points Ground returns.
func (g *Grounder) Profile() geom.Profile { return g.profile }

// Ground returns one point (or box) per target in g's profile, nil for a target
// the model could not find. A malformed answer is an error wrapping llm.ErrBadOutput.
func (g *Grounder) Ground(ctx context.Context, img llm.Image, targets []string) ([]*action.Point, llm.Usage, error) {
	if len(targets) == 0 {
		return nil, llm.Usage{}, nil
	}
	if len(img.Data) == 0 {
		return nil, llm.Usage{}, fmt.Errorf("grounding needs a screenshot: the image is empty")
	}
	var list strings.Builder
	for i, t := range targets {
		fmt.Fprintf(&list, "%d. %s\n", i+1, t)
	}
	ex := "[412, 230]"
	if g.profile.Divisor != 0 {
		ex = "[215, 213]"
	}
	if g.profile.Divisor == 1 {
		ex = "[0.215, 0.213]"
	}
	if g.profile.Order == geom.YX {
		ex = "[213, 215]"
	}
	prompt := fmt.Sprintf(`Find each of these elements on the screenshot:
%s
%s %s
Answer with one JSON object and nothing else: {"points": [...]} with exactly %d entries in the order above; each entry is the element's centre as a point like %s, or null if the element is not visible.`,
		list.String(), llm.ImageSizeLine(img.Frame.ImageSize()), pointConvention(g.profile), len(targets), ex)
	refs := &imageRefs{}
	msgs := []oai.ChatCompletionMessageParamUnion{
		oai.SystemMessage("You locate user interface elements on screenshots precisely."),
		oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
			oai.TextContentPart(prompt), imagePart(img, g.c.imageDetail(), refs),
		}),
	}
	res, err := g.c.call(ctx, msgs, refs)
	if err != nil {
		return nil, res.Usage, err
	}
	pts, err := parsePoints(res.Text, len(targets), g.profile)
	return pts, res.Usage, err
}

// pointConvention states a profile's convention for a bare point.
func pointConvention(p geom.Profile) string {
	s := "Points are pixels of the screenshot, [x, y]."
	if p.Divisor != 0 {
		s = fmt.Sprintf("Points are normalized to 0-%g over the screenshot, [x, y].", p.Divisor)
	}
	if p.Order == geom.YX {
		s = strings.Replace(s, "[x, y]", "[y, x] (vertical first)", 1)
	}
	return s
}

func parsePoints(text string, n int, p geom.Profile) ([]*action.Point, error) {
	raw, err := llm.ExtractJSON(text)
	if err != nil {
		return nil, err
	}
	var ans struct {
		Points []json.RawMessage `json:"points"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("%w: the grounding answer does not parse as {\"points\": [...]}: %v", llm.ErrBadOutput, err)
	}
	if len(ans.Points) != n {
		return nil, fmt.Errorf("%w: the grounding answer has %d points for %d targets: give exactly one entry (or null) per target", llm.ErrBadOutput, len(ans.Points), n)
	}
	out := make([]*action.Point, n)
	for i, r := range ans.Points {
		if string(r) == "null" {
			continue
		}
		var v []float64
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("%w: points[%d] is %s, want [x, y], a box of 4 numbers, or null", llm.ErrBadOutput, i, clip(string(r), 40))
		}
		pt, err := action.ParsePoint(v, p.Space())
		if err != nil {
			return nil, fmt.Errorf("%w: points[%d] %v: %v (%s)", llm.ErrBadOutput, i, v, err, pointConvention(p))
		}
		out[i] = &pt
	}
	return out, nil
}
