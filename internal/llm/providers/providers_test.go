package providers_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/action"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	_ "github.com/guiagent/guiagent/internal/llm/providers"
)

// models gives each registered adapter a provider and a current model to
// run with; a new adapter needs a row here (the test says so).
var models = map[string][2]string{
	llm.AdapterAnthropic:      {"anthropic", "claude-sonnet-5-5"},
	llm.AdapterOpenAIComputer: {"openai", "gpt-5.5"},
	llm.AdapterGemini:         {"gemini", "gemini-2.5-computer-use-preview-10-2025"},
	llm.AdapterGeneric:        {"openai", "gpt-4.1"},
	llm.AdapterUITARS:         {"openai", "ui-tars-1.5-7b"},
}

// TestEveryAdapterRunsAgainstItsFake: every registered adapter, started
// through the registry, clicks the red box its fake's brain finds on the
// screenshot and then finishes; the click lands on the box.
func TestEveryAdapterRunsAgainstItsFake(t *testing.T) {
	for _, spec := range llm.Adapters() {
		t.Run(spec.Name, func(t *testing.T) {
			pm, ok := models[spec.Name]
			if !ok {
				t.Fatalf("adapter %s has no provider and model in this test's table: add one", spec.Name)
			}
			profile, err := llm.ProfileFor(spec.Name, pm[1], "")
			if err != nil {
				t.Fatal(err)
			}
			brain := fakellm.Script(func(tn fakellm.Turn) fakellm.Reply {
				c, ok := fakellm.FindColor(tn.Image, color.RGBA{R: 220, A: 255}, 30)
				if !ok {
					return fakellm.Reply{Status: llm.Failed, Result: "no red box"}
				}
				return fakellm.Reply{Observation: "a red box", Actions: []fakellm.BrainAction{fakellm.ClickAt(c)}}
			}, fakellm.Fixed(fakellm.Finish("clicked")))
			fake, err := fakellm.Start(spec.Wire, brain, profile)
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			a, err := spec.New(llm.Config{Provider: pm[0], Model: pm[1], APIKey: "sk-test-0123456789", BaseURL: fake.BaseURL,
				Profile: &profile, Timeout: 10 * time.Second, Retry: llm.RetryPolicy{Attempts: 1}})
			if err != nil {
				t.Fatal(err)
			}
			img := screen(t, profile)
			sess := a.NewSession("click the red box")
			d, err := sess.Next(context.Background(), llm.Observation{Step: 1, Task: "click the red box", Screenshot: img})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Actions) != 1 || d.Actions[0].Kind != action.Click {
				t.Fatalf("decision %+v, want one click", d)
			}
			r, err := d.Actions[0].At.Resolve(img.Frame, []geom.Display{img.Frame.Display}, 0)
			if err != nil || r.Global.X < 1500 || r.Global.X > 1600 || r.Global.Y < 700 || r.Global.Y > 760 {
				t.Fatalf("the click resolves to %+v (%v), want the box at (1500-1600, 700-760)", r.Global, err)
			}
			if d, err = sess.Next(context.Background(), llm.Observation{Step: 2, Screenshot: screen(t, profile)}); err != nil || d.Status != llm.Done {
				t.Fatalf("second step: %+v, %v", d, err)
			}
		})
	}
}

// screen is a 1920x1080 display with a red box, prepared for profile.
func screen(t *testing.T, p geom.Profile) llm.Image {
	t.Helper()
	d := geom.Display{ID: "1", Bounds: geom.Rect{W: 1920, H: 1080}, Scale: 1}
	content, prepared := p.PrepareSize(d.Bounds.Size(), 1280)
	img := image.NewRGBA(image.Rect(0, 0, prepared.W, prepared.H))
	for i := range img.Pix {
		img.Pix[i] = 235
	}
	sx, sy := float64(content.W)/1920, float64(content.H)/1080
	for y := int(700 * sy); y < int(760*sy); y++ {
		for x := int(1500 * sx); x < int(1600*sx); x++ {
			img.Set(x, y, color.RGBA{R: 220, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	f := geom.NewFrame("f", d, d.Bounds, content)
	f.Prepared = prepared
	return llm.Image{MIME: "image/png", Data: b.Bytes(), Frame: f, Step: 1}
}
