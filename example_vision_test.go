package guiagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// newVisionAgent starts an agent with a vision model on a private display
// and shows guiagent's sample form there (name, email and city fields and a
// Submit button): the application a host would operate.
func newVisionAgent(ctx context.Context) (*guiagent.Agent, *sampleapp.App) {
	a, err := guiagent.New(ctx, guiagent.Options{
		Provider: "openai", Model: "gpt-4.1", BaseURL: visionURL, APIKey: "sk-example",
		VirtualDisplay: guiagent.Size{Width: 1280, Height: 800}, AlwaysVirtualDisplay: true,
		RunsDir: runsDir, Log: io.Discard,
	})
	if err != nil {
		log.Fatal(err)
	}
	form, err := sampleapp.Start(ctx, sampleapp.Options{Display: a.DisplayName()})
	if err != nil {
		a.Close()
		log.Fatal(err)
	}
	return a, form
}

// submitted reports whether the sample form gets a submit within 5 s.
func submitted(form *sampleapp.App) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := form.WaitFor(ctx, func(e sampleapp.Event) bool { return e.Event == "submit" })
	return err == nil
}

// Locate finds an element described in words. Its Center is a point of the
// screenshot the model looked at, ready for Click.
func ExampleAgent_Locate() {
	ctx := context.Background()
	a, form := newVisionAgent(ctx)
	defer a.Close()
	defer form.Close()

	loc, err := a.Locate(ctx, "the Submit button", guiagent.ScreenshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("found:", loc.Found, "in a", loc.Shot.Width, "x", loc.Shot.Height, "screenshot")
	if err := a.Click(ctx, loc.Center, guiagent.ClickOptions{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("the form was submitted:", submitted(form))

	missing, err := a.Locate(ctx, "the Delete button", guiagent.ScreenshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("found:", missing.Found)
	// Output:
	// found: true in a 1280 x 800 screenshot
	// the form was submitted: true
	// found: false
}

// Query reads the screen into data valid against a JSON Schema.
func ExampleAgent_Query() {
	ctx := context.Background()
	a, form := newVisionAgent(ctx)
	defer a.Close()
	defer form.Close()

	ans, err := a.Query(ctx, "Which widgets can you see?", json.RawMessage(`{"type":"array","items":{"type":"string"}}`), guiagent.ScreenshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	if err := ans.Decode(&names); err != nil {
		log.Fatal(err)
	}
	fmt.Println(names)
	// Output: [the Name field the Email field the City field the Submit button]
}

// Assert asks whether a statement about the screen is true; false is an
// answer, not an error.
func ExampleAgent_Assert() {
	ctx := context.Background()
	a, form := newVisionAgent(ctx)
	defer a.Close()
	defer form.Close()

	for _, s := range []string{"the Submit button is visible", "the OK button is visible"} {
		v, err := a.Assert(ctx, s, guiagent.ScreenshotOptions{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(s+":", v.Pass)
	}
	// Output:
	// the Submit button is visible: true
	// the OK button is visible: false
}

// WaitFor waits until the screen shows something, asking the model again
// only when the screen has changed.
func ExampleAgent_WaitFor() {
	ctx := context.Background()
	a, form := newVisionAgent(ctx)
	defer a.Close()
	defer form.Close()

	before, err := a.WaitFor(ctx, "the form was submitted", guiagent.WaitOptions{Timeout: time.Second, Interval: 250 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("before submitting, met:", before.Met, "after", before.Checks > 1, "looks and", before.ModelCalls, "model call")

	loc, err := a.Locate(ctx, "the Submit button", guiagent.ScreenshotOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := a.Click(ctx, loc.Center, guiagent.ClickOptions{}); err != nil {
		log.Fatal(err)
	}
	after, err := a.WaitFor(ctx, "the form was submitted", guiagent.WaitOptions{Timeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after submitting, met:", after.Met)
	// Output:
	// before submitting, met: false after true looks and 1 model call
	// after submitting, met: true
}

// RunFlow runs a YAML flow. The second run replays the Submit button from the
// cache of located elements, verified by its pixels, without asking the model;
// the Name field now shows "Ada", so its cached pixels no longer match and the
// model locates it again.
func ExampleAgent_RunFlow() {
	ctx := context.Background()
	a, form := newVisionAgent(ctx)
	defer a.Close()
	defer form.Close()

	flow := []byte(`name: sign up
steps:
  - type: {target: the Name field, text: "${who}"}
  - click: the Submit button
  - wait_for: {condition: the form was submitted, timeout_s: 10}
`)
	for run := 1; run <= 2; run++ {
		res, err := a.RunFlow(ctx, flow, guiagent.FlowOptions{Vars: map[string]string{"who": "Ada"}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("run", run, "passed:", res.Passed, "cache hits:", res.CacheHits)
		for _, st := range res.Steps {
			fmt.Printf("  %s %q passed=%v cache=%s\n", st.Kind, st.Description, st.Passed, st.Cache)
		}
	}
	fmt.Println("the form was submitted:", submitted(form))
	// Output:
	// run 1 passed: true cache hits: 0
	//   type "type into the Name field (replace)" passed=true cache=miss
	//   click "click: the Submit button" passed=true cache=miss
	//   wait_for "wait_for: the form was submitted" passed=true cache=
	// run 2 passed: true cache hits: 2
	//   type "type into the Name field (replace)" passed=true cache=hit
	//   click "click: the Submit button" passed=true cache=hit
	//   wait_for "wait_for: the form was submitted" passed=true cache=
	// the form was submitted: true
}
