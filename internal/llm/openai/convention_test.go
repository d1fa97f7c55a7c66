package openai

import (
	"context"
	"image"
	"testing"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
)

// TestCoordinateConventions runs each adapter and model family against a
// scripted model that finds a red button and a green target in the downscaled
// screenshot it received and answers a click and a drag in its family's
// convention. The decision's coordinates, mapped through the profile and the
// frame, must land on the boxes' screen positions.
func TestCoordinateConventions(t *testing.T) {
	// A second monitor right of the primary, so global differs from local.
	wide := geom.Display{ID: "1", Bounds: geom.Rect{X: 1920, Y: 0, W: 1920, H: 1080}, Scale: 1}
	laptop := geom.Display{ID: "0", Bounds: geom.Rect{X: 0, Y: -768, W: 1366, H: 768}, Scale: 1.25, Primary: true}
	button := box{image.Rect(1402, 811, 1502, 851), red}
	target := box{image.Rect(180, 140, 260, 200), green}
	smallButton := box{image.Rect(1000, 600, 1080, 640), red}

	cases := []struct {
		name     string
		adapter  func(llm.Config) (llm.Adapter, error)
		model    string
		provider string
		gemini   bool // use the Gemini-compatible path
		opts     fakellm.ChatOptions
		display  geom.Display
		button   box
		wantProf string
	}{
		{name: "openai pixels", adapter: NewGeneric, model: "gpt-4.1", display: wide, button: button, wantProf: "openai"},
		{name: "gemini yx boxes", adapter: NewGeneric, model: "gemini-2.5-flash", provider: "gemini", gemini: true,
			opts: fakellm.ChatOptions{Boxes: true}, display: wide, button: button, wantProf: "gemini"},
		{name: "qwen2.5-vl padded pixels", adapter: NewGeneric, model: "qwen2.5-vl-72b-instruct", display: laptop, button: smallButton, wantProf: "qwen2.5-vl"},
		{name: "glm normalized 1000", adapter: NewGeneric, model: "glm-4.5v", opts: fakellm.ChatOptions{Fenced: true}, display: wide, button: button, wantProf: "normalized-1000"},
		{name: "showui normalized 0-1", adapter: NewGeneric, model: "showui-2b", display: wide, button: button, wantProf: "normalized-1"},
		{name: "unknown model pixels boxes", adapter: NewGeneric, model: "llava-next", opts: fakellm.ChatOptions{Boxes: true}, display: laptop, button: smallButton, wantProf: "default"},
		{name: "ui-tars 1.0 normalized", adapter: NewUITARS, model: "ui-tars-72b-dpo", display: wide, button: button, wantProf: "ui-tars",
			opts: fakellm.ChatOptions{Format: fakellm.ChatUITARS, Spelling: fakellm.TARSParens}},
		{name: "ui-tars 1.5 smart-resized pixels", adapter: NewUITARS, model: "ui-tars-1.5-7b", display: wide, button: button, wantProf: "ui-tars-1.5",
			opts: fakellm.ChatOptions{Format: fakellm.ChatUITARS, Spelling: fakellm.TARSBoxTokens}},
		{name: "doubao point tags", adapter: NewUITARS, model: "doubao-1.5-ui-tars-250428", display: laptop, button: smallButton, wantProf: "ui-tars",
			opts: fakellm.ChatOptions{Format: fakellm.ChatUITARS, Spelling: fakellm.TARSPointTag}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prof := geom.ProfileFor(tc.model)
			if tc.adapter != nil && tc.wantProf == "default" && prof.Name != "default" {
				t.Fatalf("model %s unexpectedly matches profile %s", tc.model, prof.Name)
			}
			opts := tc.opts
			opts.Profile = prof
			var seen geom.Size
			brain := func(turn fakellm.Turn) fakellm.Reply {
				seen = turn.ImageSize
				at, ok := fakellm.FindColor(turn.Image, red, 12)
				to, ok2 := fakellm.FindColor(turn.Image, green, 12)
				if !ok || !ok2 {
					return fakellm.Reply{Status: llm.Failed, Result: "boxes not visible"}
				}
				return fakellm.Reply{Observation: "a red button and a green target", Actions: []fakellm.BrainAction{
					{Kind: action.Click, At: &at},
					{Kind: action.Drag, At: &at, To: &to},
				}}
			}
			srv := fakellm.NewChatServer(brain, opts)
			defer srv.Close()
			cfg := llm.Config{Provider: tc.provider, Model: tc.model, APIKey: "sk-test-conventions", BaseURL: srv.URL}
			if tc.gemini {
				cfg.BaseURL = srv.Root + "/v1beta/openai/"
			}
			ad, err := tc.adapter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := ad.Profile().Name; got != tc.wantProf {
				t.Fatalf("adapter profile = %s, want %s", got, tc.wantProf)
			}
			img := shot(t, ad.Profile(), tc.display, 1280, 1, tc.button, target)
			if img.Frame.ImageSize() == img.Frame.Content && tc.wantProf == "qwen2.5-vl" {
				t.Fatalf("qwen2.5-vl frame has no padding (%v); the case must exercise padding", img.Frame.Content)
			}
			d, err := ad.NewSession("press the red button, then drag it onto the green target").
				Next(context.Background(), llm.Observation{Step: 1, Task: "t", Screenshot: img})
			if err != nil {
				t.Fatalf("Next: %v\nanswer: %s", err, d.Response)
			}
			if seen != img.Frame.ImageSize() {
				t.Fatalf("model received a %v image, frame says %v", seen, img.Frame.ImageSize())
			}
			if img.Frame.ImageSize().W >= tc.display.Bounds.W {
				t.Fatalf("screen %v was not downscaled (image %v)", tc.display.Bounds.Size(), img.Frame.ImageSize())
			}
			if len(d.Actions) != 2 || d.Actions[0].Kind != action.Click || d.Actions[1].Kind != action.Drag {
				t.Fatalf("actions = %+v, want click and drag", d.Actions)
			}
			f := img.Frame
			assertOnBox(t, pointToGlobal(t, f, d.Actions[0].At), tc.display, tc.button, 3)
			assertOnBox(t, pointToGlobal(t, f, d.Actions[1].At), tc.display, tc.button, 3)
			assertOnBox(t, pointToGlobal(t, f, d.Actions[1].To), tc.display, target, 3)
			if d.Status != llm.Continue {
				t.Fatalf("status = %q, want continue", d.Status)
			}
			if d.Usage.Calls != 1 || d.Usage.InputTokens < 800 {
				t.Fatalf("usage = %+v, want 1 call and at least one image's tokens", d.Usage)
			}
		})
	}
}
