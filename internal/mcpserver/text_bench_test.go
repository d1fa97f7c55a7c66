package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guiagent/guiagent/internal/llm"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/openai"
	"github.com/guiagent/guiagent/internal/ocr/tesseract"
	"github.com/guiagent/guiagent/internal/sampleapp"
	"github.com/guiagent/guiagent/internal/vision"
)

// BenchmarkClickTextTarget is a click by an OCR target end to end, with no
// model configured: gui_click with target `the first "GREEN"` on the sample app's
// buttons scene (1280x800; the first of two GREENs on it) takes a new screenshot, reads it (a new frame
// each time, so no cached page), clicks the label's centre, and the app
// reports the click on the green button. It reports the median time from
// the call to the app's click event: with the engine's line cache off
// (every click reads every line) and on (the screen unchanged, no line is
// read again). In the same run, for comparison, "the red button" is clicked
// with its place found by a vision model and no OCR: the fake model of
// internal/llm/fakellm, which answers at once from the pixels, so that
// figure is guiagent's own cost of a vision locate (the screenshot encoded
// and sent, the answer mapped back) plus one model call per click, where a
// real model adds seconds; OCR makes no model call.
func BenchmarkClickTextTarget(b *testing.B) {
	labels := map[string]string{"red": "RED", "green": "GREEN", "blue": "BLUE"}
	cold := clickTimes(b, startTextEnvWith(b, sampleapp.SceneButtons, labels, true, tesseract.Options{LineCache: -1}), `the first "GREEN"`, "green", `read "GREEN"`)
	cached := clickTimes(b, startTextEnv(b, sampleapp.SceneButtons, labels, true), `the first "GREEN"`, "green", `read "GREEN"`)
	model := fakellm.NewChatServer(fakellm.VisionBrain(fakellm.SampleAppWidgets), fakellm.ChatOptions{})
	b.Cleanup(model.Close)
	p, err := llm.ProfileFor(llm.AdapterGeneric, "gpt-4.1", "")
	if err != nil {
		b.Fatal(err)
	}
	vm, err := openai.NewVisionModel(llm.Config{Provider: "openai", Model: "gpt-4.1", BaseURL: model.URL, Profile: &p})
	if err != nil {
		b.Fatal(err)
	}
	svc, err := vision.NewService(vm, nil)
	if err != nil {
		b.Fatal(err)
	}
	seen := startTextEnvWith(b, sampleapp.SceneButtons, labels, false, tesseract.Options{}, func(o *Options) { o.Vision, o.VisionProfile = svc, p })
	before := model.Calls()
	byModel := clickTimes(b, seen, "the red button", "red", `located "the red button"`)
	b.ReportMetric(float64(cold.Microseconds())/1000, "click-median-ms")
	b.ReportMetric(float64(cached.Microseconds())/1000, "click-cached-median-ms")
	b.ReportMetric(float64(byModel.Microseconds())/1000, "click-fake-vision-median-ms")
	b.ReportMetric(float64(model.Calls()-before)/float64(max(b.N, 3)+1), "fake-vision-model-calls/click")
}

// clickTimes clicks target as b.Loop says, checks that the app saw a click
// on the widget named want and that the result says says, and returns the
// median time.
func clickTimes(b *testing.B, e *textEnv, target, want, says string) time.Duration {
	click := func() time.Duration {
		t0 := time.Now()
		out := ok(b, e.cs, "gui_click", map[string]any{"target": target})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ev, err := e.app.WaitFor(ctx, func(ev sampleapp.Event) bool { return ev.Event == "click" })
		if err != nil || ev.Target != want || !strings.Contains(out, says) {
			b.Fatalf("click on %s: %+v %v (%s), want a click on %s, the result saying %q", target, ev, err, out, want, says)
		}
		return time.Since(t0)
	}
	click() // the OCR processes start
	var ds []time.Duration
	for range max(b.N, 3) {
		ds = append(ds, click())
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
