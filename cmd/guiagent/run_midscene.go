package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/midscene"
	"github.com/guiagent/guiagent/internal/platform"
)

// runMidscene runs a Midscene YAML script: internal/midscene translates it
// whole (an error names what guiagent cannot honour before anything
// starts), the configuration takes the platform it needs (the browser with
// its viewport for web:, the phone for android:), and the flow runs as any
// flow does; the named answers go to the script's output file.
func runMidscene(ctx context.Context, ra runArgs, c config.Config, text []byte, getenv func(string) string, stdout, stderr io.Writer) error {
	var backends []string
	for _, b := range platform.Backends() {
		backends = append(backends, string(b))
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(ra.path), ".yaml"), ".yml")
	plan, err := midscene.Parse(text, midscene.Options{Vars: ra.vars, Getenv: getenv, AllowJavaScript: ra.allowJS, Backends: backends, Name: name})
	if err != nil {
		return fmt.Errorf("%s: %w", ra.path, err)
	}
	if err := configureFor(plan, &c); err != nil {
		return fmt.Errorf("%s: %w", ra.path, err)
	}
	strategy := ra.strategy
	if !ra.cacheSet && plan.Cache.Set {
		strategy = plan.Cache.Strategy
		if plan.Cache.Off {
			strategy = flow.CacheOff
		}
	}
	cachePath := flow.CachePath(ra.path, plan.Name, c.CacheDir)
	if plan.Cache.ID != "" {
		dir := plan.Cache.Dir
		if dir == "" {
			dir = c.CacheDir
		}
		if dir == "" {
			dir = filepath.Dir(ra.path)
		}
		cachePath = flow.CachePath("", plan.Cache.ID, dir)
	}
	cache, err := flow.OpenCache(cachePath, strategy)
	if err != nil {
		return err
	}
	stop, err := plan.Start()
	if err != nil {
		return err
	}
	defer stop()
	a, err := app.New(ctx, c, app.Extra{Log: stderr, Version: guiagent.Version, Seer: runSeer})
	if err != nil {
		return err
	}
	defer a.Close()
	res := a.RunFlow(ctx, plan.Flow, plan.Vars, cache)
	werr := plan.WriteOutput(res)
	if ra.json {
		b, _ := json.MarshalIndent(struct {
			flow.Result
			Output json.RawMessage `json:"output"`
		}{res, plan.Answers(res)}, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printFlowResult(stdout, res)
		if plan.Output != "" {
			fmt.Fprintln(stdout, "output:", plan.Output)
		}
	}
	if werr != nil {
		return werr
	}
	if res.Status != flow.Passed {
		return fmt.Errorf("the Midscene script %q failed: %s", plan.Name, res.Summary)
	}
	return nil
}

// configureFor sets the backend and its settings a plan needs; a backend
// chosen otherwise (--backend, GUI_AGENT_BACKEND) that is not it is an error.
func configureFor(plan *midscene.Plan, c *config.Config) error {
	chosen := c.Backend != "" && c.Backend != "auto"
	switch plan.Backend {
	case "":
		if slices.Contains([]string{"browser", "android", "ios", "harmony"}, c.Backend) {
			return fmt.Errorf("%s: runs on this computer's desktop, not --backend %s", plan.Section, c.Backend)
		}
	default:
		if chosen && c.Backend != plan.Backend {
			return fmt.Errorf("%s: runs on --backend %s, not --backend %s", plan.Section, plan.Backend, c.Backend)
		}
		c.Backend = plan.Backend
	}
	switch plan.Platform {
	case midscene.Web:
		c.BrowserViewport = plan.Viewport
		c.BrowserUserAgent, c.BrowserSameTab = plan.UserAgent, plan.SameTab
		if plan.BrowserURL != "" {
			c.BrowserURL = plan.BrowserURL
		}
	case midscene.Android, midscene.Harmony:
		if plan.Device != "" {
			c.Device = plan.Device
		}
		if plan.ADB != "" {
			c.ADB = plan.ADB
		}
		if plan.HDC != "" {
			c.HDC = plan.HDC
		}
	case midscene.IOS:
		c.WDAURL = plan.WDAURL
	}
	if plan.MaxSteps > 0 {
		c.MaxSteps = plan.MaxSteps
	}
	return c.Validate()
}
