package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/guiagent/guiagent"
	"github.com/guiagent/guiagent/internal/app"
	"github.com/guiagent/guiagent/internal/config"
	"github.com/guiagent/guiagent/internal/flow"
	"github.com/guiagent/guiagent/internal/midscene"
	"github.com/guiagent/guiagent/internal/vision"
)

// runArgs are the arguments of `guiagent run` that are not configuration flags.
type runArgs struct {
	path     string
	vars     map[string]string
	strategy flow.Strategy
	json     bool
	rest     []string // configuration flags, for config.Load
	// cacheSet says --cache was given; format is --format (flow, midscene,
	// or "" to recognise a Midscene script by its shape); allowJS is
	// --allow-javascript (a Midscene script's javascript items).
	cacheSet bool
	format   string
	allowJS  bool
}

const runUsage = "usage: guiagent run FLOW.yaml [--var name=value ...] [--cache read-write|read-only|write-only|off] [--json] [--format flow|midscene] [--allow-javascript] [serve flags]"

// parseRunArgs takes the flow file, --var, --cache and --json out of args.
func parseRunArgs(args []string) (runArgs, error) {
	ra := runArgs{vars: map[string]string{}, strategy: flow.ReadWrite}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isFlag := strings.HasPrefix(a, "-")
		takeValue := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("run: --%s needs a value (%s)", name, runUsage)
			}
			i++
			return args[i], nil
		}
		switch {
		case isFlag && name == "var":
			v, err := takeValue()
			if err != nil {
				return ra, err
			}
			k, value, ok := strings.Cut(v, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return ra, fmt.Errorf("run: --var %q: write --var name=value", v)
			}
			ra.vars[k] = value
		case isFlag && name == "cache":
			v, err := takeValue()
			if err != nil {
				return ra, err
			}
			if ra.strategy, err = flow.ParseStrategy(v); err != nil {
				return ra, fmt.Errorf("run: --cache: %w", err)
			}
			ra.cacheSet = true
		case isFlag && name == "format":
			v, err := takeValue()
			if err != nil {
				return ra, err
			}
			if v != "flow" && v != "midscene" {
				return ra, fmt.Errorf("run: --format %q: use flow or midscene", v)
			}
			ra.format = v
		case isFlag && name == "allow-javascript":
			ra.allowJS = true
		case isFlag && name == "json":
			ra.json = true
		case !isFlag && ra.path == "" && (i == 0 || !strings.HasPrefix(args[i-1], "-") || strings.Contains(args[i-1], "=") || runSwitch(args[i-1])):
			ra.path = a
		default:
			ra.rest = append(ra.rest, a)
		}
	}
	if ra.path == "" {
		return ra, errors.New("run: no flow file given (" + runUsage + ")")
	}
	return ra, nil
}

// runSwitch reports whether a is one of run's own flags that take no value
// (so the argument after it may be the file).
func runSwitch(a string) bool {
	n := strings.TrimLeft(a, "-")
	return n == "json" || n == "allow-javascript"
}

// cmdRun runs a YAML flow: it is read and validated whole before the desktop
// is opened; located elements are replayed from FLOW.cache.yaml (or
// GUI_AGENT_CACHE_DIR) after their fingerprints are checked on the screen.
func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	ra, err := parseRunArgs(args)
	if err != nil {
		return err
	}
	c, rest, err := config.Load("run", ra.rest, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("run: unexpected argument %q (%s)", rest[0], runUsage)
	}
	text, err := readFlow(ra.path)
	if err != nil {
		return err
	}
	if ra.format == "midscene" || (ra.format == "" && midscene.Looks(text)) {
		return runMidscene(ctx, ra, c, text, getenv, stdout, stderr)
	}
	if ra.allowJS {
		return errors.New("run: --allow-javascript is for Midscene scripts (their javascript items); a flow has none")
	}
	f, err := flow.Parse(text, ra.vars)
	if err != nil {
		return fmt.Errorf("%s: %w", ra.path, err)
	}
	cache, err := flow.OpenCache(flow.CachePath(ra.path, f.Name, c.CacheDir), ra.strategy)
	if err != nil {
		return err
	}
	a, err := app.New(ctx, c, app.Extra{Log: stderr, Version: guiagent.Version, Seer: runSeer})
	if err != nil {
		return err
	}
	defer a.Close()
	res := a.RunFlow(ctx, f, ra.vars, cache)
	if ra.json {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printFlowResult(stdout, res)
	}
	if res.Status != flow.Passed {
		return fmt.Errorf("flow %q failed: %s", f.Name, res.Summary)
	}
	return nil
}

// printFlowResult writes one line per step and the totals.
func printFlowResult(w io.Writer, res flow.Result) {
	for _, s := range res.Steps {
		line := fmt.Sprintf("%2d %-6s %s", s.Step, s.Status, s.Description)
		if s.Cache != "" {
			line += " [cache " + s.Cache + "]"
		}
		if s.Value != "" {
			line += " = " + s.Value
		}
		if s.Error != "" {
			line += ": " + s.Error
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "flow %q %s in %d ms: %s\n", res.Flow, res.Status, res.WallMillis, res.Summary)
	if res.Cache != "" {
		fmt.Fprintln(w, "cache:", res.Cache)
	}
	if res.Report != "" {
		fmt.Fprintln(w, "report:", res.Report)
	}
}

// runSeer, when set, replaces the configured vision model of flows (tests).
var runSeer vision.Seer

// readFlow reads a flow file of at most flow.MaxBytes: a larger file (or a
// device such as /dev/zero) is refused after that many bytes, not read whole.
func readFlow(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("run: read the flow: %w", err)
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, flow.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("run: read the flow: %w", err)
	}
	if len(text) > flow.MaxBytes {
		return nil, fmt.Errorf("run: %s is larger than a flow may be (%d bytes, 1 MiB): split it into smaller flows", path, flow.MaxBytes)
	}
	return text, nil
}
