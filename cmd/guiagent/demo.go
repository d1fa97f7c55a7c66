package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// demoTask is what the demo asks of the agent.
const demoTask = "In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit."

// cmdDemo starts a private virtual desktop with the sample application and runs
// one task on it through the full loop. Without an API key it uses the built-in
// scripted model and says so.
func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, rest, err := guiagent.LoadOptions(args, getenv)
	if err != nil {
		return err
	}
	task := demoTask
	if len(rest) > 0 {
		task = strings.Join(rest, " ")
	}
	o, stopModel, err := demoModel(o, task, stderr)
	if err != nil {
		return err
	}
	defer stopModel()
	size := o.VirtualDisplay
	if size.Width == 0 {
		size.Width, size.Height = 1280, 800
	}
	vd, err := platform.StartXvfb(ctx, platform.XvfbOptions{Width: size.Width, Height: size.Height})
	if err != nil {
		return fmt.Errorf("demo needs a private virtual desktop: %w", err)
	}
	defer vd.Close()
	fmt.Fprintf(stderr, "demo: private virtual desktop %s (%dx%d)\n", vd.Display, size.Width, size.Height)

	appCtx, cancelApp := context.WithTimeout(ctx, 20*time.Second)
	sample, err := sampleapp.Start(appCtx, sampleapp.Options{Display: vd.Display, Scene: sampleapp.SceneForm})
	cancelApp()
	if err != nil {
		return fmt.Errorf("start the sample application: %w", err)
	}
	defer sample.Close()

	o.XDisplay, o.VirtualDisplay, o.Log = vd.Display, guiagent.Size{}, stderr
	a, err := guiagent.New(ctx, o)
	if err != nil {
		return err
	}
	defer a.Close()

	fmt.Fprintf(stderr, "demo: task: %s\n", task)
	res, err := a.Execute(ctx, task, guiagent.WithProgress(func(p guiagent.Progress) {
		if p.Message != "" {
			fmt.Fprintf(stderr, "  %s\n", p.Message)
		}
	}))
	if err != nil {
		return err
	}
	out := map[string]any{
		"status": res.Status, "summary": res.Summary, "result": res.Result, "steps": res.Steps,
		"usage": res.Usage, "run_id": res.RunID, "run_dir": res.RunDir, "report": res.Report,
	}
	if res.Status == guiagent.Completed {
		wait := time.Second // another task need not submit the form
		if task == demoTask {
			wait = 5 * time.Second
		}
		if fields := submitted(ctx, sample, wait, stderr); fields != nil {
			out["sample_app_received"] = fields
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	if res.Report != "" {
		fmt.Fprintf(stderr, "demo: open the report in a browser: file://%s\n", res.Report)
	}
	if res.Status != guiagent.Completed {
		return fmt.Errorf("task ended %s: %s", res.Status, res.Summary)
	}
	return nil
}

// demoModel picks the demo's model: the configured one, or, when none is
// configured, the built-in scripted model, which can only do demoTask and
// refuses any other task rather than pretend. stop ends the scripted model.
func demoModel(c guiagent.Options, task string, stderr io.Writer) (_ guiagent.Options, stop func(), err error) {
	if c.Provider != "" && c.Model != "" {
		if c.APIKey == "" && c.BaseURL == "" {
			return c, nil, fmt.Errorf("demo: provider %s, model %s, but GUI_AGENT_API_KEY is not set (a local OpenAI-compatible server needs GUI_AGENT_BASE_URL instead)", c.Provider, c.Model)
		}
		fmt.Fprintf(stderr, "demo: using %s model %s\n", c.Provider, c.Model)
		return c, func() {}, nil
	}
	if task != demoTask {
		return c, nil, fmt.Errorf("demo: the built-in scripted model only knows the demo's own task (%q), so it cannot do %q: set GUI_AGENT_PROVIDER, GUI_AGENT_MODEL and GUI_AGENT_API_KEY to run your task with a real model, or run guiagent demo without a task", demoTask, task)
	}
	srv := fakellm.NewChatServer(scripted.DemoFormBrain(scripted.DefaultDemoForm), fakellm.ChatOptions{Model: "guiagent-scripted"})
	c.Provider, c.Model, c.BaseURL, c.APIKey, c.Adapter = "openai", "guiagent-scripted", srv.URL, "demo-no-key", "generic"
	c.MemoryModel, c.MemoryProvider, c.GroundingModel = "", "", ""
	fmt.Fprintln(stderr, "demo: no model is configured, so the built-in scripted model plays the model's part (offline). Set GUI_AGENT_PROVIDER, GUI_AGENT_MODEL and GUI_AGENT_API_KEY to use a real one.")
	return c, srv.Close, nil
}

// submitted waits briefly for the sample form's submit and prints what the
// application received as JSON; nil when it saw none.
func submitted(ctx context.Context, sample *sampleapp.App, wait time.Duration, stderr io.Writer) map[string]string {
	wctx, cancel := context.WithTimeout(ctx, wait)
	ev, err := sample.WaitFor(wctx, func(e sampleapp.Event) bool { return e.Event == "submit" })
	cancel()
	if err != nil {
		fmt.Fprintln(stderr, "demo: the sample application saw no form submitted")
		return nil
	}
	b, _ := json.Marshal(ev.Fields)
	fmt.Fprintf(stderr, "demo: the sample application received: %s\n", b)
	return ev.Fields
}
