package mcpserver

import (
	"context"
	"encoding/json"
	"image"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guiagent/guiagent/internal/desktop/fake"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/ocr"
)

// pointTools are the input tools that act at a point and say how it was
// found (InputResult); keyTools act at none.
var (
	pointTools = []string{"gui_move", "gui_click", "gui_double_click", "gui_mouse_down", "gui_mouse_up", "gui_drag", "gui_scroll", "gui_type"}
	keyTools   = []string{"gui_press_key", "gui_hotkey"}
)

// actedOf calls an input tool that must succeed and returns its structured
// content, checked against the output schema the tool declares in
// tools/list (as a client that validates would check it).
func actedOf(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (InputResult, string) {
	t.Helper()
	res := callTool(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, text(res))
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s(%v) has no structured content: %s", tool, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var schema *jsonschema.Schema
	for _, tl := range listTools(t, cs) {
		if tl.Name == tool && tl.OutputSchema != nil {
			sb, _ := json.Marshal(tl.OutputSchema)
			if err := json.Unmarshal(sb, &schema); err != nil {
				t.Fatal(err)
			}
		}
	}
	if schema == nil {
		t.Fatalf("%s declares no output schema", tool)
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s's structured content %s does not conform to its output schema: %v", tool, b, err)
	}
	var out InputResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, text(res)
}

// js shows a result as the client receives it.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func centre(b ImageBox) ImageXY { return ImageXY{(b.X1 + b.X2) / 2, (b.Y1 + b.Y2) / 2} }

func nearXY(a, b ImageXY, tol float64) bool {
	return a.X-b.X <= tol && b.X-a.X <= tol && a.Y-b.Y <= tol && b.Y-a.Y <= tol
}

// TestInputToolsDeclareTheirResult: every input tool that acts at a point
// declares located_by, point, box and frame_id in its output schema, the
// same one (a drag's adds its end); the key tools declare none.
func TestInputToolsDeclareTheirResult(t *testing.T) {
	e := newEnvWith(t, twoDisplays, Options{OCR: ocr.NewReader(nil, 0)}, func(b *fake.Backend) { b.SetElements(formElements()) })
	var shared string
	for _, tl := range listTools(t, e.cs) {
		b, _ := json.Marshal(tl.OutputSchema)
		var sc struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(b, &sc)
		switch {
		case slices.Contains(keyTools, tl.Name):
			if tl.OutputSchema != nil {
				t.Errorf("%s acts at no point but declares an output schema %s", tl.Name, b)
			}
			continue
		case !slices.Contains(pointTools, tl.Name):
			continue
		}
		for _, p := range []string{"located_by", "point", "box", "frame_id"} {
			if _, ok := sc.Properties[p]; !ok {
				t.Errorf("%s's output schema %s does not declare %s", tl.Name, b, p)
			}
		}
		if got, want := sc.Properties["located_by"].Enum, []string{"point", "ref", "accessibility", "ocr", "vision", "none"}; !slices.Equal(got, want) {
			t.Errorf("%s: located_by is one of %v, want %v", tl.Name, got, want)
		}
		if tl.Name == "gui_drag" {
			if _, ok := sc.Properties["to"]; !ok {
				t.Errorf("gui_drag's output schema does not declare its end (to): %s", b)
			}
			continue
		}
		if shared == "" {
			shared = string(b)
		} else if string(b) != shared {
			t.Errorf("%s's output schema %s differs from the other input tools' %s", tl.Name, b, shared)
		}
	}
}

// TestInputResultByPointAndNone: coordinates are located_by point, in pixels
// of the frame they were read over; an action without a point says none;
// the key tools carry no structured content.
func TestInputResultByPointAndNone(t *testing.T) {
	e := newEnv(t, twoDisplays, Options{})
	var shot ShotInfo
	jsonOf(t, callTool(t, e.cs, "gui_screenshot", map[string]any{"display": "1"}), &shot)
	out, _ := actedOf(t, e.cs, "gui_click", map[string]any{"x": 100, "y": 50, "display": "1"})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if out.LocatedBy != "point" || out.FrameID != shot.FrameID || out.Point == nil || *out.Point != (ImageXY{100, 50}) ||
		out.Box != nil || out.Display != "1" || out.Global == nil || (geom.GlobalPoint{X: out.Global.X, Y: out.Global.Y}) != down.At {
		t.Errorf("click at (100,50) of frame %s, pressed at %v: %s", shot.FrameID, down.At, js(out))
	}
	// Screen pixels: shown in the display's latest image.
	out, _ = actedOf(t, e.cs, "gui_move", map[string]any{"x": 1920 + 400, "y": -200 + 300, "space": "screen"})
	if out.LocatedBy != "point" || out.FrameID != shot.FrameID || out.Point == nil || !nearXY(*out.Point, ImageXY{300, 225}, 0.5) {
		t.Errorf("move to screen (2320,100): %s, want point (300,225) of frame %s", js(out), shot.FrameID)
	}
	out, _ = actedOf(t, e.cs, "gui_scroll", map[string]any{"direction": "down"})
	if out.LocatedBy != "none" || out.Point != nil || out.FrameID != "" {
		t.Errorf("scroll at the pointer: %s, want located_by none and no point", js(out))
	}
	out, _ = actedOf(t, e.cs, "gui_type", map[string]any{"text": "hi"})
	if out.LocatedBy != "none" || out.Point != nil {
		t.Errorf("typing into the focused element: %s, want located_by none", js(out))
	}
	for _, k := range []struct {
		tool string
		args map[string]any
	}{{"gui_press_key", map[string]any{"key": "Tab"}}, {"gui_hotkey", map[string]any{"keys": []string{"ctrl", "c"}}}} {
		if res := callTool(t, e.cs, k.tool, k.args); res.IsError || res.StructuredContent != nil {
			t.Errorf("%s: error %v, structured content %v: want none (keys act at no point)", k.tool, res.IsError, res.StructuredContent)
		}
	}
}

// TestInputResultByRefAndAccessibility: a ref and a target found in the
// accessibility tree give the element's box and its centre in pixels of the
// snapshot's frame.
func TestInputResultByRefAndAccessibility(t *testing.T) {
	e := newFormEnv(t)
	r, _ := snapshotOf(t, e, map[string]any{"display": "1"})
	okEl := elementNamed(t, r, "OK")
	out, _ := actedOf(t, e.cs, "gui_click", map[string]any{"ref": okEl.Ref})
	if out.LocatedBy != "ref" || out.FrameID != r.FrameID || out.Box == nil || *out.Box != okEl.Box ||
		out.Point == nil || !nearXY(*out.Point, centre(okEl.Box), 1) {
		t.Errorf("click on %s (box %v of frame %s): %s", okEl.Ref, okEl.Box, r.FrameID, js(out))
	}
	out, msg := actedOf(t, e.cs, "gui_click", map[string]any{"target": "OK"})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if out.LocatedBy != "accessibility" || out.FrameID != r.FrameID || out.Box == nil || *out.Box != okEl.Box ||
		out.Point == nil || !nearXY(*out.Point, centre(okEl.Box), 1) || !okBox.Contains(down.At) {
		t.Errorf("click on target OK (box %v of frame %s) pressed at %v: %s (%s)", okEl.Box, r.FrameID, down.At, js(out), msg)
	}
	if !strings.Contains(msg, "located_by accessibility") {
		t.Errorf("result %q does not say located_by", msg)
	}
	// gui_type clicks its field first: the click's place.
	out, _ = actedOf(t, e.cs, "gui_type", map[string]any{"ref": okEl.Ref, "text": "x"})
	if out.LocatedBy != "ref" || out.Box == nil || *out.Box != okEl.Box {
		t.Errorf("type into %s: %s", okEl.Ref, js(out))
	}
}

// wordEngine is an OCR engine that reads one word at a fixed box of any image.
type wordEngine struct {
	word string
	box  geom.ImageRect
}

func (w wordEngine) ID() string { return "word" }

func (w wordEngine) Read(_ context.Context, _ image.Image, region geom.ImageRect) (ocr.Page, error) {
	word := ocr.Word{Text: w.word, Box: w.box, Conf: 96}
	return ocr.Page{Lines: []ocr.Line{{Text: w.word, Box: w.box, Words: []ocr.Word{word}, Conf: 96}}, Region: region, Engine: "word"}, nil
}

// TestInputResultByOCR: a text target read on the screen gives the box of
// the text read and its centre, in pixels of the frame OCR read (the issue's
// case: a click on "BLUE" said so in words only).
func TestInputResultByOCR(t *testing.T) {
	box := geom.ImageRect{X: 929, Y: 201, W: 99, H: 27}
	e := newEnv(t, twoDisplays, Options{OCR: ocr.NewReader(wordEngine{"BLUE", box}, 0)})
	out, msg := actedOf(t, e.cs, "gui_click", map[string]any{"target": `"BLUE"`})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	if out.LocatedBy != "ocr" || out.FrameID == "" || out.Box == nil || *out.Box != (ImageBox{929, 201, 1028, 228}) ||
		out.Point == nil || !nearXY(*out.Point, ImageXY{978.5, 214.5}, 1) || out.Global == nil ||
		(geom.GlobalPoint{X: out.Global.X, Y: out.Global.Y}) != down.At {
		t.Errorf("click on \"BLUE\" read at %v, pressed at %v: %s", box, down.At, js(out))
	}
	if !strings.Contains(msg, "located_by ocr") || !strings.Contains(msg, "frame "+out.FrameID) {
		t.Errorf("result %q does not say located_by ocr and the frame %s", msg, out.FrameID)
	}
	// A drag from the text to coordinates: each end says how it was found.
	out, _ = actedOf(t, e.cs, "gui_drag", map[string]any{"from_target": `"BLUE"`, "to_x": 10, "to_y": 20})
	if out.LocatedBy != "ocr" || out.Box == nil || out.To == nil || out.To.LocatedBy != "point" || out.To.Point == nil ||
		*out.To.Point != (ImageXY{10, 20}) || out.To.Box != nil || out.To.FrameID == "" {
		t.Errorf("drag from \"BLUE\" to (10,20): %s to %s", js(out), js(out.To))
	}
}

// TestInputResultByVision: a target the vision model located gives the
// model's box and its centre in pixels of the frame it was shown.
func TestInputResultByVision(t *testing.T) {
	e := newVisionEnv(t, "gpt-4.1", fakellm.ChatOptions{})
	out, msg := actedOf(t, e.cs, "gui_click", map[string]any{"target": "the Submit button"})
	down := lastEvent(t, e.desk, fake.OpButtonDown)
	want := ImageBox{700, 520, 860, 570} // submitRect; the 1280x800 display's image is not scaled
	if out.LocatedBy != "vision" || out.FrameID == "" || out.Box == nil || *out.Box != want ||
		out.Point == nil || !nearXY(*out.Point, centre(want), 1) || !onRect(down.At, submitRect, 3) {
		t.Errorf("click on the Submit button %v, pressed at %v: %s", want, down.At, js(out))
	}
	if !strings.Contains(msg, "located_by vision") {
		t.Errorf("result %q does not say located_by vision", msg)
	}
	out, _ = actedOf(t, e.cs, "gui_drag", map[string]any{"from_target": "the Name field", "to_target": "the Submit button"})
	if out.LocatedBy != "vision" || out.To == nil || out.To.LocatedBy != "vision" || out.To.Box == nil || *out.To.Box != want {
		t.Errorf("drag between two targets: %s to %s", js(out), js(out.To))
	}
}

// TestInputResultCarriesTheScreenshotAfterAction: with a screenshot after
// each action, the structured content still says how the point was found,
// the screenshot's metadata in it.
func TestInputResultCarriesTheScreenshotAfterAction(t *testing.T) {
	e := newEnv(t, nil, Options{ScreenshotAfterAction: true})
	out, _ := actedOf(t, e.cs, "gui_click", map[string]any{"x": 10, "y": 10})
	if out.LocatedBy != "point" || out.Screenshot == nil || out.Screenshot.FrameID == "" || out.Screenshot.FrameID == out.FrameID {
		t.Errorf("click with a screenshot after it: %s (screenshot %s)", js(out), js(out.Screenshot))
	}
}
