package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/llm/fakellm"
	"github.com/guiagent/guiagent/internal/llm/scripted"
	"github.com/guiagent/guiagent/internal/sampleapp"
)

// demoTask is what the demo asks of the agent.
const demoTask = "In the sample form, enter the name Ada Lovelace, the email ada@example.org and the city London, then press Submit."

// cmdDemo starts a private virtual desktop with the sample application and runs
// one task on it through the full loop. Without an API key it uses the built-in
// scripted model and says so. Everything it writes to stderr is one log, in
// the library's format.
func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, rest, err := guiagent.LoadOptions(args, getenv)
	if err != nil {
		return err
	}
	task := demoTask
	if len(rest) > 0 {
		task = strings.Join(rest, " ")
	}
	log := demoLogger(o.LogLevel, stderr)
	o, scripted, stopModel, err := demoModel(o, task, log)
	if err != nil {
		return err
	}
	defer stopModel()
	if o.VirtualDisplay.Width == 0 {
		o.VirtualDisplay = guiagent.Size{Width: 1280, Height: 800}
	}
	// The agent starts the private display (and says so in its "desktop
	// ready" line); the sample application then starts on it.
	o.AlwaysVirtualDisplay, o.Log = true, stderr
	a, err := guiagent.New(ctx, o)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer a.Close()
	appCtx, cancelApp := context.WithTimeout(ctx, 20*time.Second)
	sample, err := sampleapp.Start(appCtx, sampleapp.Options{Display: a.DisplayName(), Scene: sampleapp.SceneForm})
	cancelApp()
	if err != nil {
		return fmt.Errorf("start the sample application: %w", err)
	}
	defer sample.Close()

	log.Info("demo task", "task", task)
	res, err := a.Execute(ctx, task, guiagent.WithProgress(func(p guiagent.Progress) {
		if p.Message != "" {
			log.Info(p.Message)
		}
	}))
	if err != nil {
		return err
	}
	out := map[string]any{
		"status": res.Status, "summary": res.Summary, "result": res.Result, "steps": res.Steps,
		"usage": res.Usage, "run_id": res.RunID, "run_dir": res.RunDir, "report": res.Report,
	}
	if scripted {
		out["model"] = scriptedModelNote
	}
	if res.Status == guiagent.Completed {
		wait := time.Second // another task need not submit the form
		if task == demoTask {
			wait = 5 * time.Second
		}
		if fields := submitted(ctx, sample, wait, log); fields != nil {
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
		log.Info("open the report in a browser", "url", "file://"+res.Report)
	}
	if res.Status != guiagent.Completed {
		return fmt.Errorf("task ended %s: %s", res.Status, res.Summary)
	}
	return nil
}

// scriptedModelNote is the demo result's "model" with the scripted model.
const scriptedModelNote = "the built-in scripted model (offline): it reads no tokens, so usage counts only its calls"

// demoLogger is the demo's own log, in the text format the library writes
// to stderr, at level (debug, info, warn or error; "" is info).
func demoLogger(level string, stderr io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
}

// demoModel picks the demo's model: the configured one, or, when none is
// configured, the built-in scripted model (isScripted is then true), which can
// only do demoTask and refuses any other task rather than pretend. It reports
// no token usage, since it reads none. stop ends the scripted model.
func demoModel(c guiagent.Options, task string, log *slog.Logger) (_ guiagent.Options, isScripted bool, stop func(), err error) {
	if c.Provider != "" && c.Model != "" {
		if c.APIKey == "" && c.BaseURL == "" {
			return c, false, nil, fmt.Errorf("demo: provider %s, model %s, but %s is not set (a local OpenAI-compatible server needs %s instead)", c.Provider, c.Model, config.Var("APIKey"), config.Var("BaseURL"))
		}
		log.Info("using the configured model", "provider", c.Provider, "model", c.Model)
		return c, false, func() {}, nil
	}
	if task != demoTask {
		return c, false, nil, fmt.Errorf("demo: the built-in scripted model only knows the demo's own task (%q), so it cannot do %q: set %s to run your task with a real model, or run guiagent demo without a task", demoTask, task, config.Vars("Provider", "Model", "APIKey"))
	}
	srv := fakellm.NewChatServer(scripted.DemoFormBrain(scripted.DefaultDemoForm), fakellm.ChatOptions{Model: "guiagent-scripted", NoUsage: true})
	c.Provider, c.Model, c.BaseURL, c.APIKey, c.Adapter = "openai", "guiagent-scripted", srv.URL, "demo-no-key", "generic"
	c.MemoryModel, c.MemoryProvider, c.GroundingModel = "", "", ""
	log.Info("no model is configured, so the built-in scripted model plays the model's part (offline; it reports no token usage)",
		"fix", "set "+config.Vars("Provider", "Model", "APIKey")+" to use a real one (for example anthropic, claude-sonnet-5-5; openai, gpt-5.5; gemini, gemini-2.5-computer-use-preview-10-2025)")
	return c, true, srv.Close, nil
}

// submitted waits briefly for the sample form's submit and prints what the
// application received as JSON; nil when it saw none.
func submitted(ctx context.Context, sample *sampleapp.App, wait time.Duration, log *slog.Logger) map[string]string {
	wctx, cancel := context.WithTimeout(ctx, wait)
	ev, err := sample.WaitFor(wctx, func(e sampleapp.Event) bool { return e.Event == "submit" })
	cancel()
	if err != nil {
		log.Warn("the sample application saw no form submitted")
		return nil
	}
	names := slices.Sorted(maps.Keys(ev.Fields))
	attrs := make([]any, 0, 2*len(names))
	for _, n := range names {
		attrs = append(attrs, n, ev.Fields[n])
	}
	log.Info("the sample application received", attrs...)
	return ev.Fields
}
