package fakellm

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"regexp"
	"strings"

	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// Widget is an element a vision brain can see: the words that name it and
// its flat colour.
type Widget struct {
	Name  string // how answers name it ("the Submit button")
	Word  string // the word a description must contain (lower case)
	Color color.RGBA
}

// SampleAppWidgets are the sample application's widgets, by colour.
var SampleAppWidgets = []Widget{
	{"the Name field", "name", sampleapp.NameFieldColor.ToRGBA()},
	{"the Email field", "email", sampleapp.EmailFieldColor.ToRGBA()},
	{"the City field", "city", sampleapp.CityFieldColor.ToRGBA()},
	{"the Submit button", "submit", sampleapp.SubmitColor.ToRGBA()},
	{"the Next button", "next", sampleapp.NextColor.ToRGBA()},
	{"the OK button", "ok", sampleapp.OKColor.ToRGBA()},
	{"the Cancel button", "cancel", sampleapp.CancelColor.ToRGBA()},
	{"the red button", "red", sampleapp.RedButtonColor.ToRGBA()},
}

// Plain-vision prompt markers (internal/vision and the native grounding
// prompts of UI-TARS and Qwen-VL), with the words that follow them.
var (
	locateMarkers = []*regexp.Regexp{
		regexp.MustCompile(`Find this element on the screenshot: (.+)`),
		regexp.MustCompile(`What element matches the following task: (.+)`),
		regexp.MustCompile(`Locate (.+) in the image, output its bbox`),
	}
	assertMarker = regexp.MustCompile(`Statement about the screenshot: (.+)`)
	queryMarker  = regexp.MustCompile(`Question about the screenshot: (.+)`)
	schemaMarker = regexp.MustCompile(`data matches this JSON Schema: (.+)`)
)

// VisionBrain returns a Brain that answers plain-vision requests (locate,
// assert, query) from the screenshot it receives, the way a vision model
// would, by finding widgets by colour:
//   - locate: the widget whose word the description contains, its box, or
//     found false;
//   - assert: a statement naming a widget passes when the widget is visible
//     ("not" inverts it); one saying "submitted" or "confirmed" passes when a
//     status line shows under the Submit or OK button;
//   - query: with a number or integer schema, how many of the widgets are
//     visible; with an array schema, their names; otherwise their names
//     joined by commas.
//
// A request that is none of these gets found/pass false with a reason.
func VisionBrain(widgets []Widget) Brain {
	return func(t Turn) Reply {
		if t.Image == nil {
			return Reply{Answer: map[string]any{"found": false, "pass": false, "reason": "the request carried no screenshot"}}
		}
		for _, m := range locateMarkers {
			if g := m.FindStringSubmatch(t.Prompt); g != nil {
				return locateReply(t.Image, widgets, firstLine(g[1]))
			}
		}
		if g := assertMarker.FindStringSubmatch(t.Prompt); g != nil {
			pass, reason := judge(t.Image, widgets, firstLine(g[1]))
			return Reply{Answer: map[string]any{"pass": pass, "reason": reason}}
		}
		if g := queryMarker.FindStringSubmatch(t.Prompt); g != nil {
			return Reply{Answer: map[string]any{"data": queryData(t, widgets), "reason": "the widgets I can see"}}
		}
		return Reply{Answer: map[string]any{"found": false, "pass": false, "reason": "fakellm.VisionBrain did not recognise the request"}}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// mentioned returns the widget whose word is a word of desc.
func mentioned(desc string, widgets []Widget) (Widget, bool) {
	words := strings.FieldsFunc(strings.ToLower(desc), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, w := range widgets {
		for _, x := range words {
			if x == w.Word {
				return w, true
			}
		}
	}
	return Widget{}, false
}

func locateReply(img image.Image, widgets []Widget, target string) Reply {
	w, ok := mentioned(target, widgets)
	if !ok {
		return Reply{Answer: map[string]any{"found": false, "reason": fmt.Sprintf("I do not know what %q looks like", target)}}
	}
	box, ok := widgetBox(img, w.Color)
	if !ok {
		return Reply{Answer: map[string]any{"found": false, "reason": w.Name + " is not on the screen"}}
	}
	return Reply{Answer: map[string]any{"found": true, "reason": w.Name}, Box: &box}
}

// widgetBox finds a widget of flat colour c the way scripted.BlobBox does, ignoring
// the thin fringes JPEG leaves along edges (a widget is at least
// minWidgetSide pixels on each side), then widens the box over the edge rows
// and columns JPEG shifted further from c, when that stays the same widget.
func widgetBox(img image.Image, c color.RGBA) (image.Rectangle, bool) {
	core, ok := scripted.BlobBox(img, c, scripted.ColorTol)
	if !ok || core.Dx() < minWidgetSide || core.Dy() < minWidgetSide {
		return image.Rectangle{}, false
	}
	mid := image.Point{X: (core.Min.X + core.Max.X) / 2, Y: (core.Min.Y + core.Max.Y) / 2}.Sub(img.Bounds().Min)
	area := core.Dx() * core.Dy()
	for _, box := range scripted.BlobBoxes(img, c, 2*scripted.ColorTol+4) {
		if mid.In(box) && box.Dx()*box.Dy() <= area*3/2 {
			return box.Add(img.Bounds().Min).Union(core), true
		}
	}
	return core, true
}

// minWidgetSide is the smallest side of a widget, in image pixels.
const minWidgetSide = 6

func judge(img image.Image, widgets []Widget, statement string) (bool, string) {
	s := strings.ToLower(statement)
	neg := strings.Contains(" "+s+" ", " not ")
	var pass bool
	var reason string
	status := func(c sampleapp.Color, what string) {
		b, ok := widgetBox(img, c.ToRGBA())
		pass = ok && scripted.StatusBelow(img, b)
		reason = what + " shows"
		if !pass {
			reason = "no " + what + " shows"
		}
	}
	switch w, ok := mentioned(statement, widgets); {
	case strings.Contains(s, "submitted"):
		status(sampleapp.SubmitColor, "a status line under the Submit button")
	case strings.Contains(s, "confirmed"):
		status(sampleapp.OKColor, "a status line under the OK button")
	case ok:
		_, pass = widgetBox(img, w.Color)
		reason = w.Name + " is visible"
		if !pass {
			reason = w.Name + " is not visible"
		}
	default:
		return false, fmt.Sprintf("I cannot judge %q", statement)
	}
	if neg {
		pass = !pass
	}
	return pass, reason
}

func queryData(t Turn, widgets []Widget) any {
	var names []string
	for _, w := range widgets {
		if _, ok := widgetBox(t.Image, w.Color); ok {
			names = append(names, w.Name)
		}
	}
	var sc struct {
		Type string `json:"type"`
	}
	if g := schemaMarker.FindStringSubmatch(t.Prompt); g != nil {
		_ = json.Unmarshal([]byte(firstLine(g[1])), &sc)
	}
	switch sc.Type {
	case "number", "integer":
		return len(names)
	case "array":
		if names == nil {
			return []string{}
		}
		return names
	}
	return strings.Join(names, ", ")
}

// renderVision writes a plain-vision answer as a Chat Completions message:
// JSON (rep.Answer with rep.Box in the server's convention) for requests
// with a schema or the schema in the prompt; a native grounding answer
// (UI-TARS point, Qwen-VL bbox list) for a locate request in that format.
func (s *ChatServer) renderVision(t Turn, rep Reply) string {
	native := t.Schema == nil && !strings.Contains(t.Prompt, "JSON Schema")
	switch {
	case native && s.opts.Format == ChatUITARS:
		if rep.Box == nil {
			return "I cannot find it."
		}
		c := image.Point{X: (rep.Box.Min.X + rep.Box.Max.X) / 2, Y: (rep.Box.Min.Y + rep.Box.Max.Y) / 2}
		return strings.Trim(s.tarsPoint(t, c), "'")
	case native && s.opts.Format == ChatQwen:
		if rep.Box == nil {
			return "```json\n[]\n```"
		}
		b, _ := json.Marshal([]any{map[string]any{"bbox_2d": s.boxCoords(t, *rep.Box), "label": rep.Answer["reason"]}})
		return "```json\n" + string(b) + "\n```"
	}
	b, _ := json.Marshal(s.visionAnswer(t, rep))
	if s.opts.Fenced {
		return "Here is my answer.\n```json\n" + string(b) + "\n```\n"
	}
	return string(b)
}

// visionAnswer is rep.Answer with its box in the server's convention.
func (s *ChatServer) visionAnswer(t Turn, rep Reply) map[string]any {
	out := map[string]any{}
	for k, v := range rep.Answer {
		out[k] = v
	}
	if _, ok := out["found"]; ok {
		out["box"] = []float64{0, 0, 0, 0}
		if rep.Box != nil {
			out["box"] = s.boxCoords(t, *rep.Box)
		}
	}
	return out
}

// boxCoords writes an image-pixel box in the server's convention: corners
// through Profile.FromImage, [x1, y1, x2, y2] (or y first for YX).
func (s *ChatServer) boxCoords(t Turn, r image.Rectangle) []float64 {
	return BoxIn(s.opts.Profile, r, t.ImageSize)
}

// BoxIn writes box r (pixels of an image of size img) in profile p's
// convention: [x1, y1, x2, y2], or [y1, x1, y2, x2] for YX profiles.
func BoxIn(p geom.Profile, r image.Rectangle, img geom.Size) []float64 {
	f := geom.Frame{Content: img, Prepared: img}
	a := p.FromImage(geom.ImagePoint{X: float64(r.Min.X), Y: float64(r.Min.Y)}, f)
	b := p.FromImage(geom.ImagePoint{X: float64(r.Max.X), Y: float64(r.Max.Y)}, f)
	out := append(a, b...)
	for i := range out {
		out[i] = roundFor(out[i], p.Divisor)
	}
	return out
}

// anthropicVision is the input of the forced answer tool: rep.Answer with
// rep.Box in pixels of the image received.
func anthropicVision(rep Reply) map[string]any {
	out := map[string]any{}
	for k, v := range rep.Answer {
		out[k] = v
	}
	if _, ok := out["found"]; ok {
		out["box"] = []int{0, 0, 0, 0}
		if rep.Box != nil {
			out["box"] = []int{rep.Box.Min.X, rep.Box.Min.Y, rep.Box.Max.X, rep.Box.Max.Y}
		}
	}
	return out
}
