package guiagent

import (
	"context"
	"fmt"
	"time"

	"github.com/guiagent/guiagent/internal/flow"
)

// CacheStrategy says how RunFlow uses the cache of located elements.
type CacheStrategy string

// Cache strategies; "" is CacheReadWrite.
const (
	CacheReadWrite CacheStrategy = "read-write" // replay verified entries, record new ones
	CacheReadOnly  CacheStrategy = "read-only"  // replay verified entries, never write
	CacheWriteOnly CacheStrategy = "write-only" // always ask the model, record its answers
	CacheOff       CacheStrategy = "off"        // neither read nor write
)

// FlowOptions change how RunFlow runs a flow.
type FlowOptions struct {
	// Vars are the values of the ${name} variables the flow uses.
	Vars map[string]string
	// Cache is how the cache of located elements (Options' flow cache
	// folder, one file per flow name) is used; "" is CacheReadWrite.
	Cache CacheStrategy
}

// FlowStep is one step of a flow run.
type FlowStep struct {
	Step        int // its number in the flow
	Kind        string
	Description string
	Passed      bool
	Error       string
	// Cache is how the step's element was found: "hit", "moved", "miss" or "".
	Cache      string
	ModelCalls int
	// Value is a query's answer (JSON), a locate's "x,y" or an assert's reason.
	Value   string
	Elapsed time.Duration
}

// FlowResult is what RunFlow did.
type FlowResult struct {
	Flow string
	// Passed says every step passed; Summary says what happened (which
	// step failed, and why).
	Passed  bool
	Summary string
	Steps   []FlowStep
	// Vars holds the variables at the end (FlowOptions.Vars and save_as results).
	Vars map[string]string
	// ModelCalls counts plain-vision model calls (act steps' agent calls are
	// in their own runs); CacheHits the elements replayed from the cache.
	ModelCalls, CacheHits int
	Elapsed               time.Duration
	// RunID names the run's record; Report is its report.html, when recorded.
	RunID, Report string
}

// RunFlow runs a YAML flow (the format of `guiagent run` and gui_run_flow:
// name, optional display, and steps such as "- click: the OK button") on the
// desktop. The whole flow is validated before any step runs: a bad flow is
// an error naming the line. A flow that ran but failed a step is a FlowResult
// with Passed false, not an error. Steps that locate, query, assert or wait
// need the vision model unless their element is cached; without one they fail
// saying so.
func (a *Agent) RunFlow(ctx context.Context, yaml []byte, o FlowOptions) (res FlowResult, err error) {
	defer a.audit("run_flow", map[string]any{"cache": o.Cache}, time.Now(), &err)
	strategy, err := flow.ParseStrategy(string(o.Cache))
	if err != nil {
		return FlowResult{}, fmt.Errorf("guiagent: FlowOptions.Cache: %w", err)
	}
	f, err := flow.Parse(yaml, o.Vars)
	if err != nil {
		return FlowResult{}, fmt.Errorf("guiagent: %w", err)
	}
	cache, err := flow.OpenCache(flow.CachePath("", f.Name, a.app.Config().FlowCacheDir()), strategy)
	if err != nil {
		return FlowResult{}, fmt.Errorf("guiagent: %w", err)
	}
	r := a.app.RunFlow(ctx, f, o.Vars, cache)
	res = FlowResult{
		Flow: r.Flow, Passed: r.Status == flow.Passed, Summary: r.Summary, Steps: make([]FlowStep, len(r.Steps)),
		Vars: r.Vars, ModelCalls: r.ModelCalls, CacheHits: r.CacheHits, Elapsed: time.Duration(r.WallMillis) * time.Millisecond,
		RunID: r.RunID, Report: r.Report,
	}
	for i, s := range r.Steps {
		res.Steps[i] = FlowStep{Step: s.Step, Kind: string(s.Kind), Description: s.Description, Passed: s.Status == flow.Passed,
			Error: s.Error, Cache: s.Cache, ModelCalls: s.ModelCalls, Value: s.Value, Elapsed: time.Duration(s.Millis) * time.Millisecond}
	}
	return res, nil
}
