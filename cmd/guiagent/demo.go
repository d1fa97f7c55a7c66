package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/guiagent/guiagent/internal/agent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/geom"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/platform"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// demoTask is what the demo asks of the agent.
const demoTask = "In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit."

// cmdDemo starts a private virtual desktop with the sample application and runs
// one task on it through the full loop. Without an API key it uses the built-in
// scripted model and says so.
func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, rest, err := config.Load("demo", args, getenv)
	if err != nil {
		return err
	}
	task := demoTask
	if len(rest) > 0 {
		task = strings.Join(rest, " ")
	}
	size := c.VirtualDisplay
	if size.W == 0 {
		size.W, size.H = 1280, 800
	}
	vd, err := platform.StartXvfb(ctx, platform.XvfbOptions{Width: size.W, Height: size.H})
	if err != nil {
		return fmt.Errorf("demo needs a private virtual desktop: %w", err)
	}
	defer vd.Close()
	fmt.Fprintf(stderr, "demo: private virtual desktop %s (%dx%d)\n", vd.Display, size.W, size.H)

	appCtx, cancelApp := context.WithTimeout(ctx, 20*time.Second)
	sample, err := sampleapp.Start(appCtx, sampleapp.Options{Display: vd.Display, Scene: sampleapp.SceneForm})
	cancelApp()
	if err != nil {
		return fmt.Errorf("start the sample application: %w", err)
	}
	defer sample.Close()

	if c.APIKey == "" && c.BaseURL == "" {
		srv := fakellm.NewChatServer(fakellm.DemoFormBrain(fakellm.DefaultDemoForm), fakellm.ChatOptions{Model: "guiagent-scripted"})
		defer srv.Close()
		c.Provider, c.Model, c.BaseURL, c.APIKey, c.Adapter = "openai", "guiagent-scripted", srv.URL, "demo-no-key", "generic"
		c.MemoryModel, c.MemoryProvider, c.GroundingModel = "", "", ""
		fmt.Fprintln(stderr, "demo: no GUI_AGENT_API_KEY set, so the built-in scripted model plays the model's part (offline). Set GUI_AGENT_PROVIDER, GUI_AGENT_MODEL and GUI_AGENT_API_KEY to use a real one.")
	} else if !modelConfigured(c) {
		return errNoModel
	} else {
		fmt.Fprintf(stderr, "demo: using %s model %s\n", c.Provider, c.Model)
	}
	c.XDisplay, c.VirtualDisplay = vd.Display, geom.Size{}
	a, err := newApp(ctx, c, stderr)
	if err != nil {
		return err
	}
	defer a.Close()

	fmt.Fprintf(stderr, "demo: task: %s\n", task)
	res := a.runner.Run(ctx, agent.Task{Task: task}, func(ev agent.Event) {
		if ev.Kind == agent.EvProgress && ev.Message != "" {
			fmt.Fprintf(stderr, "  %s\n", ev.Message)
		}
	})
	if res.Status == agent.Completed && task == demoTask {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ev, err := sample.WaitFor(wctx, func(e sampleapp.Event) bool { return e.Event == "submit" })
		cancel()
		if err != nil {
			fmt.Fprintln(stderr, "demo: the agent reported success but the sample app saw no submit")
		} else {
			fmt.Fprintf(stderr, "demo: the sample application received: %v\n", ev.Fields)
		}
	}
	out := map[string]any{
		"status": res.Status, "summary": res.Summary, "result": res.Result, "steps": res.Steps,
		"usage": res.Usage, "run_id": res.RunID, "run_dir": res.RunDir, "report": res.Report,
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(stdout, string(b))
	if res.Report != "" {
		fmt.Fprintf(stderr, "demo: open the report in a browser: file://%s\n", res.Report)
	}
	if res.Status != agent.Completed {
		return fmt.Errorf("task ended %s: %s", res.Status, res.Summary)
	}
	return nil
}
